/**
 * The delivery ledger in Postgres: deliveries with their attempts, as partners list, inspect,
 * redrive and count them; and the writes that make deliveries due (resume, redrive, test
 * delivery), each bumping the delivery's generation so the job enqueued after the commit is the
 * only current one (domain/delivery-job.ts). Every query names the tenant and the endpoint.
 */
import { queryPrepared, type Knex } from "@platform/service-kit/postgres";
import type { DeliveryJob } from "../domain/delivery-job.js";
import { DELIVERY_ID, deliveryIdDay, utcDay } from "../domain/ids.js";
import { DeliveryNotFoundError, type DeliveryState, type DeliveryStatus } from "../domain/delivery-state.js";

export interface DeliveryRecord {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  attemptsTotal: number;
  nextAttemptAt: Date | null;
  livemode: boolean;
  lastStatusCode: number | null;
  lastError: string | null;
  generation: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttemptRecord {
  number: number;
  attemptedAt: Date;
  durationMs: number;
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  responseBody: Buffer | null;
  responseBodyTruncated: boolean;
}

interface DeliveryRow {
  id: string;
  seq: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  attempts_total: number;
  next_attempt_at: Date | null;
  livemode: boolean;
  last_status_code: number | null;
  last_error: string | null;
  generation: number;
  created_at: Date;
  updated_at: Date;
}

const deliveryColumns = [
  "id",
  "seq",
  "endpoint_id",
  "event_id",
  "event_type",
  "status",
  "attempts",
  "attempts_total",
  "next_attempt_at",
  "livemode",
  "last_status_code",
  "last_error",
  "generation",
  "created_at",
  "updated_at",
];

function fromRow(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    attemptsTotal: row.attempts_total,
    nextAttemptAt: row.next_attempt_at,
    livemode: row.livemode,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    generation: row.generation,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The life-cycle state of a delivery (delivery-state.ts works on it). */
export function deliveryState(delivery: DeliveryRecord): DeliveryState {
  return {
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.nextAttemptAt,
    createdAt: delivery.createdAt,
  };
}

export interface DeliveryPage {
  deliveries: DeliveryRecord[];
  nextAfterSeq: string | undefined;
}

export interface EndpointStats {
  byStatus: Record<DeliveryStatus, number>;
  attempts: number;
  attemptsSucceeded: number;
  latencyMs: { p50: number; p95: number; p99: number } | undefined;
}

export interface TestDeliveryInput {
  tenantId: string;
  endpointId: string;
  event: { id: string; type: string; occurredAt: Date; object: Readonly<Record<string, unknown>> };
  deliveryId: string;
  payload: string;
  held: boolean;
  now: Date;
  /** The trace context of the call that asked for it: its attempts' spans are children of it. */
  traceparent?: string | undefined;
}

export interface LedgerStore {
  /**
   * A page of deliveries, newest first: the endpoint's ledger (deliveries_ledger_idx), or with
   * `endpointId` undefined the tenant's message log across its endpoints that are not deleted
   * (deliveries_tenant_log_idx). `createdAfter` is inclusive, `createdBefore` exclusive.
   */
  list(
    tenantId: string,
    endpointId: string | undefined,
    options: {
      limit: number;
      afterSeq: number | undefined;
      status?: DeliveryStatus;
      eventType?: string;
      eventId?: string;
      createdAfter?: Date;
      createdBefore?: Date;
    },
  ): Promise<DeliveryPage>;
  /** The delivery with its attempts (oldest first) and exact payload; DeliveryNotFoundError otherwise. */
  inspect(
    tenantId: string,
    endpointId: string,
    deliveryId: string,
  ): Promise<{ delivery: DeliveryRecord; attempts: AttemptRecord[]; payload: string }>;
  /** The delivery locked until the transaction ends; DeliveryNotFoundError otherwise. */
  lock(trx: Knex.Transaction, tenantId: string, endpointId: string, deliveryId: string): Promise<DeliveryRecord>;
  /** A fresh run (redrive): the new state, attempts of the run reset, generation bumped. */
  restart(trx: Knex.Transaction, deliveryId: string, state: DeliveryState, now: Date): Promise<DeliveryRecord>;
  /** Every held delivery of the endpoint becomes due now (pending, or awaiting_retry when attempted). */
  releaseHeld(trx: Knex.Transaction, endpointId: string, now: Date): Promise<DeliveryJob[]>;
  /** The synthetic event and its one delivery (generation 1). */
  insertTestDelivery(trx: Knex.Transaction, input: TestDeliveryInput): Promise<DeliveryRecord>;
  /** Deliveries created and attempts made in [since, until]. */
  stats(endpointId: string, since: Date, until: Date): Promise<EndpointStats>;
  /**
   * Attempts made in [since, until] in 24 buckets of one hour from `since` (the last one also
   * holds `until`): one indexed statement (attempts_endpoint_time_idx).
   */
  hourly(endpointId: string, since: Date, until: Date): Promise<HourlyAttempts[]>;
  /** Attempts made in [since, until] and how many succeeded, per endpoint (absent: none). */
  attemptCounts(
    endpointIds: readonly string[],
    since: Date,
    until: Date,
  ): Promise<Map<string, { attempts: number; succeeded: number }>>;
}

export interface HourlyAttempts {
  start: Date;
  succeeded: number;
  failed: number;
}

export const HOURLY_BUCKETS = 24;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Two seqs (bigint as text), the greater first. */
const compareSeqDescending = (a: string, b: string): number => {
  const [x, y] = [BigInt(a), BigInt(b)];
  return x > y ? -1 : x < y ? 1 : 0;
};

/** An attempt as the delivery's detail shows it. */
interface AttemptRow {
  number: number;
  attempted_at: Date;
  duration_ms: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  response_body: Buffer | null;
  response_body_truncated: boolean;
}

export function createLedgerStore(db: Knex): LedgerStore {
  const found = (row: DeliveryRow | undefined) => {
    if (!row) throw new DeliveryNotFoundError();
    return fromRow(row);
  };
  const one = (query: Knex | Knex.Transaction, tenantId: string, endpointId: string, deliveryId: string) =>
    query("deliveries").where({ tenant_id: tenantId, endpoint_id: endpointId, id: deliveryId });
  /**
   * The delivery's row looked for in the day its id names (one partition: ids.ts), then, when
   * that day does not have it (an id made before ids carried their day, or no such delivery), in
   * every day. The day is a parameter, so the kept generic plan prunes the other days when it runs.
   */
  const byId = async <Row extends object>(
    query: Knex | Knex.Transaction,
    deliveryId: string,
    select: (day: { start: Date; end: Date } | undefined) => Knex.QueryBuilder,
  ): Promise<Row | undefined> => {
    const day = deliveryIdDay(deliveryId);
    const [inDay] = day ? await queryPrepared<Row>(query, select(day)) : [];
    if (inDay) return inDay;
    const [anywhere] = await queryPrepared<Row>(query, select(undefined));
    return anywhere;
  };
  const inDay = (builder: Knex.QueryBuilder, day: { start: Date; end: Date } | undefined) =>
    day ? builder.andWhere("created_at", ">=", day.start).andWhere("created_at", "<", day.end) : builder;
  return {
    async list(tenantId, endpointId, { limit, afterSeq, status, eventType, eventId, createdAfter, createdBefore }) {
      const page = (from: Date | undefined, before: Date | undefined) => {
        const query = db("deliveries")
          .select<DeliveryRow[]>(deliveryColumns.map((column) => `deliveries.${column}`))
          .orderBy("deliveries.seq", "desc")
          // The page's size written into the statement, not passed as a parameter: with `limit $n`
          // the generic plan Postgres keeps for a prepared statement guessed a tenth of the rows,
          // cost more than planning each call, and so each call was planned over every day
          // partition (7-9 ms at 1 million deliveries, against 3 with the plan kept;
          // prepared-plans.test.ts). One statement per page size, a few in practice.
          .limit(limit + 1, { skipBinding: true });
        // The tenant is checked once per statement (an uncorrelated subquery, which Postgres runs
        // once), never as a second predicate on the rows: with both `tenant_id` and `endpoint_id` on
        // the rows, the planner multiplied their selectivities as if independent, expected a handful
        // of rows, and read every delivery of the endpoint (a BitmapAnd and a sort) instead of the
        // first of the ledger index in seq order (bench:growth at 10 million, docs/operations.md).
        if (endpointId !== undefined) {
          void query
            .where("deliveries.endpoint_id", endpointId)
            .whereExists(db("endpoints").select(db.raw("1")).where({ id: endpointId, tenant_id: tenantId }));
        } else {
          // The message log: the tenant's deliveries newest first; a deleted endpoint's deliveries
          // stay in the ledger but are not shown (their endpoint, and so they, are not found).
          void query
            .where("deliveries.tenant_id", tenantId)
            .whereRaw(
              "deliveries.endpoint_id <> all (array(select id from endpoints where tenant_id = ? and deleted_at is not null))",
              [tenantId],
            );
        }
        if (afterSeq !== undefined) void query.andWhere("deliveries.seq", "<", afterSeq);
        if (status !== undefined) void query.andWhere("deliveries.status", status);
        if (eventType !== undefined) void query.andWhere("deliveries.event_type", eventType);
        if (eventId !== undefined) void query.andWhere("deliveries.event_id", eventId);
        if (from !== undefined) void query.andWhere("deliveries.created_at", ">=", from);
        if (before !== undefined) void query.andWhere("deliveries.created_at", "<", before);
        // Prepared: planned once per connection, not over every day partition on every page.
        return queryPrepared<DeliveryRow>(db, query);
      };
      let rows: DeliveryRow[];
      if (
        endpointId === undefined &&
        eventType !== undefined &&
        eventId === undefined &&
        afterSeq === undefined &&
        createdAfter === undefined &&
        createdBefore === undefined
      ) {
        // The message log's first page of one event type reads today's and yesterday's partitions
        // first: over every day's, its index (125 MB per million deliveries) is probed in each of
        // ~36 partitions, and where those pages are not in memory each probe is a read from disk
        // (bench:growth at 10 million: p50 9.9 ms against 1.1 on the empty database; 2.9 with the
        // index pages in memory). A page is newest first by seq, and a delivery takes its seq in
        // the transaction whose start is its created_at: a row of an older day with a greater seq
        // than one of today's would need a recording transaction open for over a day. So a full
        // page from these two days whose last row is of today is the page; otherwise the older
        // days give their newest rows too and the page is the newest of both.
        const today = utcDay(new Date()).start;
        const yesterday = new Date(today.getTime() - DAY_MS);
        const recent = await page(yesterday, undefined);
        if (recent.length > limit && recent[limit]!.created_at >= today) rows = recent;
        else {
          const older = await page(undefined, yesterday);
          rows = [...recent, ...older].sort((a, b) => compareSeqDescending(a.seq, b.seq)).slice(0, limit + 1);
        }
      } else rows = await page(createdAfter, createdBefore);
      const shown = rows.slice(0, limit);
      return { deliveries: shown.map(fromRow), nextAfterSeq: rows.length > limit ? shown.at(-1)!.seq : undefined };
    },
    async inspect(tenantId, endpointId, deliveryId) {
      if (!DELIVERY_ID.test(deliveryId)) throw new DeliveryNotFoundError();
      const row = await byId<DeliveryRow & { payload: string }>(db, deliveryId, (day) =>
        inDay(one(db, tenantId, endpointId, deliveryId), day)
          .select([...deliveryColumns, "payload"])
          .limit(1, { skipBinding: true }),
      );
      const delivery = found(row);
      const day = utcDay(delivery.createdAt);
      const attempts = await queryPrepared<AttemptRow>(
        db,
        db("attempts")
          .select(
            "number",
            "attempted_at",
            "duration_ms",
            "succeeded",
            "status_code",
            "error",
            "response_body",
            "response_body_truncated",
          )
          // The delivery's UTC day: one partition read (a day range, as created_at may carry
          // microseconds a Date does not).
          .where({ delivery_id: deliveryId })
          .andWhere("delivery_created_at", ">=", day.start)
          .andWhere("delivery_created_at", "<", day.end)
          .orderBy("number", "asc"),
      );
      return {
        delivery,
        payload: row!.payload,
        attempts: attempts.map((attempt) => ({
          number: attempt.number,
          attemptedAt: attempt.attempted_at,
          durationMs: attempt.duration_ms,
          succeeded: attempt.succeeded,
          statusCode: attempt.status_code,
          error: attempt.error,
          responseBody: attempt.response_body,
          responseBodyTruncated: attempt.response_body_truncated,
        })),
      };
    },
    async lock(trx, tenantId, endpointId, deliveryId) {
      if (!DELIVERY_ID.test(deliveryId)) throw new DeliveryNotFoundError();
      return found(
        await byId<DeliveryRow>(trx, deliveryId, (day) =>
          inDay(one(trx, tenantId, endpointId, deliveryId), day)
            .select(deliveryColumns)
            .limit(1, { skipBinding: true })
            .forUpdate(),
        ),
      );
    },
    async restart(trx, deliveryId, state, now) {
      const [row] = await trx("deliveries")
        .update({
          status: state.status,
          attempts: state.attempts,
          next_attempt_at: state.nextAttemptAt,
          generation: trx.raw("generation + 1"),
          leased_until: null,
          updated_at: now,
        })
        .where({ id: deliveryId })
        .returning<DeliveryRow[]>(deliveryColumns);
      return found(row);
    },
    async releaseHeld(trx, endpointId, now) {
      const rows = await trx("deliveries")
        .update({
          status: trx.raw("case when attempts = 0 then 'pending' else 'awaiting_retry' end"),
          next_attempt_at: now,
          generation: trx.raw("generation + 1"),
          updated_at: now,
        })
        .where({ endpoint_id: endpointId, status: "held" })
        .returning<{ id: string; generation: number }[]>(["id", "generation"]);
      return rows.map((row) => ({ deliveryId: row.id, generation: row.generation }));
    },
    async insertTestDelivery(trx, input) {
      await trx("events").insert({
        id: input.event.id,
        tenant_id: input.tenantId,
        type: input.event.type,
        occurred_at: input.event.occurredAt,
        data: JSON.stringify(input.event.object),
        livemode: false,
        received_at: input.now,
      });
      const [row] = await trx("deliveries")
        .insert({
          id: input.deliveryId,
          tenant_id: input.tenantId,
          endpoint_id: input.endpointId,
          event_id: input.event.id,
          event_type: input.event.type,
          livemode: false,
          payload: input.payload,
          status: input.held ? "held" : "pending",
          attempts: 0,
          attempts_total: 0,
          next_attempt_at: input.held ? null : input.now,
          generation: 1,
          created_at: input.now,
          updated_at: input.now,
          ...(input.traceparent ? { traceparent: input.traceparent } : {}),
        })
        .returning<DeliveryRow[]>(deliveryColumns);
      return fromRow(row!);
    },
    async hourly(endpointId, since, until) {
      const rows = await db.raw<{ rows: { bucket: number; succeeded: string; failed: string }[] }>(
        `select least(floor(extract(epoch from (attempted_at - ?::timestamptz)) / 3600), ?)::int as bucket,
                count(*) filter (where succeeded) as succeeded,
                count(*) filter (where not succeeded) as failed
           from attempts
          where endpoint_id = ? and attempted_at >= ? and attempted_at <= ?
          group by 1`,
        [since, HOURLY_BUCKETS - 1, endpointId, since, until],
      );
      const counted = new Map(rows.rows.map((row) => [row.bucket, row]));
      return Array.from({ length: HOURLY_BUCKETS }, (_, bucket) => ({
        start: new Date(since.getTime() + bucket * HOUR_MS),
        succeeded: Number(counted.get(bucket)?.succeeded ?? 0),
        failed: Number(counted.get(bucket)?.failed ?? 0),
      }));
    },
    async attemptCounts(endpointIds, since, until) {
      if (endpointIds.length === 0) return new Map();
      const rows = await db("attempts")
        .select<{ endpoint_id: string; attempts: string; succeeded: string }[]>(
          "endpoint_id",
          db.raw("count(*) as attempts"),
          db.raw("count(*) filter (where succeeded) as succeeded"),
        )
        .whereIn("endpoint_id", endpointIds)
        .andWhere("attempted_at", ">=", since)
        .andWhere("attempted_at", "<=", until)
        .groupBy("endpoint_id");
      return new Map(
        rows.map((row) => [row.endpoint_id, { attempts: Number(row.attempts), succeeded: Number(row.succeeded) }]),
      );
    },
    async stats(endpointId, since, until) {
      const counts = await db("deliveries")
        .select<{ status: DeliveryStatus; count: string }[]>("status", db.raw("count(*) as count"))
        .where({ endpoint_id: endpointId })
        .andWhere("created_at", ">=", since)
        .andWhere("created_at", "<=", until)
        .groupBy("status");
      const byStatus: Record<DeliveryStatus, number> = {
        pending: 0,
        succeeded: 0,
        awaiting_retry: 0,
        dead_lettered: 0,
        held: 0,
      };
      for (const { status, count } of counts) byStatus[status] = Number(count);
      const [attempts] = await db("attempts")
        .select<{ attempts: string; succeeded: string; p50: number | null; p95: number | null; p99: number | null }[]>(
          db.raw("count(*) as attempts"),
          db.raw("count(*) filter (where succeeded) as succeeded"),
          db.raw("percentile_cont(0.5) within group (order by duration_ms) as p50"),
          db.raw("percentile_cont(0.95) within group (order by duration_ms) as p95"),
          db.raw("percentile_cont(0.99) within group (order by duration_ms) as p99"),
        )
        .where({ endpoint_id: endpointId })
        .andWhere("attempted_at", ">=", since)
        .andWhere("attempted_at", "<=", until);
      const total = Number(attempts?.attempts ?? 0);
      return {
        byStatus,
        attempts: total,
        attemptsSucceeded: Number(attempts?.succeeded ?? 0),
        latencyMs:
          total > 0
            ? { p50: Number(attempts!.p50), p95: Number(attempts!.p95), p99: Number(attempts!.p99) }
            : undefined,
      };
    },
  };
}
