/**
 * Group commit for claims: the jobs of one fetch are dispatched together, and their claims
 * (AttemptStore.claim) arriving in the same turn of the event loop are made by one statement,
 * one commit. Rows another transaction holds are skipped (no lock waits, no deadlock between
 * batches), and every job the batch did not claim goes through the store's own claim, which
 * also tells a stale job from a leased one. Same lease and answers as AttemptStore.claim.
 */
import { preparedStatement, queryRows, type Knex } from "@platform/service-kit/postgres";
import type { DeliveryJob } from "../domain/delivery-job.js";
import { byDay } from "../domain/ids.js";
import {
  claimedDeliveryOf,
  claimReturning,
  type AttemptStore,
  type ClaimResult,
  type ClaimRow,
} from "./attempt-store.js";

interface Pending {
  job: DeliveryJob;
  leaseMs: number;
  resolve: (result: ClaimResult) => void;
  reject: (error: unknown) => void;
}

/** `store` with its claim replaced by the batched one. */
export function withBatchedClaims(store: AttemptStore, db: Knex, maxBatch = 128): AttemptStore {
  let queue: Pending[] = [];
  let scheduled = false;

  function flush(): void {
    const all = queue;
    queue = [];
    // One lease length per statement (the worker uses one); a job twice in a batch goes alone.
    const groups = new Map<number, Pending[]>();
    const alone: Pending[] = [];
    const seen = new Set<string>();
    for (const item of all) {
      if (seen.has(item.job.deliveryId)) {
        alone.push(item);
        continue;
      }
      seen.add(item.job.deliveryId);
      const group = groups.get(item.leaseMs) ?? [];
      group.push(item);
      groups.set(item.leaseMs, group);
    }
    const fallback = (item: Pending) => store.claim(item.job, item.leaseMs).then(item.resolve, item.reject);
    for (const [leaseMs, group] of groups) {
      for (let from = 0; from < group.length; from += maxBatch) {
        const batch = group.slice(from, from + maxBatch);
        void claimBatch(db, batch, leaseMs).then(
          (rows) => {
            for (const item of batch) {
              const row = rows.get(item.job.deliveryId);
              if (row) item.resolve({ kind: "claimed", delivery: claimedDeliveryOf(row) });
              else void fallback(item);
            }
          },
          (error: unknown) => {
            for (const item of batch) item.reject(error);
          },
        );
      }
    }
    for (const item of alone) void fallback(item);
  }

  return {
    ...store,
    claim(job, leaseMs) {
      return new Promise<ClaimResult>((resolve, reject) => {
        queue.push({ job, leaseMs, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(() => {
            scheduled = false;
            flush();
          });
        }
      });
    },
  };
}

const claimBatchSql = preparedStatement(
  "webhooks_claim_batch",
  `with jobs as (select * from unnest(?::text[], ?::int[]) as j(id, generation)),
        free as (
          select d.id from deliveries d join jobs j on j.id = d.id and j.generation = d.generation
           where d.status in ('pending', 'awaiting_retry')
             and (d.leased_until is null or d.leased_until < now())
             and d.created_at >= ?::timestamptz and d.created_at < ?::timestamptz + interval '1 day'
           order by d.id
             for update of d skip locked)
   update deliveries d
      set leased_until = now() + make_interval(secs => ?::double precision / 1000)
     from free, endpoints e
    where d.id = free.id and e.id = d.endpoint_id
      and d.created_at >= ?::timestamptz and d.created_at < ?::timestamptz + interval '1 day'
returning ${claimReturning}`,
);

/**
 * One statement per day the batch's ids name (ids.ts; one in the common case, when every job is of
 * a delivery made today), the day a parameter: Postgres plans it for that day's partition only
 * (it plans this statement on most runs: a generic plan takes the ids' `unnest` for 100 rows and
 * looks dearer), instead of for all 36 (bench:day-lookups). A delivery whose id does not name
 * its day (made before ids did) is not claimed here: it goes through the store's own claim, which
 * looks in every day.
 */
async function claimBatch(db: Knex, batch: Pending[], leaseMs: number): Promise<Map<string, ClaimRow>> {
  const claimed = new Map<string, ClaimRow>();
  for (const [day, jobs] of byDay(batch, (item) => item.job.deliveryId)) {
    const rows = await queryRows<ClaimRow>(db, claimBatchSql, [
      jobs.map((item) => item.job.deliveryId),
      jobs.map((item) => item.job.generation),
      day,
      day,
      leaseMs,
      day,
      day,
    ]);
    for (const row of rows) claimed.set(row.id, row);
  }
  return claimed;
}
