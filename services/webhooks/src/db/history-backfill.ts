/**
 * The backfill of the delivery history's old tables (`webhooks.events`, `deliveries`, `attempts`,
 * written before migration 20261127200000) into the day-partitioned ones of `webhooks_history`:
 * batch by batch in key order, each batch one transaction that holds the table's cursor row
 * (`webhooks_history.backfill`, so two janitors never copy the same batch at once), copies the rows
 * after the cursor as they are (`on conflict do nothing`: a row the forwarding trigger or an
 * earlier run copied stays) and advances the cursor. Resumable (the cursor is committed with its
 * batch) and idempotent. A table is done when a batch comes back short: every old row written
 * since the migration reached the new tables through the triggers, in its writer's transaction.
 */
import type { Knex } from "@platform/service-kit/postgres";

export const historyTables = ["events", "deliveries", "attempts"] as const;
export type HistoryTable = (typeof historyTables)[number];

const deliveryColumns =
  "id, seq, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status, attempts, attempts_total, " +
  "next_attempt_at, generation, leased_until, last_status_code, last_error, created_at, updated_at, traceparent, " +
  "rate_slot_at, rate_slot_attempt";

/** One batch's statement per table: the cursor (null: from the start), then the batch size. */
const copyBatchSql: Record<HistoryTable, string> = {
  events: `with batch as (
      select id, tenant_id, type, occurred_at, data, livemode, received_at from webhooks.events
       where id > coalesce(?::text, '') order by id limit ?
    ), copied as (
      insert into webhooks_history.events (id, tenant_id, type, occurred_at, data, livemode, received_at)
      select b.* from batch b where not exists (select 1 from webhooks_history.events e where e.id = b.id)
      on conflict do nothing returning 1
    ) select (select max(id) from batch) as last_key, (select count(*) from batch)::int as read,
             (select count(*) from copied)::int as copied`,
  deliveries: `with batch as (
      select ${deliveryColumns} from webhooks.deliveries
       where seq > coalesce(?::bigint, 0) order by seq limit ?
    ), copied as (
      insert into webhooks_history.deliveries (${deliveryColumns}) select ${deliveryColumns} from batch
      on conflict do nothing returning 1
    ) select (select max(seq) from batch)::text as last_key, (select count(*) from batch)::int as read,
             (select count(*) from copied)::int as copied`,
  attempts: `with batch as (
      select a.id, a.delivery_id, a.endpoint_id, a.number, a.attempted_at, a.duration_ms, a.succeeded,
             a.status_code, a.error, a.response_body, a.response_body_truncated, d.created_at as delivery_created_at
        from webhooks.attempts a join webhooks.deliveries d on d.id = a.delivery_id
       where a.id > coalesce(?::bigint, 0) order by a.id limit ?
    ), copied as (
      insert into webhooks_history.attempts (id, delivery_id, endpoint_id, number, attempted_at, duration_ms,
                                             succeeded, status_code, error, response_body,
                                             response_body_truncated, delivery_created_at)
      select * from batch on conflict do nothing returning 1
    ) select (select max(id) from batch)::text as last_key, (select count(*) from batch)::int as read,
             (select count(*) from copied)::int as copied`,
};

export interface BackfillProgress {
  table: HistoryTable;
  /** Old rows read and rows copied (not there yet) by this call. */
  read: number;
  copied: number;
  done: boolean;
}

/** One batch of `table` (nothing when it is done); its progress. */
export async function backfillBatch(db: Knex, table: HistoryTable, batchSize: number): Promise<BackfillProgress> {
  return db.transaction(async (trx) => {
    const cursor = await trx.raw<{ rows: { after_key: string | null; done_at: Date | null }[] }>(
      "select after_key, done_at from webhooks_history.backfill where table_name = ? for update",
      [table],
    );
    const state = cursor.rows[0];
    if (!state || state.done_at !== null) return { table, read: 0, copied: 0, done: true };
    const result = await trx.raw<{ rows: { last_key: string | null; read: number; copied: number }[] }>(
      copyBatchSql[table],
      [state.after_key, batchSize],
    );
    const { last_key: lastKey, read, copied } = result.rows[0]!;
    const done = read < batchSize;
    await trx.raw(
      `update webhooks_history.backfill
          set after_key = coalesce(?, after_key), rows_copied = rows_copied + ?,
              done_at = case when ? then now() end
        where table_name = ?`,
      [lastKey, copied, done, table],
    );
    return { table, read, copied, done };
  });
}

/**
 * Batches of every table not done yet, for at most `budgetMs` (the janitor's run); what was copied
 * per table, and whether every table is done.
 */
export async function backfillHistory(
  db: Knex,
  options: { batchSize: number; budgetMs: number },
): Promise<{ copied: Record<HistoryTable, number>; done: boolean }> {
  const deadline = Date.now() + options.budgetMs;
  const copied = { events: 0, deliveries: 0, attempts: 0 };
  let done = true;
  for (const table of historyTables) {
    for (;;) {
      const progress = await backfillBatch(db, table, options.batchSize);
      copied[table] += progress.copied;
      if (progress.done) break;
      if (Date.now() > deadline) {
        done = false;
        break;
      }
    }
    if (!done) break;
  }
  return { copied, done };
}

/**
 * Marks the delivery history served by this release (the first start after the migration): from
 * then on the previous release's replicas may no longer update its old deliveries but to record an
 * attempt claimed before (the migration's fence), so none sends from a stale row.
 */
export async function markHistorySwitched(db: Knex): Promise<void> {
  await db.raw("update webhooks_history.layout set switched_at = now() where switched_at is null");
}
