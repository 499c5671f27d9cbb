import { componentSchema, shapeSchema } from "../../http/openapi/shape-schema.js";
import { notificationRequestShape, templateFieldShape } from "./shapes.js";

/** The notification and transcript schemas (routes.ts). */
export const notificationSchemas = {
  NotificationRequest: shapeSchema(notificationRequestShape),
  TemplateField: componentSchema(templateFieldShape, "TemplateField"),
  NotificationResult: {
    type: "object",
    required: ["notificationId", "state", "type", "createdAt", "idempotencyStatus"],
    properties: {
      notificationId: { type: "string", pattern: "^ntf_[0-9a-f]{24}$" },
      state: {
        type: "string",
        const: "sent",
        description: "sent: the channel accepted the message. Not proof that the recipient read it.",
      },
      type: { type: "string" },
      createdAt: { type: "string", format: "date-time" },
      idempotencyStatus: { type: "string", enum: ["applied", "replayed"] },
    },
  },
  NotificationStatus: {
    type: "object",
    required: [
      "notificationId",
      "type",
      "state",
      "deliveryStatus",
      "reasonCode",
      "createdAt",
      "updatedAt",
      "acceptedAt",
      "sentAt",
      "deliveredAt",
      "readAt",
      "failedAt",
    ],
    description:
      "A notification's state and delivery status: ids, states, codes and times, never its text or recipient.",
    properties: {
      notificationId: { type: "string", pattern: "^ntf_[0-9a-f]{24}$" },
      type: { type: "string" },
      state: {
        type: "string",
        enum: ["dispatching", "sent", "unknown", "failed"],
        description:
          "The send's outcome (spec 2.4): sent, unknown (the channel's answer was lost), failed (refused), dispatching (in flight).",
      },
      deliveryStatus: {
        type: ["string", "null"],
        enum: ["accepted", "sent", "delivered", "read", "failed", null],
        description:
          "Never goes backwards: accepted -> sent -> delivered -> read, or failed. Null while the send's outcome is unknown.",
      },
      reasonCode: {
        type: ["string", "null"],
        description: "Failed only: why, a catalogue reason code (never the provider's own).",
      },
      createdAt: { type: "string", format: "date-time" },
      updatedAt: { type: "string", format: "date-time" },
      acceptedAt: { type: ["string", "null"], format: "date-time" },
      sentAt: { type: ["string", "null"], format: "date-time" },
      deliveredAt: {
        type: ["string", "null"],
        format: "date-time",
        description: "Set by `read` too when it came first.",
      },
      readAt: { type: ["string", "null"], format: "date-time" },
      failedAt: { type: ["string", "null"], format: "date-time" },
    },
  },
  ConversationMessages: {
    type: "object",
    required: ["messages", "nextCursor"],
    properties: {
      messages: {
        type: "array",
        description: "Newest first.",
        items: {
          type: "object",
          required: [
            "id",
            "notificationId",
            "type",
            "text",
            "state",
            "deliveryStatus",
            "actor",
            "createdAt",
            "updatedAt",
          ],
          properties: {
            id: { type: "string", pattern: "^msg_[0-9a-f]{24}$" },
            notificationId: {
              anyOf: [{ type: "string", pattern: "^ntf_[0-9a-f]{24}$" }, { type: "null" }],
              description: "null for an inbound message from the customer (type `inbound`).",
            },
            type: {
              type: "string",
              description:
                "The notification type, or `inbound` for the customer's own message (a STOP or START keyword, which opted them out or back in).",
            },
            text: {
              type: "string",
              description: "The rendered text, as sent to the customer (or as the customer sent it).",
            },
            state: {
              type: "string",
              enum: ["sent", "unknown", "failed", "received"],
              description:
                "unknown: the channel's answer was lost; the message may or may not have gone out. received: an inbound message from the customer.",
            },
            deliveryStatus: {
              type: ["string", "null"],
              enum: ["accepted", "sent", "delivered", "read", "failed", null],
              description: "The notification's delivery status (GET .../notifications/{notificationId}).",
            },
            actor: {
              type: "object",
              required: ["actorReference", "delegationReference"],
              properties: {
                actorReference: { type: "string" },
                delegationReference: { type: ["string", "null"] },
              },
            },
            createdAt: { type: "string", format: "date-time" },
            updatedAt: { type: "string", format: "date-time" },
          },
        },
      },
      nextCursor: { type: ["string", "null"], description: "Pass back as `cursor`; null on the last page." },
    },
  },
};
