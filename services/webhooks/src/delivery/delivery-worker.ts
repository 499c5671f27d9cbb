/**
 * The delivery worker: takes delivery jobs from the durable pull consumer `webhooks-delivery`,
 * claims the delivery in Postgres, signs it at send time, POSTs it, records the attempt and the
 * delivery's new state in one transaction, and only then acks the job, or naks it with the delay
 * until the next attempt (a retry waits as a delayed redelivery of its job).
 *
 * It fetches only as many jobs as it has free slots (WEBHOOKS_CONCURRENCY), so no job waits in a
 * client buffer past its ack wait. A job for an endpoint already at WEBHOOKS_ENDPOINT_CONCURRENCY
 * (never more than half the slots) waits in that endpoint's short line in memory, or, when the
 * line is full, is nak'ed with a delay spaced by the endpoint's attempt time
 * (endpoint-scheduler.ts), so a slow endpoint's backlog comes back at the pace it is served instead
 * of crowding every fetch.
 */
import { failureBackoffMs } from "@platform/service-kit/backoff";
import type { Logger } from "@platform/service-kit/logger";
import { inSpan, noTracing, SpanKind, SpanStatusCode, withTraceId, type Tracer } from "@platform/service-kit/tracing";
import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from "nats";
import type { AttemptStore, ClaimedDelivery } from "../db/attempt-store.js";
import { classifyAttempt, type AttemptOutcome, type AttemptResult } from "../domain/attempt-outcome.js";
import { openSecret, type SecretKeyRing } from "../domain/secret-box.js";
import { rotationGraceMs, signatureHeaderName, signDelivery, type EndpointSecrets } from "../domain/signature.js";
import { decodeDeliveryJob } from "../events/delivery-queue.js";
import { DELIVERY_CONSUMER, endpointOfDeliverySubject, type StreamNames } from "../events/streams.js";
import { createEndpointScheduler, type Running } from "./endpoint-scheduler.js";
import type { DeliveryResponse, HttpsSender } from "./https-sender.js";
import type { PipelineMetrics } from "./pipeline-metrics.js";
import { TargetNotAllowedError, type ResolvedTarget, type TargetResolver } from "./target-resolver.js";

export const userAgent = "platform-webhooks/1.0";

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

/** The delay for a job that another worker holds. */
const leasedDelayMs = 5_000;
/** After a failure to read or write Postgres: the job comes back (the attempt may repeat). */
const failureDelayMs = 5_000;
/** A secret that cannot be opened is a configuration problem (a missing SECRETS_KEY entry). */
const secretFailureDelayMs = 30_000;
/** At most this long between `working()` heartbeats of a job whose attempt runs. */
const heartbeatMs = 5_000;

function secretsOf(delivery: ClaimedDelivery, ring: SecretKeyRing): EndpointSecrets {
  const current = openSecret(ring, delivery.secretSealed, delivery.endpointId);
  const expiresAt = delivery.previousSecretExpiresAt;
  if (delivery.previousSecretSealed === null || expiresAt === null || expiresAt <= delivery.now) {
    return { current, previous: null };
  }
  return {
    current,
    previous: {
      secret: openSecret(ring, delivery.previousSecretSealed, delivery.endpointId),
      rotatedAt: new Date(expiresAt.getTime() - rotationGraceMs),
    },
  };
}

