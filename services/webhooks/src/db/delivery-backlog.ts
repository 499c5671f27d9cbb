/**
 * The delivery backlog per endpoint class, as the backlog gauges show it
 * (delivery/backlog-collector.ts describes the classes and the waits).
 */
import { preparedStatement, queryRows, type Knex } from "@platform/service-kit/postgres";

export const endpointClasses = ["healthy", "failing", "paused"] as const;
export type EndpointClass = (typeof endpointClasses)[number];

export interface BacklogByClass {
  pending: number;
  endpoints: number;
  /**
   * Seconds since the earliest moment one of them started waiting (database clock; negative when
   * that moment is still ahead, a retry not due yet), or null when there is none.
   */
  oldestAgeSeconds: number | null;
}

/**
 * The gauges' one statement over the unfinished deliveries (the partial index
 * `deliveries_backlog_idx` holds exactly them; backlog-index.test.ts checks the plan uses it).
 */
export const BACKLOG_QUERY = `with per_endpoint as (
   select endpoint_id, count(*) as pending, min(coalesce(next_attempt_at, updated_at)) as oldest,
          bool_or(status = 'awaiting_retry') as retrying
     from deliveries
    where status in ('pending', 'awaiting_retry', 'held')
    group by endpoint_id)
 select case when e.paused or e.deleted_at is not null then 'paused'
             when p.retrying then 'failing'
             else 'healthy' end as endpoint_class,
        sum(p.pending) as pending, count(*) as endpoints,
        extract(epoch from now() - min(p.oldest)) as oldest_age
   from per_endpoint p join endpoints e on e.id = p.endpoint_id
  group by 1`;

/** One query over the unfinished deliveries, grouped by endpoint class. */
const backlogSql = preparedStatement("webhooks_backlog", BACKLOG_QUERY);

export async function measureBacklog(db: Knex): Promise<Record<EndpointClass, BacklogByClass>> {
  // Prepared: planned once per connection, not over every day partition of the history each time.
  const rows = await queryRows<{
    endpoint_class: EndpointClass;
    pending: string;
    endpoints: string;
    oldest_age: string | null;
  }>(db, backlogSql, []);
  const out = Object.fromEntries(
    endpointClasses.map((c) => [c, { pending: 0, endpoints: 0, oldestAgeSeconds: null }]),
  ) as unknown as Record<EndpointClass, BacklogByClass>;
  for (const row of rows) {
    out[row.endpoint_class] = {
      pending: Number(row.pending),
      endpoints: Number(row.endpoints),
      oldestAgeSeconds: row.oldest_age === null ? null : Number(row.oldest_age),
    };
  }
  return out;
}
