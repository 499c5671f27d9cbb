/**
 * The delivery worker: takes delivery jobs from the durable pull consumer `webhooks-delivery`,
 * claims the delivery in Postgres, signs it at send time, POSTs it, records the attempt and the
 * delivery's new state in one transaction, and only then acks the job, or naks it with the delay
 * until the next attempt (a retry waits as a delayed redelivery of its job). Those stages are
 * delivery-attempt.ts (one file per stage); this file decides when a job runs.
 *
 * It fetches on service-kit's pull loop (startPullLoop) only as many jobs as it has free slots
 * (WEBHOOKS_CONCURRENCY), so no job waits in a client buffer past its ack wait. A job for an
 * endpoint already at WEBHOOKS_ENDPOINT_CONCURRENCY (never more than half the slots) waits in that
 * endpoint's short line in memory, or, when the line is full, is nak'ed with a delay spaced by the
 * endpoint's attempt time (endpoint-scheduler.ts), so a slow endpoint's backlog comes back at the
 * pace it is served instead of crowding every fetch.
 */
import type { Logger } from "@platform/service-kit/logger";
import { startPullLoop } from "@platform/service-kit/nats";
import { noTracing, type Tracer } from "@platform/service-kit/tracing";
import type { JetStreamClient, JsMsg } from "nats";
import type { AttemptStore } from "../db/attempt-store.js";
import type { SecretKeyRing } from "../domain/secret-box.js";
import { DELIVERY_CONSUMER, endpointOfDeliverySubject, type StreamNames } from "../events/streams.js";
import { attemptJob, type AttemptDeps } from "./delivery-attempt.js";
import { createEndpointScheduler, type Running } from "./endpoint-scheduler.js";
import type { HttpsSender } from "./https-sender.js";
import type { PipelineMetrics } from "./pipeline-metrics.js";
import type { TargetResolver } from "./target-resolver.js";

export interface DeliveryWorkerOptions {
  js: JetStreamClient;
  names: StreamNames;
  store: AttemptStore;
  keyRing: SecretKeyRing;
  targets: TargetResolver;
  sender: HttpsSender;
  metrics: PipelineMetrics;
  logger: Logger;
  /** WEBHOOKS_RETRY_DELAYS in milliseconds. */
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  /**
   * WEBHOOKS_LEASE: how long a claim on a delivery lasts (its row lease; the job's ack wait is
   * the same). At least the timeout plus the time to record the attempt.
   */
  leaseMs: number;
  concurrency: number;
  endpointConcurrency: number;
  /** How long jobs are awaited per pull request (at least 1 s). */
  fetchExpiresMs?: number;
  /** One span per attempt, the child of the delivery's fan-out span (no-op by default). */
  tracer?: Tracer;
}

export interface DeliveryWorker {
  /** Stops fetching, lets attempts in flight finish for up to `graceMs`. */
  stop(graceMs: number): Promise<void>;
}

/** After a failure to read or write Postgres: the job comes back (the attempt may repeat). */
const failureDelayMs = 5_000;
/** At most this long between `working()` heartbeats of a job whose attempt runs. */
const heartbeatMs = 5_000;

export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { logger, metrics, leaseMs } = options;
  const stages: AttemptDeps = {
    store: options.store,
    keyRing: options.keyRing,
    targets: options.targets,
    sender: options.sender,
    metrics,
    logger,
    tracer: options.tracer ?? noTracing.tracer,
    retryDelaysMs: options.retryDelaysMs,
    timeoutMs: options.timeoutMs,
    leaseMs,
    // Several heartbeats per ack wait, so one late timer never lets a live job's ack wait expire.
    heartbeatEveryMs: Math.max(250, Math.min(heartbeatMs, Math.floor(leaseMs / 4))),
  };
  // One endpoint never holds more than half the slots, whatever WEBHOOKS_ENDPOINT_CONCURRENCY says.
  const scheduler = createEndpointScheduler<JsMsg>({
    endpointConcurrency: Math.min(options.endpointConcurrency, Math.max(1, Math.floor(options.concurrency / 2))),
    maxQueued: options.concurrency,
  });
  // Jobs waiting in a line keep their messages alive (a hanging endpoint's line moves slowly).
  const keepAlive = setInterval(() => scheduler.waiting().forEach((msg) => msg.working()), 15_000);
  keepAlive.unref();
  /** Each attempt in flight and its job message, given back with nak if the shutdown grace ends first. */
  const inFlight = new Map<Promise<void>, JsMsg>();
  let running = true;

  function dispatch(msg: JsMsg): void {
    const endpointId = endpointOfDeliverySubject(options.names.namespace, msg.subject);
    const admission = scheduler.admit(endpointId, msg);
    if (admission.kind === "run") run(admission.running);
    else if (admission.kind === "deferred") {
      metrics.jobsDeferred.inc();
      msg.nak(admission.delayMs);
    }
  }

  function run(job: Running<JsMsg>): void {
    const msg = job.item;
    const task = attemptJob(msg, stages)
      .catch((error: unknown) => {
        logger.warn({ err: error, subject: msg.subject }, "a delivery job failed; it comes back later");
        msg.nak(failureDelayMs);
      })
      .finally(() => {
        inFlight.delete(task);
        // The endpoint's next job in line takes this slot (while stopping, it goes back instead).
        const next = job.release();
        if (next && running) run(next);
        else if (next) next.item.nak();
        loop.slotFreed();
      });
    inFlight.set(task, msg);
  }

  // Jobs waiting in an endpoint's line count against the slots: no more messages held than slots.
  const loop = startPullLoop({
    js: options.js,
    stream: options.names.deliveries,
    consumer: DELIVERY_CONSUMER,
    batchSize: options.concurrency,
    freeSlots: () => options.concurrency - inFlight.size - scheduler.queued(),
    expiresMs: options.fetchExpiresMs ?? 5_000,
    logger,
    what: "delivery jobs",
    async onMessages(messages) {
      for await (const msg of messages) dispatch(msg);
    },
  });

  return {
    async stop(graceMs) {
      running = false;
      clearInterval(keepAlive);
      // Jobs waiting in a line go back at once, for this or another process.
      for (const msg of scheduler.drain()) msg.nak();
      // Jobs fetched but not dispatched yet go back too (the pull loop's stop).
      await loop.stop();
      const all = Promise.allSettled([...inFlight.keys()]);
      const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), graceMs).unref());
      if ((await Promise.race([all, timer])) === "timeout") {
        // Given back now, for another process: an attempt that still completes here acks nothing
        // more (the message is answered) and its ledger row stays the truth, as after a crash.
        logger.warn(
          { inFlight: inFlight.size, graceMs },
          "delivery attempts still in flight at shutdown; giving them back",
        );
        for (const msg of inFlight.values()) msg.nak();
      }
    },
  };
}
