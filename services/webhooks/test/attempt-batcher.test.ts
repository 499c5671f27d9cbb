/**
 * Group commit of attempt records (attempt-batcher.ts) against the real Postgres: the same rules
 * per attempt as AttemptStore.recordAttempt (retries on the delays, the 8th failure dead-letters
 * and pauses the endpoint, a paused endpoint holds), attempts that finish together written in
 * one transaction, and one bad delivery failing only its own caller.
 */
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { createAttemptBatcher } from "../src/db/attempt-batcher.js";
import { BusEvent } from "@platform/proto/webhooks/v1";
import type { AttemptToRecord, AttemptStore } from "../src/db/attempt-store.js";
import { createBatchedAttemptStore } from "../src/db/batched-attempt-store.js";
import { currentApiVersion } from "../src/domain/endpoint.js";
import { newDeliveryId, newEndpointId, newEventId } from "../src/domain/ids.js";

const delays = [1000, 2000, 3000, 4000, 5000, 6000, 7000];

describe("batched attempt records (real Postgres)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let record: AttemptStore["recordAttempt"];
  const statements: string[] = [];

  const failed = (): AttemptToRecord => ({
    attemptedAt: new Date(),
    durationMs: 5,
    succeeded: false,
    statusCode: 503,
    error: "non_2xx_status",
    responseBody: Buffer.from("down"),
    responseBodyTruncated: false,
  });
  const succeeded = (): AttemptToRecord => ({ ...failed(), succeeded: true, statusCode: 200, error: null });

  async function endpoint(fields: Record<string, unknown> = {}): Promise<string> {
    const id = newEndpointId();
    await db("endpoints").insert({
      id,
      tenant_id: "b",
      url: "https://hooks.example.com/x",
      description: "d",
      event_types: ["booking.*"],
      api_version: currentApiVersion,
      secret_sealed: "v1.k1.x.y.z",
      ...fields,
    });
    return id;
  }

  async function delivery(endpointId: string, traceparent?: string): Promise<string> {
    const eventId = newEventId();
    await db("events").insert({
      id: eventId,
      tenant_id: "b",
      type: "booking.created",
      occurred_at: new Date(),
      data: "{}",
      livemode: true,
    });
    const id = newDeliveryId(new Date());
    await db("deliveries").insert({
      id,
      tenant_id: "b",
      endpoint_id: endpointId,
      event_id: eventId,
      event_type: "booking.created",
      livemode: true,
      payload: "{}",
      status: "pending",
      next_attempt_at: new Date(),
      leased_until: new Date(Date.now() + 60_000),
      generation: 1,
      ...(traceparent ? { traceparent } : {}),
    });
    return id;
  }

  let kicks = 0;

  beforeAll(async () => {
    scratch = await createScratchDatabase("whbatch");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 4 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    db.on("query", (query: { sql: string }) => statements.push(query.sql));
    record = createAttemptBatcher(db, { events: { namespace: "wbatch.", kick: () => (kicks += 1) } });
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  it("schedules retries on the delays, dead-letters the 8th failure and pauses the endpoint for attention", async () => {
    const endpointId = await endpoint();
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const id = await delivery(endpointId, traceparent);
    for (let n = 1; n <= 7; n++) {
      const before = Date.now();
      const recorded = await record(id, failed(), delays);
      expect(recorded).toMatchObject({ number: n, status: "awaiting_retry", deadLettered: false });
      const wait = recorded.nextAttemptAt!.getTime() - before;
      expect(wait).toBeGreaterThanOrEqual(delays[n - 1]!);
      expect(wait).toBeLessThan(delays[n - 1]! + 5_000);
    }
    expect(await record(id, failed(), delays)).toMatchObject({
      number: 8,
      status: "dead_lettered",
      nextAttemptAt: null,
      deadLettered: true,
    });
    expect(
      await db("endpoints").where({ id: endpointId }).first("paused", "attention_reason", "attention_cause", "version"),
    ).toEqual({
      paused: true,
      attention_reason: "webhook.endpoint_dead_lettered",
      attention_cause: "http_5xx",
      version: "2",
    });
    // The attention item's event, in the batch's transaction and in the delivery's trace; the
    // relay kicked after the commit.
    const announced = (
      await db("outbox").select<{ subject: string; payload: Buffer; traceparent: string | null }[]>(
        "subject",
        "payload",
        "traceparent",
      )
    ).map((entry) => {
      const event = BusEvent.decode(entry.payload);
      return [entry.subject, event.type, JSON.parse(event.dataJson) as unknown, entry.traceparent];
    });
    expect(announced).toEqual([
      [
        "wbatch.events.b.webhook.endpoint_dead_lettered",
        "webhook.endpoint_dead_lettered",
        { endpoint_id: endpointId, delivery_id: id, reason_code: "webhook.endpoint_dead_lettered", cause: "http_5xx" },
        traceparent,
      ],
    ]);
    expect(kicks).toBe(1);
    const row: unknown = await db("deliveries")
      .where({ id })
      .first("status", "attempts", "attempts_total", "leased_until", "last_status_code", "last_error");
    expect(row).toEqual({
      status: "dead_lettered",
      attempts: 8,
      attempts_total: 8,
      leased_until: null,
      last_status_code: 503,
      last_error: "non_2xx_status",
    });
    const attempts = await db("attempts")
      .where({ delivery_id: id })
      .orderBy("number")
      .select("number", "response_body");
    expect(attempts.map((a: { number: number }) => a.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect((attempts[0] as { response_body: Buffer }).response_body.toString()).toBe("down");
  });

  it("stores the due time a Retry-After asked for: the attempt's end + the wait, written to the row", async () => {
    const id = await delivery(await endpoint());
    // Due in the future, as a real one is (the sweeper's test takes overdue rows).
    const at = Date.now();
    const attempt = {
      ...failed(),
      statusCode: 429,
      attemptedAt: new Date(at),
      durationMs: 250,
    };
    const recorded = await record(id, { ...attempt, retryAfterMs: 120_000 }, delays);
    expect(recorded).toMatchObject({ number: 1, status: "awaiting_retry" });
    expect(recorded.nextAttemptAt).toEqual(new Date(at + 250 + 120_000));
    expect(await db("deliveries").where({ id }).first("attempts", "next_attempt_at")).toEqual({
      attempts: 1,
      next_attempt_at: new Date(at + 250 + 120_000),
    });
  });

  it("keeps a delivery held when its endpoint was paused during a failed attempt; a success still ends it", async () => {
    const endpointId = await endpoint();
    const first = await delivery(endpointId);
    const second = await delivery(endpointId);
    await db("endpoints").where({ id: endpointId }).update({ paused: true });
    const [held, ended] = await Promise.all([record(first, failed(), delays), record(second, succeeded(), delays)]);
    expect(held).toMatchObject({ status: "held", nextAttemptAt: null });
    expect(ended).toMatchObject({ status: "succeeded" });
  });

  it("writes attempts that finish together in one transaction; a missing delivery fails only its caller", async () => {
    const endpointId = await endpoint();
    const ids = await Promise.all(Array.from({ length: 40 }, () => delivery(endpointId)));
    statements.length = 0;
    const results = await Promise.allSettled([
      ...ids.map((id, i) => record(id, i % 2 === 0 ? succeeded() : failed(), delays)),
      record("dlv_missing", failed(), delays),
    ]);
    expect(results.slice(0, 40).every((r) => r.status === "fulfilled")).toBe(true);
    expect(results[40]).toMatchObject({ status: "rejected", reason: expect.any(Error) as Error });
    // Every attempt and state in place, with far fewer statements than one transaction each.
    const rows = await db("deliveries")
      .whereIn("id", ids)
      .select<{ id: string; status: string; attempts_total: number }[]>("id", "status", "attempts_total");
    const byId = new Map(rows.map((r) => [r.id, r]));
    ids.forEach((id, i) =>
      expect(byId.get(id)).toMatchObject({ status: i % 2 === 0 ? "succeeded" : "awaiting_retry", attempts_total: 1 }),
    );
    expect(await db("attempts").whereIn("delivery_id", ids).count<{ count: string }[]>()).toEqual([{ count: "40" }]);
    expect(statements.filter((sql) => /^commit/i.test(sql)).length).toBeLessThanOrEqual(3);
  });

  it("records the successes of a batch by one statement without a transaction, conditional on each delivery's state", async () => {
    const endpointId = await endpoint();
    const [pending, held, over] = await Promise.all([delivery(endpointId), delivery(endpointId), delivery(endpointId)]);
    await db("deliveries").where({ id: held }).update({ status: "held", attempts: 2, attempts_total: 2 });
    await db("deliveries").where({ id: over }).update({ status: "dead_lettered", attempts: 8, attempts_total: 8 });
    statements.length = 0;
    const [a, b, c] = await Promise.all([pending, held, over].map((id) => record(id, succeeded(), delays)));
    expect(a).toMatchObject({ number: 1, status: "succeeded", nextAttemptAt: null, deadLettered: false });
    expect(b).toMatchObject({ number: 3, status: "succeeded", nextAttemptAt: null, deadLettered: false });
    // A delivery that reached a final status meanwhile keeps it; the attempt is still recorded.
    expect(c).toMatchObject({ number: 9, status: "dead_lettered", deadLettered: false });
    expect(statements.filter((sql) => /^(begin|commit)/i.test(sql))).toEqual([]);
    const rows = await db("deliveries")
      .whereIn("id", [pending, held, over])
      .select("id", "status", "attempts", "attempts_total", "leased_until", "last_status_code", "last_error");
    const byId = new Map(rows.map((r: { id: string }) => [r.id, r]));
    expect(byId.get(pending)).toMatchObject({
      status: "succeeded",
      attempts: 1,
      attempts_total: 1,
      leased_until: null,
    });
    expect(byId.get(held)).toMatchObject({
      status: "succeeded",
      attempts: 3,
      attempts_total: 3,
      last_status_code: 200,
    });
    expect(byId.get(over)).toMatchObject({ status: "dead_lettered", attempts: 8, attempts_total: 9, last_error: null });
    const attempts = await db("attempts")
      .whereIn("delivery_id", [pending, held, over])
      .select<{ delivery_id: string; number: number; succeeded: boolean; response_body: Buffer }[]>(
        "delivery_id",
        "number",
        "succeeded",
        "response_body",
      );
    expect(attempts.map((row) => [row.delivery_id, row.number, row.succeeded]).sort()).toEqual(
      [
        [pending, 1, true],
        [held, 3, true],
        [over, 9, true],
      ].sort(),
    );
    expect(attempts[0]!.response_body.toString()).toBe("down");
  });

  it("claims a fetch's jobs in one statement, answering claimed, stale and leased like the store", async () => {
    const store = createBatchedAttemptStore(db);
    const endpointId = await endpoint();
    const ids = await Promise.all(Array.from({ length: 10 }, () => delivery(endpointId)));
    // delivery() leaves a lease: these are free again; the last one stays leased.
    await db("deliveries").whereIn("id", ids.slice(0, 9)).update({ leased_until: null });
    await db("deliveries").where({ id: ids[8] }).update({ status: "succeeded" });
    statements.length = 0;
    const results = await Promise.all([
      ...ids.map((id) => store.claim({ deliveryId: id, generation: 1 }, 60_000)),
      store.claim({ deliveryId: ids[0]!, generation: 2 }, 60_000),
      store.claim({ deliveryId: "dlv_missing", generation: 1 }, 60_000),
    ]);
    expect(results.slice(0, 8).map((r) => r.kind)).toEqual(Array(8).fill("claimed"));
    const first = results[0];
    expect(first?.kind === "claimed" && first.delivery).toMatchObject({
      id: ids[0],
      endpointId,
      url: "https://hooks.example.com/x",
      paused: false,
      deleted: false,
      generation: 1,
    });
    expect(first?.kind === "claimed" && first.delivery.dueInMs).toBeLessThanOrEqual(0);
    expect(results.slice(8).map((r) => r.kind)).toEqual(["stale", "leased", "stale", "stale"]);
    // One statement claimed the eight; the others were looked at one by one.
    expect(statements.filter((sql) => /for update of d skip locked/.test(sql))).toHaveLength(1);
    // Claimed now: a second claim is leased.
    expect((await store.claim({ deliveryId: ids[1]!, generation: 1 }, 60_000)).kind).toBe("leased");
  });
});
