import { shapeSchema } from "../../http/openapi/shape-schema.js";
import { ref } from "../../http/openapi/schema-parts.js";
import { usageLimitsShape } from "./shapes.js";

/** The usage schemas (routes.ts). */
export const usageSchemas = {
  UsageLimitsRequest: shapeSchema(usageLimitsShape),
  UsageLimits: {
    type: "object",
    required: ["tenantId", "softCap", "hardCap", "version", "updatedAt"],
    properties: {
      tenantId: { type: "string" },
      softCap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
      hardCap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
      version: { type: "integer", minimum: 1 },
      updatedAt: { type: "string", format: "date-time" },
    },
  },
  UnsetUsageLimits: {
    type: "object",
    description: "The tenant never set limits: no caps apply.",
    required: ["tenantId", "softCap", "hardCap", "version", "updatedAt"],
    properties: {
      tenantId: { type: "string" },
      softCap: { type: "null" },
      hardCap: { type: "null" },
      version: { const: 0 },
      updatedAt: { type: "null" },
    },
  },
  CurrentUsageLimits: { oneOf: [ref("UsageLimits"), ref("UnsetUsageLimits")] },
  UsageThresholdCrossing: {
    type: "object",
    description:
      "A cap reached this month (at most once per cap and UTC month); the usage.threshold_crossed event " +
      "`eventId` announced it.",
    required: ["threshold", "cap", "tokensUsed", "crossedAt", "eventId"],
    additionalProperties: false,
    properties: {
      threshold: { type: "string", enum: ["soft_cap", "hard_cap"] },
      cap: { type: "integer", minimum: 0, maximum: 9007199254740991 },
      tokensUsed: { type: "integer", minimum: 0, maximum: 9007199254740991 },
      crossedAt: { type: "string", format: "date-time" },
      eventId: { type: "string", pattern: "^evt_[0-9a-f]{24}$" },
    },
  },
  Usage: {
    type: "object",
    description:
      "Token usage of the current UTC calendar month. `softCap` and `hardCap` are null (and `limitsVersion` " +
      "0) when the tenant never set limits.",
    required: ["tenantId", "month", "unit", "tokensUsed", "softCap", "hardCap", "limitsVersion", "thresholds"],
    additionalProperties: false,
    properties: {
      tenantId: { type: "string" },
      month: { type: "string", pattern: "^[0-9]{4}-(0[1-9]|1[0-2])$", description: "YYYY-MM, UTC" },
      unit: { const: "tokens" },
      tokensUsed: { type: "integer", minimum: 0, maximum: 9007199254740991 },
      softCap: { type: ["integer", "null"], minimum: 0, maximum: 9007199254740991 },
      hardCap: { type: ["integer", "null"], minimum: 0, maximum: 9007199254740991 },
      limitsVersion: { type: "integer", minimum: 0 },
      thresholds: { type: "array", maxItems: 2, items: ref("UsageThresholdCrossing") },
    },
  },
};
