/**
 * The catalog's JSON Schemas (draft 2020-12) and examples: for each subscribable event type, the
 * schema of its whole envelope as delivered for the current api_version (envelope.ts) with its
 * snapshot (event-snapshot.ts), and an example envelope built by the same buildEnvelope and
 * serializeEnvelope that build every delivery's body. Nothing here is written by hand per type:
 * the snapshot definitions that check published events are the ones converted, so a schema cannot
 * say something the checks do not.
 */
import { currentApiVersion } from "./endpoint.js";
import { buildEnvelope, EVENT_ID, serializeEnvelope, type Envelope, type JsonValue } from "./envelope.js";
import { eventCatalog } from "./event-catalog.js";
import {
  ACTOR,
  eventSnapshotSchemas,
  IDENTIFIER,
  MONTH,
  RFC_3339,
  type SnapshotFieldRule,
  type SnapshotFields,
} from "./event-snapshot.js";
import { TENANT_ID } from "./published-event.js";

export const JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";

export type JsonSchema = { [key: string]: JsonValue };

/** The example envelope's fixed parts (its data.object is the type's example snapshot). */
export const exampleEventId = "evt_5f2c9a0d41b7e3c86a19d0f2";
export const exampleTenant = "acme";
export const exampleOccurredAt = "2026-07-01T10:15:30.000Z";

const timestamp = { type: "string", format: "date-time", pattern: RFC_3339.source };

function fieldSchema(rule: SnapshotFieldRule): JsonSchema {
  const description = rule.description;
  switch (rule.kind) {
    case "identifier":
      return { type: "string", pattern: IDENTIFIER.source, description };
    case "timestamp":
      return { ...timestamp, description };
    case "enum":
      return rule.values.length === 1
        ? { type: "string", const: rule.values[0]!, description }
        : { type: "string", enum: [...rule.values], description };
    case "code":
      return { type: "string", enum: [...rule.codes], description };
    case "count":
      return { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description };
    case "month":
      return { type: "string", pattern: MONTH.source, description };
    case "actor":
      return { type: "string", pattern: ACTOR.source, description };
    case "list":
      return { type: "array", description, items: objectSchema(rule.fields) };
  }
}

function objectSchema(fields: SnapshotFields, description?: string): JsonSchema {
  const properties = Object.fromEntries(Object.entries(fields).map(([name, rule]) => [name, fieldSchema(rule)]));
  return {
    type: "object",
    ...(description === undefined ? {} : { description }),
    required: Object.entries(fields)
      .filter(([, rule]) => rule.required)
      .map(([name]) => name),
    additionalProperties: false,
    properties,
  };
}

/** The schema of each envelope key; `keyof Envelope` makes a key added to the envelope a type error here. */
function envelopeProperties(type: string, snapshot: JsonSchema): Record<keyof Envelope, JsonSchema> {
  return {
    id: {
      type: "string",
      pattern: EVENT_ID.source,
      description: "The event's id: the same in every delivery of the event (deduplicate on it).",
    },
    type: { type: "string", const: type, description: "The event type." },
    api_version: {
      type: "string",
      const: currentApiVersion,
      description: "The payload version the endpoint is pinned to; this schema is for this version.",
    },
    occurred_at: { ...timestamp, description: "When it happened (RFC 3339, UTC)." },
    tenant: { type: "string", pattern: TENANT_ID.source, description: "The tenant the event is about." },
    livemode: { type: "boolean", description: "False only for test deliveries." },
    data: {
      type: "object",
      required: ["object"],
      additionalProperties: false,
      properties: { object: snapshot },
    },
  };
}

/** The JSON Schema of `type`'s envelope, or undefined for a type without a snapshot (coming soon). */
export function envelopeSchema(type: string): JsonSchema | undefined {
  const snapshot = eventSnapshotSchemas[type];
  const entry = eventCatalog.find((event) => event.type === type);
  if (!snapshot || !entry?.subscribable) return undefined;
  const properties = envelopeProperties(type, objectSchema(snapshot.fields, `data.object: ${snapshot.description}.`));
  return {
    $schema: JSON_SCHEMA_DIALECT,
    title: type,
    description: `${entry.description} (api_version ${currentApiVersion}).`,
    type: "object",
    required: Object.keys(properties),
    additionalProperties: false,
    properties,
  };
}

/**
 * The example envelope of `type` exactly as a delivery's body carries it (key order included):
 * built and serialized by the envelope code from the type's example snapshot.
 */
export function exampleEnvelope(type: string): JsonSchema | undefined {
  const snapshot = eventSnapshotSchemas[type];
  if (!snapshot || envelopeSchema(type) === undefined) return undefined;
  const envelope = buildEnvelope(
    {
      id: exampleEventId,
      type,
      tenant: exampleTenant,
      occurredAt: new Date(exampleOccurredAt),
      object: snapshot.example,
    },
    { apiVersion: currentApiVersion, livemode: true },
  );
  return JSON.parse(serializeEnvelope(envelope).toString("utf8")) as JsonSchema;
}

/** The example's data.object (what a test delivery of `type` carries), or undefined. */
export function exampleSnapshot(type: string): { [key: string]: JsonValue } | undefined {
  const example = exampleEnvelope(type);
  return example === undefined ? undefined : (example.data as { object: { [key: string]: JsonValue } }).object;
}

export interface CatalogCounts {
  /** Every type listed. */
  total: number;
  /** Types an endpoint may subscribe to (each has a schema and an example). */
  subscribable: number;
  /** Listed, not subscribable yet. */
  comingSoon: number;
}

export function catalogCounts(): CatalogCounts {
  const subscribable = eventCatalog.filter((event) => event.subscribable).length;
  return { total: eventCatalog.length, subscribable, comingSoon: eventCatalog.length - subscribable };
}
