/**
 * What the delivery worker reads and writes in Postgres: claiming a delivery for one attempt (a
 * lease), giving the claim back, holding or dead-lettering a delivery whose endpoint is paused or
 * deleted, and recording an attempt together with the delivery's new state in one transaction.
 *
 * One call, one statement or transaction. Production does not run this store as it is: it runs
 * createBatchedAttemptStore (batched-attempt-store.ts), which batches the claims and the attempt
 * records and comes here only for the rest.
 */
import type { Knex } from "@platform/service-kit/postgres";
import { errorClassOf } from "../domain/attempt-outcome.js";
import type { DeliveryJob } from "../domain/delivery-job.js";
import {
  hold,
  recordClaimedAttempt,
  type DeliveryState,
  type DeliveryStatus,
  type Transition,
} from "../domain/delivery-state.js";
import { ENDPOINT_DEAD_LETTERED } from "../domain/endpoint.js";
import { appendEndpointDeadLettered, type EndpointEvents } from "./endpoint-events.js";

/**
 * The endpoint limiter's burst: 1, so an endpoint limited to r receives at most r deliveries in
 * any one second (and at most 1 + r·t in any t seconds, by the database's clock).
 */
export const RATE_LIMIT_BURST = 1;

/** The GCRA's emission interval T = 1/r and tolerance τ = (burst − 1)·T, in seconds. */
export function rateLimitGcra(perSecond: number): { intervalSeconds: number; toleranceSeconds: number } {
  const intervalSeconds = 1 / perSecond;
  return { intervalSeconds, toleranceSeconds: (RATE_LIMIT_BURST - 1) * intervalSeconds };
}

/** The last_error of a delivery whose endpoint was deleted before it could be attempted. */
export const endpointDeletedError = "endpoint_deleted";

export interface ClaimedDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  payload: string;
  generation: number;
  /** The trace context of the fan-out that made the delivery (null when untraced). */
  traceparent: string | null;
  /** Milliseconds until next_attempt_at (negative or zero: due). */
  dueInMs: number;
  url: string;
  paused: boolean;
  deleted: boolean;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  /** The database's clock at the claim. */
  now: Date;
  /** The endpoint's rate limit (deliveries per second); null: unlimited. */
  rateLimit: number | null;
  /** The limiter already gave this attempt its slot (a claim given back before the attempt). */
  rateSlotHeld: boolean;
}

export type ClaimResult =
  | { kind: "claimed"; delivery: ClaimedDelivery }
  /** Gone, another generation, or a final status: the job has nothing to do. */
  | { kind: "stale" }
  /** Another worker holds it right now. */
  | { kind: "leased" };

/** What a claim answers (both the single claim below and the batched one, claim-batcher.ts). */
export interface ClaimRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  payload: string;
  generation: number;
  traceparent: string | null;
  due_in_ms: string | number | null;
  url: string;
  paused: boolean;
  deleted: boolean;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  now: Date;
  rate_limit: number | null;
  rate_slot_held: boolean;
}

interface LockedRow {
  status: DeliveryStatus;
  attempts: number;
  attempts_total: number;
  next_attempt_at: Date | null;
  created_at: Date;
  generation: number;
}

/**
 * What the worker writes about one attempt it made (not the ledger's read of an attempt row,
 * ledger-store.ts AttemptRecord).
 */
export interface AttemptToRecord {
  attemptedAt: Date;
  durationMs: number;
  succeeded: boolean;
  statusCode: number | null;
  /** The failure reason (null on success). */
  error: string | null;
  responseBody: Buffer;
  responseBodyTruncated: boolean;
  /** The wait a 429 or 503 asked for with Retry-After (domain/retry-delays.ts), if it did. */
  retryAfterMs?: number | null;
}

export interface RecordedAttempt {
  number: number;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  deadLettered: boolean;
  /** When the delivery was created (its event's fan-out): the start of its delivery latency. */
  createdAt: Date;
}

