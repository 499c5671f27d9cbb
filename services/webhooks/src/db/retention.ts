/**
 * The retention (WEBHOOKS_RETENTION, 30 days): deliveries (their attempts cascade) created longer
 * ago than it, then events older than it that have no delivery left, removed in batches of
 * `batchSize` so no statement holds many locks for long; and recoveries that finished longer ago
 * than it (their items cascade). The janitor (delivery/janitor.ts) runs it.
 */
import type { Knex } from "@platform/service-kit/postgres";

export interface ExpiredRemoved {
  deliveries: number;
  events: number;
  recoveries: number;
}

/** Removes everything past the retention, batch by batch, until nothing is left to remove. */
export async function removeExpired(
  db: Knex,
  options: { retentionMs: number; batchSize: number },
): Promise<ExpiredRemoved> {
  const result: ExpiredRemoved = { deliveries: 0, events: 0, recoveries: 0 };
  const age = [options.retentionMs, options.batchSize];
  for (;;) {
    const removed = await db.raw<{ rowCount: number }>(
      `delete from deliveries where id in (
         select id from deliveries
          where created_at < now() - make_interval(secs => ?::double precision / 1000)
          limit ?)`,
      age,
    );
    result.deliveries += removed.rowCount;
    if (removed.rowCount < options.batchSize) break;
  }
  for (;;) {
    const removed = await db.raw<{ rowCount: number }>(
      `delete from events where id in (
         select e.id from events e
          where e.received_at < now() - make_interval(secs => ?::double precision / 1000)
            and not exists (select 1 from deliveries d where d.event_id = e.id)
          limit ?)`,
      age,
    );
    result.events += removed.rowCount;
    if (removed.rowCount < options.batchSize) break;
  }
  for (;;) {
    const removed = await db.raw<{ rowCount: number }>(
      `delete from recoveries where id in (
         select id from recoveries
          where state in ('completed', 'failed')
            and finished_at < now() - make_interval(secs => ?::double precision / 1000)
          limit ?)`,
      age,
    );
    result.recoveries += removed.rowCount;
    if (removed.rowCount < options.batchSize) break;
  }
  return result;
}
