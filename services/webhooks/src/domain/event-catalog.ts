/**
 * The event catalog of spec 6.3: the ten event types (and issue 22's tenant.plan_changed and
 * usage.testing_allowance_threshold_crossed, issue 32's notification.delivered|read|failed) with their emission status and the five
 * coming-soon types that are published but cannot be subscribed to; and the endpoint filters over
 * it (exact types or a family wildcard such as `capability.*`).
 */
import { InvalidArgumentError } from "@platform/service-kit/errors";

/**
 * `emitted`: the platform delivers it. `delivery_not_established`: subscribable, but delivery is
 * not established yet (callers poll). `coming_soon`: listed, not subscribable.
 */
export type EmissionStatus = "emitted" | "delivery_not_established" | "coming_soon";

export interface EventType {
  type: string;
  /** The part before the dot: what a wildcard such as `capability.*` names. */
  family: string;
  description: string;
  emission: EmissionStatus;
  subscribable: boolean;
}

function entry(type: string, emission: EmissionStatus, description: string): EventType {
  return {
    type,
    family: type.slice(0, type.indexOf(".")),
    description,
    emission,
    subscribable: emission !== "coming_soon",
  };
}

export const eventCatalog: readonly EventType[] = Object.freeze([
  entry(
    "conversation.started",
    "emitted",
    "first AI-handled message from a customer on a channel in 24 hours, or one voice call",
  ),
  entry("booking.created", "emitted", "the AI created a booking on the tenant's platform"),
  entry("booking.cancelled", "emitted", "the AI cancelled a booking"),
  entry("usage.threshold_crossed", "emitted", "monthly token usage reached the soft or hard cap set via usage limits"),
  entry(
    "usage.testing_allowance_threshold_crossed",
    "emitted",
    "a tenant on the testing plan used 80% or 100% of its free sends of the UTC month (each once per month)",
  ),
  entry("capability.suspended", "emitted", "a verified capability failed its check; the AI stops using it"),
  entry("capability.restored", "emitted", "the failing check passed again"),
  entry(
    "escalation.raised",
    "emitted",
    "retained compatibility name for human attention (also an open item in GET /attention until resolved)",
  ),
  entry("escalation.resolved", "emitted", "retained compatibility name for closure (closes its attention item)"),
  entry("tenant.activated", "emitted", "provisioning finished and validation passed"),
  entry(
    "tenant.plan_changed",
    "emitted",
    "the tenant moved between the testing and commercial plans (agreement signed, card saved, or back)",
  ),
  entry(
    "tenant.validation_failed",
    "emitted",
    "activation stalled on a failed capability check; the snapshot names the failing step",
  ),
  entry(
    "notification.delivered",
    "emitted",
    "the channel reports a notification reached the customer's device (once per notification; also when only its read is reported)",
  ),
  entry("notification.read", "emitted", "the channel reports the customer read a notification (once per notification)"),
  entry(
    "notification.failed",
    "emitted",
    "a notification did not reach the customer: the channel refused it at send, or reported it failed later (once per notification; reason_code says why)",
  ),
  entry("channel.disconnected", "coming_soon", "the messaging channel disconnected"),
  entry("channel.quality_changed", "coming_soon", "the messaging channel's quality rating changed"),
  entry("task.completed", "coming_soon", "a task finished"),
  entry("invoice.issued", "coming_soon", "an invoice was issued"),
  entry("usage.snapshot", "coming_soon", "a periodic usage snapshot"),
]);

const byType = new Map(eventCatalog.map((event) => [event.type, event]));

export function findEventType(type: string): EventType | undefined {
  return byType.get(type);
}

export function isSubscribableEventType(type: string): boolean {
  return byType.get(type)?.subscribable === true;
}

/** Most filters one endpoint may hold; the catalog is small, so more is always a mistake. */
export const maxEventFilters = 50;

export type EventFilterProblemCode =
  | "webhook.event_filters_required"
  | "webhook.event_filters_too_many"
  | "webhook.event_type_unknown"
  | "webhook.event_type_not_subscribable";

export interface EventFilterProblem {
  code: EventFilterProblemCode;
  /** The filter at fault (shortened), or undefined for a problem with the list as a whole. */
  filter?: string;
  message: string;
}

/** Refused filters; `problems` names every one, each with its own stable code. */
export class InvalidEventFiltersError extends InvalidArgumentError {
  override name = "InvalidEventFiltersError";
  constructor(readonly problems: readonly EventFilterProblem[]) {
    super("webhook.event_filters_invalid", problems.map((problem) => problem.message).join("; "));
  }
}

const WILDCARD = /^([a-z][a-z0-9_]*)\.\*$/;

/** A partner-supplied value as errors may echo it: never an unbounded string. */
function shorten(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}...` : value;
}

function quote(value: string): string {
  return JSON.stringify(shorten(value));
}

function filterProblem(filter: string): EventFilterProblem | undefined {
  const wildcard = WILDCARD.exec(filter);
  if (wildcard) {
    const family = eventCatalog.filter((event) => event.family === wildcard[1]);
    if (family.length === 0) {
      return { code: "webhook.event_type_unknown", filter, message: `${quote(filter)} names no event family` };
    }
    if (!family.some((event) => event.subscribable)) {
      return {
        code: "webhook.event_type_not_subscribable",
        filter,
        message: `${quote(filter)} names a family whose events are all coming soon`,
      };
    }
    return undefined;
  }
  const known = byType.get(filter);
  if (!known) return { code: "webhook.event_type_unknown", filter, message: `${quote(filter)} is not an event type` };
  if (!known.subscribable) {
    return {
      code: "webhook.event_type_not_subscribable",
      filter,
      message: `${quote(filter)} is coming soon and cannot be subscribed to yet`,
    };
  }
  return undefined;
}

/** Every problem with a list of filters; empty when the list is acceptable. */
export function eventFilterProblems(filters: readonly string[]): EventFilterProblem[] {
  if (filters.length === 0) {
    return [{ code: "webhook.event_filters_required", message: "at least one event filter is required" }];
  }
  const problems: EventFilterProblem[] = [];
  const distinct = [...new Set(filters)];
  if (distinct.length > maxEventFilters) {
    problems.push({
      code: "webhook.event_filters_too_many",
      message: `at most ${maxEventFilters} event filters are allowed`,
    });
  }
  for (const filter of distinct) {
    const problem = filterProblem(filter);
    if (problem) problems.push({ ...problem, filter: shorten(filter) });
  }
  return problems;
}

/**
 * Validates filters (exact subscribable types or family wildcards) and returns them without
 * duplicates, in the order given. Throws InvalidEventFiltersError naming every problem.
 */
export function validateEventFilters(filters: readonly string[]): string[] {
  const problems = eventFilterProblems(filters);
  if (problems.length > 0) throw new InvalidEventFiltersError(problems);
  return [...new Set(filters)];
}

/**
 * Whether an event of `type` goes to an endpoint with these filters. Only subscribable types
 * match: a wildcard such as `usage.*` does not reach the coming-soon `usage.snapshot` until it
 * becomes subscribable.
 */
export function matchesFilters(type: string, filters: readonly string[]): boolean {
  const event = byType.get(type);
  if (!event?.subscribable) return false;
  return filters.some((filter) => filter === type || filter === `${event.family}.*`);
}
