/**
 * The janitor: removes deliveries (their attempts cascade) created longer ago than the retention
 * (WEBHOOKS_RETENTION, 30 days), then events older than it that have no delivery left, in batches
 * of WEBHOOKS_JANITOR_BATCH so no statement holds many locks for long.
 */
import type { Logger } from "@platform/service-kit/logger";
import type { Knex } from "@platform/service-kit/postgres";
import { removeExpired } from "../db/retention.js";
import { every, type Periodic } from "./periodic.js";

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
      if (removed.deliveries + removed.events + removed.recoveries > 0)
        options.logger.info(removed, "removed deliveries, events and recoveries past retention");
    } catch (error) {
      options.logger.warn({ err: error }, "removing expired deliveries and events failed; next time");
    }
  });
}
