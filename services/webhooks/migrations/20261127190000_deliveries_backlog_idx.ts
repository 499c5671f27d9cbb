import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261127190000_deliveries_backlog_idx";

/**
 * The backlog gauges (db/delivery-backlog.ts, every WEBHOOKS_BACKLOG_INTERVAL on every replica)
 * read the unfinished deliveries, `status in ('pending', 'awaiting_retry', 'held')`, which matched
 * neither partial index (`deliveries_due_idx` has two of the statuses, `deliveries_held_idx` the
 * third): a sequential scan of every delivery (bench:growth: 1.98 s at 10 million). One partial
 * index on exactly those statuses, covering what the gauges read, so they read only the backlog.
 * Built concurrently (outside a transaction), so a running release keeps writing meanwhile.
 */
export const config = { transaction: false };

export async function up(db: Knex): Promise<void> {
  await db.raw(
    `create index concurrently if not exists deliveries_backlog_idx on deliveries (endpoint_id)
       include (status, next_attempt_at, updated_at)
       where status in ('pending', 'awaiting_retry', 'held')`,
  );
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop index concurrently if exists deliveries_backlog_idx");
}
