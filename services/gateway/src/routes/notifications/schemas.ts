/** The notification and transcript schemas (routes.ts). */
export const notificationSchemas = {
  NotificationRequest: {
    type: "object",
    description:
      "Required template fields per type: reminder (clientName, businessName, serviceName, when), no_show " +
      "(clientName, serviceName), cancelled (clientName, serviceName, when), rescheduled (clientName, " +
      "serviceName, when, newWhen), update (clientName, businessName, message). Each field is collapsed to one " +
      "line before rendering. Retired types and message keys, retired fields (paymentUrl, feeAmount), " +
      "scheduling fields (sendAt, scheduledAt, deliveryMode, ...) and any other member are refused with 400 " +
      "partner.notification_invalid.",
    required: ["to", "type", "actor"],
    additionalProperties: false,
    properties: {
      to: {
        type: "string",
        pattern: "^\\+?[0-9]{8,15}$",
        description: "International format, 8-15 digits, optional leading +",
      },
      type: { type: "string", enum: ["reminder", "no_show", "cancelled", "rescheduled", "update"] },
      clientName: { $ref: "#/components/schemas/TemplateField" },
      businessName: { $ref: "#/components/schemas/TemplateField" },
      serviceName: { $ref: "#/components/schemas/TemplateField" },
      when: { $ref: "#/components/schemas/TemplateField" },
      newWhen: { $ref: "#/components/schemas/TemplateField" },
      message: { $ref: "#/components/schemas/TemplateField" },
      actor: {
        type: "object",
        required: ["actorReference"],
        additionalProperties: false,
        properties: {
          actorReference: { type: "string", minLength: 1, maxLength: 300 },
          delegationReference: { type: ["string", "null"], maxLength: 300 },
        },
      },
    },
  },
  TemplateField: {
    type: "string",
    maxLength: 300,
    description: "At most 300 characters (Unicode code points).",
  },
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
            notificationId: { type: "string", pattern: "^ntf_[0-9a-f]{24}$" },
            type: { type: "string" },
            text: { type: "string", description: "The rendered text, as sent to the customer." },
            state: {
              type: "string",
              enum: ["sent", "unknown", "failed"],
              description: "unknown: the channel's answer was lost; the message may or may not have gone out.",
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
