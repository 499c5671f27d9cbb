/**
 * The events table: the fan-out's record of an event with its deliveries, and EventService's
 * check that an event it publishes is new (its outbox row written in the same transaction).
 */
import type { OutboxEntry } from "@platform/service-kit/outbox";
import { inTransaction, preparedStatement, queryRows, type Knex } from "@platform/service-kit/postgres";
import type { DeliveryJob } from "../domain/delivery-job.js";
import { newDelivery } from "../domain/delivery-state.js";
import { buildEnvelope, serializeEnvelope, type PlatformEvent } from "../domain/envelope.js";
import { matchesFilters } from "../domain/event-catalog.js";
import { newDeliveryId } from "../domain/ids.js";

interface EndpointRow {
  id: string;
  event_types: string[];
  api_version: string;
  paused: boolean;
}

export interface RecordedEvent {
  /** False when the event was already there (a redelivery): no delivery was added. */
  newEvent: boolean;
  /** Deliveries created now. */
  deliveries: number;
}

/** A new delivery as insertDeliveriesSql writes it (attempts 0, generation 1, updated = created). */
interface DeliveryRow {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  livemode: boolean;
  payload: string;
  status: string;
  next_attempt_at: Date | null;
  /** The fan-out's trace context: every attempt of this delivery is a span in the event's trace. */
  traceparent: string | null;
  created_at: Date;
}

/**
 * The deliveries of a new event: one per matching endpoint, each with its exact request body
 * (the body is the same for every endpoint on the same API version: encoded once per version).
 */
function deliveryRowsOf(
  event: PlatformEvent,
  endpoints: readonly EndpointRow[],
  {
    now,
    createdAt,
    livemode,
    traceparent,
  }: { now: Date; createdAt: Date; livemode: boolean; traceparent?: string | undefined },
): DeliveryRow[] {
  const bodies = new Map<string, string>();
  return endpoints
    .filter((endpoint) => matchesFilters(event.type, endpoint.event_types))
    .map((endpoint) => {
      const state = newDelivery({ now, endpointPaused: endpoint.paused });
      let body = bodies.get(endpoint.api_version);
      if (body === undefined) {
        body = serializeEnvelope(buildEnvelope(event, { apiVersion: endpoint.api_version, livemode })).toString("utf8");
        bodies.set(endpoint.api_version, body);
      }
      return {
        id: newDeliveryId(createdAt),
        tenant_id: event.tenant,
        endpoint_id: endpoint.id,
        event_id: event.id,
        event_type: event.type,
        livemode,
        payload: body,
        status: state.status,
        next_attempt_at: state.nextAttemptAt,
        traceparent: traceparent ?? null,
        created_at: createdAt,
      };
    });
}

/** One event of a batch for recordEvents, with the trace context of its fan-out. */
export interface EventToRecord {
  event: PlatformEvent;
  traceparent?: string | undefined;
}

/** What recordEvents did with one event of the batch. */
export interface RecordedBatchEvent extends RecordedEvent {
  /** Its deliveries created now that are pending (not held): the jobs to enqueue. */
  jobs: DeliveryJob[];
}

/**
 * An event id is unique across the day partitions of `events` by its writers, not by a key (a
 * partitioned table's keys hold the day): each takes a transaction lock on the ids of its batch
 * (in id order, so two batches never wait on each other in a cycle), then, in the next statement
 * (which sees whatever a writer that held a lock before it committed), inserts the ones not there.
 * The previous release's writes, forwarded from its tables by the migration's trigger, take the
 * same locks.
 */
const lockEventIdsSql = preparedStatement(
  "webhooks_lock_event_ids",
  `select count(pg_advisory_xact_lock(hashtextextended('webhooks.event:' || id, 0)))
     from (select distinct unnest(?::text[]) as id order by 1) ids`,
);

/**
 * The events and their outbox rows: a new event's row with the tenant's live endpoints (one row
 * per endpoint; null when it has none), the outbox rows of every event of the batch removed. An
 * event is new when neither the day partitions nor (until the contract step drops it) the previous
 * release's table have it.
 */
const recordEventsSql = preparedStatement(
  "webhooks_record_events",
  `with inserted as (
     insert into events (id, tenant_id, type, occurred_at, data, livemode)
     select * from unnest(?::text[], ?::text[], ?::text[], ?::timestamptz[], ?::jsonb[], ?::boolean[])
                     as v(id, tenant_id, type, occurred_at, data, livemode)
      where not exists (select 1 from events e where e.id = v.id)
        and not exists (select 1 from webhooks.events o where o.id = v.id)
     on conflict do nothing
     returning id, tenant_id, received_at
   ), consumed as (
     delete from outbox where event_id = any(?::text[])
   )
   select i.id as event_id, i.received_at, e.id, e.event_types, e.api_version, e.paused
     from inserted i left join endpoints e on e.tenant_id = i.tenant_id and e.deleted_at is null`,
);

