import { newNatsNamespace } from "@platform/local-stack/nats-namespace";
/**
 * The pipeline's Postgres and JetStream steps in process, against the real servers: fan-out
 * (idempotent on the event), the worker's claim / hold / record transitions, the sweeper and the
 * janitor. The cross-process behaviour is in delivery-pipeline.test.ts.
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { createLogger } from "@platform/service-kit/logger";
import { connect, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { createAttemptStore, type AttemptToRecord } from "../src/db/attempt-store.js";
import { startJanitor } from "../src/delivery/janitor.js";
import { startSweeper, sweepOverdueDeliveries } from "../src/delivery/sweeper.js";
import { currentApiVersion } from "../src/domain/endpoint.js";
import type { PlatformEvent } from "../src/domain/envelope.js";
import { newDeliveryId, newEndpointId, newEventId } from "../src/domain/ids.js";
import type { DeliveryQueue } from "../src/domain/delivery-job.js";
import { createJetStreamDeliveryQueue } from "../src/events/delivery-queue.js";
import { decodeBusMessage, fanOutEvent, internalEvent } from "../src/events/fanout.js";
import { BusEvent } from "@platform/proto/webhooks/v1";
import { declareStreams, deleteStreams, streamNames, type StreamNames } from "../src/events/streams.js";
import { createEventService } from "../src/grpc/event-service.js";
import type { CallContext } from "@platform/service-kit/grpc-server";

const delays = [1000, 2000, 3000, 4000, 5000, 6000, 7000];

describe("the pipeline's database steps (real Postgres and NATS)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let names: StreamNames;
  let queue: DeliveryQueue;

  const queuedJobs = async () => (await jsm.streams.info(names.deliveries)).state.messages;

  async function endpoint(tenant: string, fields: Record<string, unknown> = {}): Promise<string> {
    const id = newEndpointId();
    await db("endpoints").insert({
      id,
      tenant_id: tenant,
      url: "https://hooks.example.com/x",
      description: "d",
      event_types: ["booking.*"],
      api_version: currentApiVersion,
      secret_sealed: "v1.k1.x.y.z",
      ...fields,
    });
    return id;
  }

  async function delivery(endpointId: string, fields: Record<string, unknown> = {}) {
    const eventId = newEventId();
    await db("events").insert({
      id: eventId,
      tenant_id: "t",
      type: "booking.created",
      occurred_at: new Date(),
      data: "{}",
      livemode: true,
    });
    const id = newDeliveryId(new Date());
    await db("deliveries").insert({
      id,
      tenant_id: "t",
      endpoint_id: endpointId,
      event_id: eventId,
      event_type: "booking.created",
      livemode: true,
      payload: "{}",
      status: "pending",
      next_attempt_at: new Date(),
      generation: 1,
      ...fields,
    });
    return { id, eventId };
  }

  beforeAll(async () => {
    scratch = await createScratchDatabase("whstore");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 4 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    jsm = await nc.jetstreamManager();
    names = streamNames(newNatsNamespace());
    await declareStreams(jsm, names);
    queue = createJetStreamDeliveryQueue({ js: nc.jetstream(), db, namespace: names.namespace });
  });
  afterAll(async () => {
    if (jsm) await deleteStreams(jsm, names);
    await nc?.close();
    await db?.destroy();
    await scratch?.drop();
  });
  beforeEach(async () => {
    await jsm.streams.purge(names.deliveries);
  });

  describe("fan-out", () => {
    const event: PlatformEvent = {
      id: "evt_fanout_1",
      type: "booking.created",
      tenant: "fan",
      occurredAt: new Date("2026-11-22T10:00:00Z"),
      object: { booking_id: "bk_1" },
    };

    it("removes the event's outbox row with the event; a publish racing that commit adds no row back", async () => {
      const events = createEventService({ db, namespace: names.namespace, kickRelay: () => undefined });
      const context = {} as CallContext;
      const request = {
        tenantId: "race",
        type: "booking.created",
        dataJson: '{"booking_id":"bk_1"}',
        eventId: "evt_race_1",
        occurredAt: "",
      };
      expect(await events.publishEvent(request, context)).toEqual({ eventId: "evt_race_1", duplicate: false });
      expect(await db("outbox").where({ event_id: "evt_race_1" }).count<{ count: string }[]>()).toEqual([
        { count: "1" },
      ]);
      const message = await db("outbox").where({ event_id: "evt_race_1" }).first<{ payload: Buffer }>("payload");
      const decoded = decodeBusMessage(message.payload);
      if (!decoded.ok) throw new Error(decoded.problems.join("; "));

      // The fan-out records the event and deletes the row; before it commits, the same event is
      // published again (a retry whose first answer was lost): its insert waits for that commit.
      const fanout = await db.transaction();
      await fanout("events").insert({
        id: "evt_race_1",
        tenant_id: "race",
        type: "booking.created",
        occurred_at: new Date(),
        data: "{}",
        livemode: true,
      });
      await fanout("outbox").where({ event_id: "evt_race_1" }).delete();
      const retry = events.publishEvent(request, context);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await fanout.commit();
      expect(await retry).toEqual({ eventId: "evt_race_1", duplicate: true });
      expect(await db("outbox").where({ event_id: "evt_race_1" }).count<{ count: string }[]>()).toEqual([
        { count: "0" },
      ]);

      // A redelivered event removes a row left behind all the same.
      await db("outbox").insert({ event_id: "evt_race_1", subject: "s", payload: message.payload });
      expect((await fanOutEvent(db, queue, decoded.event)).newEvent).toBe(false);
      expect(await db("outbox").where({ event_id: "evt_race_1" }).count<{ count: string }[]>()).toEqual([
        { count: "0" },
      ]);
    });

    it("makes one delivery per matching, non-deleted endpoint of the tenant, and never a second", async () => {
      const active = await endpoint("fan");
      const paused = await endpoint("fan", { paused: true, event_types: ["booking.created"] });
      await endpoint("fan", { event_types: ["conversation.started"] });
      await endpoint("fan", { deleted_at: new Date() });
      await endpoint("other");

      const first = await fanOutEvent(db, queue, event);
      expect(first).toMatchObject({ newEvent: true, deliveries: 2 });
      expect(first.jobs.map((job) => job.endpointId)).toEqual([active]);
      const rows = await db("deliveries")
        .where({ event_id: event.id })
        .select<{ endpoint_id: string; payload: string }[]>("*");
      const byEndpoint = new Map(rows.map((row) => [row.endpoint_id, row]));
      expect(byEndpoint.get(active)).toMatchObject({ status: "pending", generation: 1, attempts: 0, livemode: true });
      expect(byEndpoint.get(paused)).toMatchObject({ status: "held", generation: 1, next_attempt_at: null });
      expect(JSON.parse(byEndpoint.get(active)!.payload)).toEqual({
        id: "evt_fanout_1",
        type: "booking.created",
        api_version: currentApiVersion,
        occurred_at: "2026-11-22T10:00:00.000Z",
        tenant: "fan",
        livemode: true,
        data: { object: { booking_id: "bk_1" } },
      });
      expect(await queuedJobs()).toBe(1);

      // Again (a redelivery): no new delivery; the still-unattempted job is enqueued again and the
      // stream's duplicate window keeps one.
      const second = await fanOutEvent(db, queue, event);
      expect(second).toMatchObject({ newEvent: false, deliveries: 0 });
      expect(second.jobs).toEqual(first.jobs);
      expect(await db("deliveries").where({ event_id: event.id }).count<{ count: string }[]>()).toEqual([
        { count: "2" },
      ]);
      expect(await queuedJobs()).toBe(1);

      // Once attempted, a redelivery of the event enqueues nothing.
      await db("deliveries").where({ event_id: event.id, endpoint_id: active }).update({ attempts_total: 1 });
      expect((await fanOutEvent(db, queue, event)).jobs).toEqual([]);
    });

    it("tells the internal facts of the tenant projections from webhook events", () => {
      const bus = (type: string) =>
        BusEvent.encode({
          id: "evt_x",
          type,
          tenantId: "t",
          occurredAt: new Date().toISOString(),
          dataJson: "{}",
        }).finish();
      expect(internalEvent(bus("notification.sent"))).toEqual({ id: "evt_x", type: "notification.sent" });
      expect(internalEvent(bus("webhook.endpoint_dead_lettered"))).toEqual({
        id: "evt_x",
        type: "webhook.endpoint_dead_lettered",
      });
      expect(internalEvent(bus("booking.created"))).toBeUndefined();
      expect(internalEvent(Buffer.from("not protobuf at all, surely"))).toBeUndefined();
    });

    it("drops what cannot be an event", () => {
      expect(decodeBusMessage(Buffer.from("not protobuf at all, surely")).ok).toBe(false);
      expect(decodeBusMessage(new Uint8Array()).ok).toBe(false);
    });
  });

  describe("claiming and recording attempts", () => {
    let kicks = 0;
    const store = () => createAttemptStore(db, { namespace: names.namespace, kick: () => (kicks += 1) });
    const failed = (): AttemptToRecord => ({
      attemptedAt: new Date(),
      durationMs: 5,
      succeeded: false,
      statusCode: 503,
      error: "non_2xx_status",
      responseBody: Buffer.from("down"),
      responseBodyTruncated: false,
    });

    it("claims a due delivery once; another generation is stale; a claimed one is leased", async () => {
      const { id } = await delivery(await endpoint("c"));
      expect((await store().claim({ deliveryId: id, generation: 2 }, 60_000)).kind).toBe("stale");
      expect((await store().claim({ deliveryId: "dlv_missing", generation: 1 }, 60_000)).kind).toBe("stale");
      const claim = await store().claim({ deliveryId: id, generation: 1 }, 60_000);
      expect(claim.kind).toBe("claimed");
      expect(claim.kind === "claimed" && claim.delivery.dueInMs).toBeLessThanOrEqual(0);
      expect((await store().claim({ deliveryId: id, generation: 1 }, 60_000)).kind).toBe("leased");
      await store().release(id);
      expect((await store().claim({ deliveryId: id, generation: 1 }, 60_000)).kind).toBe("claimed");
    });

    it("rate limit: one GCRA slot per attempt, 1/rate apart whoever asks; a held slot is not asked for again; an attempt spends it; a pause drops it", async () => {
      const endpointId = await endpoint("c", { rate_limit: 10 });
      const claimed = async (id: string) => {
        const claim = await store().claim({ deliveryId: id, generation: 1 }, 60_000);
        if (claim.kind !== "claimed") throw new Error(`not claimed: ${claim.kind}`);
        return claim.delivery;
      };
      const slotOf = async (id: string) =>
        db("deliveries").where({ id }).first<{
          rate_slot_attempt: number | null;
          next_attempt_at: Date;
          leased: boolean;
          slot_ms: string | null;
        }>("rate_slot_attempt", "next_attempt_at", db.raw("leased_until is not null as leased"), db.raw("floor(extract(epoch from rate_slot_at) * 1000000)::text as slot_ms"));
      const first = await delivery(endpointId);
      const firstClaim = await claimed(first.id);
      expect({ rateLimit: firstClaim.rateLimit, rateSlotHeld: firstClaim.rateSlotHeld }).toEqual({
        rateLimit: 10,
        rateSlotHeld: false,
      });
      // Twenty more, claimed before the first slot is given: their slots are asked for right after
      // it (within its 100 ms, however loaded the machine is while they are created).
      const more = await Promise.all(Array.from({ length: 20 }, () => delivery(endpointId)));
      const claims = await Promise.all(more.map((d) => claimed(d.id)));
      expect(await store().reserveRateSlot(firstClaim, 10)).toBeLessThanOrEqual(0);
      // At once, on separate connections: each waits for the row and takes the next slot.
      const waits = await Promise.all(claims.map((claim) => store().reserveRateSlot(claim, 10)));
      expect(await slotOf(first.id)).toMatchObject({ rate_slot_attempt: 0, leased: true });
      expect(waits.every((wait) => wait > 0 && wait <= 2_000)).toBe(true);
      const slots = await Promise.all([first, ...more].map(async (d) => BigInt((await slotOf(d.id)).slot_ms!)));
      const sorted = slots.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
      // Exactly 100 ms (in microseconds) apart: the tolerance of burst 1 is zero.
      expect(sorted.slice(1).map((slot, i) => Number(slot - sorted[i]!))).toEqual(sorted.slice(1).map(() => 100_000));
      const later = await slotOf(more[0]!.id);
      expect(later).toMatchObject({ rate_slot_attempt: 0, leased: false });
      expect(BigInt(later.next_attempt_at.getTime()) * 1000n).toBeLessThanOrEqual(BigInt(later.slot_ms!));

      // Claimed again: it holds its slot. After an attempt (a retry) it needs a new one.
      expect((await claimed(more[0]!.id)).rateSlotHeld).toBe(true);
      await store().recordAttempt(more[0]!.id, failed(), delays);
      await db("deliveries")
        .where({ id: more[0]!.id })
        .update({ next_attempt_at: new Date(Date.now() - 1) });
      expect((await claimed(more[0]!.id)).rateSlotHeld).toBe(false);

      // A pause drops the slot: the resumed delivery takes a new one.
      await db("endpoints").where({ id: endpointId }).update({ paused: true });
      await store().holdClaimed(more[1]!.id);
      expect(await slotOf(more[1]!.id)).toMatchObject({ rate_slot_attempt: null });

      // Another endpoint has its own row: its first slot is now.
      const other = await delivery(await endpoint("c", { rate_limit: 10 }));
      expect(await store().reserveRateSlot(await claimed(other.id), 10)).toBeLessThanOrEqual(0);
    });

    it("reports how long an early job must wait", async () => {
      const { id } = await delivery(await endpoint("c"), { next_attempt_at: new Date(Date.now() + 60_000) });
      const claim = await store().claim({ deliveryId: id, generation: 1 }, 60_000);
      expect(claim.kind === "claimed" && claim.delivery.dueInMs).toBeGreaterThan(50_000);
    });

    it("holds a claimed delivery of a paused endpoint, and dead-letters one of a deleted endpoint", async () => {
      const held = await delivery(await endpoint("c", { paused: true }), { status: "awaiting_retry", attempts: 2 });
      const claim = await store().claim({ deliveryId: held.id, generation: 1 }, 60_000);
      expect(claim.kind === "claimed" && claim.delivery.paused).toBe(true);
      await store().holdClaimed(held.id);
      expect(
        await db("deliveries").where({ id: held.id }).first("status", "attempts", "next_attempt_at", "leased_until"),
      ).toEqual({
        status: "held",
        attempts: 2,
        next_attempt_at: null,
        leased_until: null,
      });

      const gone = await delivery(await endpoint("c", { deleted_at: new Date() }));
      const goneClaim = await store().claim({ deliveryId: gone.id, generation: 1 }, 60_000);
      expect(goneClaim.kind === "claimed" && goneClaim.delivery.deleted).toBe(true);
      await store().abandonClaimed(gone.id);
      expect(await db("deliveries").where({ id: gone.id }).first("status", "last_error")).toEqual({
        status: "dead_lettered",
        last_error: "endpoint_deleted",
      });
    });

    it("schedules retries on the delays, dead-letters the 8th failure and pauses the endpoint for attention", async () => {
      const endpointId = await endpoint("c");
      const { id } = await delivery(endpointId);
      for (let n = 1; n <= 7; n++) {
        const before = Date.now();
        const recorded = await store().recordAttempt(id, failed(), delays);
        expect(recorded).toMatchObject({ number: n, status: "awaiting_retry", deadLettered: false });
        const wait = recorded.nextAttemptAt!.getTime() - before;
        expect(wait).toBeGreaterThanOrEqual(delays[n - 1]!);
        expect(wait).toBeLessThan(delays[n - 1]! + 5_000);
      }
      expect(await store().recordAttempt(id, failed(), delays)).toMatchObject({
        number: 8,
        status: "dead_lettered",
        nextAttemptAt: null,
        deadLettered: true,
      });
      expect(
        await db("endpoints")
          .where({ id: endpointId })
          .first("paused", "attention_reason", "attention_cause", "version"),
      ).toEqual({
        paused: true,
        attention_reason: "webhook.endpoint_dead_lettered",
        attention_cause: "http_5xx",
        version: "2",
      });
      // The attention item's event, in the same transaction, and the relay kicked.
      const announced = (await db("outbox").select<{ subject: string; payload: Buffer }[]>("subject", "payload"))
        .map((row) => ({ subject: row.subject, event: BusEvent.decode(row.payload) }))
        .filter((row) => row.event.type === "webhook.endpoint_dead_lettered");
      expect(
        announced.map((row) => [row.subject, row.event.tenantId, JSON.parse(row.event.dataJson) as unknown]),
      ).toEqual([
        [
          `${names.namespace}events.t.webhook.endpoint_dead_lettered`,
          "t",
          {
            endpoint_id: endpointId,
            delivery_id: id,
            reason_code: "webhook.endpoint_dead_lettered",
            cause: "http_5xx",
          },
        ],
      ]);
      expect(kicks).toBe(1);
      const attempts = await db("attempts")
        .where({ delivery_id: id })
        .orderBy("number")
        .select("number", "status_code");
      expect(attempts).toHaveLength(8);
      expect(attempts.every((a: { status_code: number }) => a.status_code === 503)).toBe(true);
    });

    it("stores the due time a Retry-After asked for: the attempt's end + the wait, written to the row", async () => {
      const { id } = await delivery(await endpoint("c"));
      // Due in the future, as a real one is (the sweeper's test takes overdue rows).
      const at = Date.now();
      const attempt = { ...failed(), attemptedAt: new Date(at), durationMs: 250 };
      const recorded = await store().recordAttempt(id, { ...attempt, retryAfterMs: 120_000 }, delays);
      expect(recorded).toMatchObject({ number: 1, status: "awaiting_retry" });
      expect(recorded.nextAttemptAt).toEqual(new Date(at + 250 + 120_000));
      expect(await db("deliveries").where({ id }).first("attempts", "next_attempt_at")).toEqual({
        attempts: 1,
        next_attempt_at: new Date(at + 250 + 120_000),
      });
    });

    it("keeps a delivery held when its endpoint was paused during a failed attempt; a success still ends it", async () => {
      const endpointId = await endpoint("c");
      const first = await delivery(endpointId);
      const second = await delivery(endpointId);
      await db("endpoints").where({ id: endpointId }).update({ paused: true });
      expect(await store().recordAttempt(first.id, failed(), delays)).toMatchObject({
        status: "held",
        nextAttemptAt: null,
      });
      expect(
        await store().recordAttempt(second.id, { ...failed(), succeeded: true, statusCode: 200, error: null }, delays),
      ).toMatchObject({ status: "succeeded" });
    });
  });

  it("the sweeper re-enqueues overdue, unleased deliveries with a new generation", async () => {
    const endpointId = await endpoint("s");
    const lost = await delivery(endpointId, { next_attempt_at: new Date(Date.now() - 10 * 60_000) });
    const lostRetry = await delivery(endpointId, {
      status: "awaiting_retry",
      attempts: 3,
      next_attempt_at: new Date(Date.now() - 10 * 60_000),
    });
    const leased = await delivery(endpointId, {
      next_attempt_at: new Date(Date.now() - 10 * 60_000),
      leased_until: new Date(Date.now() + 60_000),
    });
    const recent = await delivery(endpointId, { next_attempt_at: new Date(Date.now() - 60_000) });
    const held = await delivery(endpointId, { status: "held", next_attempt_at: null });

    const jobs = await sweepOverdueDeliveries(db, queue, { overdueMs: 5 * 60_000 });
    expect(jobs.map((job) => job.deliveryId).sort()).toEqual([lost.id, lostRetry.id].sort());
    expect(jobs.every((job) => job.generation === 2 && job.endpointId === endpointId)).toBe(true);
    expect(await queuedJobs()).toBe(2);
    const generations = await db("deliveries")
      .whereIn("id", [leased.id, recent.id, held.id])
      .pluck<number[]>("generation");
    expect(generations).toEqual([1, 1, 1]);
    // The lost job, should it turn up after all, is stale now.
    expect((await createAttemptStore(db).claim({ deliveryId: lost.id, generation: 1 }, 60_000)).kind).toBe("stale");
  });

  it("the janitor and the sweeper run on their intervals", async () => {
    const logger = createLogger("test", "silent");
    const endpointId = await endpoint("periodic");
    const expired = await delivery(endpointId, {
      created_at: new Date(Date.now() - 2 * 86_400_000),
      status: "succeeded",
    });
    const overdue = await delivery(endpointId, { next_attempt_at: new Date(Date.now() - 60_000) });
    const janitor = startJanitor({ db, logger, intervalMs: 100, retentionMs: 86_400_000, batchSize: 10 });
    const sweeper = startSweeper({ db, queue, logger, intervalMs: 100, overdueMs: 30_000 });
    try {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const gone = (await db("deliveries").where({ id: expired.id }).first("id")) === undefined;
        const swept = await db("deliveries").where({ id: overdue.id }).first<{ generation: number }>("generation");
        if (gone && swept.generation > 1) break;
        if (Date.now() > deadline) throw new Error("the janitor or the sweeper did not run");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await Promise.all([janitor.stop(), sweeper.stop()]);
    }
  });
});
