/**
 * Test deliveries: a synthetic snapshot for any subscribable event type, so a partner can check
 * their receiver (signature, parsing) before real events flow. The snapshots look like the real
 * ones (snake_case keys, ids and states) and never carry conversation text or personal data; those
 * of the publishable types are exactly their strict snapshots (event-snapshot.ts).
 */
import { InvalidArgumentError } from "@platform/service-kit/errors";
import { findEventType } from "./event-catalog.js";
import type { PlatformEvent } from "./envelope.js";

export class TestEventTypeUnknownError extends InvalidArgumentError {
  override name = "TestEventTypeUnknownError";
  constructor(type: string) {
    super("webhook.event_type_unknown", `${JSON.stringify(type.slice(0, 80))} is not an event type`);
  }
}

export class TestEventTypeNotSubscribableError extends InvalidArgumentError {
  override name = "TestEventTypeNotSubscribableError";
  constructor(type: string) {
    super("webhook.event_type_not_subscribable", `${JSON.stringify(type)} is coming soon and cannot be sent yet`);
  }
}

type Snapshot = Record<string, unknown>;

/** "YYYY-MM" of the month after the one `at` (RFC 3339) is in. */
function nextMonth(at: string): string {
  const date = new Date(at);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)).toISOString().slice(0, 7);
}

const suffix = (eventId: string) => eventId.replace(/^evt_/, "").slice(0, 24);

/** The synthetic data.object of each subscribable type. */
const snapshots: Record<string, (ids: { tag: string; tenant: string; at: string }) => Snapshot> = {
  "conversation.started": ({ tag, at }) => ({
    conversation_id: `conv_test_${tag}`,
    channel: "whatsapp",
    customer_id: `cust_test_${tag}`,
    started_at: at,
  }),
  "booking.created": ({ tag, at }) => ({
    booking_id: `bkg_test_${tag}`,
    conversation_id: `conv_test_${tag}`,
    service_id: "svc_test_grooming",
    location_id: "loc_test_main",
    status: "confirmed",
    starts_at: at,
  }),
  "booking.cancelled": ({ tag, at }) => ({
    booking_id: `bkg_test_${tag}`,
    conversation_id: `conv_test_${tag}`,
    service_id: "svc_test_grooming",
    status: "cancelled",
    starts_at: at,
    reason_code: "booking.cancelled_by_customer",
  }),
  "usage.threshold_crossed": ({ tenant, at }) => ({
    tenant_id: tenant,
    threshold: "soft_cap",
    tokens_used: 800_000,
    soft_cap: 800_000,
    hard_cap: 1_000_000,
    month: at.slice(0, 7),
    crossed_at: at,
  }),
  "capability.suspended": ({ tag, at }) => ({
    capability: "booking",
    check_id: `chk_test_${tag}`,
    state: "suspended",
    failed_check: "booking_platform_reachable",
    suspended_at: at,
  }),
  "capability.restored": ({ tag, at }) => ({
    capability: "booking",
    check_id: `chk_test_${tag}`,
    state: "active",
    restored_at: at,
  }),
  "escalation.raised": ({ tag }) => ({
    escalation_id: `esc_test_${tag}`,
    conversation_id: `conv_test_${tag}`,
    reason_code: "escalation.customer_requested_human",
  }),
  "escalation.resolved": ({ tag }) => ({
    escalation_id: `esc_test_${tag}`,
    conversation_id: `conv_test_${tag}`,
    resolution_code: "escalation.resolved_by_staff",
  }),
  "tenant.activated": ({ tenant, at }) => ({ tenant_id: tenant, status: "active", activated_at: at }),
  "tenant.plan_changed": ({ tenant, at }) => ({
    tenant_id: tenant,
    plan: "commercial",
    previous_plan: "testing",
    state: "commercial",
    reason_code: "plan.agreement_signed",
    version: 2,
    changed_at: at,
    month: at.slice(0, 7),
    actor: "admin:cli",
  }),
  "usage.testing_allowance_threshold_crossed": ({ tenant, at }) => ({
    tenant_id: tenant,
    month: at.slice(0, 7),
    threshold: "80_percent",
    reason_code: "account.testing_allowance_warning",
    allowance: 1000,
    sends_used: 800,
    remaining: 200,
    resets_at: `${nextMonth(at)}-01T00:00:00.000Z`,
  }),
  "notification.delivered": ({ tag, at }) => ({
    notification_id: `ntf_test_${tag}`,
    type: "reminder",
    status: "delivered",
    created_at: at,
    accepted_at: at,
    sent_at: at,
    delivered_at: at,
  }),
  "notification.read": ({ tag, at }) => ({
    notification_id: `ntf_test_${tag}`,
    type: "reminder",
    status: "read",
    created_at: at,
    accepted_at: at,
    sent_at: at,
    delivered_at: at,
    read_at: at,
  }),
  "notification.failed": ({ tag, at }) => ({
    notification_id: `ntf_test_${tag}`,
    type: "reminder",
    status: "failed",
    reason_code: "partner.recipient_undeliverable",
    created_at: at,
    accepted_at: at,
    failed_at: at,
  }),
  "tenant.validation_failed": ({ tenant, at }) => ({
    tenant_id: tenant,
    status: "pending_activation",
    failed_step: "capability_check",
    failing_capability: "booking",
    failed_at: at,
  }),
};

/** The event types a test delivery can be sent for: every subscribable one. */
export const testableEventTypes: readonly string[] = Object.freeze(Object.keys(snapshots));

/**
 * The synthetic event of a test delivery for `type`; throws TestEventTypeUnknownError or
 * TestEventTypeNotSubscribableError for a type that cannot be sent.
 */
export function buildTestEvent(options: { id: string; type: string; tenant: string; now: Date }): PlatformEvent {
  const known = findEventType(options.type);
  if (!known) throw new TestEventTypeUnknownError(options.type);
  const snapshot = snapshots[options.type];
  if (!known.subscribable || !snapshot) throw new TestEventTypeNotSubscribableError(options.type);
  return {
    id: options.id,
    type: options.type,
    tenant: options.tenant,
    occurredAt: options.now,
    object: snapshot({ tag: suffix(options.id), tenant: options.tenant, at: options.now.toISOString() }),
  };
}
