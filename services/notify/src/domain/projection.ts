/**
 * What one event of the EVENTS stream does to the tenant's poll reads (work, attention, activity).
 * Only known fields are read, and only short identifier-like strings are kept: data.object is
 * never copied, so no text a person wrote can reach a poll answer.
 */

export interface ProjectedEvent {
  id: string;
  type: string;
  tenantId: string;
  occurredAt: Date;
  object: Record<string, unknown>;
}

export interface ActivityEntry {
  eventId: string;
  type: string;
  occurredAt: Date;
  subjectKind: string;
  subjectId: string;
  reasonCode: string;
  state: string;
  /** Who did it, when the event names them (`actor`: "console:user@example.com"); "" otherwise. */
  actor: string;
}

export interface WorkChange {
  notificationId: string;
  type: string;
  state: string;
  reasonCode: string;
  createdAt: Date;
}

export type AttentionKind =
  | "webhook_endpoint_dead_lettered"
  | "escalation"
  | "activation_stalled"
  /** The testing plan's sends of a month are used up; a move to commercial closes it. */
  | "testing_allowance_exhausted";

export type AttentionChange =
  /** `cause`: the class of what caused it (a webhook dead-letter's error class), "" when the event says none. */
  | { open: true; kind: AttentionKind; subjectId: string; reasonCode: string; cause: string }
  | { open: false; kind: AttentionKind; subjectId: string };

export interface Projection {
  activity: ActivityEntry;
  work?: WorkChange;
  attention?: AttentionChange;
}

/** The id of an attention item: stable per kind and subject. */
export const attentionItemId = (kind: AttentionKind, subjectId: string): string => `${kind}:${subjectId}`;

/** Ids, states and codes: short, no spaces. Anything else is dropped (never shown). */
const tokenPattern = /^[A-Za-z0-9_.:+\-@/]{1,128}$/;

function token(object: Record<string, unknown>, key: string): string {
  const value = object[key];
  return typeof value === "string" && tokenPattern.test(value) ? value : "";
}

function date(object: Record<string, unknown>, key: string, fallback: Date): Date {
  const value = object[key];
  if (typeof value !== "string") return fallback;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? fallback : parsed;
}

function firstBlockingCode(object: Record<string, unknown>): string {
  const reasons = object.blocking_reasons;
  if (!Array.isArray(reasons) || reasons.length === 0) return "";
  const first: unknown = reasons[0];
  return first && typeof first === "object" ? token(first as Record<string, unknown>, "code") : "";
}

/** The subject kind of each known type and the field naming its id. */
const subjects: Record<string, [kind: string, idField: string]> = {
  "notification.sent": ["notification", "notification_id"],
  "notification.unknown": ["notification", "notification_id"],
  "notification.failed": ["notification", "notification_id"],
  "notification.delivered": ["notification", "notification_id"],
  "notification.read": ["notification", "notification_id"],
  "webhook.endpoint_dead_lettered": ["webhook_endpoint", "endpoint_id"],
  "webhook.endpoint_resumed": ["webhook_endpoint", "endpoint_id"],
  "webhook.endpoint_created": ["webhook_endpoint", "endpoint_id"],
  "webhook.endpoint_updated": ["webhook_endpoint", "endpoint_id"],
  "webhook.endpoint_deleted": ["webhook_endpoint", "endpoint_id"],
  "webhook.endpoint_paused": ["webhook_endpoint", "endpoint_id"],
  "webhook.endpoint_secret_rotated": ["webhook_endpoint", "endpoint_id"],
  "webhook.endpoint_recovery_started": ["webhook_endpoint", "endpoint_id"],
  "webhook.endpoint_recovery_finished": ["webhook_endpoint", "endpoint_id"],
  "webhook.delivery_redriven": ["webhook_delivery", "delivery_id"],
  "webhook.test_delivery_sent": ["webhook_delivery", "delivery_id"],
  "conversation.started": ["conversation", "conversation_id"],
  "booking.created": ["booking", "booking_id"],
  "booking.cancelled": ["booking", "booking_id"],
  "escalation.raised": ["escalation", "escalation_id"],
  "escalation.resolved": ["escalation", "escalation_id"],
  "capability.suspended": ["capability", "capability"],
  "capability.restored": ["capability", "capability"],
  "tenant.activated": ["tenant", "tenant_id"],
  "tenant.validation_failed": ["tenant", "tenant_id"],
  "usage.threshold_crossed": ["usage", "month"],
  "usage.testing_allowance_threshold_crossed": ["usage", "month"],
  "tenant.plan_changed": ["tenant", "tenant_id"],
  "recipient.opted_out": ["recipient", "recipient_ref"],
  "recipient.opted_in": ["recipient", "recipient_ref"],
};

export function projectEvent(event: ProjectedEvent): Projection {
  const object = event.object;
  const [subjectKind, idField] = subjects[event.type] ?? ["", ""];
  const subjectId = idField ? token(object, idField) || (subjectKind === "tenant" ? event.tenantId : "") : "";
  let reasonCode = token(object, "reason_code");
  if (event.type === "tenant.validation_failed") reasonCode ||= firstBlockingCode(object);
  const state =
    token(object, "state") ||
    (event.type.startsWith("notification.") ? token(object, "status") : "") ||
    (event.type === "usage.threshold_crossed" || event.type === "usage.testing_allowance_threshold_crossed"
      ? token(object, "threshold")
      : "");
  const projection: Projection = {
    activity: {
      eventId: event.id,
      type: event.type,
      occurredAt: event.occurredAt,
      subjectKind,
      subjectId,
      reasonCode,
      state,
      actor: token(object, "actor"),
    },
  };
  switch (event.type) {
    case "notification.sent":
    case "notification.unknown":
    case "notification.failed":
      if (subjectId) {
        projection.work = {
          notificationId: subjectId,
          type: token(object, "type"),
          state: state || event.type.slice("notification.".length),
          reasonCode,
          createdAt: date(object, "created_at", event.occurredAt),
        };
      }
      break;
    case "webhook.endpoint_dead_lettered":
      if (subjectId)
        projection.attention = {
          open: true,
          kind: "webhook_endpoint_dead_lettered",
          subjectId,
          reasonCode,
          cause: token(object, "cause"),
        };
      break;
    case "webhook.endpoint_resumed":
      if (subjectId) projection.attention = { open: false, kind: "webhook_endpoint_dead_lettered", subjectId };
      break;
    case "escalation.raised":
      if (subjectId) projection.attention = { open: true, kind: "escalation", subjectId, reasonCode, cause: "" };
      break;
    case "escalation.resolved":
      if (subjectId) projection.attention = { open: false, kind: "escalation", subjectId };
      break;
    case "tenant.validation_failed":
      projection.attention = {
        open: true,
        kind: "activation_stalled",
        subjectId: event.tenantId,
        reasonCode,
        cause: "",
      };
      break;
    case "tenant.activated":
      projection.attention = { open: false, kind: "activation_stalled", subjectId: event.tenantId };
      break;
    case "usage.testing_allowance_threshold_crossed":
      if (token(object, "threshold") === "100_percent") {
        projection.attention = {
          open: true,
          kind: "testing_allowance_exhausted",
          subjectId: event.tenantId,
          reasonCode: reasonCode || "account.testing_allowance_exhausted",
          cause: "",
        };
      }
      break;
    case "tenant.plan_changed":
      if (token(object, "plan") === "commercial") {
        projection.attention = { open: false, kind: "testing_allowance_exhausted", subjectId: event.tenantId };
      }
      break;
  }
  return projection;
}
