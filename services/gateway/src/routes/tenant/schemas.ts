import { ref } from "../../http/openapi/schema-parts.js";

/** The tenant record's schema (routes.ts). */
export const tenantSchemas = {
  Tenant: {
    type: "object",
    required: ["id", "name", "status", "activated", "channelReady", "version", "lastErrorCode", "plan"],
    properties: {
      id: { type: "string" },
      name: { type: "string" },
      status: { type: "string", enum: ["pending_activation", "active"] },
      activated: { type: "boolean" },
      channelReady: { type: "boolean" },
      version: { type: "integer", minimum: 1 },
      lastErrorCode: {
        description: "A stable partner-safe code (see `LastErrorCode`), or null.",
        anyOf: [ref("LastErrorCode"), { type: "null" }],
      },
      plan: { type: "string", enum: ["testing", "commercial"] },
      createdAt: { type: "string", format: "date-time" },
      activationState: {
        type: ["string", "null"],
        enum: ["provisioning", "validation", "live", "stalled", null],
        description: "Where activation stands; GET /activation has the details.",
      },
    },
  },
};