const insertDeliveriesSql = preparedStatement(
  "webhooks_insert_deliveries",
  `insert into deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status, attempts,
                          attempts_total, next_attempt_at, generation, traceparent, created_at, updated_at)
   select id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status, 0, 0, next_attempt_at, 1,
          traceparent, created_at, created_at
     from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::boolean[], ?::text[], ?::text[],
                 ?::timestamptz[], ?::text[], ?::timestamptz[])
            as v(id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status, next_attempt_at,
                 traceparent, created_at)
   on conflict (event_id, endpoint_id, created_at) do nothing
   returning id, generation, endpoint_id, event_id, status`,
);

/**
 * The fan-out's record of a batch of events (one event, or those of one fetch), in one
 * transaction of two statements: the new events (once each: on a redelivery the event exists and
 * nothing more is inserted) and the removal of every outbox row of the batch (the event is
 * recorded with this commit: its outbox row has done its work), then one delivery per matching,
 * non-deleted endpoint of each new event's tenant, each with its exact request body (held when
 * the endpoint is paused). An event already there adds nothing and has no jobs here
 * (firstJobsOfEvents finds them).
 */
export function recordEvents(
  db: Knex,
  batch: readonly EventToRecord[],
  { livemode }: { livemode: boolean },
): Promise<RecordedBatchEvent[]> {
  return inTransaction(db, async (run) => {
    const events = batch.map((item) => item.event);
    await run(lockEventIdsSql, [events.map((event) => event.id)]);
    const found = await run<EndpointRow & { event_id: string; received_at: Date; id: string | null }>(recordEventsSql, [
      events.map((event) => event.id),
      events.map((event) => event.tenant),
      events.map((event) => event.type),
      events.map((event) => event.occurredAt),
      events.map((event) => JSON.stringify(event.object)),
      events.map(() => livemode),
      events.map((event) => event.id),
    ]);
    const endpointsOf = new Map<string, EndpointRow[]>();
    const receivedAtOf = new Map<string, Date>();
    for (const row of found) {
      const endpoints = endpointsOf.get(row.event_id) ?? [];
      if (row.id !== null) endpoints.push(row);
      endpointsOf.set(row.event_id, endpoints);
      receivedAtOf.set(row.event_id, row.received_at);
    }
    const now = new Date();
    const rows = batch.flatMap(({ event, traceparent }) => {
      const endpoints = endpointsOf.get(event.id);
      // A delivery is created at its event's received_at: they share a day partition.
      const createdAt = receivedAtOf.get(event.id)!;
      return endpoints ? deliveryRowsOf(event, endpoints, { now, createdAt, livemode, traceparent }) : [];
    });
    const created =
      rows.length === 0
        ? []
        : await run<{ id: string; generation: number; endpoint_id: string; event_id: string; status: string }>(
            insertDeliveriesSql,
            [
              rows.map((row) => row.id),
              rows.map((row) => row.tenant_id),
              rows.map((row) => row.endpoint_id),
              rows.map((row) => row.event_id),
              rows.map((row) => row.event_type),
              rows.map((row) => row.livemode),
              rows.map((row) => row.payload),
              rows.map((row) => row.status),
              rows.map((row) => row.next_attempt_at),
              rows.map((row) => row.traceparent),
              rows.map((row) => row.created_at),
            ],
          );
    const createdOf = new Map<string, RecordedBatchEvent>(
      events.map((event) => [event.id, { newEvent: endpointsOf.has(event.id), deliveries: 0, jobs: [] }]),
    );
    for (const row of created) {
      const recorded = createdOf.get(row.event_id)!;
      recorded.deliveries += 1;
      if (row.status === "pending") {
        recorded.jobs.push({ deliveryId: row.id, generation: row.generation, endpointId: row.endpoint_id });
      }
    }
    return events.map((event) => createdOf.get(event.id)!);
  });
}

/**
 * EventService's publish, one statement (publish_event_to_outbox, in the migration), one commit:
 * the outbox row of an event this service has not recorded yet. False when it adds nothing (the
 * event was fanned out already, or its outbox row is there). A fan-out that records the event
 * while the insert waits for its outbox row is seen, and the row is not left behind as an orphan.
 */
export async function appendNewEventToOutbox(db: Knex, eventId: string, entry: OutboxEntry): Promise<boolean> {
  const [row] = await queryRows<{ appended: boolean }>(db, publishEventSql, [
    eventId,
    entry.subject,
    Buffer.from(entry.payload),
    entry.traceparent ?? null,
  ]);
  return row?.appended === true;
}

const publishEventSql = preparedStatement(
  "webhooks_publish_event",
  "select publish_event_to_outbox(?, ?, ?, ?) as appended",
);