export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { logger, metrics } = options;
  const tracer = options.tracer ?? noTracing.tracer;
  const { leaseMs } = options;
  // Several heartbeats per ack wait, so one late timer never lets a live job's ack wait expire.
  const heartbeatEveryMs = Math.max(250, Math.min(heartbeatMs, Math.floor(leaseMs / 4)));
  // One endpoint never holds more than half the slots, whatever WEBHOOKS_ENDPOINT_CONCURRENCY says.
  const scheduler = createEndpointScheduler<JsMsg>({
    endpointConcurrency: Math.min(options.endpointConcurrency, Math.max(1, Math.floor(options.concurrency / 2))),
    maxQueued: options.concurrency,
  });
  // Jobs waiting in a line keep their messages alive (a hanging endpoint's line moves slowly).
  const keepAlive = setInterval(() => scheduler.waiting().forEach((msg) => msg.working()), 15_000);
  keepAlive.unref();
  const inFlight = new Set<Promise<void>>();
  /** The job message of each attempt in flight, given back with nak if the shutdown grace ends first. */
  const inFlightJobs = new Map<Promise<void>, JsMsg>();
  let running = true;
  let current: ConsumerMessages | undefined;
  let slotFreed: (() => void) | undefined;
  let stopWait: (() => void) | undefined;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      stopWait = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function send(
    delivery: ClaimedDelivery,
    secrets: EndpointSecrets,
    msg: JsMsg,
    ids: Record<string, string>,
    log: Logger,
  ): Promise<DeliveryResponse> {
    const started = performance.now();
    const heartbeat = setInterval(() => msg.working(), heartbeatEveryMs);
    try {
      const url = new URL(delivery.url);
      const failed = (result: AttemptResult): DeliveryResponse => ({
        result,
        responseBody: Buffer.alloc(0),
        truncated: false,
        durationMs: Math.round(performance.now() - started),
      });
      let target: ResolvedTarget | "timeout";
      try {
        // Resolving the name counts toward the attempt's deadline.
        let timer: NodeJS.Timeout | undefined;
        target = await Promise.race([
          options.targets.resolve(url),
          new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), options.timeoutMs))),
        ]).finally(() => clearTimeout(timer));
      } catch (error) {
        if (!(error instanceof TargetNotAllowedError)) throw error;
        log.warn(
          { ...ids, refusal: error.refusal, address: error.address },
          "the endpoint's URL is not a target deliveries may reach; no connection made",
        );
        return failed({ kind: "target_not_allowed" });
      }
      const remainingMs = options.timeoutMs - (performance.now() - started);
      if (target === "timeout" || remainingMs <= 0) return failed({ kind: "timeout" });
      const body = Buffer.from(delivery.payload, "utf8");
      const signature = signDelivery(secrets, body, new Date());
      const response = await options.sender.send({
        url,
        target,
        body,
        timeoutMs: remainingMs,
        headers: {
          "content-type": "application/json",
          "user-agent": userAgent,
          [signatureHeaderName]: signature,
          "service-event-id": delivery.eventId,
          "service-delivery-id": delivery.id,
        },
      });
      return { ...response, durationMs: Math.round(performance.now() - started) };
    } finally {
      clearInterval(heartbeat);
    }
  }

  async function attempt(msg: JsMsg): Promise<void> {
    const job = decodeDeliveryJob(msg.data);
    if (!job) {
      logger.error({ subject: msg.subject, seq: msg.seq }, "a message on the delivery stream is not a job; dropped");
      msg.term();
      return;
    }
    const claim = await options.store.claim(job, leaseMs);
    if (claim.kind === "stale") {
      msg.ack();
      return;
    }
    if (claim.kind === "leased") {
      msg.nak(leasedDelayMs);
      return;
    }
    const delivery = claim.delivery;
    const ids = { eventId: delivery.eventId, deliveryId: delivery.id, endpointId: delivery.endpointId };
    // Every line about this delivery carries its trace id (the fan-out's trace, kept on the row).
    const log = withTraceId(logger, delivery.traceparent ?? undefined);
    if (delivery.deleted) {
      await options.store.abandonClaimed(delivery.id);
      log.info(ids, "the endpoint was deleted; the delivery is dead-lettered without an attempt");
      msg.ack();
      return;
    }
    if (delivery.paused) {
      await options.store.holdClaimed(delivery.id);
      log.debug(ids, "the endpoint is paused; the delivery is held");
      msg.ack();
      return;
    }
    if (delivery.dueInMs > 0) {
      await options.store.release(delivery.id);
      msg.nak(Math.ceil(delivery.dueInMs));
      return;
    }
    let secrets: EndpointSecrets;
    try {
      secrets = secretsOf(delivery, options.keyRing);
    } catch (error) {
      // Names the failure class only: never key or secret material.
      log.error({ ...ids, error: (error as Error).name }, "the endpoint's signing secret cannot be opened");
      await options.store.release(delivery.id);
      msg.nak(secretFailureDelayMs);
      return;
    }
    const attemptedAt = new Date();
    // One span per attempt: ids, attempt number, status code and outcome; never the URL, the
    // payload, the secret or the signature.
    const { response, outcome, recorded } = await inSpan(
      tracer,
      "webhooks.delivery.attempt",
      delivery.traceparent ?? undefined,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "webhooks.event_id": delivery.eventId,
          "webhooks.delivery_id": delivery.id,
          "webhooks.endpoint_id": delivery.endpointId,
        },
      },
      async (span) => {
        const response = await send(delivery, secrets, msg, ids, log);
        const outcome: AttemptOutcome = classifyAttempt(response.result);
        span.setAttribute("webhooks.outcome", outcome.ok ? "succeeded" : outcome.reason);
        if (outcome.statusCode !== null) span.setAttribute("http.response.status_code", outcome.statusCode);
        if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
        const recorded = await options.store.recordAttempt(
          delivery.id,
          {
            attemptedAt,
            durationMs: response.durationMs,
            succeeded: outcome.ok,
            statusCode: outcome.statusCode,
            error: outcome.ok ? null : outcome.reason,
            responseBody: response.responseBody,
            responseBodyTruncated: response.truncated,
          },
          options.retryDelaysMs,
        );
        span.setAttribute("webhooks.attempt", recorded.number);
        return { response, outcome, recorded };
      },
    );
    const label = outcome.ok ? "succeeded" : outcome.reason;
    metrics.attempts.inc({ outcome: label });
    metrics.attemptSeconds.observe(response.durationMs / 1000);
    if (recorded.deadLettered) metrics.deadLetters.inc();
    if (recorded.status === "awaiting_retry") metrics.retriesScheduled.inc();
    if (outcome.ok) {
      metrics.deliverySeconds.observe(
        Math.max(0, attemptedAt.getTime() + response.durationMs - recorded.createdAt.getTime()) / 1000,
      );
    }
    log.info(
      {
        ...ids,
        attempt: recorded.number,
        outcome: label,
        statusCode: outcome.statusCode,
        durationMs: response.durationMs,
        status: recorded.status,
        nextAttemptAt: recorded.nextAttemptAt?.toISOString(),
      },
      recorded.deadLettered ? "delivery dead-lettered; the endpoint is paused" : "delivery attempt",
    );
    if (recorded.status === "awaiting_retry" && recorded.nextAttemptAt) {
      msg.nak(Math.max(1, recorded.nextAttemptAt.getTime() - Date.now()));
    } else {
      msg.ack();
    }
  }

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
    const task = attempt(msg)
      .catch((error: unknown) => {
        logger.warn({ err: error, subject: msg.subject }, "a delivery job failed; it comes back later");
        msg.nak(failureDelayMs);
      })
      .finally(() => {
        inFlight.delete(task);
        inFlightJobs.delete(task);
        // The endpoint's next job in line takes this slot (while stopping, it goes back instead).
        const next = job.release();
        if (next && running) run(next);
        else if (next) next.item.nak();
        slotFreed?.();
      });
    inFlight.add(task);
    inFlightJobs.set(task, msg);
  }

  const loop = (async () => {
    let failures = 0;
    let consumer: Consumer | undefined;
    while (running) {
      // Jobs waiting in an endpoint's line count against the slots: no more messages held than slots.
      const free = options.concurrency - inFlight.size - scheduler.queued();
      if (free <= 0) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
        slotFreed = undefined;
        continue;
      }
      try {
        consumer ??= await options.js.consumers.get(options.names.deliveries, DELIVERY_CONSUMER);
        current = await consumer.fetch({ max_messages: free, expires: options.fetchExpiresMs ?? 5_000 });
        if (!running) current.stop();
        for await (const msg of current) dispatch(msg);
        failures = 0;
      } catch (error) {
        failures += 1;
        consumer = undefined;
        if (!running) break;
        logger.warn({ err: error, failures }, "fetching delivery jobs failed; retrying");
        await pause(failureBackoffMs(failures));
      } finally {
        current = undefined;
      }
    }
  })();

  return {
    async stop(graceMs) {
      running = false;
      clearInterval(keepAlive);
      // Jobs waiting in a line go back at once, for this or another process.
      for (const msg of scheduler.drain()) msg.nak();
      current?.stop();
      stopWait?.();
      slotFreed?.();
      await loop;
      const all = Promise.allSettled([...inFlight]);
      const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), graceMs).unref());
      if ((await Promise.race([all, timer])) === "timeout") {
        // Given back now, for another process: an attempt that still completes here acks nothing
        // more (the message is answered) and its ledger row stays the truth, as after a crash.
        logger.warn(
          { inFlight: inFlight.size, graceMs },
          "delivery attempts still in flight at shutdown; giving them back",
        );
        for (const msg of inFlightJobs.values()) msg.nak();
      }
    },
  };
}
