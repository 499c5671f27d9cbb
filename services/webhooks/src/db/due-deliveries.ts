/**
 * The deliveries that need a job, and where a job goes: the fan-out's first jobs of an event, the
 * sweeper's overdue deliveries whose job was lost (a new generation each), and the endpoint of a
 * job enqueued without one (jobs travel on a per-endpoint subject).
 */
import { preparedStatement, queryRows, type Knex, type PreparedStatement } from "@platform/service-kit/postgres";
import type { DeliveryJob } from "../domain/delivery-job.js";

/** The jobs of the events' deliveries that are still pending and never attempted, by event id. */
export async function firstJobsOfEvents(db: Knex, eventIds: readonly string[]): Promise<Map<string, DeliveryJob[]>> {
  const due = await db("deliveries")
    .whereIn("event_id", eventIds)
    .andWhere({ status: "pending", attempts_total: 0 })
    .select<{ id: string; generation: number; endpoint_id: string; event_id: string }[]>(
      "id",
      "generation",
      "endpoint_id",
      "event_id",
    );
  const jobs = new Map<string, DeliveryJob[]>();
  for (const row of due) {
    const ofEvent = jobs.get(row.event_id) ?? [];
    ofEvent.push({ deliveryId: row.id, generation: row.generation, endpointId: row.endpoint_id });
    jobs.set(row.event_id, ofEvent);
  }
  return jobs;
}

/**
 * The sweep's statement for a grace period, prepared (planned once per connection, not over every
 * day partition of the history each sweep). The grace period is written into the statement, not
 * passed as a parameter: the planner then estimates `next_attempt_at < now() - <grace>` from the
 * index's statistics (a handful of overdue rows) in the plan it keeps for every sweep. With the
 * grace as a parameter the kept plan guessed a third of the unfinished deliveries and Postgres
 * planned the statement again on every sweep instead (the custom plan was cheaper): a p50 of 9-13 ms
 * a sweep at 1 million deliveries, against 1.5 with the grace written in (prepared-plans.test.ts).
 */
const bumpOverdueSql = new Map<number, PreparedStatement>();
function bumpOverdueStatement(overdueMs: number): PreparedStatement {
  if (!Number.isSafeInteger(overdueMs) || overdueMs < 0) throw new RangeError(`overdueMs: ${overdueMs}`);
  let statement = bumpOverdueSql.get(overdueMs);
  if (!statement) {
    statement = preparedStatement(
      `webhooks_bump_overdue_${overdueMs}`,
      `update deliveries d set generation = d.generation + 1, updated_at = now()
         from (select id, created_at from deliveries
                where status in ('pending', 'awaiting_retry')
                  and next_attempt_at < now() - interval '${overdueMs} milliseconds'
                  and (leased_until is null or leased_until < now())
                order by next_attempt_at
                limit ?
                for update skip locked) overdue
        where d.id = overdue.id and d.created_at = overdue.created_at
    returning d.id, d.generation, d.endpoint_id`,
    );
    bumpOverdueSql.set(overdueMs, statement);
  }
  return statement;
}

/**
 * Up to `limit` deliveries that are due (pending or awaiting_retry), overdue by more than
 * `overdueMs` (a whole number of milliseconds) and not leased: each gets a new generation; returns
 * the jobs of the new ones.
 */
export async function bumpOverdueDeliveries(
  db: Knex,
  options: { overdueMs: number; limit: number },
): Promise<DeliveryJob[]> {
  const rows = await queryRows<{ id: string; generation: number; endpoint_id: string }>(
    db,
    bumpOverdueStatement(options.overdueMs),
    [options.limit],
  );
  return rows.map((row) => ({
    deliveryId: row.id,
    generation: row.generation,
    endpointId: row.endpoint_id,
  }));
}

/** The endpoints of these deliveries (a delivery that no longer exists is absent). */
export async function endpointsOfDeliveries(db: Knex, deliveryIds: readonly string[]): Promise<Map<string, string>> {
  const rows = await db("deliveries")
    .whereIn("id", deliveryIds)
    .select<{ id: string; endpoint_id: string }[]>("id", "endpoint_id");
  return new Map(rows.map((row) => [row.id, row.endpoint_id]));
}
