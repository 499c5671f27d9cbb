import type { Knex } from "@platform/service-kit/postgres";

/**
 * The contract step of 20261127200000_history_partitions, for the release after the one that
 * switched to `webhooks_history` (whose previous release then no longer reads the old tables): its
 * migration calls this. Refuses while the janitor's backfill has not copied every old table (a row
 * would be lost); then drops the forwarding triggers, the fence and the old `events`, `deliveries`
 * and `attempts` (their sequences stay: the new tables draw from them). The previous release's
 * dedup look at the old `events` (db/event-store.ts) must be gone from the release that calls it.
 */
export async function contractOldHistoryTables(db: Knex): Promise<void> {
  const pending = await db.raw<{ rows: { table_name: string }[] }>(
    "select table_name from webhooks_history.backfill where done_at is null order by table_name",
  );
  if (pending.rows.length > 0)
    throw new Error(
      `the backfill of ${pending.rows.map((row) => row.table_name).join(", ")} into webhooks_history is not done: ` +
        "let the janitor finish it before the contract step",
    );
  await db.raw("drop table webhooks.attempts, webhooks.deliveries, webhooks.events");
  for (const fn of [
    "forward_events_insert",
    "forward_events_delete",
    "forward_deliveries_insert",
    "forward_deliveries_update",
    "forward_deliveries_delete",
    "fence_old_deliveries",
    "forward_attempts_insert",
    "forward_attempts_delete",
  ])
    await db.raw(`drop function webhooks_history.${fn}()`);
}
