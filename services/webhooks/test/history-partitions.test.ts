/**
 * The delivery history's day partitions (migration 20261127200000): the move of a database at the
 * schema before it, holding several days of history written with the previous release's
 * statements, with every row kept and the reads unchanged; the forwarding of the previous release's
 * writes and its fence; the contract step; and retention by dropping whole days.
 */
import { randomBytes } from "node:crypto";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractOldHistoryTables } from "../migrations/history-contract.js";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { backfillBatch, backfillHistory, markHistorySwitched } from "../src/db/history-backfill.js";
import { createLedgerStore } from "../src/db/ledger-store.js";
import { ensureDayPartitions, removeExpired } from "../src/db/retention.js";
import { newDeliveryId, newEndpointId, newEventId } from "../src/domain/ids.js";

const day = 86_400_000;
const history = ["events", "deliveries", "attempts"] as const;

/** What the previous release (0.1.0) writes, as it writes it: its statements, on the old tables. */
async function previousReleaseWrites(old: Knex, endpointId: string, tenant: string, at: Date, attempts: number) {
  const eventId = newEventId();
  await old.raw(
    `insert into events (id, tenant_id, type, occurred_at, data, livemode, received_at)
     values (?, ?, 'booking.created', ?, '{"booking_id":"bk"}', true, ?) on conflict (id) do nothing`,
    [eventId, tenant, at, at],
  );
  // Its ids were 96 random bits (they name no day): what it made is found by looking in every day.
  const deliveryId = `dlv_${randomBytes(12).toString("hex")}`;
  await old.raw(
    `insert into deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status, attempts,
                             attempts_total, next_attempt_at, generation, created_at, updated_at)
     values (?, ?, ?, ?, 'booking.created', true, '{"id":"x"}', ?, ?, ?, ?, 1, ?, ?)
     on conflict (event_id, endpoint_id) do nothing`,
    [
      deliveryId,
      tenant,
      endpointId,
      eventId,
      attempts === 0 ? "pending" : "succeeded",
      attempts,
      attempts,
      attempts === 0 ? at : null,
      at,
      at,
    ],
  );
  for (let number = 1; number <= attempts; number++)
    await old("attempts").insert({
      delivery_id: deliveryId,
      endpoint_id: endpointId,
      number,
      attempted_at: new Date(at.getTime() + number * 1000),
      duration_ms: 12,
      succeeded: number === attempts,
      status_code: number === attempts ? 200 : 503,
      response_body: Buffer.from("ok"),
    });
  return { eventId, deliveryId };
}

