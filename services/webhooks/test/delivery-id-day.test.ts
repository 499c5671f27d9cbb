/**
 * A delivery id names the UTC day its delivery was created on (domain/ids.ts), so what finds a
 * delivery by its id reads that day's partition of the history, not every day's (36 of them:
 * the retention's 30 days, the days made ahead, the default): GetDelivery (ledger-store inspect),
 * the redrive's lock, the worker's batched claim (claim-batcher.ts) and the batched record of a
 * succeeded attempt (attempt-batcher.ts). Ids made before ids carried their day (96 random bits)
 * and ids of no delivery are still answered, by a look in every day.
 *
 * Which partitions a call read is counted from Postgres's own statistics (scans per partition,
 * flushed by `pg_stat_force_next_flush`) on the one connection of the pool.
 */
import { randomBytes } from "node:crypto";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { createAttemptBatcher } from "../src/db/attempt-batcher.js";
import { createAttemptStore, type AttemptToRecord } from "../src/db/attempt-store.js";
import { withBatchedClaims } from "../src/db/claim-batcher.js";
import { createLedgerStore } from "../src/db/ledger-store.js";
import { DeliveryNotFoundError } from "../src/domain/delivery-state.js";
import { byDay, deliveryIdDay, newDeliveryId, newEventId } from "../src/domain/ids.js";

const DAYS = 30;
const TENANT = "ten_day";
const ENDPOINT = `ep_${"d".repeat(24)}`;
const DAY_MS = 86_400_000;
const delays = [1000, 2000, 3000, 4000, 5000, 6000, 7000];

/** The partition of `deliveries` that holds `at`. */
const partitionOf = (at: Date) => `deliveries_p${at.toISOString().slice(0, 10).replaceAll("-", "")}`;

