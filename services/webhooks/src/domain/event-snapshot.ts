/**
 * The snapshots (data.object) of every subscribable event type: which fields each type has, which
 * are required, what each holds, and an example. Producers outside webhooks may publish the
 * `snapshotSchemas` types, checked field by field here; notify emits the `emittedSnapshotSchemas`
 * types itself. Values are identifiers, RFC 3339 timestamps, enumerated states, counts or
 * catalogue codes, never free text: spec 2.7, "Snapshots carry reason codes, states and
 * identifiers, never conversation content or transcripts". A field a type does not list is
 * refused, so text cannot slip in under a new name. The catalog's JSON Schemas are derived from
 * these definitions (event-catalog-schema.ts).
 */
import { codesUsedAs, type CatalogueCode } from "@platform/codes";

/** An identifier: 1-128 characters of A-Z a-z 0-9 _ . : - (no spaces, so no sentences). */
export const IDENTIFIER = /^[A-Za-z0-9_.:-]{1,128}$/;

export const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** A UTC month, `YYYY-MM`. */
export const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** Who changed a tenant's plan (notify's plan-change actor), e.g. `admin:cli`. */
export const ACTOR = /^[A-Za-z0-9_.:+\-@/]{1,128}$/;

export type SnapshotField =
  | { kind: "identifier" }
  | { kind: "timestamp" }
  | { kind: "enum"; values: readonly string[] }
  | { kind: "code"; codes: readonly CatalogueCode[] }
  | { kind: "count" }
  | { kind: "month" }
  | { kind: "actor" }
  | { kind: "list"; fields: SnapshotFields };

export type SnapshotFieldRule = SnapshotField & { required?: true; description: string };

export type SnapshotFields = Readonly<Record<string, SnapshotFieldRule>>;

/** A JSON value, as an example holds it. */
export type ExampleValue = string | number | boolean | ExampleValue[] | { [key: string]: ExampleValue };

export interface SnapshotSchema {
  /** What the snapshot describes, for the documentation. */
  description: string;
  fields: SnapshotFields;
  /** A snapshot as delivered: the catalog's example and the test delivery's data.object. */
  example: Readonly<Record<string, ExampleValue>>;
}

/** The channels a conversation starts on. */
export const conversationChannels = ["whatsapp", "sms", "voice", "web", "email"] as const;

/** A booking's state on the tenant's platform. */
export const bookingStatuses = ["pending", "confirmed", "cancelled", "completed", "no_show"] as const;

/** Why a person's attention is needed (escalation.raised `reason_code`). */
export const escalationReasonCodes = [
  "escalation.customer_requested_human",
  "escalation.ai_uncertain",
  "escalation.complaint",
  "escalation.booking_failed",
  "escalation.policy_restricted",
] as const satisfies readonly CatalogueCode[];

/** How an escalation ended (escalation.resolved `resolution_code`). */
export const escalationResolutionCodes = [
  "escalation.resolved_by_staff",
  "escalation.resolved_by_ai",
  "escalation.customer_inactive",
] as const satisfies readonly CatalogueCode[];

/** Why a booking was cancelled (booking.* `reason_code`). */
export const bookingReasonCodes = [
  "booking.cancelled_by_customer",
  "booking.cancelled_by_business",
  "booking.rescheduled",
] as const satisfies readonly CatalogueCode[];

const id = (description: string) => ({ kind: "identifier", description }) as const;
const requiredId = (description: string) => ({ kind: "identifier", required: true, description }) as const;
const timestamp = (description: string) => ({ kind: "timestamp", description }) as const;
const requiredTimestamp = (description: string) => ({ kind: "timestamp", required: true, description }) as const;
const requiredEnum = (values: readonly string[], description: string) =>
  ({ kind: "enum", values, required: true, description }) as const;
const requiredCount = (description: string) => ({ kind: "count", required: true, description }) as const;
const requiredMonth = (description: string) => ({ kind: "month", required: true, description }) as const;

