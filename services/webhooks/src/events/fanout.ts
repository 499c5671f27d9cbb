/**
 * Fan-out: every event on the EVENTS stream becomes one delivery per matching, non-deleted
 * endpoint of its tenant. Consumed through the durable pull consumer `webhooks-fanout`. Per
 * message, in one transaction: the event row (once: on a redelivery it exists and nothing more is
 * inserted), the removal of its outbox row (kept until now, so an event a nats-server lost with
 * its store is published again) and its deliveries, each carrying its exact request body; after the commit, jobs for
 * the event's deliveries that are still pending and never attempted (idempotent on redelivery:
 * the queue's Nats-Msg-Id and the worker's generation check absorb repeats); then the ack.
 * A message that cannot be decoded or is invalid is logged and terminated, never retried.
 * A type that is not in the webhook catalog (the internal facts of the tenant projections:
 * `notification.*`, `webhook.endpoint_*`) is acked and ignored: no event row, no delivery; only
 * its outbox row (when this service wrote it) is removed.
 *
 * The handling of a fetch's messages (createFanoutHandler) takes what it writes as a FanoutStore,
 * so it runs without NATS or Postgres; startFanout gives it the pull loop and the database.
 */
import { BusEvent } from "@platform/proto/webhooks/v1";
import type { Logger } from "@platform/service-kit/logger";
import { traceparentOfMessage } from "@platform/service-kit/event-bus";
import { consumeFromOutbox } from "@platform/service-kit/outbox";
import {
  noTracing,
  SpanKind,
  SpanStatusCode,
  startSpan,
  traceparentOf,
  withTraceId,
  type Span,
  type Tracer,
} from "@platform/service-kit/tracing";
import type { Knex } from "@platform/service-kit/postgres";
import { startPullLoop } from "@platform/service-kit/nats";
import type { JetStreamClient, JsMsg } from "nats";
import type { Counter } from "prom-client";
import { firstJobsOfEvents } from "../db/due-deliveries.js";
import { recordEvents, type EventToRecord } from "../db/event-store.js";
import type { DeliveryJob, DeliveryQueue } from "../domain/delivery-job.js";
import type { PlatformEvent } from "../domain/envelope.js";
import { findEventType } from "../domain/event-catalog.js";
import { platformEventFromBus } from "../domain/published-event.js";
import { FANOUT_CONSUMER, type StreamNames } from "./streams.js";

export interface FanOutResult {
  /** False when the event was already there (a redelivery): no delivery was added. */
  newEvent: boolean;
  /** Deliveries created now. */
  deliveries: number;
  /** Jobs enqueued: the event's deliveries still pending and never attempted. */
  jobs: DeliveryJob[];
}

/**
 * Records the events and their deliveries (recordEvents: one transaction), then enqueues the jobs
 * of those still due and never attempted: the new deliveries that are pending, and for an event
 * already there (a redelivery) its deliveries still pending and never attempted. Safe to repeat
 * with the same events: it never creates a second delivery. One result per event, in order.
 */
export async function fanOutEvents(
  db: Knex,
  queue: DeliveryQueue,
  batch: readonly EventToRecord[],
  options: { livemode?: boolean } = {},
): Promise<FanOutResult[]> {
  const recorded = await recordEvents(db, batch, { livemode: options.livemode ?? true });
  const again = batch.filter((_, i) => !recorded[i]!.newEvent).map((item) => item.event.id);
  const jobsAgain = again.length > 0 ? await firstJobsOfEvents(db, again) : new Map<string, DeliveryJob[]>();
  const results = recorded.map((result, i) =>
    result.newEvent ? result : { ...result, jobs: jobsAgain.get(batch[i]!.event.id) ?? [] },
  );
  await queue.enqueue(results.flatMap((result) => result.jobs));
  return results;
}

/** fanOutEvents for one event. */
export async function fanOutEvent(
  db: Knex,
  queue: DeliveryQueue,
  event: PlatformEvent,
  options: { livemode?: boolean; traceparent?: string | undefined } = {},
): Promise<FanOutResult> {
  const [result] = await fanOutEvents(db, queue, [{ event, traceparent: options.traceparent }], options);
  return result!;
}

