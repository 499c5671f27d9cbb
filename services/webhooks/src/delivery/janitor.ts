/**
 * The janitor, every WEBHOOKS_JANITOR_INTERVAL: makes the delivery history's day partitions ahead
 * (yesterday to three days on), drops the days past the retention (WEBHOOKS_RETENTION) whole and
 * removes the finished recoveries past it (db/retention.ts). And every second, until it is done,
 * it copies the rows of the history's old tables into the partitioned ones, batches of
 * WEBHOOKS_JANITOR_BATCH for at most half a second (db/history-backfill.ts).
 */
import type { Logger } from "@platform/service-kit/logger";
import type { Knex } from "@platform/service-kit/postgres";
import { backfillHistory } from "../db/history-backfill.js";
import { ensureDayPartitions, removeExpired } from "../db/retention.js";
import { every, type Periodic } from "./periodic.js";

export function startJanitor(options: {
  db: Knex;
  logger: Logger;
  intervalMs: number;
  retentionMs: number;
  batchSize: number;
}): Periodic {
  let backfilled = false;
  const backfill = every(backfillEveryMs, async () => {
    if (backfilled) return;
    try {
      const result = await backfillHistory(options.db, { batchSize: options.batchSize, budgetMs: backfillEveryMs / 2 });
      backfilled = result.done;
      if (result.done) options.logger.info("the old delivery history is copied into the day partitions");
    } catch (error) {
      options.logger.warn({ err: error }, "copying old delivery history failed; next time");
    }
  });
  const maintain = every(options.intervalMs, async () => {
    try {
      const made = await ensureDayPartitions(options.db);
      if (made > 0) options.logger.info({ made }, "made the delivery history's partitions of the coming days");
    } catch (error) {
      options.logger.warn({ err: error }, "making the coming days' partitions failed; next time");
    }
    try {
      const removed = await removeExpired(options.db, options);
      if (removed.partitions.length + removed.defaultRows + removed.recoveries > 0)
        options.logger.info(removed, "removed the days, rows and recoveries past retention");
    } catch (error) {
      options.logger.warn({ err: error }, "removing what is past retention failed; next time");
    }
  });
  return {
    async stop() {
      await Promise.all([backfill.stop(), maintain.stop()]);
    },
  };
}

const backfillEveryMs = 1_000;