const bookingFields = {
  booking_id: requiredId("the booking's id on the tenant's platform"),
  conversation_id: id("the conversation the booking was made in"),
  service_id: id("the booked service"),
  location_id: id("the location"),
  starts_at: timestamp("when the booking starts (RFC 3339)"),
  status: { kind: "enum", values: bookingStatuses, description: "the booking's state" },
  reason_code: { kind: "code", codes: bookingReasonCodes, description: "why (a catalogue reason code)" },
} as const;

/** The publishable types' snapshots. */
export const snapshotSchemas: Readonly<Record<string, SnapshotSchema>> = {
  "conversation.started": {
    description: "a conversation the AI handles started",
    fields: {
      conversation_id: requiredId("the conversation's id"),
      channel: { kind: "enum", values: conversationChannels, required: true, description: "the channel it started on" },
      customer_id: id("the customer's id (never a name or a phone number)"),
      started_at: timestamp("when it started (RFC 3339)"),
    },
    example: {
      conversation_id: "conv_8f3a2c",
      channel: "whatsapp",
      customer_id: "cust_51d0e9",
      started_at: "2026-07-01T10:15:30.000Z",
    },
  },
  "booking.created": {
    description: "a booking the AI created",
    fields: bookingFields,
    example: {
      booking_id: "bkg_20260701_0042",
      conversation_id: "conv_8f3a2c",
      service_id: "svc_grooming_full",
      location_id: "loc_main",
      starts_at: "2026-07-03T09:00:00.000Z",
      status: "confirmed",
    },
  },
  "booking.cancelled": {
    description: "a booking the AI cancelled",
    fields: bookingFields,
    example: {
      booking_id: "bkg_20260701_0042",
      conversation_id: "conv_8f3a2c",
      service_id: "svc_grooming_full",
      location_id: "loc_main",
      starts_at: "2026-07-03T09:00:00.000Z",
      status: "cancelled",
      reason_code: "booking.cancelled_by_customer",
    },
  },
  "escalation.raised": {
    description: "a conversation needs a person",
    fields: {
      escalation_id: requiredId("the escalation's id"),
      reason_code: {
        kind: "code",
        codes: escalationReasonCodes,
        required: true,
        description: "why (a catalogue reason code)",
      },
      conversation_id: id("the conversation escalated"),
    },
    example: {
      escalation_id: "esc_7c21",
      reason_code: "escalation.customer_requested_human",
      conversation_id: "conv_8f3a2c",
    },
  },
  "escalation.resolved": {
    description: "an escalation was closed",
    fields: {
      escalation_id: requiredId("the escalation's id"),
      resolution_code: { kind: "code", codes: escalationResolutionCodes, description: "how (a catalogue reason code)" },
      conversation_id: id("the conversation escalated"),
    },
    example: {
      escalation_id: "esc_7c21",
      resolution_code: "escalation.resolved_by_staff",
      conversation_id: "conv_8f3a2c",
    },
  },
};

/** Why a capability check failed (capability.suspended, tenant.validation_failed). */
export const capabilityReasonCodes: readonly CatalogueCode[] = codesUsedAs("reasonCode").filter((code) =>
  code.startsWith("capability."),
);

/** Why a notification failed: the send's refusal or the channel's later report. */
export const notificationFailureCodes: readonly CatalogueCode[] = codesUsedAs("reasonCode").filter(
  (code) => code.startsWith("partner.") || code.startsWith("notification."),
);

/** Why a tenant's plan changed (tenant.plan_changed `reason_code`). */
export const planReasonCodes = [
  "plan.agreement_signed",
  "plan.card_saved",
  "plan.agreement_ended",
  "plan.card_removed",
  "plan.operator_correction",
] as const satisfies readonly CatalogueCode[];

/** The testing allowance's warning (80%) and exhaustion (100%). */
export const allowanceReasonCodes = [
  "account.testing_allowance_warning",
  "account.testing_allowance_exhausted",
] as const satisfies readonly CatalogueCode[];

/** The notification types (notify's notificationTypes). */
export const notificationTypes = ["reminder", "no_show", "cancelled", "rescheduled", "update"] as const;

const plans = ["testing", "commercial"] as const;
const tenantId = requiredId("the tenant's id");
const capabilityName = requiredId("the capability checked, e.g. `messaging_channel`");

