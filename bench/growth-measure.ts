/**
 * The measurements of `npm run bench:growth` (bench/growth.ts) at one size: each read through the
 * product's own store functions (the db/ modules of webhooks and notify), so the SQL measured is the SQL the product
 * runs; p50/p99 over `reps` repetitions on targets drawn from a random sample of the rows (so
 * tenants and endpoints are weighted like the data); the statements each one ran are kept, for
 * EXPLAIN (ANALYZE, BUFFERS) of the slow ones.
 */
import type { Knex } from "@platform/service-kit/postgres";
import { createLedgerStore } from "@platform/webhooks/db/ledger-store";
import { bumpOverdueDeliveries } from "@platform/webhooks/db/due-deliveries";
import { countRecoverable } from "@platform/webhooks/db/recovery-store";
import { measureBacklog } from "@platform/webhooks/db/delivery-backlog";
import { removeExpired } from "@platform/webhooks/db/retention";
import { createNotificationStore } from "@platform/notify/db/notification-store";
import { createProjectionReader } from "@platform/notify/db/projection-store";
import { randomBytes, randomUUID } from "node:crypto";
import type pg from "pg";
import { percentile } from "./load-generator.js";
import { DAY_MS } from "./growth-fill.js";

/** One statement as knex (or queryRows) sent it. */
export interface Statement {
  sql: string;
  bindings: unknown[];
}

export interface Timed {
  name: string;
  p50: number;
  p99: number;
  reps: number;
  /** The statements of the slowest repetition (what EXPLAIN shows). */
  statements: Statement[];
  /** Writes are explained inside a transaction that is rolled back. */
  writes: boolean;
}

const rolledBack = new Error("rolled back on purpose");

/** Records every statement `db` sends while `work` runs. */
async function capturing<T>(db: Knex, work: () => Promise<T>): Promise<{ result: T; statements: Statement[] }> {
  const statements: Statement[] = [];
  const listen = (query: { sql: string; bindings?: unknown[] }) =>
    statements.push({ sql: query.sql, bindings: query.bindings ?? [] });
  db.on("query", listen);
  try {
    return { result: await work(), statements };
  } finally {
    db.removeListener("query", listen);
  }
}

/** p50 and p99 in ms of `reps` runs of `work(i)` (after `warmup` unmeasured ones). */
export async function timed(
  db: Knex,
  name: string,
  reps: number,
  work: (i: number) => Promise<unknown>,
  options: { writes?: boolean; warmup?: number } = {},
): Promise<Timed> {
  for (let i = 0; i < (options.warmup ?? Math.min(10, reps)); i++) await work(i);
  const ms: number[] = [];
  let statements: Statement[] = [];
  let slowest = -1;
  for (let i = 0; i < reps; i++) {
    const started = performance.now();
    const run = await capturing(db, () => work(i));
    const took = performance.now() - started;
    ms.push(took);
    if (took > slowest) [slowest, statements] = [took, run.statements];
  }
  ms.sort((a, b) => a - b);
  return { name, p50: percentile(ms, 50), p99: percentile(ms, 99), reps, statements, writes: options.writes ?? false };
}

/** `work` in a transaction that is always rolled back (a write measured without changing the data). */
export async function inRolledBack(db: Knex, work: (trx: Knex.Transaction) => Promise<unknown>): Promise<void> {
  await db
    .transaction(async (trx) => {
      await work(trx);
      throw rolledBack;
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
    });
}

/** knex's `?` placeholders as pg's `$n` (a statement already positional is left as it is). */
export function positional(sql: string): string {
  if (/\$\d/.test(sql)) return sql;
  let n = 0;
  return sql.replace(/\?\?|\?/g, (match) => (match === "??" ? "?" : `$${++n}`));
}

/** EXPLAIN (ANALYZE, BUFFERS) of each statement, in a transaction rolled back afterwards. */
export async function explain(client: pg.ClientBase, statements: readonly Statement[]): Promise<string> {
  const plans: string[] = [];
  await client.query("begin");
  try {
    for (const statement of statements) {
      if (/^\s*(begin|commit|rollback)/i.test(statement.sql)) continue;
      const sql = positional(statement.sql);
      await client.query("savepoint explained");
      // A write run again may conflict with its own first run (a key it inserted): then the plan alone.
      const { rows, note } = await client
        .query<{ "QUERY PLAN": string }>(`explain (analyze, buffers) ${sql}`, statement.bindings)
        .then((result) => ({ rows: result.rows, note: "" }))
        .catch(async (error: unknown) => {
          await client.query("rollback to savepoint explained");
          const result = await client.query<{ "QUERY PLAN": string }>(`explain ${sql}`, statement.bindings);
          return { rows: result.rows, note: `(not analyzed: run again it fails: ${(error as Error).message})\n` };
        });
      plans.push(`${statement.sql}\n${note}${rows.map((r) => r["QUERY PLAN"]).join("\n")}`);
    }
  } finally {
    await client.query("rollback");
  }
  return plans.join("\n\n");
}

