import { codesUsedAs } from "@platform/codes";
import { ref } from "../../http/openapi/schema-parts.js";

const activationTimestamp = { type: "string", format: "date-time" };
const activationManifestProperties = {
  tenantId: { type: "string" },
  state: {
    type: "string",
    enum: ["provisioning", "validation", "live", "stalled"],
    description:
      "provisioning: activation not started; validation: waiting for the required capability checks; live: " +
      "activated; stalled: a capability check failed (see blockingReasons).",
  },
  steps: {
    type: "array",
    items: {
      type: "object",
      required: ["name", "state", "updatedAt"],
      additionalProperties: false,
      properties: {
        name: { type: "string", enum: ["provisioning", "validation", "live"] },
        state: { type: "string", enum: ["pending", "in_progress", "done", "failed"] },
        updatedAt: { type: ["string", "null"], format: "date-time" },
      },
    },
  },
  blockingReasons: {
    type: "array",
    items: {
      type: "object",
      required: ["code", "capability", "since"],
      additionalProperties: false,
      properties: {
        code: ref("BlockingReasonCode"),
        capability: { type: ["string", "null"] },
        since: activationTimestamp,
      },
    },
  },
  requiredCapabilities: { type: "array", items: { type: "string", pattern: "^[a-z][a-z0-9_]{0,63}$" } },
  version: { type: "integer", minimum: 1 },
  updatedAt: activationTimestamp,
};
const activationManifestRequired = [
  "tenantId",
  "state",
  "steps",
  "blockingReasons",
  "requiredCapabilities",
  "version",
  "updatedAt",
];
/** The activation schemas (routes.ts). */
export const activationSchemas = {
  ActivationManifest: {
    type: "object",
    required: activationManifestRequired,
    additionalProperties: false,
    properties: activationManifestProperties,
  },
  ActivationResult: {
    type: "object",
    required: [...activationManifestRequired, "idempotencyStatus"],
    additionalProperties: false,
    properties: {
      ...activationManifestProperties,
      idempotencyStatus: {
        type: "string",
        enum: ["Applied", "Replayed"],
        description: "Replayed: the answer of the first request with this Idempotency-Key.",
      },
    },
  },
  CapabilityReport: {
    type: "object",
    required: ["tenantId", "data"],
    additionalProperties: false,
    properties: {
      tenantId: { type: "string" },
      data: {
        type: "array",
        items: {
          type: "object",
          required: ["name", "state", "required", "lastResult", "lastCheckedAt", "reasonCode", "changedAt"],
          additionalProperties: false,
          properties: {
            name: { type: "string", pattern: "^[a-z][a-z0-9_]{0,63}$" },
            state: { type: "string", enum: ["on", "off", "unchecked"] },
            required: { type: "boolean", description: "Whether activation requires it." },
            lastResult: { type: ["string", "null"], enum: ["pass", "fail", null] },
            lastCheckedAt: { type: ["string", "null"], format: "date-time" },
            reasonCode: {
              type: ["string", "null"],
              enum: [...codesUsedAs("reasonCode").filter((code) => code.startsWith("capability.")), null],
              description: "The failing check's code; null when passing or unchecked.",
            },
            changedAt: { type: ["string", "null"], format: "date-time" },
          },
        },
      },
    },
  },
};