describe("delivery ids carry their day", () => {
  let scratch: ScratchDatabase;
  let db: Knex;

  beforeAll(async () => {
    scratch = await createScratchDatabase("dlv_day");
    // One connection: the statistics read are those of the connection that ran the call.
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 1 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    await db.raw("select webhooks_history.ensure_day_partitions(current_date - ?::int, current_date + 3)", [DAYS]);
    await db("endpoints").insert({
      id: ENDPOINT,
      tenant_id: TENANT,
      url: "https://example.test/hook",
      description: "",
      event_types: ["booking.created"],
      api_version: "2026-11-01",
      secret_sealed: "v1.k1.x.y.z",
    });
    // A delivery on each day of the month, so every partition has rows to probe.
    for (let day = 0; day <= DAYS; day++) await delivery(new Date(Date.now() - day * DAY_MS));
    await db.raw("analyze");
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  async function delivery(createdAt: Date, id = newDeliveryId(createdAt), status = "pending"): Promise<string> {
    const eventId = newEventId();
    await db("events").insert({
      id: eventId,
      tenant_id: TENANT,
      type: "booking.created",
      occurred_at: createdAt,
      data: "{}",
      livemode: true,
      received_at: createdAt,
    });
    await db("deliveries").insert({
      id,
      tenant_id: TENANT,
      endpoint_id: ENDPOINT,
      event_id: eventId,
      event_type: "booking.created",
      livemode: true,
      payload: `{"id":"${eventId}"}`,
      status,
      next_attempt_at: createdAt,
      generation: 1,
      created_at: createdAt,
    });
    return id;
  }

  /** Scans (index and sequential) per partition of `deliveries`, as this connection's statistics hold them. */
  async function scans(): Promise<Map<string, number>> {
    await db.raw("select pg_stat_force_next_flush()");
    const { rows } = await db.raw<{ rows: { relname: string; scans: string }[] }>(
      `select relname, coalesce(idx_scan, 0) + coalesce(seq_scan, 0) as scans
         from pg_stat_user_tables where schemaname = 'webhooks_history' and relname like 'deliveries\\_%'`,
    );
    return new Map(rows.map((row) => [row.relname, Number(row.scans)]));
  }

  /** The partitions of `deliveries` that `work` read. */
  async function partitionsRead(work: () => Promise<unknown>): Promise<string[]> {
    const before = await scans();
    await work();
    const after = await scans();
    return [...after].filter(([name, n]) => n > (before.get(name) ?? 0)).map(([name]) => name);
  }

  const succeeded = (): AttemptToRecord => ({
    attemptedAt: new Date(),
    durationMs: 5,
    succeeded: true,
    statusCode: 200,
    error: null,
    responseBody: Buffer.from("ok"),
    responseBodyTruncated: false,
  });

  it("an id names its UTC day in its first four hex digits, and is still 'dlv_' and 24 lowercase hex", () => {
    const at = new Date("2026-11-28T23:59:59.999Z");
    const id = newDeliveryId(at);
    expect(id).toMatch(/^dlv_[0-9a-f]{24}$/);
    expect(id.slice(4, 8)).toBe(Math.floor(at.getTime() / DAY_MS).toString(16));
    expect(deliveryIdDay(id)).toEqual({
      start: new Date("2026-11-28T00:00:00Z"),
      end: new Date("2026-11-29T00:00:00Z"),
    });
    expect(deliveryIdDay(newDeliveryId(new Date("2026-11-29T00:00:00Z")))?.start).toEqual(
      new Date("2026-11-29T00:00:00Z"),
    );
    // What is not a delivery id names no day (a job of another shape is claimed the way that looks everywhere).
    expect(deliveryIdDay("dlv_missing")).toBeUndefined();
  });

  it("groups a batch by its ids' days from 40 days back to tomorrow; other ids (made before, most of them) in none", () => {
    const now = new Date("2026-11-28T12:00:00Z");
    const today = newDeliveryId(now);
    const yesterday = newDeliveryId(new Date("2026-11-27T23:00:00Z"));
    const today2 = newDeliveryId(now);
    const daysBack40 = newDeliveryId(new Date(now.getTime() - 40 * DAY_MS + 60_000));
    const daysBack41 = newDeliveryId(new Date(now.getTime() - 41 * DAY_MS));
    const dayAfterTomorrow = newDeliveryId(new Date(now.getTime() + 2 * DAY_MS));
    const groups = byDay(
      [today, yesterday, "dlv_missing", today2, daysBack40, daysBack41, dayAfterTomorrow],
      (id) => id,
      now,
    );
    expect([...groups].map(([day, ids]) => [day.toISOString().slice(0, 10), ids])).toEqual([
      ["2026-11-28", [today, today2]],
      ["2026-11-27", [yesterday]],
      ["2026-10-19", [daysBack40]],
    ]);
  });

  it("GetDelivery and the redrive's lock read the one partition of the day the id names", async () => {
    const ledger = createLedgerStore(db);
    const at = new Date();
    const id = await delivery(at);
    // Seven runs: a prepared statement's sixth run is the first on its kept generic plan, which
    // prunes when it runs; the count must hold on both kinds of plan.
    for (let run = 0; run < 7; run++) {
      expect(
        await partitionsRead(async () => {
          expect((await ledger.inspect(TENANT, ENDPOINT, id)).delivery.id).toBe(id);
        }),
      ).toEqual([partitionOf(at)]);
    }
    expect(
      await partitionsRead(() =>
        db.transaction(async (trx) =>
          expect((await createLedgerStore(trx).lock(trx, TENANT, ENDPOINT, id)).id).toBe(id),
        ),
      ),
    ).toEqual([partitionOf(at)]);
  });

  it("an id made before ids carried their day is found in every day, and an unknown id is not found", async () => {
    const ledger = createLedgerStore(db);
    const at = new Date(Date.now() - 3 * DAY_MS);
    const old = await delivery(at, `dlv_${randomBytes(12).toString("hex")}`);
    const read = await partitionsRead(async () => {
      expect((await ledger.inspect(TENANT, ENDPOINT, old)).delivery.id).toBe(old);
    });
    expect(read).toContain(partitionOf(at));
    await expect(ledger.inspect(TENANT, ENDPOINT, newDeliveryId(new Date()))).rejects.toBeInstanceOf(
      DeliveryNotFoundError,
    );
  });

  it("the worker's batched claim and the batched record of a success read the delivery's day only", async () => {
    const store = withBatchedClaims(createAttemptStore(db), db);
    const record = createAttemptBatcher(db);
    const at = new Date(Date.now() - 2 * DAY_MS);
    const id = await delivery(at);
    let claimed: Awaited<ReturnType<typeof store.claim>> | undefined;
    expect(
      await partitionsRead(async () => {
        claimed = await store.claim({ deliveryId: id, generation: 1 }, 30_000);
      }),
    ).toEqual([partitionOf(at)]);
    expect(claimed).toMatchObject({ kind: "claimed", delivery: { id } });
    expect(await partitionsRead(() => record(id, succeeded(), delays))).toEqual([partitionOf(at)]);
    expect(await db("deliveries").where({ id }).first("status", "attempts_total")).toEqual({
      status: "succeeded",
      attempts_total: 1,
    });
  });

  it("an id made before is claimed and its success recorded the way that looks in every day", async () => {
    const store = withBatchedClaims(createAttemptStore(db), db);
    const record = createAttemptBatcher(db);
    const old = await delivery(new Date(Date.now() - 4 * DAY_MS), `dlv_${randomBytes(12).toString("hex")}`);
    expect(await store.claim({ deliveryId: old, generation: 1 }, 30_000)).toMatchObject({
      kind: "claimed",
      delivery: { id: old },
    });
    expect(await record(old, succeeded(), delays)).toMatchObject({ number: 1, status: "succeeded" });
    expect(await db("deliveries").where({ id: old }).first("status", "attempts_total")).toEqual({
      status: "succeeded",
      attempts_total: 1,
    });
  });
});
