/**
 * How notify announces what happened: an event is written to notify's outbox in the transaction
 * of the change it announces (service-kit outbox.ts) as a webhooks.v1.BusEvent, and the relay
 * publishes it to the EVENTS stream (`${ns}events.<tenant>.<type>`, Nats-Msg-Id = event id) after
 * the commit. Every consumer (the webhooks fan-out, notify's projector) is idempotent on the id.
 * It sits in db/ because writing the event is part of the storing transaction: the stores and the
 * gRPC services use it; events/ holds what consumes the stream.
 */
import { busEventOutboxEntry, newEventId } from "@platform/service-kit/event-bus";
import { appendToOutbox, type OutboxEntry } from "@platform/service-kit/outbox";
import type { Knex } from "@platform/service-kit/postgres";

/** An event notify announces; `object` is data.object: snake_case keys, ids, states and codes only. */
export interface NotifyEvent {
  /** Empty or absent: a new `evt_` id. Give a deterministic one where a repeat must be the same event. */
  id?: string;
  type: string;
  tenantId: string;
  occurredAt: Date;
  object: Record<string, unknown>;
  /** The trace context of the change (its gRPC call's span): the row's, then the message's `traceparent`. */
  traceparent?: string | undefined;
}

export { newEventId };

/** The outbox row of an event (for writers outside knex, such as the send path's prepared statements). */
export function outboxEntryOf(namespace: string, event: NotifyEvent): OutboxEntry & { id: string } {
  const { traceparent, ...record } = event;
  const id = record.id || newEventId();
  return { id, ...busEventOutboxEntry(namespace, { ...record, id }, traceparent) };
}

export interface EventOutbox {
  /** Writes the event in the caller's transaction; returns its id. */
  append(trx: Knex | Knex.Transaction, event: NotifyEvent): Promise<string>;
  /** The outbox row of an event, for writers outside knex (the send path's prepared statements). */
  entryOf(event: NotifyEvent): OutboxEntry & { id: string };
  /** Publishes what is waiting now (call after the commit). */
  kick(): void;
  /**
   * Whether rows written through entryOf may be written already marked published and handed to
   * publishCommitted after the commit (service-kit publishAfterCommit); false: kick the relay.
   */
  readonly publishesAtOnce: boolean;
  /** Publishes an entry committed already marked published (only when publishesAtOnce). */
  publishCommitted(entry: OutboxEntry): void;
}

/**
 * Writes the events of one change, in order, in its transaction; returns how many (what a declared
 * mutation's `record` answers, so the relay is kicked exactly when events were written).
 */
export async function appendEvents(
  trx: Knex | Knex.Transaction,
  outbox: EventOutbox,
  events: readonly NotifyEvent[],
): Promise<number> {
  for (const event of events) await outbox.append(trx, event);
  return events.length;
}

export function createEventOutbox(options: {
  namespace: string;
  kick?: () => void;
  /** Publishes a committed entry at once (service-kit publishAfterCommit); absent: the relay does. */
  publish?: (entry: OutboxEntry) => void;
}): EventOutbox {
  return {
    publishesAtOnce: options.publish !== undefined,
    publishCommitted(entry) {
      if (options.publish) options.publish(entry);
      else options.kick?.();
    },
    async append(trx, event) {
      const entry = outboxEntryOf(options.namespace, event);
      await appendToOutbox(trx, entry);
      return entry.id;
    },
    entryOf(event) {
      return outboxEntryOf(options.namespace, event);
    },
    kick() {
      options.kick?.();
    },
  };
}
