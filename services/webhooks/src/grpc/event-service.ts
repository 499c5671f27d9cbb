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
import type { Knex } from "@platform/service-kit/postgres";
import { appendNewEventToOutbox } from "../db/event-store.js";
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
    async publishEvent(request, { traceparent }) {
      const event = validatePublishedEvent(request, { now: now(), newId: newEventId });
      const entry = busEventOutboxEntry(deps.namespace, { ...event, tenantId: event.tenant }, traceparent);
      const appended = await appendNewEventToOutbox(deps.db, event.id, entry);
      if (appended) deps.kickRelay();
      return { eventId: event.id, duplicate: !appended };
    },
  };
}