const notificationFields = (statuses: readonly string[], reason: "required" | "absent"): SnapshotFields => ({
  notification_id: requiredId("the notification's id (as the send answered it)"),
  type: requiredEnum(notificationTypes, "the notification's type"),
  status: requiredEnum(statuses, "the notification's delivery status when the event was emitted"),
  created_at: requiredTimestamp("when the send was accepted by the API (RFC 3339)"),
  accepted_at: timestamp("when the channel took it (RFC 3339)"),
  sent_at: timestamp("when the channel reported it sent (RFC 3339)"),
  delivered_at: timestamp("when it reached the device (RFC 3339)"),
  read_at: timestamp("when it was read (RFC 3339)"),
  failed_at: timestamp("when it failed (RFC 3339)"),
  ...(reason === "required"
    ? {
        reason_code: {
          kind: "code",
          codes: notificationFailureCodes,
          required: true,
          description: "why (a catalogue reason code)",
        },
      }
    : {}),
});

/**
 * The snapshots of the types notify emits itself (usage metering, capability reports, activation,
 * plan changes, a notification's delivery steps). They cannot be published through
 * EventService/PublishEvent (published-event.ts); these definitions describe what notify builds.
 */
export const emittedSnapshotSchemas: Readonly<Record<string, SnapshotSchema>> = {
  "usage.threshold_crossed": {
    description: "the month's token usage reached the soft or hard cap (spec 2.8)",
    fields: {
      threshold: requiredEnum(["soft_cap", "hard_cap"], "which cap"),
      unit: requiredEnum(["tokens"], "what is counted"),
      month: requiredMonth("the UTC month (`YYYY-MM`)"),
      tokens_used: requiredCount("tokens used in the month when the cap was reached"),
      cap: requiredCount("the cap reached"),
      crossed_at: requiredTimestamp("when it was reached (RFC 3339)"),
    },
    example: {
      threshold: "soft_cap",
      unit: "tokens",
      month: "2026-07",
      tokens_used: 8000,
      cap: 8000,
      crossed_at: "2026-07-01T10:15:30.000Z",
    },
  },
  "usage.testing_allowance_threshold_crossed": {
    description: "a testing tenant used 80% or 100% of the month's free sends",
    fields: {
      tenant_id: tenantId,
      month: requiredMonth("the UTC month (`YYYY-MM`)"),
      threshold: requiredEnum(["80_percent", "100_percent"], "which threshold"),
      reason_code: {
        kind: "code",
        codes: allowanceReasonCodes,
        required: true,
        description: "`account.testing_allowance_warning` at 80%, `account.testing_allowance_exhausted` at 100%",
      },
      allowance: requiredCount("the month's free sends"),
      sends_used: requiredCount("the threshold's sends"),
      remaining: requiredCount("sends left at the threshold"),
      resets_at: requiredTimestamp("the next month's first instant (RFC 3339)"),
    },
    example: {
      tenant_id: "acme",
      month: "2026-07",
      threshold: "80_percent",
      reason_code: "account.testing_allowance_warning",
      allowance: 100,
      sends_used: 80,
      remaining: 20,
      resets_at: "2026-08-01T00:00:00.000Z",
    },
  },
  "capability.suspended": {
    description: "a verified capability failed its check",
    fields: {
      tenant_id: tenantId,
      capability: capabilityName,
      state: requiredEnum(["off"], "the capability's state"),
      reason_code: {
        kind: "code",
        codes: capabilityReasonCodes,
        required: true,
        description: "why the check failed (a catalogue reason code)",
      },
      checked_at: requiredTimestamp("when it was checked (RFC 3339)"),
    },
    example: {
      tenant_id: "acme",
      capability: "messaging_channel",
      state: "off",
      reason_code: "capability.channel_disconnected",
      checked_at: "2026-07-01T10:15:30.000Z",
    },
  },
  "capability.restored": {
    description: "the failing check passed again",
    fields: {
      tenant_id: tenantId,
      capability: capabilityName,
      state: requiredEnum(["on"], "the capability's state"),
      checked_at: requiredTimestamp("when it was checked (RFC 3339)"),
    },
    example: {
      tenant_id: "acme",
      capability: "messaging_channel",
      state: "on",
      checked_at: "2026-07-01T10:15:30.000Z",
    },
  },
  "tenant.activated": {
    description: "provisioning finished and validation passed",
    fields: {
      tenant_id: tenantId,
      state: requiredEnum(["live"], "the tenant's activation state"),
      activated_at: requiredTimestamp("when it went live (RFC 3339)"),
    },
    example: { tenant_id: "acme", state: "live", activated_at: "2026-07-01T10:15:30.000Z" },
  },
  "tenant.plan_changed": {
    description: "the tenant moved between the testing and commercial plans",
    fields: {
      tenant_id: tenantId,
      plan: requiredEnum(plans, "the new plan"),
      previous_plan: requiredEnum(plans, "the plan before"),
      state: requiredEnum(plans, "the new plan (as `plan`)"),
      reason_code: {
        kind: "code",
        codes: planReasonCodes,
        required: true,
        description: "why (a catalogue reason code)",
      },
      version: requiredCount("the tenant's version after the change"),
      changed_at: requiredTimestamp("when it changed (RFC 3339)"),
      month: requiredMonth("the UTC month (`YYYY-MM`)"),
      actor: { kind: "actor", required: true, description: "who changed it, e.g. `admin:cli`" },
    },
    example: {
      tenant_id: "acme",
      plan: "commercial",
      previous_plan: "testing",
      state: "commercial",
      reason_code: "plan.agreement_signed",
      version: 3,
      changed_at: "2026-07-01T10:15:30.000Z",
      month: "2026-07",
      actor: "admin:cli",
    },
  },
  "tenant.validation_failed": {
    description: "activation stalled on a failed capability check",
    fields: {
      tenant_id: tenantId,
      state: requiredEnum(["stalled"], "the tenant's activation state"),
      failing_step: requiredEnum(["validation"], "the activation step that failed"),
      blocking_reasons: {
        kind: "list",
        required: true,
        description: "the failing capabilities",
        fields: {
          code: {
            kind: "code",
            codes: capabilityReasonCodes,
            required: true,
            description: "why it failed (a catalogue reason code)",
          },
          capability: capabilityName,
        },
      },
    },
    example: {
      tenant_id: "acme",
      state: "stalled",
      failing_step: "validation",
      blocking_reasons: [{ code: "capability.permission_missing", capability: "messaging_channel" }],
    },
  },
  "notification.delivered": {
    description: "a notification reached the customer's device",
    // A read reported first (or with it) emits delivered too, with the status already `read`.
    fields: notificationFields(["delivered", "read"], "absent"),
    example: {
      notification_id: "ntf_3b9d0c2e",
      type: "reminder",
      status: "delivered",
      created_at: "2026-07-01T10:15:30.000Z",
      accepted_at: "2026-07-01T10:15:30.412Z",
      sent_at: "2026-07-01T10:15:31.020Z",
      delivered_at: "2026-07-01T10:15:32.500Z",
    },
  },
  "notification.read": {
    description: "the customer read a notification",
    fields: notificationFields(["read"], "absent"),
    example: {
      notification_id: "ntf_3b9d0c2e",
      type: "reminder",
      status: "read",
      created_at: "2026-07-01T10:15:30.000Z",
      accepted_at: "2026-07-01T10:15:30.412Z",
      sent_at: "2026-07-01T10:15:31.020Z",
      delivered_at: "2026-07-01T10:15:32.500Z",
      read_at: "2026-07-01T10:20:05.000Z",
    },
  },
  "notification.failed": {
    description: "a notification did not reach the customer",
    fields: notificationFields(["failed"], "required"),
    example: {
      notification_id: "ntf_3b9d0c2e",
      type: "reminder",
      status: "failed",
      created_at: "2026-07-01T10:15:30.000Z",
      accepted_at: "2026-07-01T10:15:30.412Z",
      failed_at: "2026-07-01T10:15:33.000Z",
      reason_code: "partner.recipient_undeliverable",
    },
  },
};

