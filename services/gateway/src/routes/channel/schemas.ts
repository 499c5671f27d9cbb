import { shapeSchema } from "../../http/openapi/shape-schema.js";
import { ref } from "../../http/openapi/schema-parts.js";
import { channelRequestShape } from "./shapes.js";

const nullableText = (description: string) => ({ type: ["string", "null"], description });

const template = {
  type: "object",
  required: ["name", "language"],
  additionalProperties: false,
  properties: { name: { type: "string" }, language: { type: "string" } },
};

/** The channel schemas (routes.ts). */
export const channelSchemas = {
  ChannelRequest: shapeSchema(channelRequestShape),
  Channel: {
    type: "object",
    description: "The tenant's own WhatsApp number. The access token is never part of it.",
    required: [
      "wabaId",
      "phoneNumberId",
      "displayPhoneNumber",
      "verifiedName",
      "qualityRating",
      "status",
      "checkedAt",
      "checkResult",
      "reasonCode",
      "templates",
      "messagesPerSecond",
      "stopKeywords",
      "startKeywords",
      "connectedAt",
      "updatedAt",
    ],
    additionalProperties: false,
    properties: {
      wabaId: { type: "string" },
      phoneNumberId: { type: "string" },
      displayPhoneNumber: nullableText("As the Cloud API displays it; null until the number was read."),
      verifiedName: nullableText("The business's verified display name; null until the number was read."),
      qualityRating: nullableText("GREEN, YELLOW, RED or UNKNOWN as last read."),
      status: nullableText("The number's status as last read (CONNECTED, FLAGGED, DISCONNECTED, ...)."),
      checkedAt: { type: ["string", "null"], format: "date-time" },
      checkResult: {
        type: ["string", "null"],
        enum: ["pass", "fail", "unreachable", null],
        description: "The last check: unreachable (the Cloud API could not be asked) leaves readiness as it was.",
      },
      reasonCode: {
        description: "The failing check's reason code, or null.",
        anyOf: [ref("ReasonCode"), { type: "null" }],
      },
      templates: {
        type: "object",
        description: "Every notification type's template: the tenant's own, else the platform's default.",
        additionalProperties: template,
      },
      messagesPerSecond: { type: "integer", minimum: 1, maximum: 1000 },
      stopKeywords: { type: "array", items: { type: "string" } },
      startKeywords: { type: "array", items: { type: "string" } },
      connectedAt: { type: "string", format: "date-time" },
      updatedAt: { type: "string", format: "date-time" },
    },
  },
  ChannelSummary: {
    type: "object",
    description: "The connected number as the tenant record shows it (GET /channel has all of it).",
    required: ["phoneNumberId", "displayPhoneNumber", "verifiedName", "qualityRating", "status", "checkedAt"],
    additionalProperties: false,
    properties: {
      phoneNumberId: { type: "string" },
      displayPhoneNumber: { type: ["string", "null"] },
      verifiedName: { type: ["string", "null"] },
      qualityRating: { type: ["string", "null"] },
      status: { type: ["string", "null"] },
      checkedAt: { type: ["string", "null"], format: "date-time" },
    },
  },
};