/** A random delivery row of the table (the sample the targets are drawn from). */
interface SampleRow {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  created_at: Date;
}

async function sampleDeliveries(db: Knex, count: number): Promise<SampleRow[]> {
  const [{ n }] = (await db("deliveries").count({ n: "*" })) as [{ n: string }];
  const total = Number(n);
  const percent = Math.min(100, (100 * 2 * count) / Math.max(1, total));
  const rows = await db.raw<{ rows: SampleRow[] }>(
    `select id, tenant_id, endpoint_id, event_id, event_type, created_at
       from deliveries tablesample bernoulli (?) limit ?`,
    [percent, count],
  );
  if (rows.rows.length === 0) throw new Error("the deliveries table is empty: nothing to measure");
  return rows.rows;
}

export interface WebhooksReads {
  timings: Timed[];
  /** Rows the reads found, summed (0 would mean the targets found nothing). */
  rowsFound: number;
}

/**
 * The webhooks reads (and the sweep, a write measured in a rolled-back transaction): ledger first
 * and deep page, the console's message log by event id, by type and by day, one delivery's
 * detail, the due sweep, a recovery's dry-run count over a day; and the backlog gauges' query
 * (every 15 s in each replica), which reads every unfinished delivery.
 */
export async function measureWebhooksReads(db: Knex, reps: number): Promise<WebhooksReads> {
  const ledger = createLedgerStore(db);
  const sample = await sampleDeliveries(db, Math.max(50, Math.min(reps * 2, 2000)));
  const pick = (i: number) => sample[(i * 7919) % sample.length]!;
  const [{ lo, hi }] = (await db("deliveries").select(db.raw("min(seq) as lo, max(seq) as hi"))) as [
    { lo: string; hi: string },
  ];
  const [low, high] = [Number(lo), Number(hi)];
  // A deep page: the page after a random point of the ledger's history (keyset paging by seq).
  const deepSeq = (i: number) => low + Math.floor((((i * 104729) % 1000) / 1000) * (high - low)) + 1;
  const dayOf = (at: Date) => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
  let rowsFound = 0;
  const found = (n: number) => {
    rowsFound += n;
  };
  const limit = 20; // the API's default page (domain/page-cursor.ts)
  const timings: Timed[] = [];
  timings.push(
    await timed(db, "ledger: first page (endpoint)", reps, async (i) => {
      const row = pick(i);
      found((await ledger.list(row.tenant_id, row.endpoint_id, { limit, afterSeq: undefined })).deliveries.length);
    }),
  );
  timings.push(
    await timed(db, "ledger: deep page (endpoint, after a random seq)", reps, async (i) => {
      const row = pick(i);
      found((await ledger.list(row.tenant_id, row.endpoint_id, { limit, afterSeq: deepSeq(i) })).deliveries.length);
    }),
  );
  timings.push(
    await timed(db, "message log: first page (tenant)", reps, async (i) => {
      const row = pick(i);
      found((await ledger.list(row.tenant_id, undefined, { limit, afterSeq: undefined })).deliveries.length);
    }),
  );
  timings.push(
    await timed(db, "message log: by event id", reps, async (i) => {
      const row = pick(i);
      found(
        (await ledger.list(row.tenant_id, undefined, { limit, afterSeq: undefined, eventId: row.event_id })).deliveries
          .length,
      );
    }),
  );
  timings.push(
    await timed(db, "message log: by event type", reps, async (i) => {
      const row = pick(i);
      found(
        (await ledger.list(row.tenant_id, undefined, { limit, afterSeq: undefined, eventType: row.event_type }))
          .deliveries.length,
      );
    }),
  );
  timings.push(
    await timed(db, "message log: one day (created range)", reps, async (i) => {
      const row = pick(i);
      const since = dayOf(row.created_at);
      found(
        (
          await ledger.list(row.tenant_id, undefined, {
            limit,
            afterSeq: undefined,
            createdAfter: since,
            createdBefore: new Date(since.getTime() + DAY_MS),
          })
        ).deliveries.length,
      );
    }),
  );
  timings.push(
    await timed(db, "delivery detail (GetDelivery with attempts)", reps, async (i) => {
      const row = pick(i);
      found((await ledger.inspect(row.tenant_id, row.endpoint_id, row.id)).attempts.length);
    }),
  );
  timings.push(
    await timed(
      db,
      "due sweep (bumpOverdueDeliveries, 500, rolled back)",
      reps,
      () => inRolledBack(db, (trx) => bumpOverdueDeliveries(trx, { overdueMs: 5 * 60_000, limit: 500 })),
      { writes: true },
    ),
  );
  timings.push(
    await timed(db, "recovery dry run: count over a day", reps, async (i) => {
      const row = pick(i);
      const since = dayOf(row.created_at);
      found(
        await countRecoverable(db, row.endpoint_id, {
          since,
          until: new Date(since.getTime() + DAY_MS),
          untilGiven: true,
        }),
      );
    }),
  );
  timings.push(
    await timed(db, "backlog gauges (measureBacklog, every 15 s)", Math.min(reps, 50), async () => {
      const backlog = await measureBacklog(db);
      found(backlog.failing.pending + backlog.healthy.pending + backlog.paused.pending > 0 ? 1 : 0);
    }),
  );
  return { timings, rowsFound };
}