/** Every subscribable type's snapshot: the publishable ones and those notify emits. */
export const eventSnapshotSchemas: Readonly<Record<string, SnapshotSchema>> = {
  ...snapshotSchemas,
  ...emittedSnapshotSchemas,
};

export interface SnapshotProblem {
  /** `data.object.<field>`. */
  field: string;
  message: string;
}

function valueProblem(rule: SnapshotField, value: unknown): string | undefined {
  switch (rule.kind) {
    case "identifier":
      return typeof value === "string" && IDENTIFIER.test(value)
        ? undefined
        : "must be an identifier (1-128 characters of A-Z a-z 0-9 _ . : -), never text";
    case "timestamp":
      return typeof value === "string" && RFC_3339.test(value) && !Number.isNaN(new Date(value).getTime())
        ? undefined
        : "must be an RFC 3339 timestamp";
    case "enum":
      return typeof value === "string" && rule.values.includes(value)
        ? undefined
        : `must be one of ${rule.values.join(", ")}`;
    case "code":
      return typeof value === "string" && (rule.codes as readonly string[]).includes(value)
        ? undefined
        : `must be a catalogue reason code: one of ${rule.codes.join(", ")}`;
    case "count":
      return Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : "must be a whole number from 0";
    case "month":
      return typeof value === "string" && MONTH.test(value) ? undefined : "must be a UTC month (YYYY-MM)";
    case "actor":
      return typeof value === "string" && ACTOR.test(value)
        ? undefined
        : "must be 1-128 characters of A-Z a-z 0-9 _ . : + - @ /";
    case "list":
      if (!Array.isArray(value)) return "must be a list";
      for (const item of value) {
        if (typeof item !== "object" || item === null || Array.isArray(item)) return "must be a list of objects";
        const problems = fieldsProblems(rule.fields, item as Record<string, unknown>, "");
        if (problems.length > 0) return `items: ${problems.map((p) => `${p.field}: ${p.message}`).join(", ")}`;
      }
      return undefined;
  }
}