/**
 * What a bus message is, decoded once: a catalog event to fan out, an internal fact of the tenant
 * projections (a type outside the webhook catalog: ignored here), or something that can never be
 * delivered.
 */
export type BusMessage =
  | { kind: "event"; event: PlatformEvent }
  | { kind: "internal"; id: string; type: string }
  | { kind: "invalid"; problems: string[] };

export function classifyBusMessage(data: Uint8Array): BusMessage {
  let message: BusEvent;
  try {
    message = BusEvent.decode(data);
  } catch (error) {
    return { kind: "invalid", problems: [`not a BusEvent: ${(error as Error).message}`] };
  }
  if (message.id && !findEventType(message.type)) return { kind: "internal", id: message.id, type: message.type };
  const decoded = platformEventFromBus(message);
  return decoded.ok ? { kind: "event", event: decoded.event } : { kind: "invalid", problems: decoded.problems };
}

/** A bus message as an event, or the reason it can never be one. */
export function decodeBusMessage(
  data: Uint8Array,
): { ok: true; event: PlatformEvent } | { ok: false; problems: string[] } {
  const message = classifyBusMessage(data);
  if (message.kind === "event") return { ok: true, event: message.event };
  return {
    ok: false,
    problems: message.kind === "invalid" ? message.problems : [`${message.type} is not a webhook event`],
  };
}

/** A decodable bus event whose type is not in the webhook catalog, or undefined. */
export function internalEvent(data: Uint8Array): { id: string; type: string } | undefined {
  const message = classifyBusMessage(data);
  return message.kind === "internal" ? { id: message.id, type: message.type } : undefined;
}

/** The fan-out's metric (one of the pipeline metrics, delivery/pipeline-metrics.ts). */
export interface FanoutMetrics {
  eventsFannedOut: Pick<Counter, "inc">;
}

/** What the fan-out writes; in production Postgres (fanOutEvents, consumeFromOutbox). */
export interface FanoutStore {
  /** The events, their deliveries and jobs (fanOutEvents): one result per event, in order. */
  fanOut(batch: readonly EventToRecord[]): Promise<FanOutResult[]>;
  /** Removes the outbox row of an event the fan-out ignores (when this service wrote it). */
  consumeFromOutbox(eventId: string): Promise<void>;
}

/** A message of the EVENTS stream as the fan-out uses it (a JetStream message in production). */
export type FanoutMessage = Pick<JsMsg, "data" | "subject" | "seq" | "headers" | "ack" | "nak" | "term">;

export interface Fanout {
  stop(): Promise<void>;
}

/** A message that failed for a passing reason (Postgres or NATS away) comes back after this. */
const retryDelayMs = 2_000;

/**
 * The fan-out of one fetch's messages, each acked, nak'ed or terminated: the events that arrived
 * in the same turn of the event loop are fanned out as one batch; internal facts are set aside
 * and invalid messages dropped.
 */
