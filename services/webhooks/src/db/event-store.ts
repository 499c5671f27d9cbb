/**
 * The events table: the fan-out's record of an event with its deliveries, and EventService's
 * check that an event it publishes is new (its outbox row written in the same transaction).
 */
import { appendToOutbox, consumeFromOutbox, type OutboxEntry } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";
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

/**
 * One transaction: the event row (once: on a redelivery it exists and nothing more is inserted),
 * the removal of its outbox row, and one delivery per matching, non-deleted endpoint of the
 * tenant, each with its exact request body (held when the endpoint is paused).
 */
export function recordEvent(
  db: Knex,
  event: PlatformEvent,
  { livemode, traceparent }: { livemode: boolean; traceparent?: string | undefined },
): Promise<RecordedEvent> {
  return db.transaction(async (trx) => {
    const inserted = await trx("events")
      .insert({
        id: event.id,
        tenant_id: event.tenant,
        type: event.type,
        occurred_at: event.occurredAt,
        data: JSON.stringify(event.object),
        livemode,
      })
      .onConflict("id")
      .ignore()
      .returning("id");
    // The event is recorded with this commit: its outbox row (when EventService published it)
    // has done its work. Until now it was the only copy besides the stream's.
    await consumeFromOutbox(trx, event.id);
    if (inserted.length === 0) return { newEvent: false, deliveries: 0 };
    const endpoints = await trx("endpoints")
      .where({ tenant_id: event.tenant })
      .whereNull("deleted_at")
      .select<EndpointRow[]>("id", "event_types", "api_version", "paused");
    const now = new Date();
    const rows = endpoints
      .filter((endpoint) => matchesFilters(event.type, endpoint.event_types))
      .map((endpoint) => {
        const state = newDelivery({ now, endpointPaused: endpoint.paused });
        const body = serializeEnvelope(buildEnvelope(event, { apiVersion: endpoint.api_version, livemode }));
        return {
          id: newDeliveryId(),
          tenant_id: event.tenant,
          endpoint_id: endpoint.id,
          event_id: event.id,
          event_type: event.type,
          livemode,
          payload: body.toString("utf8"),
          status: state.status,
          attempts: 0,
          attempts_total: 0,
          next_attempt_at: state.nextAttemptAt,
          generation: 1,
          // The fan-out's trace context: every attempt of this delivery is a span in the event's trace.
          ...(traceparent ? { traceparent } : {}),
          created_at: now,
          updated_at: now,
        };
      });
    if (rows.length === 0) return { newEvent: true, deliveries: 0 };
    const created = await trx("deliveries")
      .insert(rows)
      .onConflict(["event_id", "endpoint_id"])
      .ignore()
      .returning("id");
    return { newEvent: true, deliveries: created.length };
  });
}

/**
 * EventService's publish, in one transaction: the outbox row of an event this service has not
 * recorded yet. False when it adds nothing (the event was fanned out already, or its outbox row
 * is there).
 */
export function appendNewEventToOutbox(db: Knex, eventId: string, entry: OutboxEntry): Promise<boolean> {
  return db.transaction(async (trx) => {
    // Already fanned out (the fan-out removes the outbox row): nothing new to publish.
    const known = await trx("events").where({ id: eventId }).first<{ id: string } | undefined>("id");
    if (known) return false;
    const added = await appendToOutbox(trx, entry);
    if (!added) return false;
    // The fan-out may have recorded the event and deleted its outbox row after the check above
    // (this insert then waited for that commit): a new row would be an orphan the fan-out
    // never removes, its publish dropped by the stream as a duplicate. This statement sees
    // that commit.
    const recorded = await trx("events").where({ id: eventId }).first<{ id: string } | undefined>("id");
    if (!recorded) return true;
    await trx("outbox").where({ event_id: eventId }).delete();
    return false;
  });
}
