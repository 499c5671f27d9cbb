/**
 * The platform's event bus: the JetStream stream `${ns}EVENTS`, subjects
 * `${ns}events.<tenant>.<type>`, file storage, 30 days (the redrive window), a 2-minute duplicate
 * window on Nats-Msg-Id = event id, kept by NATS_STREAM_REPLICAS servers of the cluster. Every
 * service that publishes (through its outbox) or consumes events declares it the same way at start,
 * so no service depends on another having started first.
 *
 * Event types on the bus are the webhook catalog's (spec 6.3) and the platform's internal facts that
 * feed the tenant projections (`notification.*`, `webhook.endpoint_*`): consumers ignore the types
 * they do not handle.
 */
import { timeOrderedId } from "./random-id.js";
import { BusEvent } from "@platform/proto/webhooks/v1";
import { RetentionPolicy, StorageType, type JetStreamManager } from "nats";
import { ensureStream, nanos } from "./nats.js";
import type { OutboxEntry } from "./outbox.js";
import { TRACEPARENT } from "./tracing.js";

/** The `traceparent` header of a bus message (set by the outbox relay), or undefined. */
export function traceparentOfMessage(message: {
  headers?: { get(name: string): string } | undefined;
}): string | undefined {
  return message.headers?.get(TRACEPARENT) || undefined;
}

const DAY_MS = 86_400_000;

/** The EVENTS stream's name in a namespace ("" in production). */
export const eventsStreamName = (namespace: string): string => `${namespace}EVENTS`;

/** The subject of an event on the EVENTS stream. */
export function eventSubject(namespace: string, tenantId: string, type: string): string {
  return `${namespace}events.${tenantId}.${type}`;
}

/**
 * Declares (or updates) the EVENTS stream; safe at every start of every service. `replicas`
 * (NATS_STREAM_REPLICAS) is how many servers of the cluster keep it; a stream kept on another count
 * is brought to this one.
 */
export async function declareEventsStream(
  jsm: JetStreamManager,
  namespace: string,
  options: { replicas: number },
): Promise<void> {
  await ensureStream(jsm, {
    name: eventsStreamName(namespace),
    num_replicas: options.replicas,
    subjects: [`${namespace}events.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: nanos(30 * DAY_MS),
    duplicate_window: nanos(120_000),
  });
}

/** A new event id in the platform's format: `evt_` and 24 lowercase hex characters. */
export const newEventId = (): string => timeOrderedId("evt_");

/** An event as it travels on the bus (a webhooks.v1.BusEvent); `object` is data.object. */
export interface BusEventRecord {
  id: string;
  type: string;
  tenantId: string;
  occurredAt: Date;
  object: Record<string, unknown>;
}

/** The outbox row that publishes `event` on the bus: its subject, Nats-Msg-Id and BusEvent bytes. */
export function busEventOutboxEntry(namespace: string, event: BusEventRecord, traceparent?: string): OutboxEntry {
  const payload = BusEvent.encode({
    id: event.id,
    type: event.type,
    tenantId: event.tenantId,
    occurredAt: event.occurredAt.toISOString(),
    dataJson: JSON.stringify(event.object),
  }).finish();
  return {
    eventId: event.id,
    subject: eventSubject(namespace, event.tenantId, event.type),
    payload,
    ...(traceparent ? { traceparent } : {}),
  };
}

/** A bus message as the event it carries, or undefined when it can never be one. */
export function decodeBusEvent(data: Uint8Array): BusEventRecord | undefined {
  try {
    const message = BusEvent.decode(data);
    const occurredAt = new Date(message.occurredAt);
    if (!message.id || !message.type || !message.tenantId || Number.isNaN(occurredAt.getTime())) return undefined;
    const object: unknown = message.dataJson ? JSON.parse(message.dataJson) : {};
    if (!object || typeof object !== "object" || Array.isArray(object)) return undefined;
    return {
      id: message.id,
      type: message.type,
      tenantId: message.tenantId,
      occurredAt,
      object: object as Record<string, unknown>,
    };
  } catch {
    return undefined;
  }
}
