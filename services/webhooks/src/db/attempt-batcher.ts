/**
 * Group commit for attempt records: the delivery worker's `recordAttempt` calls that arrive while
 * batches are being written (at most `maxWriters` at once) are written together in the next one,
 * one transaction for all of
 * them (lock the deliveries in id order, one multi-row INSERT of the attempts, one UPDATE of the
 * deliveries, one UPDATE of the endpoints a dead-letter pauses). Each caller's promise resolves
 * only after that transaction committed, so the worker still acks a job only once its attempt
 * is durable. At low rates a batch holds one attempt and adds no wait (it is written on the
 * next turn of the event loop); under load batches grow by themselves, and the commits (and
 * statements) per attempt fall. Same rules per attempt as AttemptStore.recordAttempt.
 *
 * The attempts that succeeded (nearly all of them under load) take a shorter way: one statement,
 * its own commit, no lock taken beforehand. A success ends a delivery in one of the statuses an
 * attempt moves (domain: statusesAnAttemptMoves) as succeeded whatever the endpoint's pause and
 * needs no dead-letter check, so the write is conditional on the delivery's state in the statement
 * itself (a delivery that reached a final status meanwhile keeps it; the attempt is still
 * recorded, as recordClaimedAttempt says).
 * A delivery the statement did not find, and a deadlock with another writer, go the locking way.
 */
import { preparedStatement, queryRows, type Knex } from "@platform/service-kit/postgres";
import { errorClassOf } from "../domain/attempt-outcome.js";
import { byDay } from "../domain/ids.js";
import {
  recordClaimedAttempt,
  statusesAnAttemptMoves,
  type DeliveryState,
  type DeliveryStatus,
} from "../domain/delivery-state.js";
import {
  attemptRowOf,
  pauseDeadLetteredEndpoints,
  type AttemptToRecord,
  type AttemptStore,
  type RecordedAttempt,
} from "./attempt-store.js";
import type { EndpointEvents } from "./endpoint-events.js";

interface Pending {
  deliveryId: string;
  attempt: AttemptToRecord;
  delaysMs: readonly number[];
  resolve: (recorded: RecordedAttempt) => void;
  reject: (error: unknown) => void;
}

interface LockedRow {
  id: string;
  endpoint_id: string;
  tenant_id: string;
  status: DeliveryStatus;
  attempts: number;
  attempts_total: number;
  next_attempt_at: Date | null;
  created_at: Date;
  generation: number;
  traceparent: string | null;
  paused: boolean;
}

export interface AttemptBatcherOptions {
  /** Attempts per transaction at most. */
  maxBatch?: number;
  /** Transactions in flight at most (each batch locks only its own deliveries, in id order). */
  maxWriters?: number;
  /** Where `webhook.endpoint_dead_lettered` goes when a dead letter pauses an endpoint. */
  events?: EndpointEvents;
}

/** `store` with its recordAttempt replaced by the batched one. */
export function withBatchedAttempts(store: AttemptStore, db: Knex, options: AttemptBatcherOptions = {}): AttemptStore {
  return { ...store, recordAttempt: createAttemptBatcher(db, options) };
}

