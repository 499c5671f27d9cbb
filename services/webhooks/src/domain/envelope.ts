/**
 * The event envelope of spec 2.7 and the exact bytes sent as the request body. The body is
 * deterministic: the envelope's keys in the spec's order and every key of `data.object` sorted,
 * so the same event for the same endpoint always yields the same bytes (and the same signature
 * for the same `t`).
 */
import { InvalidArgumentError } from "@platform/service-kit/errors";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface Envelope {
  id: string;
  type: string;
  api_version: string;
  occurred_at: string;
  tenant: string;
  livemode: boolean;
  data: { object: { [key: string]: JsonValue } };
}

/** An event as the webhooks service receives it from the bus. */
export interface PlatformEvent {
  id: string;
  type: string;
  tenant: string;
  occurredAt: Date;
  /** The snapshot of the affected object at `occurredAt`, snake_case keys. */
  object: Readonly<Record<string, unknown>>;
}

export interface EnvelopeProblem {
  /** Where in the envelope, e.g. `data.object.booking.startsAt`. */
  path: string;
  message: string;
}

/** An event that cannot be turned into an envelope; `problems` names every one. */
export class InvalidEnvelopeError extends InvalidArgumentError {
  override name = "InvalidEnvelopeError";
  constructor(readonly problems: readonly EnvelopeProblem[]) {
    super("webhook.envelope_invalid", problems.map((problem) => `${problem.path}: ${problem.message}`).join("; "));
  }
}

const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** `tokensUsed` -> `tokens_used`, `HTTPStatus` -> `http_status`; already snake_case stays. */
export function toSnakeCase(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/[-\s]+/g, "_")
    .toLowerCase();
}

/** Renames every object key (at any depth) to snake_case; for producers that speak camelCase. */
export function withSnakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withSnakeCaseKeys);
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [toSnakeCase(key), withSnakeCaseKeys(inner)]),
    );
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * Copies a snapshot into plain JSON with sorted keys: Dates become ISO 8601 UTC strings; keys
 * that are not snake_case and values JSON cannot carry (undefined, functions, bigint, NaN,
 * Infinity, class instances) are problems.
 */
function toJson(value: unknown, path: string, problems: EnvelopeProblem[]): JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
    problems.push({ path, message: "numbers must be finite" });
    return null;
  }
  if (value instanceof Date) {
    if (!Number.isNaN(value.getTime())) return value.toISOString();
    problems.push({ path, message: "invalid date" });
    return null;
  }
  if (Array.isArray(value)) return value.map((item, index) => toJson(item, `${path}[${index}]`, problems));
  if (isPlainObject(value)) {
    const entries: [string, JsonValue][] = [];
    for (const key of Object.keys(value).sort()) {
      const inner = value[key];
      if (inner === undefined) continue; // as JSON.stringify does: an absent field
      if (!SNAKE_CASE.test(key)) problems.push({ path: `${path}.${key}`, message: "keys must be snake_case" });
      entries.push([key, toJson(inner, `${path}.${key}`, problems)]);
    }
    // fromEntries defines own properties, so even a key named __proto__ stays data.
    return Object.fromEntries(entries);
  }
  problems.push({ path, message: `a ${typeof value} cannot be sent as JSON` });
  return null;
}

/** An event id: the platform's are `evt_` + 24 hex; a producer's own 1-128 of A-Z a-z 0-9 _ . : -. */
export const EVENT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** An event type: `family.name`. */
export const EVENT_TYPE = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;

/** The envelope's keys in the order the body carries them (serializeEnvelope). */
export const envelopeKeys = ["id", "type", "api_version", "occurred_at", "tenant", "livemode", "data"] as const;

/**
 * Builds the envelope of one event for one endpoint. `apiVersion` is the endpoint's pinned
 * version; `livemode` is false only for synthetic test deliveries.
 */
export function buildEnvelope(event: PlatformEvent, options: { apiVersion: string; livemode: boolean }): Envelope {
  const problems: EnvelopeProblem[] = [];
  if (!EVENT_ID.test(event.id))
    problems.push({ path: "id", message: "must be 1-128 characters of A-Z a-z 0-9 _ . : -" });
  if (!EVENT_TYPE.test(event.type)) problems.push({ path: "type", message: "must be family.name" });
  if (event.tenant === "") problems.push({ path: "tenant", message: "must not be empty" });
  if (Number.isNaN(event.occurredAt.getTime())) problems.push({ path: "occurred_at", message: "invalid date" });
  if (!isPlainObject(event.object)) problems.push({ path: "data.object", message: "must be a plain object" });
  const object = toJson(event.object, "data.object", problems);
  if (problems.length > 0) throw new InvalidEnvelopeError(problems);
  return {
    id: event.id,
    type: event.type,
    api_version: options.apiVersion,
    occurred_at: event.occurredAt.toISOString(),
    tenant: event.tenant,
    livemode: options.livemode,
    data: { object: object as { [key: string]: JsonValue } },
  };
}

/**
 * The request body: compact UTF-8 JSON, envelope keys in the spec's order, `data.object` keys
 * sorted. Sign and send exactly these bytes, and store them as "the exact payload sent".
 */
export function serializeEnvelope(envelope: Envelope): Buffer {
  const ordered = {
    id: envelope.id,
    type: envelope.type,
    api_version: envelope.api_version,
    occurred_at: envelope.occurred_at,
    tenant: envelope.tenant,
    livemode: envelope.livemode,
    data: { object: toJson(envelope.data.object, "data.object", []) },
  };
  return Buffer.from(JSON.stringify(ordered), "utf8");
}
