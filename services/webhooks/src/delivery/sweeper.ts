/**
 * The sweeper: finds deliveries that are due (pending or awaiting_retry), overdue by more than
 * WEBHOOKS_SWEEP_OVERDUE and not leased, whose job was evidently lost (a crash between a commit and
 * the enqueue, a purged stream), bumps their generation and enqueues a job for the new one. A job
 * of the old generation that turns up after all is stale and acked without effect.
 */
import type { Logger } from "@platform/service-kit/logger";
import type { Knex } from "@platform/service-kit/postgres";
import { bumpOverdueDeliveries } from "../db/due-deliveries.js";
import type { DeliveryJob, DeliveryQueue } from "../domain/delivery-job.js";
import { every, type Periodic } from "./periodic.js";

/** One sweep: re-enqueues up to `limit` overdue deliveries; returns their jobs. */
export async function sweepOverdueDeliveries(
  db: Knex,
  queue: DeliveryQueue,
  options: { overdueMs: number; limit?: number },
): Promise<DeliveryJob[]> {
  const jobs = await bumpOverdueDeliveries(db, { overdueMs: options.overdueMs, limit: options.limit ?? 500 });
  await queue.enqueue(jobs);
  return jobs;
}

export function startSweeper(options: {
  db: Knex;
  queue: DeliveryQueue;
  logger: Logger;
  intervalMs: number;
  overdueMs: number;
}): Periodic {
  return every(options.intervalMs, async () => {
    try {
      const jobs = await sweepOverdueDeliveries(options.db, options.queue, { overdueMs: options.overdueMs });
      if (jobs.length > 0)
        options.logger.warn({ count: jobs.length }, "re-enqueued overdue deliveries whose job was lost");
    } catch (error) {
      options.logger.warn({ err: error }, "sweeping overdue deliveries failed; next time");
    }
  });
}