export function createAttemptBatcher(db: Knex, options: AttemptBatcherOptions = {}): AttemptStore["recordAttempt"] {
  const maxBatch = options.maxBatch ?? 128;
  let queue: Pending[] = [];
  const maxWriters = options.maxWriters ?? 4;
  let writing = 0;
  let scheduled = false;

  function schedule() {
    if (writing >= maxWriters || scheduled || queue.length === 0) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void flush();
    });
  }

  async function flush() {
    if (writing >= maxWriters || queue.length === 0) return;
    writing += 1;
    // One attempt per delivery in a batch; a second one (never expected: the lease) waits.
    const seen = new Set<string>();
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    for (const item of queue) {
      if (batch.length < maxBatch && !seen.has(item.deliveryId)) {
        seen.add(item.deliveryId);
        batch.push(item);
      } else rest.push(item);
    }
    queue = rest;
    try {
      const outcomes = await writeWithSuccessesFirst(db, batch, options.events);
      if (options.events && outcomes.some((outcome) => !(outcome instanceof Error) && outcome.deadLettered)) {
        options.events.kick();
      }
      batch.forEach((item, i) => {
        const outcome = outcomes[i]!;
        if (outcome instanceof Error) item.reject(outcome);
        else item.resolve(outcome);
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
    } finally {
      writing -= 1;
      schedule();
    }
  }

  return (deliveryId, attempt, delaysMs) =>
    new Promise<RecordedAttempt>((resolve, reject) => {
      queue.push({ deliveryId, attempt, delaysMs, resolve, reject });
      schedule();
    });
}

/** The batch's deliveries with their endpoint's pause, locked in id order. */
const lockDeliveriesSql = preparedStatement(
  "webhooks_attempts_lock",
  `select d.id, d.endpoint_id, d.tenant_id, d.status, d.attempts, d.attempts_total, d.next_attempt_at, d.created_at,
          d.generation, d.traceparent, e.paused
     from deliveries d join endpoints e on e.id = d.endpoint_id
    where d.id = any(?::text[])
    order by d.id
      for update of d`,
);

/** The attempt rows and the deliveries' new states (one row of each per attempt, same order). */
const recordAttemptsSql = preparedStatement(
  "webhooks_attempts_record",
  `with v as (
     select * from unnest(?::text[], ?::text[], ?::int[], ?::timestamptz[], ?::int[], ?::boolean[], ?::int[],
                          ?::text[], ?::bytea[], ?::boolean[], ?::timestamptz[], ?::text[], ?::int[],
                          ?::timestamptz[])
       as v(delivery_id, endpoint_id, number, attempted_at, duration_ms, succeeded, status_code, error,
            response_body, response_body_truncated, delivery_created_at, status, attempts, next_attempt_at)
   ), inserted as (
     insert into attempts (delivery_id, endpoint_id, number, attempted_at, duration_ms, succeeded, status_code,
                           error, response_body, response_body_truncated, delivery_created_at)
     select delivery_id, endpoint_id, number, attempted_at, duration_ms, succeeded, status_code, error,
            response_body, response_body_truncated, delivery_created_at from v
   )
   update deliveries d
      set status = v.status, attempts = v.attempts, attempts_total = v.number,
          next_attempt_at = v.next_attempt_at, leased_until = null,
          last_status_code = v.status_code, last_error = v.error, updated_at = now()
     from v
    where d.id = v.delivery_id`,
);

/**
 * The succeeded attempts of a batch and their deliveries' new states in one statement (see the
 * header): the row of each delivery the statement found (number, new status, created_at).
 */
const recordSuccessesSql = preparedStatement(
  "webhooks_attempts_record_succeeded",
  `with v as (
     select * from unnest(?::text[], ?::timestamptz[], ?::int[], ?::int[], ?::bytea[], ?::boolean[])
       as v(delivery_id, attempted_at, duration_ms, status_code, response_body, response_body_truncated)
   ), moving as (select ?::text[] as statuses
   ), updated as (
     update deliveries d
        set status = case when d.status = any(m.statuses) then 'succeeded' else d.status end,
            attempts = case when d.status = any(m.statuses) then d.attempts + 1 else d.attempts end,
            next_attempt_at = case when d.status = any(m.statuses) then null else d.next_attempt_at end,
            attempts_total = d.attempts_total + 1, leased_until = null,
            last_status_code = v.status_code, last_error = null, updated_at = now()
       from v, moving m
      where d.id = v.delivery_id and d.created_at >= ?::timestamptz and d.created_at < ?::timestamptz + interval '1 day'
  returning d.id, d.endpoint_id, d.attempts_total, d.status, d.created_at
   ), inserted as (
     insert into attempts (delivery_id, endpoint_id, number, attempted_at, duration_ms, succeeded, status_code,
                           error, response_body, response_body_truncated, delivery_created_at)
     select u.id, u.endpoint_id, u.attempts_total, v.attempted_at, v.duration_ms, true, v.status_code, null,
            v.response_body, v.response_body_truncated, u.created_at
       from updated u join v on v.delivery_id = u.id
   )
   select id, attempts_total as number, status, created_at from updated`,
);

/** Postgres' deadlock_detected: the statement was rolled back, nothing of it was written. */
const deadlockDetected = "40P01";

async function writeWithSuccessesFirst(
  db: Knex,
  batch: Pending[],
  events?: EndpointEvents,
): Promise<(RecordedAttempt | Error)[]> {
  const succeeded = batch.filter((item) => item.attempt.succeeded);
  if (succeeded.length === 0) return writeBatch(db, batch, events);
  const others = batch.filter((item) => !item.attempt.succeeded);
  const written = new Map<string, RecordedAttempt>();
  const [, othersOutcomes] = await Promise.all([
    writeSuccesses(db, succeeded).then(
      (recorded) => recorded.forEach((outcome, id) => written.set(id, outcome)),
      (error: unknown) => {
        if ((error as { code?: string }).code !== deadlockDetected) throw error;
      },
    ),
    others.length > 0 ? writeBatch(db, others, events) : Promise.resolve([]),
  ]);
  // Not found by the one statement (or a deadlock): the locking way tells what happened.
  const rest = succeeded.filter((item) => !written.has(item.deliveryId));
  const restOutcomes = rest.length > 0 ? await writeBatch(db, rest, events) : [];
  const outcomeOf = new Map<Pending, RecordedAttempt | Error>();
  others.forEach((item, i) => outcomeOf.set(item, othersOutcomes[i]!));
  rest.forEach((item, i) => outcomeOf.set(item, restOutcomes[i]!));
  return batch.map((item) => outcomeOf.get(item) ?? written.get(item.deliveryId)!);
}

/**
 * One statement per day the batch's ids name (ids.ts; one when every delivery was made today),
 * the day a parameter: Postgres reads that day's partition only. A delivery whose id does not name
 * its day (made before ids did) is not found here and goes the locking way, in every day.
 */
async function writeSuccesses(db: Knex, batch: Pending[]): Promise<Map<string, RecordedAttempt>> {
  const written = new Map<string, RecordedAttempt>();
  for (const [day, items] of byDay(batch, (item) => item.deliveryId)) {
    const rows = await queryRows<{ id: string; number: number; status: DeliveryStatus; created_at: Date }>(
      db,
      recordSuccessesSql,
      [
        items.map((item) => item.deliveryId),
        items.map((item) => item.attempt.attemptedAt),
        items.map((item) => item.attempt.durationMs),
        items.map((item) => item.attempt.statusCode),
        items.map((item) => (item.attempt.responseBody.length > 0 ? item.attempt.responseBody : null)),
        items.map((item) => item.attempt.responseBodyTruncated),
        statusesAnAttemptMoves,
        day,
        day,
      ],
    );
    for (const row of rows) {
      written.set(row.id, {
        number: row.number,
        status: row.status,
        nextAttemptAt: null,
        deadLettered: false,
        createdAt: row.created_at,
      });
    }
  }
  return written;
}

async function writeBatch(db: Knex, batch: Pending[], events?: EndpointEvents): Promise<(RecordedAttempt | Error)[]> {
  return db.transaction(async (trx) => {
    const ids = batch.map((item) => item.deliveryId);
    const locked = await queryRows<LockedRow>(trx, lockDeliveriesSql, [ids]);
    const rows = new Map(locked.map((row) => [row.id, row]));
    const attempts: ReturnType<typeof attemptRowOf>[] = [];
    const updates: {
      id: string;
      status: DeliveryStatus;
      attempts: number;
      attemptsTotal: number;
      nextAttemptAt: Date | null;
      statusCode: number | null;
      error: string | null;
    }[] = [];
    const pause = new Map<
      string,
      { tenantId: string; deliveryId: string; traceparent: string | null; cause: string | null }
    >();
    const outcomes = batch.map((item): RecordedAttempt | Error => {
      const row = rows.get(item.deliveryId);
      if (!row) return new Error(`delivery ${item.deliveryId} disappeared during its attempt`);
      const { attempt } = item;
      const number = row.attempts_total + 1;
      attempts.push(attemptRowOf(row.id, row.endpoint_id, number, attempt, row.created_at));
      const state: DeliveryState = {
        status: row.status,
        attempts: row.attempts,
        nextAttemptAt: row.next_attempt_at,
        createdAt: row.created_at,
      };
      const transition = recordClaimedAttempt(
        state,
        { ok: attempt.succeeded },
        {
          // The wait before the next attempt counts from the end of this one.
          now: new Date(attempt.attemptedAt.getTime() + attempt.durationMs),
          delaysMs: item.delaysMs,
          endpointPaused: row.paused,
          retryAfterMs: attempt.retryAfterMs ?? null,
        },
      );
      const next = transition?.state ?? state;
      updates.push({
        id: row.id,
        status: next.status,
        attempts: transition ? next.attempts : row.attempts,
        attemptsTotal: number,
        nextAttemptAt: next.nextAttemptAt,
        statusCode: attempt.statusCode,
        error: attempt.error,
      });
      if (transition?.pauseEndpoint) {
        pause.set(row.endpoint_id, {
          tenantId: row.tenant_id,
          deliveryId: row.id,
          traceparent: row.traceparent,
          cause: errorClassOf(attempt),
        });
      }
      return {
        number,
        status: next.status,
        nextAttemptAt: next.nextAttemptAt,
        deadLettered: transition?.pauseEndpoint ?? false,
        createdAt: row.created_at,
      };
    });
    if (attempts.length > 0) {
      // One statement: the attempt rows and the deliveries' new states.
      await queryRows(trx, recordAttemptsSql, [
        attempts.map((a) => a.delivery_id),
        attempts.map((a) => a.endpoint_id),
        attempts.map((a) => a.number),
        attempts.map((a) => a.attempted_at),
        attempts.map((a) => a.duration_ms),
        attempts.map((a) => a.succeeded),
        attempts.map((a) => a.status_code),
        attempts.map((a) => a.error),
        attempts.map((a) => a.response_body),
        attempts.map((a) => a.response_body_truncated),
        attempts.map((a) => a.delivery_created_at),
        updates.map((u) => u.status),
        updates.map((u) => u.attempts),
        updates.map((u) => u.nextAttemptAt),
      ]);
    }
    await pauseDeadLetteredEndpoints(
      trx,
      [...pause].map(([endpointId, change]) => ({ endpointId, ...change })),
      events,
    );
    return outcomes;
  });
}