export interface AttemptStore {
  claim(job: DeliveryJob, leaseMs: number): Promise<ClaimResult>;
  /** Gives a claimed delivery back untouched (an early job, a secret that cannot be opened). */
  release(deliveryId: string): Promise<void>;
  /**
   * The endpoint's rate limiter (migration 20261127160000): gives the claimed delivery's attempt
   * the endpoint's next slot, shared by every replica. Answers the milliseconds until the slot:
   * zero or less, attempt now; more, the delivery was rescheduled to its slot and its claim given
   * back (not an attempt).
   */
  reserveRateSlot(delivery: { id: string; endpointId: string }, rateLimit: number): Promise<number>;
  /** The endpoint is paused: the claimed delivery waits, held, until it is resumed. */
  holdClaimed(deliveryId: string): Promise<void>;
  /** The endpoint is gone: the claimed delivery ends dead-lettered, without an attempt. */
  abandonClaimed(deliveryId: string): Promise<void>;
  /** One transaction: the attempt row, the delivery's new state, and a dead-letter's pause. */
  recordAttempt(deliveryId: string, attempt: AttemptToRecord, delaysMs: readonly number[]): Promise<RecordedAttempt>;
}

/** The columns a claim returns (`d` the delivery, `e` its endpoint), as ClaimRow. */
export const claimReturning = `d.id, d.event_id, d.endpoint_id, d.payload, d.generation, d.traceparent,
       extract(epoch from (d.next_attempt_at - now())) * 1000 as due_in_ms,
       e.url, e.paused, e.deleted_at is not null as deleted,
       e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at, now() as now,
       e.rate_limit, coalesce(d.rate_slot_attempt = d.attempts_total, false) as rate_slot_held`;

export function claimedDeliveryOf(row: ClaimRow): ClaimedDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    payload: row.payload,
    generation: row.generation,
    traceparent: row.traceparent ?? null,
    dueInMs: row.due_in_ms === null ? 0 : Number(row.due_in_ms),
    url: row.url,
    paused: row.paused,
    deleted: row.deleted,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    now: row.now,
    rateLimit: row.rate_limit ?? null,
    rateSlotHeld: row.rate_slot_held ?? false,
  };
}

/** The `attempts` row of one attempt (attempt `number` of the delivery, counting across runs). */
export function attemptRowOf(
  deliveryId: string,
  endpointId: string,
  number: number,
  attempt: AttemptToRecord,
  deliveryCreatedAt: Date,
) {
  return {
    delivery_id: deliveryId,
    endpoint_id: endpointId,
    number,
    attempted_at: attempt.attemptedAt,
    duration_ms: attempt.durationMs,
    succeeded: attempt.succeeded,
    status_code: attempt.statusCode,
    error: attempt.error,
    response_body: attempt.responseBody.length > 0 ? attempt.responseBody : null,
    response_body_truncated: attempt.responseBodyTruncated,
    // The attempts' partition key: the delivery's day.
    delivery_created_at: deliveryCreatedAt,
  };
}

/**
 * In the transaction that dead-lettered their deliveries: pauses the endpoints with the attention
 * reason and, with `events`, announces `webhook.endpoint_dead_lettered` for each (the tenant's
 * attention poll). The single and the batched attempt writers share it.
 */
export async function pauseDeadLetteredEndpoints(
  trx: Knex.Transaction,
  pauses: readonly {
    endpointId: string;
    tenantId: string;
    deliveryId: string;
    traceparent: string | null;
    cause: string | null;
  }[],
  events?: EndpointEvents,
): Promise<void> {
  if (pauses.length === 0) return;
  // One statement for all of them; each endpoint gets the cause of its own dead-letter.
  await trx.raw(
    `update endpoints e
        set paused = true, attention_reason = ?, attention_cause = c.cause, attention_since = now(),
            version = e.version + 1, updated_at = now()
       from unnest(?::text[], ?::text[]) as c(endpoint_id, cause)
      where e.id = c.endpoint_id`,
    [
      ENDPOINT_DEAD_LETTERED,
      pauses.map((p) => p.endpointId),
      pauses.map((p) => p.cause),
    ] as unknown as readonly Knex.RawBinding[],
  );
  if (!events) return;
  for (const pause of pauses) await appendEndpointDeadLettered(trx, events.namespace, pause);
}

