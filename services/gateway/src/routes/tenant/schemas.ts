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
      planReason: {
        type: ["string", "null"],
        enum: ["agreement_signed", "card_saved", "agreement_ended", "card_removed", "operator_correction", null],
        description: "Why the plan last changed; null until it changed.",
      },
      planChangedAt: {
        type: ["string", "null"],
        format: "date-time",
        description: "When the plan last changed; null until it changed.",
      },
      channel: {
        description: "The tenant's own WhatsApp number (null until one is connected); never its token.",
        anyOf: [ref("ChannelSummary"), { type: "null" }],
      },
      testingAllowance: {
        description:
          "On the `testing` plan: this UTC month's free sends and what is left of them (null on `commercial`). Every send of the month counts, on whichever plan it was made. Sends answer 409 `account.testing_allowance_exhausted` when `remaining` is 0.",
        anyOf: [ref("TestingAllowance"), { type: "null" }],
      },
    },
  },
  TestingAllowance: {
    type: "object",
    required: ["limit", "used", "remaining", "month", "resetsAt"],
    properties: {
      limit: {
        type: "integer",
        minimum: 1,
        description: "Sends per UTC month (1000 unless the operator set another).",
      },
      used: { type: "integer", minimum: 0, description: "Sends of this UTC month so far." },
      remaining: { type: "integer", minimum: 0, description: "max(0, limit - used)." },
      month: { type: "string", pattern: "^[0-9]{4}-[0-9]{2}$", description: "The UTC month, YYYY-MM." },
      resetsAt: { type: "string", format: "date-time", description: "The first instant of the next UTC month." },
    },
  },
};