export interface RetentionStep {
  seconds: number;
  deliveriesRemoved: number;
  eventsRemoved: number;
  /** Day partitions dropped (three per day) and rows deleted (from the default partitions). */
  partitionsDropped: number;
  rowsDeleted: number;
}

/**
 * The janitor's step (db/retention.ts removeExpired, WEBHOOKS_JANITOR_BATCH 1000) on the oldest
 * whole UTC day of the fill (its partitions dropped): the partial day before it (the fill starts
 * mid-day) is expired first, untimed; then the retention is set so that exactly the next day is
 * past it. The rows that day held are counted before, outside the timing.
 */
export async function measureRetention(db: Knex, fillStartedAt: Date, spanDays: number): Promise<RetentionStep> {
  const oldest = fillStartedAt.getTime() - spanDays * DAY_MS;
  const dayStart = (offset: number) => new Date(Math.floor(oldest / DAY_MS) * DAY_MS + offset * DAY_MS);
  const count = async (table: string, column: string) =>
    Number(
      (
        await db.raw<{ rows: { n: string }[] }>(
          `select count(*) as n from ${table} where ${column} >= ?::timestamptz and ${column} < ?::timestamptz`,
          [dayStart(1), dayStart(2)],
        )
      ).rows[0]!.n,
    );
  await removeExpired(db, { retentionMs: Date.now() - dayStart(1).getTime(), batchSize: 1000 });
  const deliveries = await count("deliveries", "created_at");
  const events = await count("events", "received_at");
  const started = performance.now();
  const removed = await removeExpired(db, { retentionMs: Date.now() - dayStart(2).getTime(), batchSize: 1000 });
  return {
    seconds: (performance.now() - started) / 1000,
    deliveriesRemoved: deliveries,
    eventsRemoved: events,
    partitionsDropped: removed.partitions.length,
    rowsDeleted: removed.defaultRows,
  };
}

export interface TableBytes {
  table: string;
  rows: number;
  /** The table's heap and TOAST (pg_table_size). */
  tableBytes: number;
  indexBytes: number;
  totalBytes: number;
}

/**
 * Table and index bytes of each table of the schemas (pg_table_size, pg_indexes_size,
 * pg_total_relation_size), a partitioned table's partitions summed under its name (and a table of
 * the same name in another of the schemas, such as the old empty history tables, with it).
 */
export async function tableBytes(client: pg.ClientBase, schemas: string | readonly string[]): Promise<TableBytes[]> {
  const { rows } = await client.query<{ table: string; rows: string; t: string; i: string; total: string }>(
    `select coalesce(p.relname, c.relname) as table, sum(greatest(c.reltuples, 0))::bigint as rows,
            sum(pg_table_size(c.oid)) as t, sum(pg_indexes_size(c.oid)) as i,
            sum(pg_total_relation_size(c.oid)) as total
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       left join pg_inherits h on h.inhrelid = c.oid left join pg_class p on p.oid = h.inhparent
      where n.nspname = any($1) and c.relkind = 'r'
      group by 1
      order by sum(pg_total_relation_size(c.oid)) desc`,
    [typeof schemas === "string" ? [schemas] : schemas],
  );
  return rows.map((r) => ({
    table: r.table,
    rows: Math.max(0, Number(r.rows)),
    tableBytes: Number(r.t),
    indexBytes: Number(r.i),
    totalBytes: Number(r.total),
  }));
}

