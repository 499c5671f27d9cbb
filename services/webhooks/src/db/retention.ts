/**
 * The retention (WEBHOOKS_RETENTION, 30 days) of the delivery history: its tables
 * (`webhooks_history.events`, `deliveries`, `attempts`) are partitioned by UTC day, and an event,
 * its deliveries and their attempts share their day (migration 20261127200000), so a day past the
 * retention leaves whole: its three partitions are dropped, no row is deleted. A day is dropped once
 * all of it is past the retention (a row stays between the retention and a day more). The rows of
 * the default partitions (a day that had no partition when they were written) are deleted when past
 * the retention, in batches. The janitor (delivery/janitor.ts) also makes the partitions of the
 * coming days ahead, and removes recoveries that finished longer ago than the retention (their
 * items cascade).
 */
import type { Knex } from "@platform/service-kit/postgres";

export interface ExpiredRemoved {
  /** Day partitions dropped (three per day: events, deliveries, attempts). */
  partitions: string[];
  /** Rows deleted from the default partitions. */
  defaultRows: number;
  recoveries: number;
}

/** Days made ahead of today, and the day before it (a clock a little behind). */
export const partitionDaysAhead = 3;

/**
 * The day partitions from yesterday to `partitionDaysAhead` days ahead (UTC), each made once; rows
 * of a new day that had gone to the default partition move into it. Answers how many were made.
 */
export async function ensureDayPartitions(db: Knex, now: Date = new Date()): Promise<number> {
  const day = (offset: number) => new Date(now.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  const result = await db.raw<{ rows: { made: number }[] }>(
    "select webhooks_history.ensure_day_partitions(?::date, ?::date) as made",
    [day(-1), day(partitionDaysAhead)],
  );
  return result.rows[0]!.made;
}

/** The first day kept: the UTC day holding `now - retention` (days before it are wholly expired). */
export function firstDayKept(now: Date, retentionMs: number): string {
  return new Date(now.getTime() - retentionMs).toISOString().slice(0, 10);
}

/** Drops the expired days' partitions, then deletes the default partitions' expired rows, then recoveries. */
export async function removeExpired(
  db: Knex,
  options: { retentionMs: number; batchSize: number; now?: Date },
): Promise<ExpiredRemoved> {
  const now = options.now ?? new Date();
  const keptFrom = firstDayKept(now, options.retentionMs);
  // Dropping a partition locks its parent for a moment: wait at most this long for readers.
  const dropped = await db.transaction(async (trx) => {
    await trx.raw("set local lock_timeout = '5s'");
    const rows = await trx.raw<{ rows: { name: string }[] }>(
      "select webhooks_history.drop_day_partitions(?::date) as name",
      [keptFrom],
    );
    return rows.rows.map((row) => row.name);
  });
  const result: ExpiredRemoved = { partitions: dropped, defaultRows: 0, recoveries: 0 };
  for (const [table, column] of [
    ["attempts_default", "delivery_created_at"],
    ["deliveries_default", "created_at"],
    ["events_default", "received_at"],
  ] as const) {
    for (;;) {
      const removed = await db.raw<{ rowCount: number }>(
        `delete from webhooks_history.${table} where ctid = any(array(
           select ctid from webhooks_history.${table} where ${column} < ?::timestamptz limit ?))`,
        [`${keptFrom}T00:00:00Z`, options.batchSize],
      );
      result.defaultRows += removed.rowCount;
      if (removed.rowCount < options.batchSize) break;
    }
  }
  for (;;) {
    const removed = await db.raw<{ rowCount: number }>(
      `delete from recoveries where id in (
         select id from recoveries
          where state in ('completed', 'failed')
            and finished_at < ?::timestamptz - make_interval(secs => ?::double precision / 1000)
          limit ?)`,
      [now, options.retentionMs, options.batchSize],
    );
    result.recoveries += removed.rowCount;
    if (removed.rowCount < options.batchSize) break;
  }
  return result;
}