export function createAttemptStore(db: Knex, events?: EndpointEvents): AttemptStore {
  return {
    async claim(job, leaseMs) {
      const claimed = await db.raw<{ rows: ClaimRow[] }>(
        `update deliveries d
            set leased_until = now() + make_interval(secs => ?::double precision / 1000)
           from endpoints e
          where d.id = ? and d.generation = ? and e.id = d.endpoint_id
            and d.status in ('pending', 'awaiting_retry')
            and (d.leased_until is null or d.leased_until < now())
      returning ${claimReturning}`,
        [leaseMs, job.deliveryId, job.generation],
      );
      const row = claimed.rows[0];
      if (row) {
        return { kind: "claimed", delivery: claimedDeliveryOf(row) };
      }
      const current = await db("deliveries")
        .where({ id: job.deliveryId })
        .first<{ generation: number; status: DeliveryStatus; leased: boolean } | undefined>(
          "generation",
          "status",
          db.raw("coalesce(leased_until > now(), false) as leased"),
        );
      if (
        current &&
        current.generation === job.generation &&
        (current.status === "pending" || current.status === "awaiting_retry") &&
        current.leased
      ) {
        return { kind: "leased" };
      }
      return { kind: "stale" };
    },

    async reserveRateSlot(delivery, rateLimit) {
      const { intervalSeconds, toleranceSeconds } = rateLimitGcra(rateLimit);
      const answer = await db.raw<{ rows: { wait_ms: number }[] }>(
        "select webhooks_rate_reserve(?, ?, ?::double precision, ?::double precision) as wait_ms",
        [delivery.id, delivery.endpointId, intervalSeconds, toleranceSeconds],
      );
      return Number(answer.rows[0]!.wait_ms);
    },

    async release(deliveryId) {
      await db("deliveries").where({ id: deliveryId }).update({ leased_until: null });
    },

    async holdClaimed(deliveryId) {
      await db.transaction(async (trx) => {
        const row = await trx("deliveries").where({ id: deliveryId }).forUpdate().first<LockedRow | undefined>("*");
        if (!row) return;
        if (row.status !== "pending" && row.status !== "awaiting_retry" && row.status !== "held") {
          await trx("deliveries").where({ id: deliveryId }).update({ leased_until: null });
          return;
        }
        const held = hold(stateOf(row));
        await trx("deliveries").where({ id: deliveryId }).update({
          status: held.status,
          next_attempt_at: held.nextAttemptAt,
          leased_until: null,
          // A slot the limiter gave is not carried over a pause: the resumed delivery takes a new one.
          rate_slot_attempt: null,
          updated_at: trx.fn.now(),
        });
      });
    },

    async abandonClaimed(deliveryId) {
      await db("deliveries").where({ id: deliveryId }).whereIn("status", ["pending", "awaiting_retry", "held"]).update({
        status: "dead_lettered",
        next_attempt_at: null,
        leased_until: null,
        last_error: endpointDeletedError,
        updated_at: db.fn.now(),
      });
    },

    async recordAttempt(deliveryId, attempt, delaysMs) {
      const recorded = await db.transaction(async (trx) => {
        const row = await trx("deliveries")
          .where({ id: deliveryId })
          .forUpdate()
          .first<
            | (LockedRow & { endpoint_id: string; tenant_id: string; traceparent: string | null; created_at: Date })
            | undefined
          >("*");
        if (!row) throw new Error(`delivery ${deliveryId} disappeared during its attempt`);
        const endpoint = await trx("endpoints")
          .where({ id: row.endpoint_id })
          .first<{ paused: boolean } | undefined>("paused");
        const number = row.attempts_total + 1;
        await trx("attempts").insert(attemptRowOf(deliveryId, row.endpoint_id, number, attempt, row.created_at));
        const transition: Transition | undefined = recordClaimedAttempt(
          stateOf(row),
          { ok: attempt.succeeded },
          {
            // The wait before the next attempt counts from the end of this one.
            now: new Date(attempt.attemptedAt.getTime() + attempt.durationMs),
            delaysMs,
            endpointPaused: endpoint?.paused ?? false,
            retryAfterMs: attempt.retryAfterMs ?? null,
          },
        );
        const next = transition?.state ?? stateOf(row);
        await trx("deliveries")
          .where({ id: deliveryId })
          .update({
            status: next.status,
            attempts: transition ? next.attempts : row.attempts,
            attempts_total: number,
            next_attempt_at: next.nextAttemptAt,
            leased_until: null,
            last_status_code: attempt.statusCode,
            last_error: attempt.error,
            updated_at: trx.fn.now(),
          });
        if (transition?.pauseEndpoint) {
          await pauseDeadLetteredEndpoints(
            trx,
            [
              {
                endpointId: row.endpoint_id,
                tenantId: row.tenant_id,
                deliveryId,
                traceparent: row.traceparent,
                cause: errorClassOf(attempt),
              },
            ],
            events,
          );
        }
        return {
          number,
          status: next.status,
          nextAttemptAt: next.nextAttemptAt,
          deadLettered: transition?.pauseEndpoint ?? false,
          createdAt: row.created_at,
        };
      });
      if (recorded.deadLettered) events?.kick();
      return recorded;
    },
  };
}

function stateOf(row: LockedRow): DeliveryState {
  return {
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  };
}
