/**
 * The platform's event bus: the JetStream stream `${ns}EVENTS`, subjects
 * `${ns}events.<tenant>.<type>`, file storage, 30 days (the redrive window), a 2-minute duplicate
 * window on Nats-Msg-Id = event id. Every service that publishes (through its outbox) or consumes
 * events declares it the same way at start, so no service depends on another having started first.
 *
 * Event types on the bus are the webhook catalog's (spec 6.3) and the platform's internal facts that
 * feed the tenant projections (`notification.*`, `webhook.endpoint_*`): consumers ignore the types
 * they do not handle.
 */
import { RetentionPolicy, StorageType, type JetStreamManager } from "nats";
import { ensureStream, nanos } from "./nats.js";

const DAY_MS = 86_400_000;

/** The EVENTS stream's name in a namespace ("" in production). */
export const eventsStreamName = (namespace: string): string => `${namespace}EVENTS`;

/** The subject of an event on the EVENTS stream. */
export function eventSubject(namespace: string, tenantId: string, type: string): string {
  return `${namespace}events.${tenantId}.${type}`;
}

/** Declares (or updates) the EVENTS stream; safe at every start of every service. */
export async function declareEventsStream(jsm: JetStreamManager, namespace: string): Promise<void> {
  await ensureStream(jsm, {
    name: eventsStreamName(namespace),
    subjects: [`${namespace}events.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: nanos(30 * DAY_MS),
    duplicate_window: nanos(120_000),
  });
}
