import type { Knex } from "@platform/service-kit/postgres";

export const name = "20261128100000_deliveries_type_log_idx";

/**
 * The console's message log filtered by event type (db/ledger-store.ts `list` without an
 * endpoint, with `eventType`) read the tenant's log index in seq order and filtered the type on
 * the rows, so a rare type on a big tenant read most of the tenant's deliveries (bench:growth at
 * 10 million: 4.9 s p99, 70.9x the empty database's). An index on (tenant_id, event_type, seq)
 * serves it in seq order: 126 MB per million deliveries (bench:growth run F).
 *
 * `deliveries` is partitioned by day, and Postgres cannot build a partitioned table's index
 * concurrently; so the parent's index is made on the parent alone (invalid until every partition
 * has one), each partition's built concurrently and attached: a running release keeps writing
 * meanwhile. Partitions made later get it from the parent. A partition's index left invalid by an
 * interrupted build is dropped and built again when the migration runs again.
 */
export const config = { transaction: false };

const COLUMNS = "(tenant_id, event_type, seq desc)";

export async function up(db: Knex): Promise<void> {
  await db.raw(`create index if not exists deliveries_type_log_idx on only webhooks_history.deliveries ${COLUMNS}`);
  const { rows } = await db.raw<{ rows: { name: string }[] }>(
    `select c.relname as name
       from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'webhooks_history.deliveries'::regclass
      order by c.relname`,
  );
  for (const { name: partition } of rows) {
    const index = `${partition}_type_log_idx`;
    // An interrupted concurrent build leaves its index behind, invalid and not yet attached: "if not
    // exists" would keep it.
    const { rows: invalid } = await db.raw<{ rows: unknown[] }>(
      `select 1 from pg_index i join pg_class c on c.oid = i.indexrelid
        where c.relname = ? and c.relnamespace = 'webhooks_history'::regnamespace and not i.indisvalid
          and not exists (select 1 from pg_inherits h where h.inhrelid = c.oid)`,
      [index],
    );
    if (invalid.length > 0) await db.raw("drop index concurrently ??", [`webhooks_history.${index}`]);
    await db.raw(`create index concurrently if not exists ?? on ?? ${COLUMNS}`, [
      index,
      `webhooks_history.${partition}`,
    ]);
    await db.raw("alter index webhooks_history.deliveries_type_log_idx attach partition ??", [
      `webhooks_history.${index}`,
    ]);
  }
}

export async function down(db: Knex): Promise<void> {
  await db.raw("drop index if exists webhooks_history.deliveries_type_log_idx");
}
