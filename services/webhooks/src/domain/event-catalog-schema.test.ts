import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { currentApiVersion } from "./endpoint.js";
import { buildEnvelope, envelopeKeys, serializeEnvelope } from "./envelope.js";
import { eventCatalog } from "./event-catalog.js";
import {
  catalogCounts,
  envelopeSchema,
  exampleEnvelope,
  exampleEventId,
  exampleOccurredAt,
  exampleSnapshot,
  exampleTenant,
  JSON_SCHEMA_DIALECT,
  type JsonSchema,
} from "./event-catalog-schema.js";
import { eventSnapshotSchemas, snapshotProblems, snapshotSchemas } from "./event-snapshot.js";

const ajv = new Ajv2020({ strict: true, allErrors: true });
formats.default(ajv);

const subscribable = eventCatalog.filter((event) => event.subscribable).map((event) => event.type);
const validatorOf = (type: string) => ajv.compile(envelopeSchema(type)!);
const valid = (type: string, envelope: unknown) => validatorOf(type)(envelope);
const clone = <T>(value: T): T => structuredClone(value);

describe("the catalog's schemas and examples", () => {
  it("has a 2020-12 schema and an example for every subscribable type, none for the coming-soon ones", () => {
    for (const event of eventCatalog) {
      if (event.subscribable) {
        expect(envelopeSchema(event.type)?.$schema, event.type).toBe(JSON_SCHEMA_DIALECT);
        expect(exampleEnvelope(event.type), event.type).toBeDefined();
      } else {
        expect(envelopeSchema(event.type), event.type).toBeUndefined();
        expect(exampleEnvelope(event.type), event.type).toBeUndefined();
      }
    }
    expect(Object.keys(eventSnapshotSchemas).sort()).toEqual([...subscribable].sort());
  });

  it.each(subscribable)("%s: the example validates against the schema (ajv, strict mode)", (type) => {
    const validate = validatorOf(type);
    const example = exampleEnvelope(type)!;
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(example).toMatchObject({
      id: exampleEventId,
      type,
      api_version: currentApiVersion,
      occurred_at: exampleOccurredAt,
      tenant: exampleTenant,
      livemode: true,
    });
    // The snapshot checks of the service (publish and test delivery) accept it too.
    expect(snapshotProblems(type, exampleSnapshot(type)!, eventSnapshotSchemas)).toEqual([]);
  });

  it("the example is the body the envelope code builds, key order included", () => {
    for (const type of subscribable) {
      const body = serializeEnvelope(
        buildEnvelope(
          {
            id: exampleEventId,
            type,
            tenant: exampleTenant,
            occurredAt: new Date(exampleOccurredAt),
            object: eventSnapshotSchemas[type]!.example,
          },
          { apiVersion: currentApiVersion, livemode: true },
        ),
      ).toString("utf8");
      expect(JSON.stringify(exampleEnvelope(type)), type).toBe(body);
    }
  });

  it("names exactly the envelope's keys, all required, in the body's order", () => {
    const body = JSON.parse(
      serializeEnvelope(
        buildEnvelope(
          { id: "evt_1", type: "booking.created", tenant: "t", occurredAt: new Date(), object: { booking_id: "b" } },
          { apiVersion: currentApiVersion, livemode: false },
        ),
      ).toString("utf8"),
    ) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([...envelopeKeys]);
    for (const type of subscribable) {
      const schema = envelopeSchema(type)!;
      expect(Object.keys(schema.properties as JsonSchema), type).toEqual([...envelopeKeys]);
      expect(schema.required, type).toEqual([...envelopeKeys]);
      expect(schema.additionalProperties, type).toBe(false);
    }
  });

  describe("rejects an envelope that is not what the service sends", () => {
    const type = "booking.cancelled";
    const example = () =>
      clone(exampleEnvelope(type)!) as Record<string, unknown> & {
        data: { object: Record<string, unknown> };
      };
    it.each([
      ["another type", (e: ReturnType<typeof example>) => (e.type = "booking.created")],
      ["another api_version", (e: ReturnType<typeof example>) => (e.api_version = "2025-01-01")],
      ["livemode as a string", (e: ReturnType<typeof example>) => (e.livemode = "false")],
      ["an occurred_at that is not RFC 3339", (e: ReturnType<typeof example>) => (e.occurred_at = "yesterday")],
      ["a key the envelope has not", (e: ReturnType<typeof example>) => (e.created = 1)],
      ["no data.object", (e: ReturnType<typeof example>) => (e.data = {} as never)],
      ["a required snapshot field missing", (e: ReturnType<typeof example>) => delete e.data.object.booking_id],
      ["a snapshot field not in the schema", (e: ReturnType<typeof example>) => (e.data.object.note = "x")],
      ["text in an identifier", (e: ReturnType<typeof example>) => (e.data.object.booking_id = "my dog is sick")],
      ["a state not in the enum", (e: ReturnType<typeof example>) => (e.data.object.status = "lost")],
      [
        "a reason code of another family",
        (e: ReturnType<typeof example>) => (e.data.object.reason_code = "escalation.complaint"),
      ],
    ])("%s", (_, mutate) => {
      const envelope = example();
      expect(valid(type, envelope)).toBe(true);
      mutate(envelope);
      expect(valid(type, envelope)).toBe(false);
    });
  });

  it.each(subscribable)("%s: the schema and the service's snapshot check agree on every field", (type) => {
    const definition = eventSnapshotSchemas[type]!;
    const check = (object: Record<string, unknown>) => {
      const envelope = clone(exampleEnvelope(type)!) as { data: { object: unknown } };
      envelope.data.object = object;
      return [valid(type, envelope), snapshotProblems(type, object, eventSnapshotSchemas).length === 0];
    };
    const base = () => clone(definition.example) as Record<string, unknown>;
    expect(check(base())).toEqual([true, true]);
    expect(check({ ...base(), unknown_field: "x" })).toEqual([false, false]);
    for (const [field, rule] of Object.entries(definition.fields)) {
      const without = base();
      delete without[field];
      const accepted = rule.required !== true;
      expect(check(without), `${field} absent`).toEqual([accepted, accepted]);
      expect(check({ ...base(), [field]: "has spaces, so it is text" }), `${field} text`).toEqual([false, false]);
      expect(check({ ...base(), [field]: null }), `${field} null`).toEqual([false, false]);
    }
  });

  it("the publishable types' snapshots are the ones PublishEvent checks", () => {
    for (const [type, schema] of Object.entries(snapshotSchemas)) expect(eventSnapshotSchemas[type]).toBe(schema);
  });

  it("the counts the documents state are the catalog's", () => {
    const counts = catalogCounts();
    expect(counts).toEqual({
      total: eventCatalog.length,
      subscribable: subscribable.length,
      comingSoon: eventCatalog.filter((event) => event.emission === "coming_soon").length,
    });
    const openapi = JSON.parse(
      readFileSync(new URL("../../../gateway/openapi/tenant-v1.json", import.meta.url), "utf8"),
    ) as { paths: Record<string, Record<string, { description: string }>> };
    const description = openapi.paths["/tenants/{tenantId}/webhooks/event-types"]!.get!.description;
    const stated = /All (\d+) event types: (\d+) subscribable.* and (\d+) `coming_soon`/.exec(description);
    expect(stated?.slice(1).map(Number)).toEqual([counts.total, counts.subscribable, counts.comingSoon]);
    const doc = readFileSync(new URL("../../../../docs/webhooks.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("## Event catalog"), doc.indexOf("### Platform event snapshots"));
    const documented = /(\d+) event types: (\d+) subscribable[^.]*and (\d+) coming soon/.exec(section);
    expect(documented?.slice(1).map(Number)).toEqual([counts.total, counts.subscribable, counts.comingSoon]);
    expect(/the (\d+) catalog entries/.exec(doc)?.[1]).toBe(String(counts.total));
    const rows = section.split("\n").filter((line) => /^\| `[a-z_]+\.[a-z_]+`/.test(line));
    expect(rows).toHaveLength(counts.total);
  });
});
