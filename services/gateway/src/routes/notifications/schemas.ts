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
  ConversationMessages: {
    type: "object",
    required: ["messages", "nextCursor"],
    properties: {
      messages: {
        type: "array",
        description: "Newest first.",
        items: {
          type: "object",
          required: ["id", "notificationId", "type", "text", "state", "actor", "createdAt", "updatedAt"],
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
