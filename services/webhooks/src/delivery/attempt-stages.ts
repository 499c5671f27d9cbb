/**
 * One delivery attempt, stage by stage. The delivery worker (delivery-worker.ts) runs
 * `attemptJob` for every job it admits; each stage is a function of what it is given:
 *
 *   claim     claimJob: the job's delivery claimed for one attempt (a lease), or the job answered
 *             at once: stale (ack), leased by another worker (nak 5 s), endpoint deleted
 *             (dead-lettered without an attempt, ack), endpoint paused (held, ack), not due yet
 *             (claim given back, nak until it is due)
 *   sign      openSecrets: the endpoint's secrets opened (one that cannot be: claim given back,
 *             nak 30 s); signedHeaders: the body signed at the moment it is sent
 *   send      sendDelivery: the target resolved within the attempt's deadline, then the POST,
 *             with `working()` heartbeats while it runs
 *   classify  classify: what the answer means (domain/attempt-outcome.ts), on the attempt's span
 *   record    recordAttempt: the attempt and the delivery's new state written (the store's one
 *             transaction); reportAttempt: its metrics and log line; answerJob: ack, or nak until
 *             the next attempt
 *
 * No NATS here: a job is any message that can be acked, nak'ed, terminated and kept alive.
 */
import type { Logger } from "@platform/service-kit/logger";
import { inSpan, SpanKind, SpanStatusCode, withTraceId, type Span, type Tracer } from "@platform/service-kit/tracing";
import type { JsMsg } from "nats";
import type { AttemptStore, ClaimedDelivery, RecordedAttempt } from "../db/attempt-store.js";
import { classifyAttempt, type AttemptOutcome, type AttemptResult } from "../domain/attempt-outcome.js";
import { openSecret, type SecretKeyRing } from "../domain/secret-box.js";
import { rotationGraceMs, signatureHeaderName, signDelivery, type EndpointSecrets } from "../domain/signature.js";
import { decodeDeliveryJob } from "../events/delivery-queue.js";
import type { DeliveryResponse, HttpsSender } from "./https-sender.js";
import type { PipelineMetrics } from "./pipeline-metrics.js";
import { TargetNotAllowedError, type ResolvedTarget, type TargetResolver } from "./target-resolver.js";

export const userAgent = "platform-webhooks/1.0";

/** The delay for a job that another worker holds. */
export const leasedDelayMs = 5_000;
/** A secret that cannot be opened is a configuration problem (a missing SECRETS_KEY entry). */
export const secretFailureDelayMs = 30_000;

/** A delivery job's message as the stages use it (a JetStream message in production). */
export type JobMessage = Pick<JsMsg, "data" | "subject" | "seq" | "ack" | "nak" | "term" | "working">;

/** The metrics an attempt counts (pipeline-metrics.ts). */
export type AttemptMetrics = Pick<
  PipelineMetrics,
  "attempts" | "attemptSeconds" | "deadLetters" | "retriesScheduled" | "deliverySeconds"
>;

/** What the stages use: the worker's collaborators and settings, the same for every attempt. */
export interface AttemptDeps {
  store: AttemptStore;
  keyRing: SecretKeyRing;
  targets: Pick<TargetResolver, "resolve">;
  sender: Pick<HttpsSender, "send">;
  metrics: AttemptMetrics;
  logger: Logger;
  tracer: Tracer;
  /** WEBHOOKS_RETRY_DELAYS in milliseconds. */
  retryDelaysMs: readonly number[];
  /** The attempt's deadline, from resolving the host to the answer's last byte. */
  timeoutMs: number;
  /** The claim's lease (WEBHOOKS_LEASE). */
  leaseMs: number;
  /** The time between `working()` heartbeats of a job whose attempt runs. */
  heartbeatEveryMs: number;
}

/** A delivery claimed for an attempt, and what every line about it carries. */
export interface ClaimedAttempt {
  delivery: ClaimedDelivery;
  ids: { eventId: string; deliveryId: string; endpointId: string };
  /** The worker's logger with the delivery's trace id (the fan-out's trace, kept on the row). */
  log: Logger;
}

