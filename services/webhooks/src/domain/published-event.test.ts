import { describe, expect, it } from "vitest";
import {
  EventTypeNotPublishableError,
  EventTypeUnknownError,
  InvalidPublishedEventError,
  parseRfc3339,
  platformEventFromBus,
  validatePublishedEvent,
  type PublishEventInput,
} from "./published-event.js";

const now = new Date("2026-11-22T10:00:00.000Z");
const options = { now, newId: () => "evt_assigned" };
const input: PublishEventInput = {
  tenantId: "acme",
  type: "booking.created",
  dataJson: JSON.stringify({ booking_id: "bk_1", starts_at: "2026-12-01T09:00:00Z" }),
  eventId: "",
  occurredAt: "",
};

function problemsOf(fn: () => unknown) {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidPublishedEventError);
    return (error as InvalidPublishedEventError).problems.map((p) => p.field);
  }
  throw new Error("expected InvalidPublishedEventError");
}

describe("validatePublishedEvent", () => {
  it("assigns an id and the time when none are given", () => {
    expect(validatePublishedEvent(input, options)).toEqual({
      id: "evt_assigned",
      type: "booking.created",
      tenant: "acme",
      occurredAt: now,
      object: { booking_id: "bk_1", starts_at: "2026-12-01T09:00:00Z" },
    });
  });

  it("keeps the producer's id and occurred_at", () => {
    const event = validatePublishedEvent(
      { ...input, eventId: "order-42:created", occurredAt: "2026-11-21T08:30:00+01:00" },
      options,
    );
    expect(event.id).toBe("order-42:created");
    expect(event.occurredAt.toISOString()).toBe("2026-11-21T07:30:00.000Z");
  });

  it("accepts the conversation, booking and escalation families, each with its snapshot", () => {
    const snapshots: Record<string, object> = {
      "conversation.started": { conversation_id: "cv_1", channel: "whatsapp" },
      "booking.cancelled": { booking_id: "bk_1", reason_code: "booking.cancelled_by_customer" },
      "escalation.raised": { escalation_id: "es_1", reason_code: "escalation.ai_uncertain" },
      "escalation.resolved": { escalation_id: "es_1" },
    };
    for (const [type, object] of Object.entries(snapshots)) {
      expect(validatePublishedEvent({ ...input, type, dataJson: JSON.stringify(object) }, options).type).toBe(type);
    }
  });

  it("refuses usage.*, capability.* and tenant.* as not publishable, saying where they come from", () => {
    const refusals = {
      "usage.threshold_crossed": /usage metering/,
      "capability.suspended": /capability report/,
      "capability.restored": /capability report/,
      "tenant.activated": /activation/,
      "tenant.validation_failed": /activation/,
    };
    for (const [type, where] of Object.entries(refusals)) {
      const call = () => validatePublishedEvent({ ...input, type, dataJson: '{"tenant_id":"acme"}' }, options);
      expect(call).toThrow(EventTypeNotPublishableError);
      expect(call).toThrow(where);
      try {
        call();
      } catch (error) {
        expect((error as EventTypeNotPublishableError).code).toBe("event.type_not_publishable");
      }
    }
  });

  it("refuses unknown and coming-soon types as unknown", () => {
    for (const type of ["booking.exploded", "channel.disconnected", "", "booking.*"]) {
      const call = () => validatePublishedEvent({ ...input, type }, options);
      expect(call).toThrow(EventTypeUnknownError);
      try {
        call();
      } catch (error) {
        expect((error as EventTypeUnknownError).code).toBe("event.type_unknown");
      }
    }
  });

  it("names every problem at once", () => {
    expect(
      problemsOf(() =>
        validatePublishedEvent({ ...input, tenantId: "a b", occurredAt: "yesterday", dataJson: "[1]" }, options),
      ),
    ).toEqual(["tenant_id", "occurred_at", "data_json"]);
    expect(problemsOf(() => validatePublishedEvent({ ...input, dataJson: "{" }, options))).toEqual(["data_json"]);
    expect(problemsOf(() => validatePublishedEvent({ ...input, tenantId: "x".repeat(65) }, options))).toEqual([
      "tenant_id",
    ]);
  });

  it("refuses a snapshot that is not snake_case and a malformed event id", () => {
    expect(
      problemsOf(() => validatePublishedEvent({ ...input, dataJson: JSON.stringify({ bookingId: "b" }) }, options)),
    ).toEqual(["data.object.bookingId", "data.object.booking_id"]);
    expect(problemsOf(() => validatePublishedEvent({ ...input, eventId: "has space" }, options))).toEqual(["event_id"]);
  });
});

describe("parseRfc3339", () => {
  it("accepts RFC 3339 only", () => {
    expect(parseRfc3339("2026-11-22T10:00:00Z")?.toISOString()).toBe("2026-11-22T10:00:00.000Z");
    expect(parseRfc3339("2026-11-22T10:00:00.123456789-05:00")).toBeDefined();
    expect(parseRfc3339("2026-11-22")).toBeUndefined();
    expect(parseRfc3339("2026-13-40T10:00:00Z")).toBeUndefined();
    expect(parseRfc3339("Sun, 22 Nov 2026 10:00:00 GMT")).toBeUndefined();
  });
});

describe("platformEventFromBus", () => {
  const fields = {
    id: "evt_1",
    type: "usage.threshold_crossed",
    tenantId: "acme",
    occurredAt: "2026-11-22T10:00:00.000Z",
    dataJson: '{"cap":8000}',
  };
  it("takes any well-formed event, usage.* included", () => {
    expect(platformEventFromBus(fields)).toEqual({
      ok: true,
      event: {
        id: "evt_1",
        type: "usage.threshold_crossed",
        tenant: "acme",
        occurredAt: new Date(fields.occurredAt),
        object: { cap: 8000 },
      },
    });
  });
  it("reports what makes a message undeliverable", () => {
    const result = platformEventFromBus({ ...fields, id: "", occurredAt: "", dataJson: "null" });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems).toEqual([
      "occurred_at: must be an RFC 3339 timestamp",
      "data_json: must be a JSON object",
    ]);
  });
});
