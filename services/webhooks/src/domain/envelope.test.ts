import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildEnvelope,
  InvalidEnvelopeError,
  serializeEnvelope,
  toSnakeCase,
  withSnakeCaseKeys,
  type PlatformEvent,
} from "./envelope.js";

const event: PlatformEvent = {
  id: "evt_01J9Z",
  type: "usage.threshold_crossed",
  tenant: "acme",
  occurredAt: new Date("2026-07-01T10:15:30.123Z"),
  object: {
    threshold: "soft_cap",
    unit: "tokens",
    month: "2026-07",
    tokens_used: 8000,
    cap: 8000,
    crossed_at: new Date("2026-07-01T10:15:30.000Z"),
  },
};

describe("buildEnvelope", () => {
  it("builds the spec 2.7 envelope with snake_case keys and the endpoint's pinned version", () => {
    expect(buildEnvelope(event, { apiVersion: "2026-07-01", livemode: true })).toEqual({
      id: "evt_01J9Z",
      type: "usage.threshold_crossed",
      api_version: "2026-07-01",
      occurred_at: "2026-07-01T10:15:30.123Z",
      tenant: "acme",
      livemode: true,
      data: {
        object: {
          cap: 8000,
          crossed_at: "2026-07-01T10:15:30.000Z",
          month: "2026-07",
          threshold: "soft_cap",
          tokens_used: 8000,
          unit: "tokens",
        },
      },
    });
  });

  it("marks test deliveries livemode false", () => {
    expect(buildEnvelope(event, { apiVersion: "2026-07-01", livemode: false }).livemode).toBe(false);
  });

  it("renders occurred_at in UTC whatever the input's offset was", () => {
    const envelope = buildEnvelope(
      { ...event, occurredAt: new Date("2026-07-01T12:00:00+02:00") },
      { apiVersion: "2026-07-01", livemode: true },
    );
    expect(envelope.occurred_at).toBe("2026-07-01T10:00:00.000Z");
  });

  it.each([
    ["a camelCase key", { tokensUsed: 1 }, ["data.object.tokensUsed"]],
    ["a nested camelCase key", { booking: { startsAt: "x" } }, ["data.object.booking.startsAt"]],
    ["a key inside an array", { steps: [{ ok: true }, { stepName: "a" }] }, ["data.object.steps[1].stepName"]],
    ["NaN", { cap: Number.NaN }, ["data.object.cap"]],
    ["Infinity", { cap: Number.POSITIVE_INFINITY }, ["data.object.cap"]],
    ["a bigint", { cap: 10n }, ["data.object.cap"]],
    ["a function", { cap: () => 1 }, ["data.object.cap"]],
    ["a class instance", { at: new Map() }, ["data.object.at"]],
    ["an invalid date", { at: new Date("nope") }, ["data.object.at"]],
  ])("refuses a snapshot with %s, naming the path", (_label, object, paths) => {
    try {
      buildEnvelope({ ...event, object }, { apiVersion: "2026-07-01", livemode: true });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidEnvelopeError);
      expect((error as InvalidEnvelopeError).code).toBe("webhook.envelope_invalid");
      expect((error as InvalidEnvelopeError).problems.map((problem) => problem.path)).toEqual(paths);
    }
  });

  it("names every problem with the event itself", () => {
    try {
      buildEnvelope(
        { id: "has space", type: "Booking", tenant: "", occurredAt: new Date(Number.NaN), object: { a: 1 } },
        { apiVersion: "2026-07-01", livemode: true },
      );
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidEnvelopeError).problems.map((problem) => problem.path)).toEqual([
        "id",
        "type",
        "tenant",
        "occurred_at",
      ]);
    }
  });

  it("drops undefined fields as JSON would", () => {
    const envelope = buildEnvelope({ ...event, object: { a: 1, b: undefined } }, { apiVersion: "v", livemode: true });
    expect(envelope.data.object).toEqual({ a: 1 });
  });
});

describe("serializeEnvelope", () => {
  it("writes compact UTF-8 JSON with the envelope keys in the spec's order", () => {
    const body = serializeEnvelope(
      buildEnvelope({ ...event, object: { note: "café", b: 2, a: 1 } }, { apiVersion: "2026-07-01", livemode: true }),
    );
    expect(body.toString("utf8")).toBe(
      '{"id":"evt_01J9Z","type":"usage.threshold_crossed","api_version":"2026-07-01",' +
        '"occurred_at":"2026-07-01T10:15:30.123Z","tenant":"acme","livemode":true,' +
        '"data":{"object":{"a":1,"b":2,"note":"café"}}}',
    );
    expect(body.includes(Buffer.from("café", "utf8"))).toBe(true);
  });

  it("gives the same bytes whatever order the snapshot's keys were inserted in (property)", () => {
    const snapshot = fc.dictionary(
      fc.stringMatching(/^[a-z][a-z0-9]{0,6}(_[a-z0-9]{1,4})?$/),
      fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
    );
    fc.assert(
      fc.property(snapshot, (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        const options = { apiVersion: "2026-07-01", livemode: true };
        const first = serializeEnvelope(buildEnvelope({ ...event, object }, options));
        const second = serializeEnvelope(buildEnvelope({ ...event, object: reversed }, options));
        expect(first.equals(second)).toBe(true);
        expect(JSON.parse(first.toString("utf8"))).toMatchObject({ data: { object } });
      }),
    );
  });
});

describe("snake_case conversion for camelCase producers", () => {
  it.each([
    ["tokensUsed", "tokens_used"],
    ["tokens_used", "tokens_used"],
    ["HTTPStatus", "http_status"],
    ["bookingId2", "booking_id2"],
    ["step-name", "step_name"],
  ])("%s -> %s", (key, expected) => {
    expect(toSnakeCase(key)).toBe(expected);
  });

  it("renames keys at every depth, leaving values alone", () => {
    expect(withSnakeCaseKeys({ bookingId: "bk_1", steps: [{ stepName: "camelValue" }], at: { startsAt: 1 } })).toEqual({
      booking_id: "bk_1",
      steps: [{ step_name: "camelValue" }],
      at: { starts_at: 1 },
    });
  });
});