/** Claim: the delivery to attempt now, or undefined when the job is answered already. */
export async function claimJob(
  msg: JobMessage,
  deps: Pick<AttemptDeps, "store" | "leaseMs" | "logger">,
): Promise<ClaimedAttempt | undefined> {
  const job = decodeDeliveryJob(msg.data);
  if (!job) {
    deps.logger.error({ subject: msg.subject, seq: msg.seq }, "a message on the delivery stream is not a job; dropped");
    msg.term();
    return undefined;
  }
  const claim = await deps.store.claim(job, deps.leaseMs);
  if (claim.kind === "stale") {
    msg.ack();
    return undefined;
  }
  if (claim.kind === "leased") {
    msg.nak(leasedDelayMs);
    return undefined;
  }
  const delivery = claim.delivery;
  const ids = { eventId: delivery.eventId, deliveryId: delivery.id, endpointId: delivery.endpointId };
  const log = withTraceId(deps.logger, delivery.traceparent ?? undefined);
  if (delivery.deleted) {
    await deps.store.abandonClaimed(delivery.id);
    log.info(ids, "the endpoint was deleted; the delivery is dead-lettered without an attempt");
    msg.ack();
    return undefined;
  }
  if (delivery.paused) {
    await deps.store.holdClaimed(delivery.id);
    log.debug(ids, "the endpoint is paused; the delivery is held");
    msg.ack();
    return undefined;
  }
  if (delivery.dueInMs > 0) {
    await deps.store.release(delivery.id);
    msg.nak(Math.ceil(delivery.dueInMs));
    return undefined;
  }
  return { delivery, ids, log };
}

/**
 * The endpoint's secrets in plaintext: the current one, and the previous one until its grace
 * after the rotation ends (by the database's clock at the claim). Throws when one cannot be opened.
 */
export function endpointSecretsOf(delivery: ClaimedDelivery, ring: SecretKeyRing): EndpointSecrets {
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

/** Sign, first half: the secrets, or undefined when they cannot be opened (the job is answered). */
export async function openSecrets(
  msg: JobMessage,
  claimed: ClaimedAttempt,
  deps: Pick<AttemptDeps, "store" | "keyRing">,
): Promise<EndpointSecrets | undefined> {
  try {
    return endpointSecretsOf(claimed.delivery, deps.keyRing);
  } catch (error) {
    // Names the failure class only: never key or secret material.
    claimed.log.error(
      { ...claimed.ids, error: (error as Error).name },
      "the endpoint's signing secret cannot be opened",
    );
    await deps.store.release(claimed.delivery.id);
    msg.nak(secretFailureDelayMs);
    return undefined;
  }
}

/** Sign, second half: the headers of the POST of `body`, signed at `now` (a fresh `t` per attempt). */
export function signedHeaders(
  delivery: ClaimedDelivery,
  secrets: EndpointSecrets,
  body: Buffer,
  now: Date,
): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": userAgent,
    [signatureHeaderName]: signDelivery(secrets, body, now),
    "service-event-id": delivery.eventId,
    "service-delivery-id": delivery.id,
  };
}

/**
 * Send: resolves the endpoint's host (a refused address fails the attempt without a connection)
 * and POSTs the signed payload to the address it approved, all within `timeoutMs`. The job's
 * message is kept alive meanwhile.
 */
