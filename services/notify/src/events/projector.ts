/**
 * notify's projector: the durable pull consumer `notify-projections` on `${ns}EVENTS` (declared
 * in projections-consumer.ts) turns every event into the tenant's poll reads (work, attention,
 * activity; db/projection-store.ts). Per fetch, in ONE statement under the shared projection
 * lock (per message when a fetch's batch fails): the events recorded once (dedupe by id), the
 * three projections, and the removal of notify's kept outbox rows; the acks come after the
 * commit. A message that cannot be decoded is logged and terminated.
 *
 * Rebuild (`rebuildProjections`): under the exclusive lock, the tables are emptied and the stream
 * replayed from its first to its last sequence through an ordered consumer applying the same
 * function, then committed. The live consumer waits meanwhile and then goes on; what it applies
 * again is deduped.
 */
import { decodeBusEvent, eventsStreamName, traceparentOfMessage } from "@platform/service-kit/event-bus";
import type { Logger } from "@platform/service-kit/logger";
import { startPullLoop } from "@platform/service-kit/nats";
import type { Knex } from "@platform/service-kit/postgres";
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
import { DeliverPolicy, type JetStreamClient, type JsMsg } from "nats";
import type { JetStreamManager } from "nats";
import { applyEvents, lockExclusive, truncateProjections } from "../db/projection-store.js";
import type { ProjectedEvent } from "../domain/projection.js";
import { PROJECTIONS_CONSUMER } from "./projections-consumer.js";
import type { ProjectorMetrics } from "./projector-metrics.js";

/** Applies one event on its own (one statement, under the live side of the lock). */
export async function projectOne(db: Knex, event: ProjectedEvent, seq: number): Promise<boolean> {
  return (await applyEvents(db, [{ event, seq }])).has(event.id);
}

export interface Projector {
  stop(): Promise<void>;
}

const retryDelayMs = 2_000;

export function startProjector(options: {
  db: Knex;
  js: JetStreamClient;
  namespace: string;
  logger: Logger;
  /** Messages fetched, and applied concurrently, at a time. */
  batchSize?: number;
  /**
   * How long a batch waits after its first event for more (PROJECTIONS_GATHER), so the events of
   * a window are applied in one commit; 0 (the default here): applied once nothing more is pending.
   */
  gatherMs?: number;
  fetchExpiresMs?: number;
  /** Counts the events applied (projector-metrics.ts). */
  metrics?: ProjectorMetrics;
  /** One consumer span per applied event, the child of its message's `traceparent` header. */
  tracer?: Tracer;
}): Projector {
  const { logger } = options;
  const tracer = options.tracer ?? noTracing.tracer;

  /** One event's span (event id and type; never its snapshot) and the logger bound to its trace. */
  function traced(msg: JsMsg, event: ProjectedEvent): { span: Span; log: Logger } {
    const span = startSpan(tracer, "notify.projection.apply", traceparentOfMessage(msg), {
      kind: SpanKind.CONSUMER,
      attributes: { "notify.projection.event_id": event.id, "notify.projection.event_type": event.type },
    });
    return { span, log: withTraceId(logger, traceparentOf(span)) };
  }

  function applied(msg: JsMsg, event: ProjectedEvent, { span, log }: { span: Span; log: Logger }, isNew: boolean) {
    span.setAttribute("notify.projection.applied", isNew);
    span.end();
    log.debug({ eventId: event.id, type: event.type, seq: msg.seq, applied: isNew }, "event projected");
  }

  async function handle(msg: JsMsg, event: ProjectedEvent, trace = traced(msg, event)): Promise<void> {
    try {
      const isNew = await projectOne(options.db, event, msg.seq);
      msg.ack();
      applied(msg, event, trace, isNew);
      options.metrics?.projected.inc();
    } catch (error) {
      trace.log.warn({ err: error, eventId: event.id }, "projecting failed; the event comes back");
      trace.span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).name });
      trace.span.end();
      msg.nak(retryDelayMs);
    }
  }

  /**
   * A fetch's events in one statement (one commit for the batch, which is what keeps the send
   * path's cost down under load), acked after it; when the batch fails, each event on its own so
   * one bad event holds back only itself. Each event has its own span from before the batch to
   * its ack (or to its own retry's end).
   */
  async function handleBatch(msgs: JsMsg[]): Promise<void> {
    if (msgs.length === 0) return;
    const decoded: { msg: JsMsg; event: ProjectedEvent; trace: { span: Span; log: Logger }; isNew?: boolean }[] = [];
    for (const msg of msgs) {
      const event = decodeBusEvent(msg.data);
      if (event) decoded.push({ msg, event, trace: traced(msg, event) });
      else {
        logger.error({ subject: msg.subject, seq: msg.seq }, "an event on the bus cannot be projected; dropped");
        msg.term();
      }
    }
    if (decoded.length === 0) return;
    try {
      const recorded = await applyEvents(
        options.db,
        decoded.map(({ msg, event }) => ({ event, seq: msg.seq })),
      );
      for (const entry of decoded) entry.isNew = recorded.has(entry.event.id);
    } catch (error) {
      logger.warn({ err: error, events: decoded.length }, "projecting a batch failed; one event at a time");
      await Promise.all(decoded.map(({ msg, event, trace }) => handle(msg, event, trace)));
      return;
    }
    for (const { msg, event, trace, isNew } of decoded) {
      msg.ack();
      applied(msg, event, trace, isNew ?? false);
    }
    options.metrics?.projected.inc(decoded.length);
  }

  const batchSize = options.batchSize ?? 64;
  const gatherMs = options.gatherMs ?? 0;
  const gathered = Symbol("gathered");
  return startPullLoop({
    js: options.js,
    stream: eventsStreamName(options.namespace),
    consumer: PROJECTIONS_CONSUMER,
    batchSize,
    expiresMs: options.fetchExpiresMs ?? 5_000,
    logger,
    what: "events for the projections",
    // A fetch ends at max_messages or at its expiry; at a low rate that is seconds after its
    // first event. So a batch is applied when it is full, or `gatherMs` after its first event
    // (with no window: as soon as nothing more is pending for the consumer), and the fetch goes
    // on collecting the next one. The window is what makes the projector's cost per send small
    // at a moderate rate: one commit per window, not one per event.
    async onMessages(messages) {
      const iterator = messages[Symbol.asyncIterator]();
      const fetched: JsMsg[] = [];
      let firstAt = 0;
      let next = iterator.next();
      for (;;) {
        const left = fetched.length === 0 || gatherMs <= 0 ? undefined : firstAt + gatherMs - performance.now();
        const result = left === undefined ? await next : await raceWindow(next, left, gathered);
        if (result === gathered) {
          await handleBatch(fetched.splice(0));
          continue;
        }
        if (result.done) break;
        next = iterator.next();
        if (fetched.length === 0) firstAt = performance.now();
        fetched.push(result.value);
        if (fetched.length >= batchSize || (gatherMs <= 0 && result.value.info.pending === 0))
          await handleBatch(fetched.splice(0));
      }
      await handleBatch(fetched);
    },
  });
}