function fieldsProblems(fields: SnapshotFields, object: Record<string, unknown>, prefix: string): SnapshotProblem[] {
  const problems: SnapshotProblem[] = [];
  for (const [name, value] of Object.entries(object)) {
    const rule = fields[name];
    if (!rule) {
      problems.push({
        field: `${prefix}${name}`,
        message: `is not a field (allowed: ${Object.keys(fields).join(", ")})`,
      });
      continue;
    }
    const problem = valueProblem(rule, value);
    if (problem) problems.push({ field: `${prefix}${name}`, message: problem });
  }
  for (const [name, rule] of Object.entries(fields)) {
    if (rule.required && !(name in object)) problems.push({ field: `${prefix}${name}`, message: "is required" });
  }
  return problems;
}

/**
 * Every problem of `object` as the snapshot of `type`: unknown fields, missing required ones,
 * values that are not what the field holds. A type without a schema has no publishable snapshot;
 * `schemas` is eventSnapshotSchemas to check a type notify emits.
 */
export function snapshotProblems(
  type: string,
  object: Record<string, unknown>,
  schemas: Readonly<Record<string, SnapshotSchema>> = snapshotSchemas,
): SnapshotProblem[] {
  const schema = schemas[type];
  if (!schema) return [{ field: "type", message: `${type} has no publishable snapshot` }];
  const problems: SnapshotProblem[] = [];
  for (const [name, value] of Object.entries(object)) {
    const rule = schema.fields[name];
    if (!rule) {
      problems.push({
        field: `data.object.${name}`,
        message: `is not a field of ${type} snapshots (allowed: ${Object.keys(schema.fields).join(", ")})`,
      });
      continue;
    }
    const problem = valueProblem(rule, value);
    if (problem) problems.push({ field: `data.object.${name}`, message: problem });
  }
  for (const [name, rule] of Object.entries(schema.fields)) {
    if ("required" in rule && rule.required && !(name in object)) {
      problems.push({ field: `data.object.${name}`, message: "is required" });
    }
  }
  return problems;
}

/** The catalogue codes the schemas allow (a test checks each is catalogued as a reason code). */
export const snapshotCodes: readonly CatalogueCode[] = [
  ...escalationReasonCodes,
  ...escalationResolutionCodes,
  ...bookingReasonCodes,
  ...capabilityReasonCodes,
  ...notificationFailureCodes,
  ...planReasonCodes,
  ...allowanceReasonCodes,
];
