/**
 * webhooks.v1.EventService: how the rest of the platform publishes conversation, booking and
 * escalation events. The event is checked (domain/published-event.ts),
 * encoded as a BusEvent and written to the outbox in a transaction; the relay publishes it to
 * EVENTS, from where the fan-out turns it into deliveries. Publishing the same event id again is
 * a no-op answered with `duplicate: true`.
 */
import { EventServiceService } from "@platform/proto/webhooks/v1";
import { busEventOutboxEntry } from "@platform/service-kit/event-bus";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import { appendToOutbox } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";
import { newEventId } from "../domain/ids.js";
import { validatePublishedEvent } from "../domain/published-event.js";

export function createEventService(deps: {
  db: Knex;
  namespace: string;
  /** Wakes the outbox relay after a commit. */
  kickRelay: () => void;
  now?: () => Date;
}): UnaryHandlers<EventServiceService> {
  const now = deps.now ?? (() => new Date());
  return {
    async publishEvent(request) {
      const event = validatePublishedEvent(request, { now: now(), newId: newEventId });
      const entry = busEventOutboxEntry(deps.namespace, { ...event, tenantId: event.tenant });
      const appended = await deps.db.transaction(async (trx) => {
        // Already fanned out (the fan-out removes the outbox row): nothing new to publish.
        const known = await trx("events").where({ id: event.id }).first<{ id: string } | undefined>("id");
        if (known) return false;
        const added = await appendToOutbox(trx, entry);
        if (!added) return false;
        // The fan-out may have recorded the event and deleted its outbox row after the check above
        // (this insert then waited for that commit): a new row would be an orphan the fan-out
        // never removes, its publish dropped by the stream as a duplicate. This statement sees
        // that commit.
        const recorded = await trx("events").where({ id: event.id }).first<{ id: string } | undefined>("id");
        if (!recorded) return true;
        await trx("outbox").where({ event_id: event.id }).delete();
        return false;
      });
      if (appended) deps.kickRelay();
      return { eventId: event.id, duplicate: !appended };
    },
  };
}
