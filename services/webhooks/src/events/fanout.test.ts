/**
 * The fan-out's message handling without NATS or Postgres: bus messages that record how they were
 * answered, a store that records the batches it was given. Against the real database and
 * nats-server: services/webhooks/test (pipeline-store, delivery-pipeline, ...).
 */
import { BusEvent } from "@platform/proto/webhooks/v1";
import { createLogger } from "@platform/service-kit/logger";
import { describe, expect, it } from "vitest";
import type { EventToRecord } from "../db/event-store.js";
import { createFanoutHandler, type FanOutResult, type FanoutMessage, type FanoutStore } from "./fanout.js";

const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

function busEvent(id: string, type = "booking.created"): Uint8Array {
  return BusEvent.encode({
    id,
    type,
    tenantId: "acme",
    occurredAt: "2026-11-22T10:00:00.000Z",
    dataJson: JSON.stringify({ booking_id: "bk_1", starts_at: "2026-12-01T09:00:00Z" }),
  }).finish();
}

type Answer = ["ack"] | ["nak", number | undefined] | ["term"];

/** A bus message that records how it was answered (by event id, or by its sequence). */
function message(data: Uint8Array, answers: Map<string | number, Answer[]>, key: string | number, parent?: string) {
  const given: Answer[] = [];
  answers.set(key, given);
  const msg = {
    data,
    subject: "events.acme.booking.created",
    seq: typeof key === "number" ? key : 1,
    headers: parent === undefined ? undefined : { get: (name: string) => (name === "traceparent" ? parent : "") },
    ack: () => void given.push(["ack"]),
    nak: (delay?: number) => void given.push(["nak", delay]),
    term: () => void given.push(["term"]),
  };
  return msg as unknown as FanoutMessage;
}

/** The messages as one fetch hands them over: all in the same turn, or one turn apart each. */
async function* arriving(messages: FanoutMessage[], oneTurnApart = false): AsyncIterable<FanoutMessage> {
  for (const msg of messages) {
    if (oneTurnApart) await new Promise((resolve) => setImmediate(resolve));
    yield msg;
  }
}

/** A store that records the batches it fans out; a batch holding a `failing` event fails whole. */
function fakeStore(options: { failing?: string; redelivered?: string[]; outboxFails?: boolean } = {}) {
  const batches: EventToRecord[][] = [];
  const consumed: string[] = [];
  const store: FanoutStore = {
    fanOut(batch) {
      batches.push([...batch]);
      if (batch.some((item) => item.event.id === options.failing)) return Promise.reject(new Error("Postgres away"));
      return Promise.resolve(
        batch.map((item): FanOutResult =>
          options.redelivered?.includes(item.event.id)
            ? { newEvent: false, deliveries: 0, jobs: [] }
            : { newEvent: true, deliveries: 2, jobs: [{ deliveryId: `dlv_${item.event.id}`, generation: 1 }] },
        ),
      );
    },
    consumeFromOutbox(eventId) {
      consumed.push(eventId);
      return options.outboxFails ? Promise.reject(new Error("Postgres away")) : Promise.resolve();
    },
  };
  return { store, batches, consumed };
}