export function createFanoutHandler(options: {
  store: FanoutStore;
  logger: Logger;
  metrics: FanoutMetrics;
  /** One consumer span per event, the child of its message's `traceparent` header. */
  tracer?: Tracer;
}): (messages: AsyncIterable<FanoutMessage>) => Promise<void> {
  const tracer = options.tracer ?? noTracing.tracer;
  const { logger, store } = options;

  /** An internal fact (acked, its outbox row removed) or an invalid message (terminated). */
  async function setAside(msg: FanoutMessage, message: Exclude<BusMessage, { kind: "event" }>): Promise<void> {
    if (message.kind === "internal") {
      try {
        await store.consumeFromOutbox(message.id);
        logger.debug({ eventId: message.id, type: message.type }, "not a webhook event; ignored");
        msg.ack();
      } catch (error) {
        logger.warn({ err: error, eventId: message.id }, "ignoring an internal event failed; it comes back");
        msg.nak(retryDelayMs);
      }
      return;
    }
    logger.error(
      { subject: msg.subject, seq: msg.seq, problems: message.problems },
      "an event on the bus cannot be delivered; dropped",
    );
    msg.term();
  }

  interface Fanning {
    msg: FanoutMessage;
    event: PlatformEvent;
    span: Span;
    traceparent: string | undefined;
  }

  function begin(msg: FanoutMessage, event: PlatformEvent): Fanning {
    const span = startSpan(tracer, "webhooks.fanout", traceparentOfMessage(msg), {
      kind: SpanKind.CONSUMER,
      attributes: { "webhooks.event_id": event.id, "webhooks.event_type": event.type },
    });
    return { msg, event, span, traceparent: traceparentOf(span) };
  }

  function done(item: Fanning, result: FanOutResult): void {
    item.span.setAttribute("webhooks.deliveries_created", result.deliveries);
    if (result.newEvent) options.metrics.eventsFannedOut.inc();
    const { event } = item;
    withTraceId(logger, item.traceparent).debug(
      { eventId: event.id, type: event.type, tenant: event.tenant, ...result, jobs: result.jobs.length },
      "event fanned out",
    );
    item.msg.ack();
    item.span.end();
  }

  function failed(item: Fanning, error: unknown): void {
    withTraceId(logger, item.traceparent).warn(
      { err: error, eventId: item.event.id },
      "fan-out failed; the event comes back",
    );
    item.span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).name });
    item.msg.nak(retryDelayMs);
    item.span.end();
  }

  /**
   * The events of one fetch (fanOutEvents: one transaction, their jobs enqueued together), then
   * each acked. A batch that fails is done again event by event, so one bad event fails only itself.
   */
  async function fanOutBatch(items: Fanning[]): Promise<void> {
    if (items.length === 0) return;
    let results: FanOutResult[];
    try {
      results = await store.fanOut(items.map((item) => ({ event: item.event, traceparent: item.traceparent })));
    } catch (error) {
      if (items.length === 1) {
        failed(items[0]!, error);
        return;
      }
      logger.debug({ err: error, events: items.length }, "fanning out a batch failed; one event at a time");
      await Promise.all(items.map((item) => fanOutBatch([item])));
      return;
    }
    items.forEach((item, i) => done(item, results[i]!));
  }

  // The messages of one fetch are handled side by side (events have no order to keep).
  return async (messages) => {
    // The events that arrived in the same turn of the event loop are one batch: a fetch does
    // not wait for its last message before the first ones are fanned out.
    const handling: Promise<void>[] = [];
    let batch: Fanning[] = [];
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      if (batch.length === 0) return;
      handling.push(fanOutBatch(batch));
      batch = [];
    };
    for await (const msg of messages) {
      const message = classifyBusMessage(msg.data);
      if (message.kind !== "event") {
        handling.push(setAside(msg, message));
        continue;
      }
      batch.push(begin(msg, message.event));
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    }
    flush();
    await Promise.all(handling);
  };
}

export function startFanout(options: {
  db: Knex;
  js: JetStreamClient;
  names: StreamNames;
  queue: DeliveryQueue;
  logger: Logger;
  metrics: FanoutMetrics;
  /** Events fetched, and handled concurrently, at a time. */
  batchSize?: number;
  fetchExpiresMs?: number;
  /** One consumer span per event, the child of its message's `traceparent` header. */
  tracer?: Tracer;
}): Fanout {
  const { db, queue } = options;
  return startPullLoop({
    js: options.js,
    stream: options.names.events,
    consumer: FANOUT_CONSUMER,
    batchSize: options.batchSize ?? 16,
    expiresMs: options.fetchExpiresMs ?? 5_000,
    logger: options.logger,
    what: "events",
    onMessages: createFanoutHandler({
      store: {
        fanOut: (batch) => fanOutEvents(db, queue, batch),
        consumeFromOutbox: (eventId) => consumeFromOutbox(db, eventId),
      },
      logger: options.logger,
      metrics: options.metrics,
      tracer: options.tracer,
    }),
  });
}