/** `next`, or `timeout` once `ms` have passed first (at once when `ms` is not positive). */
function raceWindow<T, U>(next: Promise<T>, ms: number, timeout: U): Promise<T | U> {
  if (ms <= 0) return Promise.resolve(timeout);
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<U>((resolve) => {
    timer = setTimeout(() => resolve(timeout), ms);
  });
  return Promise.race([next, elapsed]).finally(() => clearTimeout(timer));
}

export interface RebuildResult {
  eventsApplied: number;
  lastSequence: number;
}

/**
 * Empties the projections and replays the stream into them, in one transaction (`trx`, the
 * rebuild's: grpc/projection-service.ts) under the exclusive lock (the live projector waits, then
 * goes on deduped).
 */
export async function rebuildProjections(
  trx: Knex.Transaction,
  options: {
    js: JetStreamClient;
    jsm: JetStreamManager;
    namespace: string;
    logger: Logger;
  },
): Promise<RebuildResult> {
  const stream = eventsStreamName(options.namespace);
  await lockExclusive(trx);
  await truncateProjections(trx);
  const info = await options.jsm.streams.info(stream);
  const last = info.state.last_seq;
  let applied = 0;
  if (info.state.messages === 0 || last === 0) return { eventsApplied: 0, lastSequence: last };
  const consumer = await options.js.consumers.get(stream, {
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: info.state.first_seq,
  });
  const messages = await consumer.consume({ max_messages: 256 });
  try {
    for await (const msg of messages) {
      const event = decodeBusEvent(msg.data);
      if (event && (await applyEvents(trx, [{ event, seq: msg.seq }])).has(event.id)) applied += 1;
      if (msg.seq >= last) break;
    }
  } finally {
    messages.stop();
    await consumer.delete().catch(() => undefined);
  }
  options.logger.info({ eventsApplied: applied, lastSequence: last }, "projections rebuilt");
  return { eventsApplied: applied, lastSequence: last };
}