export async function sendDelivery(
  msg: JobMessage,
  claimed: ClaimedAttempt,
  secrets: EndpointSecrets,
  deps: Pick<AttemptDeps, "targets" | "sender" | "timeoutMs" | "heartbeatEveryMs">,
): Promise<DeliveryResponse> {
  const { delivery } = claimed;
  const started = performance.now();
  const heartbeat = setInterval(() => msg.working(), deps.heartbeatEveryMs);
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
        deps.targets.resolve(url),
        new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), deps.timeoutMs))),
      ]).finally(() => clearTimeout(timer));
    } catch (error) {
      if (!(error instanceof TargetNotAllowedError)) throw error;
      claimed.log.warn(
        { ...claimed.ids, refusal: error.refusal, address: error.address },
        "the endpoint's URL is not a target deliveries may reach; no connection made",
      );
      return failed({ kind: "target_not_allowed" });
    }
    const remainingMs = deps.timeoutMs - (performance.now() - started);
    if (target === "timeout" || remainingMs <= 0) return failed({ kind: "timeout" });
    const body = Buffer.from(delivery.payload, "utf8");
    const response = await deps.sender.send({
      url,
      target,
      body,
      timeoutMs: remainingMs,
      headers: signedHeaders(delivery, secrets, body, new Date()),
    });
    return { ...response, durationMs: Math.round(performance.now() - started) };
  } finally {
    clearInterval(heartbeat);
  }
}

/** Classify: a 2xx or the failure reason, noted on the attempt's span (never the URL or the body). */
export function classify(response: DeliveryResponse, span: Span): AttemptOutcome {
  const outcome = classifyAttempt(response.result);
  span.setAttribute("webhooks.outcome", outcome.ok ? "succeeded" : outcome.reason);
  if (outcome.statusCode !== null) span.setAttribute("http.response.status_code", outcome.statusCode);
  if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
  return outcome;
}

/** Record: the attempt and the delivery's new state, in the store's one transaction. */
export function recordAttempt(
  deps: Pick<AttemptDeps, "store" | "retryDelaysMs">,
  delivery: ClaimedDelivery,
  attemptedAt: Date,
  response: DeliveryResponse,
  outcome: AttemptOutcome,
): Promise<RecordedAttempt> {
  return deps.store.recordAttempt(
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
    deps.retryDelaysMs,
  );
}

/** The recorded attempt's metrics and its one log line. */
export function reportAttempt(
  claimed: ClaimedAttempt,
  metrics: AttemptMetrics,
  attemptedAt: Date,
  response: DeliveryResponse,
  outcome: AttemptOutcome,
  recorded: RecordedAttempt,
): void {
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
  claimed.log.info(
    {
      ...claimed.ids,
      attempt: recorded.number,
      outcome: label,
      statusCode: outcome.statusCode,
      durationMs: response.durationMs,
      status: recorded.status,
      nextAttemptAt: recorded.nextAttemptAt?.toISOString(),
    },
    recorded.deadLettered ? "delivery dead-lettered; the endpoint is paused" : "delivery attempt",
  );
}

/** After the record committed: nak until the next attempt when one is scheduled, else ack. */
export function answerJob(msg: JobMessage, recorded: RecordedAttempt): void {
  if (recorded.status === "awaiting_retry" && recorded.nextAttemptAt) {
    msg.nak(Math.max(1, recorded.nextAttemptAt.getTime() - Date.now()));
  } else {
    msg.ack();
  }
}

/**
 * One attempt of the job's delivery, the stages in order. Every path but a throw answers the job
 * (a throw: the worker naks it); the ack or nak of an attempt made comes after its record committed.
 */
export async function attemptJob(msg: JobMessage, deps: AttemptDeps): Promise<void> {
  const claimed = await claimJob(msg, deps);
  if (!claimed) return;
  const secrets = await openSecrets(msg, claimed, deps);
  if (!secrets) return;
  const { delivery } = claimed;
  const attemptedAt = new Date();
  // One span per attempt: ids, attempt number, status code and outcome; never the URL, the
  // payload, the secret or the signature.
  const { response, outcome, recorded } = await inSpan(
    deps.tracer,
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
      const response = await sendDelivery(msg, claimed, secrets, deps);
      const outcome = classify(response, span);
      const recorded = await recordAttempt(deps, delivery, attemptedAt, response, outcome);
      span.setAttribute("webhooks.attempt", recorded.number);
      return { response, outcome, recorded };
    },
  );
  reportAttempt(claimed, deps.metrics, attemptedAt, response, outcome, recorded);
  answerJob(msg, recorded);
}
