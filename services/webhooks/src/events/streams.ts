/**
 * The JetStream streams and durable consumers of the webhooks service, every name prefixed by
 * NATS_NAMESPACE ("" in production; each test run has its own):
 *
 *   `${ns}EVENTS`              the event bus (service-kit event-bus.ts): platform events, 30 days
 *   `${ns}WEBHOOK_DELIVERIES`  subjects `${ns}webhooks.deliveries.<endpoint_id>`: delivery jobs
 *                              (work queue: a job is gone once a worker acks it)
 */
import { AckPolicy, DeliverPolicy, RetentionPolicy, StorageType, type JetStreamManager } from "nats";
import { declareEventsStream, eventsStreamName, eventSubject } from "@platform/service-kit/event-bus";
import { ensureDurableConsumer, ensureStream, nanos } from "@platform/service-kit/nats";

export const FANOUT_CONSUMER = "webhooks-fanout";
export const DELIVERY_CONSUMER = "webhooks-delivery";

export interface StreamNames {
  namespace: string;
  events: string;
  deliveries: string;
}

export function streamNames(namespace: string): StreamNames {
  return { namespace, events: eventsStreamName(namespace), deliveries: `${namespace}WEBHOOK_DELIVERIES` };
}

/** The subject of a platform event on the EVENTS stream (the event bus's). */
export { eventSubject };

/** The subject of a delivery job: one per endpoint, so a worker sees the endpoint without a query. */
export function deliverySubject(namespace: string, endpointId: string): string {
  return `${namespace}webhooks.deliveries.${endpointId}`;
}

/** The endpoint id of a delivery job subject. */
export function endpointOfDeliverySubject(namespace: string, subject: string): string {
  return subject.slice(`${namespace}webhooks.deliveries.`.length);
}

/** The ack wait of the fan-out's events: longer is only a slower recovery after a crash. */
const fanoutAckWaitMs = 30_000;

/**
 * Declares (or updates) both streams and both durable consumers; safe at every start.
 * `leaseMs` (WEBHOOKS_LEASE) is the delivery consumer's ack wait, the time after which a job
 * that a crashed worker held comes back, and caps the fan-out's. `replicas` (NATS_STREAM_REPLICAS)
 * is how many servers keep each stream and each consumer's state; one declared with another
 * count is brought to this one.
 */
export async function declareStreams(
  jsm: JetStreamManager,
  names: StreamNames,
  options: { leaseMs: number; replicas: number } = { leaseMs: 60_000, replicas: 1 },
): Promise<void> {
  const { replicas } = options;
  await declareEventsStream(jsm, names.namespace, { replicas });
  await ensureStream(jsm, {
    name: names.deliveries,
    num_replicas: replicas,
    subjects: [`${names.namespace}webhooks.deliveries.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Workqueue,
    duplicate_window: nanos(120_000),
  });
  await ensureDurableConsumer(jsm, names.events, {
    durable_name: FANOUT_CONSUMER,
    num_replicas: replicas,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(Math.min(fanoutAckWaitMs, options.leaseMs)),
    max_deliver: -1,
    max_ack_pending: 10_000,
  });
  await ensureDurableConsumer(jsm, names.deliveries, {
    durable_name: DELIVERY_CONSUMER,
    num_replicas: replicas,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    // Longer than an attempt's timeout plus the database write (the config checks it); the
    // worker's `working()` heartbeats extend it while an attempt runs.
    ack_wait: nanos(options.leaseMs),
    max_deliver: -1,
    // Every retry waiting out its nak delay holds a slot: with the default 1000 one dead
    // endpoint's backlog would stall every endpoint.
    max_ack_pending: 1_000_000,
  });
}

/** Removes both streams (tests: the end of a run's namespace). */
export async function deleteStreams(jsm: JetStreamManager, names: StreamNames): Promise<void> {
  for (const stream of [names.events, names.deliveries]) {
    await jsm.streams.delete(stream).catch(() => undefined);
  }
}
