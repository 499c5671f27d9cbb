/**
 * The janitor: removes deliveries (their attempts cascade) created longer ago than the retention
 * (WEBHOOKS_RETENTION, 30 days), then events older than it that have no delivery left, in batches
 * of WEBHOOKS_JANITOR_BATCH so no statement holds many locks for long.
 */
import type { Logger } from "@platform/service-kit/logger";
import type { Knex } from "@platform/service-kit/postgres";
import { every, type Periodic } from "./sweeper.js";

export interface JanitorResult {
  deliveries: number;
  events: number;
}

/** Removes everything past the retention, batch by batch, until nothing is left to remove. */
export async function removeExpired(
  db: Knex,
  options: { retentionMs: number; batchSize: number },
): Promise<JanitorResult> {
  const result: JanitorResult = { deliveries: 0, events: 0 };
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
  return result;
}

export function startJanitor(options: {
  db: Knex;
  logger: Logger;
  intervalMs: number;
  retentionMs: number;
  batchSize: number;
}): Periodic {
  return every(options.intervalMs, async () => {
    try {
      const removed = await removeExpired(options.db, options);
      if (removed.deliveries + removed.events > 0)
        options.logger.info(removed, "removed deliveries and events past retention");
    } catch (error) {
      options.logger.warn({ err: error }, "removing expired deliveries and events failed; next time");
    }
  });
}
