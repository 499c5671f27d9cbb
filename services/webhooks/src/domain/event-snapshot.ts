/**
 * The snapshots (data.object) platform producers may publish, per event type: which fields each
 * type has, which are required, and what each holds. Values are identifiers, RFC 3339 timestamps,
 * enumerated states or catalogue codes, never free text: spec 2.7, "Snapshots carry reason codes,
 * states and identifiers, never conversation content or transcripts". A field a type does not list
 * is refused, so text cannot slip in under a new name.
 */
import type { CatalogueCode } from "@platform/codes";

/** An identifier: 1-128 characters of A-Z a-z 0-9 _ . : - (no spaces, so no sentences). */
export const IDENTIFIER = /^[A-Za-z0-9_.:-]{1,128}$/;

const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export type SnapshotField =
  | { kind: "identifier" }
  | { kind: "timestamp" }
  | { kind: "enum"; values: readonly string[] }
  | { kind: "code"; codes: readonly CatalogueCode[] };

export interface SnapshotSchema {
  /** What the snapshot describes, for the documentation. */
  description: string;
  fields: Readonly<Record<string, SnapshotField & { required?: true; description: string }>>;
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
  },
  "booking.created": { description: "a booking the AI created", fields: bookingFields },
  "booking.cancelled": { description: "a booking the AI cancelled", fields: bookingFields },
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
  },
  "escalation.resolved": {
    description: "an escalation was closed",
    fields: {
      escalation_id: requiredId("the escalation's id"),
      resolution_code: { kind: "code", codes: escalationResolutionCodes, description: "how (a catalogue reason code)" },
      conversation_id: id("the conversation escalated"),
    },
  },
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
  }
}

/**
 * Every problem of `object` as the snapshot of `type`: unknown fields, missing required ones,
 * values that are not what the field holds. A type without a schema has no publishable snapshot.
 */
export function snapshotProblems(type: string, object: Record<string, unknown>): SnapshotProblem[] {
  const schema = snapshotSchemas[type];
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
];