/**
 * Each index of the schemas' tables by size (which ones must stay in memory is the capacity
 * question), a partitioned index's partitions summed under its name.
 */
export async function indexBytes(
  client: pg.ClientBase,
  schemas: string | readonly string[],
): Promise<{ index: string; bytes: number }[]> {
  const { rows } = await client.query<{ index: string; bytes: string }>(
    `select coalesce(p.relname, c.relname) as index, sum(pg_relation_size(c.oid)) as bytes
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       left join pg_inherits h on h.inhrelid = c.oid left join pg_class p on p.oid = h.inhparent
      where n.nspname = any($1) and c.relkind = 'i'
      group by 1
      order by sum(pg_relation_size(c.oid)) desc`,
    [typeof schemas === "string" ? [schemas] : schemas],
  );
  return rows.map((r) => ({ index: r.index, bytes: Number(r.bytes) }));
}

interface NotifySample {
  tenant_id: string;
  recipient: string;
}

/**
 * Notify: a transcript page (listTranscript), the activity poll (listActivity, first page) and a
 * send (record_send then the outcome statement, the two commits of a send, each with a new key).
 */
export async function measureNotify(db: Knex, reps: number): Promise<Timed[]> {
  // The send path's statements (queryRows) on the knex pool rather than a pg.Pool of their own: the
  // same prepared statements, and knex announces them, so the slow ones can be explained.
  const store = createNotificationStore(db, db as unknown as pg.Pool);
  const projections = createProjectionReader(db);
  const sample = (
    await db.raw<{ rows: NotifySample[] }>(
      `select tenant_id, recipient from conversation_messages tablesample bernoulli (?) limit ?`,
      [
        Math.min(
          100,
          (100 * 4 * Math.max(50, reps)) /
            Math.max(1, Number(((await db("conversation_messages").count({ n: "*" })) as [{ n: string }])[0].n)),
        ),
        Math.max(50, reps * 2),
      ],
    )
  ).rows;
  if (sample.length === 0) throw new Error("the transcript is empty: nothing to measure");
  const pick = (i: number) => sample[(i * 7919) % sample.length]!;
  const timings: Timed[] = [];
  timings.push(
    await timed(db, "notify: transcript page", reps, async (i) => {
      const row = pick(i);
      await store.listTranscript(row.tenant_id, row.recipient, 20, undefined);
    }),
  );
  timings.push(
    await timed(db, "notify: activity poll (first page)", reps, async (i) => {
      await projections.listActivity(pick(i).tenant_id, 20, undefined);
    }),
  );
  const send = async (i: number) => {
    const row = pick(i);
    const key = `growth-${randomBytes(8).toString("hex")}`;
    const notificationId = `ntf_${randomBytes(12).toString("hex")}`;
    const owner = randomUUID();
    const recorded = await store.record({
      tenantId: row.tenant_id,
      idempotencyKey: key,
      fingerprint: "growth",
      owner,
      notificationId,
      transcriptEntryId: `msg_${randomBytes(12).toString("hex")}`,
      recipient: row.recipient,
      type: "reminder",
      text: "Hi! This is a reminder of your grooming appointment. Reply STOP to opt out.",
      actorReference: "api_key:growth",
      delegationReference: null,
      requestId: `req_${randomBytes(8).toString("hex")}`,
      leaseMs: 30_000,
      ttlMs: DAY_MS,
      testingAllowance: 100,
    });
    if (!recorded.recorded) throw new Error("the bench send was not recorded");
    await store.complete(
      { tenantId: row.tenant_id, idempotencyKey: key, owner, notificationId },
      { kind: "sent", providerMessageId: `wamid.${randomBytes(12).toString("hex")}` },
      "whatsapp",
      { notificationId, state: "sent", type: "reminder", createdAt: recorded.createdAt.toISOString() },
    );
  };
  const sendTiming = await timed(db, "notify: send (record + outcome, 2 commits)", reps, send, { writes: true });
  timings.push(sendTiming);
  return timings;
}
