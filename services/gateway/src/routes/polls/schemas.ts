import { nextCursor, ref, timestamp } from "../../http/openapi/schema-parts.js";

const pollPage = (item: string) => ({
  type: "object",
  additionalProperties: false,
  required: ["data", "nextCursor"],
  properties: { data: { type: "array", description: "Newest first.", items: ref(item) }, nextCursor },
});
const nullableCode = {
  type: ["string", "null"],
  description: "A code of the code catalogue (e.g. a failure code); null when none.",
};

/** The poll reads' schemas (routes.ts). */
export const pollSchemas = {
  WorkItem: {
    type: "object",
    additionalProperties: false,
    required: ["notificationId", "type", "state", "reasonCode", "createdAt", "updatedAt"],
    properties: {
      notificationId: { type: "string" },
      type: { type: "string", description: "The notification type, e.g. `reminder`." },
      state: { type: "string", enum: ["sent", "unknown", "failed"] },
      reasonCode: nullableCode,
      createdAt: timestamp,
      updatedAt: timestamp,
    },
  },
  WorkPage: pollPage("WorkItem"),
  AttentionItem: {
    type: "object",
    additionalProperties: false,
    required: ["id", "kind", "subjectId", "reasonCode", "cause", "openedAt", "eventId"],
    properties: {
      id: { type: "string", description: "Stable per item: `<kind>:<subjectId>`." },
      kind: {
        type: "string",
        enum: ["webhook_endpoint_dead_lettered", "escalation", "activation_stalled", "testing_allowance_exhausted"],
      },
      subjectId: { type: "string", description: "The endpoint, escalation or tenant id." },
      reasonCode: nullableCode,
      openedAt: timestamp,
      eventId: { type: "string", description: "The event that opened the item." },
      cause: {
        type: ["string", "null"],
        description:
          "What caused it, to group items by: for `webhook_endpoint_dead_lettered` the error class of the " +
          "dead-lettered delivery's last attempt (`timeout`, `tls`, `refused_target`, `connection`, `http_3xx`, " +
          "`http_4xx`, `http_5xx`, `http_other`); null otherwise.",
      },
    },
  },
  AttentionPage: pollPage("AttentionItem"),
  ActivityItem: {
    type: "object",
    additionalProperties: false,
    required: ["eventId", "type", "occurredAt", "subjectKind", "subjectId", "reasonCode", "state", "actor"],
    properties: {
      eventId: { type: "string" },
      type: { type: "string", description: "The event type, e.g. `booking.created` or `notification.sent`." },
      occurredAt: timestamp,
      subjectKind: {
        type: ["string", "null"],
        description:
          "notification, webhook_endpoint, webhook_delivery, conversation, booking, escalation, capability, tenant " +
          "or usage; " +
          "null for a type this version does not know.",
      },
      subjectId: { type: ["string", "null"] },
      reasonCode: nullableCode,
      state: { type: ["string", "null"], description: "The state the event names, e.g. `sent` or `live`." },
      actor: {
        type: ["string", "null"],
        description:
          "Who did it, when the action was named to us: the console passes `console:<user email>` for webhook " +
          "endpoint actions (create, update, delete, pause, resume, rotate, redrive, test, recover); null otherwise.",
      },
    },
  },
  ActivityPage: pollPage("ActivityItem"),
};