function handler(store: FanoutStore) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("webhooks", "debug", {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  const counted = { eventsFannedOut: 0 };
  const handle = createFanoutHandler({
    store,
    logger,
    metrics: { eventsFannedOut: { inc: () => void (counted.eventsFannedOut += 1) } },
  });
  return { handle, lines, counted };
}

const idsOf = (batch: EventToRecord[]) => batch.map((item) => item.event.id);

describe("the fan-out of a fetch's messages (no NATS, no Postgres)", () => {
  it("fans out the events that arrive in the same turn as one batch, then acks each; counts the new ones", async () => {
    const answers = new Map<string | number, Answer[]>();
    const { store, batches } = fakeStore({ redelivered: ["evt_2"] });
    const { handle, counted, lines } = handler(store);
    await handle(
      arriving([
        message(busEvent("evt_1"), answers, "evt_1", traceparent),
        message(busEvent("evt_2"), answers, "evt_2"),
        message(busEvent("evt_3"), answers, "evt_3"),
      ]),
    );
    expect(batches.map(idsOf)).toEqual([["evt_1", "evt_2", "evt_3"]]);
    expect(batches[0]![0]).toMatchObject({ event: { id: "evt_1", tenant: "acme", type: "booking.created" } });
    // The span (no-op tracer) carries the message's trace on to the delivery rows.
    expect(batches[0]![0]!.traceparent).toBe(traceparent);
    expect([...answers.values()]).toEqual([[["ack"]], [["ack"]], [["ack"]]]);
    expect(counted.eventsFannedOut).toBe(2);
    expect(lines.filter((line) => line.msg === "event fanned out")).toEqual([
      expect.objectContaining({ eventId: "evt_1", trace_id: "0af7651916cd43dd8448eb211c80319c", jobs: 1 }),
      expect.objectContaining({ eventId: "evt_2", newEvent: false, jobs: 0 }),
      expect.objectContaining({ eventId: "evt_3", deliveries: 2, jobs: 1 }),
    ]);
  });

  it("makes one batch per turn when the events arrive one turn apart", async () => {
    const answers = new Map<string | number, Answer[]>();
    const { store, batches } = fakeStore();
    const { handle } = handler(store);
    await handle(
      arriving(
        ["evt_1", "evt_2"].map((id) => message(busEvent(id), answers, id)),
        true,
      ),
    );
    expect(batches.map(idsOf)).toEqual([["evt_1"], ["evt_2"]]);
  });

  it("does a failed batch again event by event, so only the bad event comes back (nak 2 s)", async () => {
    const answers = new Map<string | number, Answer[]>();
    const { store, batches } = fakeStore({ failing: "evt_bad" });
    const { handle, counted, lines } = handler(store);
    await handle(arriving(["evt_1", "evt_bad", "evt_3"].map((id) => message(busEvent(id), answers, id))));
    expect(batches.map(idsOf)).toEqual([["evt_1", "evt_bad", "evt_3"], ["evt_1"], ["evt_bad"], ["evt_3"]]);
    expect(Object.fromEntries(answers)).toEqual({
      evt_1: [["ack"]],
      evt_bad: [["nak", 2_000]],
      evt_3: [["ack"]],
    });
    expect(counted.eventsFannedOut).toBe(2);
    expect(lines.filter((line) => line.level === "warn")).toEqual([
      expect.objectContaining({ eventId: "evt_bad", msg: "fan-out failed; the event comes back" }),
    ]);
  });

  it("sets aside an internal fact: its outbox row removed, then acked, and no fan-out", async () => {
    const answers = new Map<string | number, Answer[]>();
    const { store, batches, consumed } = fakeStore();
    const { handle } = handler(store);
    await handle(arriving([message(busEvent("evt_fact", "notification.sent"), answers, "evt_fact")]));
    expect(consumed).toEqual(["evt_fact"]);
    expect(batches).toEqual([]);
    expect(answers.get("evt_fact")).toEqual([["ack"]]);
  });

  it("naks an internal fact whose outbox row cannot be removed (2 s)", async () => {
    const answers = new Map<string | number, Answer[]>();
    const { store } = fakeStore({ outboxFails: true });
    const { handle } = handler(store);
    await handle(arriving([message(busEvent("evt_fact", "webhook.endpoint_dead_lettered"), answers, "evt_fact")]));
    expect(answers.get("evt_fact")).toEqual([["nak", 2_000]]);
  });

  it("terminates a message that can never be an event, naming its problems, beside events fanned out", async () => {
    const answers = new Map<string | number, Answer[]>();
    const { store, batches } = fakeStore();
    const { handle, lines } = handler(store);
    await handle(
      arriving([
        message(Buffer.from("not protobuf at all, surely"), answers, 7),
        message(busEvent("evt_1"), answers, "evt_1"),
      ]),
    );
    expect(answers.get(7)).toEqual([["term"]]);
    expect(answers.get("evt_1")).toEqual([["ack"]]);
    expect(batches.map(idsOf)).toEqual([["evt_1"]]);
    expect(lines.filter((line) => line.level === "error")).toEqual([
      expect.objectContaining({ seq: 7, msg: "an event on the bus cannot be delivered; dropped" }),
    ]);
  });
});
