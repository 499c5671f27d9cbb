import { describe, expect, it } from "vitest";
import { buildEnvelope, serializeEnvelope } from "./envelope.js";
import { eventCatalog } from "./event-catalog.js";
import { exampleSnapshot } from "./event-catalog-schema.js";
import { buildTestEvent, testableEventTypes } from "./test-event.js";

const now = new Date("2026-11-22T10:00:00.000Z");

describe("test events", () => {
  it("covers exactly the subscribable types of the catalog", () => {
    const subscribable = eventCatalog.filter((event) => event.subscribable).map((event) => event.type);
    expect([...testableEventTypes].sort()).toEqual([...subscribable].sort());
    expect(testableEventTypes).toHaveLength(15);
  });

  it.each(testableEventTypes)("builds the catalog's example snapshot, with ids and a state or code, for %s", (type) => {
    const event = buildTestEvent({ id: "evt_0123456789abcdef01234567", type, tenant: "ten_1", now });
    expect(event).toMatchObject({ id: "evt_0123456789abcdef01234567", type, tenant: "ten_1", occurredAt: now });
    expect(event.object).toEqual(exampleSnapshot(type));
    for (const key of Object.keys(event.object)) expect(key).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    expect(Object.keys(event.object).some((key) => key.endsWith("_id") || key === "month")).toBe(true);
    const stateOrCode = ["state", "status", "threshold", "channel", "reason_code", "resolution_code"];
    expect(Object.keys(event.object).some((key) => stateOrCode.includes(key))).toBe(true);
    expect(JSON.stringify(event.object)).not.toMatch(/text|message|body/);
    const body = JSON.parse(
      serializeEnvelope(buildEnvelope(event, { apiVersion: "2026-07-01", livemode: false })).toString(),
    ) as Record<string, unknown>;
    expect(body).toMatchObject({ type, api_version: "2026-07-01", livemode: false, tenant: "ten_1" });
  });

  it("refuses unknown and coming-soon types with their codes", () => {
    const build = (type: string) => () => buildTestEvent({ id: "evt_1", type, tenant: "t", now });
    expect(build("booking.exploded")).toThrow(expect.objectContaining({ code: "webhook.event_type_unknown" }));
    expect(build("booking.*")).toThrow(expect.objectContaining({ code: "webhook.event_type_unknown" }));
    expect(build("invoice.issued")).toThrow(expect.objectContaining({ code: "webhook.event_type_not_subscribable" }));
  });
});
