/**
 * An event as a producer elsewhere on the platform publishes it (EventService/PublishEvent), and
 * as it travels on the bus (BusEvent): which types producers outside webhooks may publish, and
 * the checks that turn the producer's fields into a PlatformEvent an envelope can be built from:
 * the snapshot must be exactly its type's (event-snapshot.ts), ids, states and codes, never text.
 */
import { InvalidArgumentError } from "@platform/service-kit/errors";
import { findEventType } from "./event-catalog.js";
import { buildEnvelope, InvalidEnvelopeError, type PlatformEvent } from "./envelope.js";
import { currentApiVersion } from "./endpoint.js";
import { snapshotProblems } from "./event-snapshot.js";

/**
 * The families producers outside the webhooks service may publish, each with a strict snapshot
 * (event-snapshot.ts). The others come from the platform's own state changes, never through this
 * contract: usage.* from usage metering, capability.* from capability reports, tenant.* from
 * activation (notify emits them all).
 */
export const publishableFamilies: readonly string[] = Object.freeze(["conversation", "booking", "escalation"]);

/** Where a catalog type that cannot be published comes from instead. */
const emittedBy: Readonly<Record<string, string>> = {
  usage: "usage metering (notify) emits them from recorded token usage",
  capability: "notify emits them from capability reports (admin `capability report`)",
  tenant: "notify emits them from activation (POST /activation, admin `tenant activate`)",
};

export const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Not an event type of the catalog, or one that is coming soon. */
export class EventTypeUnknownError extends InvalidArgumentError {
  override name = "EventTypeUnknownError";
  constructor(readonly type: string) {
    super("event.type_unknown", `${JSON.stringify(type.slice(0, 80))} is not a subscribable event type`);
  }
}

/** A catalog type that only the platform itself emits (usage.*, capability.*, tenant.*). */
export class EventTypeNotPublishableError extends InvalidArgumentError {
  override name = "EventTypeNotPublishableError";
  constructor(readonly type: string) {
    const family = type.slice(0, type.indexOf("."));
    super(
      "event.type_not_publishable",
      `${type} events cannot be published: ${emittedBy[family] ?? "the platform emits them itself"}; ` +
        `publishable families: ${publishableFamilies.map((f) => `${f}.*`).join(", ")}`,
    );
  }
}

export interface PublishedEventProblem {
  field: string;
  message: string;
}

/** The event cannot be published as it is; `problems` names every one. */
export class InvalidPublishedEventError extends InvalidArgumentError {
  override name = "InvalidPublishedEventError";
  constructor(readonly problems: readonly PublishedEventProblem[]) {
    super("event.invalid", problems.map((problem) => `${problem.field}: ${problem.message}`).join("; "));
  }
}

export interface PublishEventInput {
  tenantId: string;
  type: string;
  /** data.object as JSON text. */
  dataJson: string;
  /** Empty: the service assigns one. */
  eventId: string;
  /** RFC 3339; empty: now. */
  occurredAt: string;
}

const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 timestamp as a Date, or undefined when malformed. */
export function parseRfc3339(text: string): Date | undefined {
  if (!RFC_3339.test(text)) return undefined;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Throws unless producers outside webhooks may publish `type`. */
export function checkPublishableType(type: string): void {
  const known = findEventType(type);
  if (!known?.subscribable) throw new EventTypeUnknownError(type);
  if (!publishableFamilies.includes(known.family)) throw new EventTypeNotPublishableError(type);
}

function parseObject(dataJson: string, problems: PublishedEventProblem[]): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(dataJson);
  } catch {
    problems.push({ field: "data_json", message: "is not valid JSON" });
    return {};
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    problems.push({ field: "data_json", message: "must be a JSON object" });
    return {};
  }
  return parsed as Record<string, unknown>;
}

/**
 * Checks an event a producer publishes and returns it as the webhooks service will fan it out:
 * the type must be publishable (EventTypeUnknownError, EventTypeNotPublishableError); tenant id,
 * event id, occurred_at and the snapshot must be well-formed, the snapshot exactly its type's
 * schema (InvalidPublishedEventError naming every problem). `newId` supplies the id when none was given; `now` the time.
 */
export function validatePublishedEvent(
  input: PublishEventInput,
  options: { now: Date; newId: () => string },
): PlatformEvent {
  checkPublishableType(input.type);
  const problems: PublishedEventProblem[] = [];
  if (!TENANT_ID.test(input.tenantId)) {
    problems.push({ field: "tenant_id", message: "must be 1-64 characters of A-Z a-z 0-9 _ -" });
  }
  let occurredAt = options.now;
  if (input.occurredAt !== "") {
    const parsed = parseRfc3339(input.occurredAt);
    if (parsed) occurredAt = parsed;
    else problems.push({ field: "occurred_at", message: "must be an RFC 3339 timestamp" });
  }
  const parsed: PublishedEventProblem[] = [];
  const object = parseObject(input.dataJson, parsed);
  problems.push(...parsed, ...(parsed.length === 0 ? snapshotProblems(input.type, object) : []));
  const event: PlatformEvent = {
    id: input.eventId === "" ? options.newId() : input.eventId,
    type: input.type,
    tenant: input.tenantId,
    occurredAt,
    object,
  };
  if (problems.length === 0) problems.push(...envelopeProblems(event));
  if (problems.length > 0) throw new InvalidPublishedEventError(problems);
  return event;
}

function envelopeProblems(event: PlatformEvent): PublishedEventProblem[] {
  try {
    buildEnvelope(event, { apiVersion: currentApiVersion, livemode: true });
    return [];
  } catch (error) {
    if (!(error instanceof InvalidEnvelopeError)) throw error;
    return error.problems.map((problem) => ({
      field: problem.path === "id" ? "event_id" : problem.path,
      message: problem.message,
    }));
  }
}

/** The fields of a BusEvent message (proto), transport-neutral. */
export interface BusEventFields {
  id: string;
  type: string;
  tenantId: string;
  occurredAt: string;
  dataJson: string;
}

/**
 * A message from the bus as a PlatformEvent, or the problems that make it undeliverable (it is
 * then dropped, never retried). Any catalog type is accepted here; which endpoints it reaches is
 * the filters' business.
 */
export function platformEventFromBus(
  fields: BusEventFields,
): { ok: true; event: PlatformEvent } | { ok: false; problems: string[] } {
  const problems: PublishedEventProblem[] = [];
  if (!TENANT_ID.test(fields.tenantId)) problems.push({ field: "tenant_id", message: "malformed" });
  const occurredAt = parseRfc3339(fields.occurredAt);
  if (!occurredAt) problems.push({ field: "occurred_at", message: "must be an RFC 3339 timestamp" });
  const object = parseObject(fields.dataJson, problems);
  const event: PlatformEvent = {
    id: fields.id,
    type: fields.type,
    tenant: fields.tenantId,
    occurredAt: occurredAt ?? new Date(Number.NaN),
    object,
  };
  if (problems.length === 0) problems.push(...envelopeProblems(event));
  if (problems.length > 0) return { ok: false, problems: problems.map((p) => `${p.field}: ${p.message}`) };
  return { ok: true, event };
}