describe("the delivery history's day partitions (real Postgres)", () => {
  let scratch: ScratchDatabase;
  /** The previous release's view: the webhooks schema alone. */
  let old: Knex;
  /** This release's: webhooks_history first. */
  let db: Knex;

  beforeAll(async () => {
    scratch = await createScratchDatabase("whhist");
    old = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, poolMax: 2 });
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 4 });
  });
  afterAll(async () => {
    await old?.destroy();
    await db?.destroy();
    await scratch?.drop();
  });

  const oldRows = async (table: (typeof history)[number]) =>
    (await old.raw<{ rows: Record<string, unknown>[] }>(`select * from webhooks.${table} order by 1`)).rows;
  const newRows = async (table: (typeof history)[number]) => {
    const rows = (
      await db.raw<{ rows: Record<string, unknown>[] }>(`select * from webhooks_history.${table} order by 1`)
    ).rows;
    return rows.map(({ delivery_created_at: _copied, ...row }) => row);
  };

  it("moves a database at the schema before it: every row kept, the reads unchanged, the old writes forwarded", async () => {
    // The schema as the release before this migration left it, and five days of its history.
    const move = migrations.findIndex((m) => m.name === "20261127200000_history_partitions");
    expect(move).toBeGreaterThan(0);
    await migrateToLatest(old, WEBHOOKS_SCHEMA, migrations.slice(0, move));
    const endpointId = newEndpointId();
    await old("endpoints").insert({
      id: endpointId,
      tenant_id: "acme",
      url: "https://hooks.example.com/x",
      description: "d",
      event_types: ["booking.*"],
      api_version: "2026-11-01",
      secret_sealed: "v1.k1.x.y.z",
    });
    const written: { eventId: string; deliveryId: string }[] = [];
    for (let daysAgo = 4; daysAgo >= 0; daysAgo--)
      for (let i = 0; i < 4; i++)
        written.push(
          await previousReleaseWrites(
            old,
            endpointId,
            "acme",
            new Date(Date.now() - daysAgo * day - i * 60_000),
            i % 3,
          ),
        );
    const ledger = createLedgerStore(old);
    const pageBefore = await ledger.list("acme", endpointId, { limit: 50, afterSeq: undefined });
    const logBefore = await ledger.list("acme", undefined, { limit: 7, afterSeq: undefined });
    const before = {
      events: await oldRows("events"),
      deliveries: await oldRows("deliveries"),
      attempts: await oldRows("attempts"),
    };
    expect(before.deliveries).toHaveLength(20);
    expect(before.attempts).toHaveLength(15);

    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    // A day of each table for every day of the data, and three ahead.
    const partitions = await db.raw<{ rows: { n: number }[] }>(
      `select count(*)::int as n from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where c.relname ~ '^(events|deliveries|attempts)_p[0-9]{8}$'`,
    );
    expect(partitions.rows[0]!.n).toBeGreaterThanOrEqual(3 * 8);

    // Nothing copied yet: the janitor's backfill does it, resumably (two rows a batch here).
    expect(await newRows("deliveries")).toEqual([]);
    expect(await backfillBatch(db, "deliveries", 2)).toEqual({ table: "deliveries", read: 2, copied: 2, done: false });
    expect(await backfillHistory(db, { batchSize: 3, budgetMs: 60_000 })).toEqual({
      copied: { events: 20, deliveries: 18, attempts: 15 },
      done: true,
    });
    // Again: nothing more (idempotent), and done.
    expect(await backfillHistory(db, { batchSize: 3, budgetMs: 60_000 })).toEqual({
      copied: { events: 0, deliveries: 0, attempts: 0 },
      done: true,
    });
    for (const table of history) expect(await newRows(table), table).toEqual(before[table]);
    // Each row in the partition of its day.
    const misplaced = await db.raw<{ rows: unknown[] }>(
      `select tableoid::regclass from webhooks_history.deliveries
        where tableoid::regclass::text <> 'deliveries_p' || to_char(created_at at time zone 'UTC', 'YYYYMMDD')`,
    );
    expect(misplaced.rows).toEqual([]);

    // This release reads the same answers from the new tables.
    const moved = createLedgerStore(db);
    expect(await moved.list("acme", endpointId, { limit: 50, afterSeq: undefined })).toEqual(pageBefore);
    expect(await moved.list("acme", undefined, { limit: 7, afterSeq: undefined })).toEqual(logBefore);
    const page2 = await moved.list("acme", undefined, { limit: 7, afterSeq: Number(logBefore.nextAfterSeq) });
    expect(page2).toEqual(await ledger.list("acme", undefined, { limit: 7, afterSeq: Number(logBefore.nextAfterSeq) }));
    const twoAttempts = written[2]!;
    const inspected = await moved.inspect("acme", endpointId, twoAttempts.deliveryId);
    expect(inspected.delivery).toEqual(pageBefore.deliveries.find((d) => d.id === twoAttempts.deliveryId));
    expect(inspected.attempts.map((a) => [a.number, a.statusCode])).toEqual([
      [1, 503],
      [2, 200],
    ]);

    // The previous release keeps writing its tables while it runs: its writes land here too.
    const later = await previousReleaseWrites(old, endpointId, "acme", new Date(), 2);
    await old("deliveries").where({ id: written[0]!.deliveryId }).update({ last_error: "forwarded", generation: 7 });
    expect(await newRows("deliveries")).toEqual(await oldRows("deliveries"));
    expect(await newRows("attempts")).toEqual(await oldRows("attempts"));
    expect(await newRows("events")).toEqual(await oldRows("events"));
    expect((await moved.inspect("acme", endpointId, later.deliveryId)).attempts).toHaveLength(2);
    // Its seq came from the shared sequence: after every earlier one, a valid ledger cursor.
    expect((await moved.list("acme", endpointId, { limit: 1, afterSeq: undefined })).deliveries[0]!.id).toBe(
      later.deliveryId,
    );
    // A redelivered event the previous release recorded is not new to this one (no second delivery).
    expect((await db.raw<{ rows: unknown[] }>("select 1 from events where id = ?", [later.eventId])).rows).toHaveLength(
      1,
    );

    // Once this release started, the previous one may not claim or bump an old row; an attempt it
    // claimed before (lease running) still records its outcome.
    await old("deliveries")
      .where({ id: written[4]!.deliveryId })
      .update({ leased_until: new Date(Date.now() + 60_000) });
    await markHistorySwitched(db);
    await expect(
      old("deliveries")
        .where({ id: written[0]!.deliveryId })
        .update({ leased_until: new Date(Date.now() + 60_000) }),
    ).rejects.toThrow(/served by a newer release/);
    await old("deliveries").where({ id: written[4]!.deliveryId }).update({ status: "succeeded", leased_until: null });
    expect(await db("deliveries").where({ id: written[4]!.deliveryId }).first("status", "leased_until")).toEqual({
      status: "succeeded",
      leased_until: null,
    });

    // The contract step (the next release's): the old tables and triggers go, the new ones stay.
    const counts = async () =>
      Promise.all(history.map(async (t) => Number((await db(t).count<{ count: string }[]>())[0]!.count)));
    const kept = await counts();
    await contractOldHistoryTables(db);
    expect(await counts()).toEqual(kept);
    expect(
      (await db.raw<{ rows: { t: string | null }[] }>("select to_regclass('webhooks.deliveries')::text as t")).rows,
    ).toEqual([{ t: null }]);
    // New rows still draw seq from the kept sequence.
    const [{ nextval }] = (
      await db.raw<{ rows: { nextval: string }[] }>("select nextval('webhooks.deliveries_seq_seq')")
    ).rows as [{ nextval: string }];
    expect(Number(nextval)).toBeGreaterThan(Math.max(...before.deliveries.map((d) => Number(d.seq))));
  });

  it("expires a day by dropping its partitions, no row deleted; a day without a partition goes to the default one", async () => {
    const fresh = await createScratchDatabase("whret");
    const h = createDatabase({ url: fresh.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 2 });
    try {
      await migrateToLatest(h, WEBHOOKS_SCHEMA, migrations);
      const now = new Date();
      const old = new Date(now.getTime() - 40 * day);
      const recent = new Date(now.getTime() - 2 * day);
      // The partitions ahead exist from the migration; the janitor makes them again idempotently.
      expect(await ensureDayPartitions(h, now)).toBeGreaterThan(0); // yesterday's
      expect(await ensureDayPartitions(h, now)).toBe(0);
      const dayName = (d: Date) => d.toISOString().slice(0, 10).replaceAll("-", "");
      for (let ahead = 0; ahead <= 3; ahead++)
        expect(
          (
            await h.raw<{ rows: unknown[] }>("select to_regclass(?)::text as t", [
              `webhooks_history.deliveries_p${dayName(new Date(now.getTime() + ahead * day))}`,
            ])
          ).rows,
        ).toEqual([{ t: `deliveries_p${dayName(new Date(now.getTime() + ahead * day))}` }]);
      // The day 40 days ago gets its partitions (as a day of history would have had); the day two
      // days ago has none: its rows go to the default partitions.
      await h.raw("select webhooks_history.ensure_day_partitions(?::date, ?::date)", [
        old.toISOString().slice(0, 10),
        old.toISOString().slice(0, 10),
      ]);
      const endpointId = newEndpointId();
      await h("endpoints").insert({
        id: endpointId,
        tenant_id: "acme",
        url: "https://hooks.example.com/x",
        description: "d",
        event_types: ["booking.*"],
        api_version: "2026-11-01",
        secret_sealed: "v1.k1.x.y.z",
      });
      const write = async (at: Date) => {
        const eventId = newEventId();
        await h("events").insert({
          id: eventId,
          tenant_id: "acme",
          type: "booking.created",
          occurred_at: at,
          data: "{}",
          livemode: true,
          received_at: at,
        });
        const id = newDeliveryId(at);
        await h("deliveries").insert({
          id,
          tenant_id: "acme",
          endpoint_id: endpointId,
          event_id: eventId,
          event_type: "booking.created",
          livemode: true,
          payload: "{}",
          status: "succeeded",
          created_at: at,
          updated_at: at,
        });
        await h("attempts").insert({
          delivery_id: id,
          endpoint_id: endpointId,
          number: 1,
          attempted_at: at,
          duration_ms: 1,
          succeeded: true,
          delivery_created_at: at,
        });
        return id;
      };
      for (let i = 0; i < 5; i++) await write(old);
      const inDefault = [await write(recent), await write(recent)];
      const expiredDefault = await write(new Date(now.getTime() - 45 * day));
      const today = await write(now);
      expect(
        (await h.raw<{ rows: { n: number }[] }>("select count(*)::int as n from webhooks_history.deliveries_default"))
          .rows,
      ).toEqual([{ n: 3 }]);

      // Every row delete on the history's tables is counted, by partition.
      await h.raw("create table deletes_seen (relname text, n int)");
      await h.raw(`create function count_delete() returns trigger language plpgsql as $$
        begin insert into deletes_seen values (tg_table_name, 1); return old; end $$`);
      for (const t of history)
        await h.raw(
          `create trigger count_delete before delete on webhooks_history.${t} for each row execute function count_delete()`,
        );

      const removed = await removeExpired(h, { retentionMs: 30 * day, batchSize: 1, now });
      expect(removed.partitions).toEqual(["attempts", "deliveries", "events"].map((t) => `${t}_p${dayName(old)}`));
      expect(removed).toMatchObject({ defaultRows: 3, recoveries: 0 });
      // No row of a day partition was deleted: only the expired default rows (one of each table).
      const seen = await h.raw<{ rows: { relname: string; n: number }[] }>(
        "select relname, sum(n)::int as n from deletes_seen group by 1 order by 1",
      );
      expect(seen.rows).toEqual([
        { relname: "attempts_default", n: 1 },
        { relname: "deliveries_default", n: 1 },
        { relname: "events_default", n: 1 },
      ]);
      const ids = await h("deliveries").orderBy("created_at").pluck("id");
      expect(ids).toEqual([...inDefault, today]);
      expect(ids).not.toContain(expiredDefault);
      expect(Number((await h("attempts").count<{ count: string }[]>())[0]!.count)).toBe(3);
      // When the janitor makes the day the default rows belong to, they move into its partition.
      await h.raw("select webhooks_history.ensure_day_partitions(?::date, ?::date)", [
        recent.toISOString().slice(0, 10),
        recent.toISOString().slice(0, 10),
      ]);
      expect(
        (
          await h.raw<{ rows: { t: string }[] }>(
            "select tableoid::regclass::text as t from webhooks_history.deliveries where id = any(?)",
            [inDefault],
          )
        ).rows,
      ).toEqual(inDefault.map(() => ({ t: `deliveries_p${dayName(recent)}` })));
      // Nothing left to expire.
      expect(await removeExpired(h, { retentionMs: 30 * day, batchSize: 1, now })).toEqual({
        partitions: [],
        defaultRows: 0,
        recoveries: 0,
      });
    } finally {
      await h.destroy();
      await fresh.drop();
    }
  });
});
