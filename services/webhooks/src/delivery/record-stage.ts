/**
 * The record stage of a delivery attempt: the attempt and the delivery's new state written (the
 * store's one transaction), its metrics and log line, then the job answered: ack, or nak until
 * the next attempt. The stages in order: delivery-attempt.ts.
 */
import type { AttemptStore, ClaimedDelivery, RecordedAttempt } from "../db/attempt-store.js";
import type { AttemptOutcome } from "../domain/attempt-outcome.js";
import { retryAfterMs } from "../domain/retry-delays.js";
import type { ClaimedAttempt, JobMessage } from "./claim-stage.js";
import type { DeliveryResponse } from "./https-sender.js";
import type { PipelineMetrics } from "./pipeline-metrics.js";

export interface RecordDeps {
  store: AttemptStore;
  /** WEBHOOKS_RETRY_DELAYS in milliseconds. */
  retryDelaysMs: readonly number[];
}

/** The metrics an attempt counts (pipeline-metrics.ts). */
export type AttemptMetrics = Pick<
  PipelineMetrics,
  "attempts" | "attemptSeconds" | "deadLetters" | "retriesScheduled" | "deliverySeconds"
>;

/**
 * The wait a 429 or 503 asked for with Retry-After, from the end of the attempt (when its answer
 * was read); null otherwise (retry-delays.ts).
 */
export function askedWaitMs(attemptedAt: Date, response: DeliveryResponse): number | null {
  const { result } = response;
  if (result.kind !== "response") return null;
  return retryAfterMs(result.status, result.retryAfter, new Date(attemptedAt.getTime() + response.durationMs));
}

/** The attempt and the delivery's new state, in the store's one transaction. */
export function recordAttempt(
  deps: RecordDeps,
  delivery: ClaimedDelivery,
  attemptedAt: Date,
  response: DeliveryResponse,
  outcome: AttemptOutcome,
): Promise<RecordedAttempt> {
  const retryAfter = outcome.ok ? null : askedWaitMs(attemptedAt, response);
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
      ...(retryAfter === null ? {} : { retryAfterMs: retryAfter }),
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
      // The wait a 429 or 503 asked for (Retry-After), when it did.
      retryAfterMs: outcome.ok ? undefined : (askedWaitMs(attemptedAt, response) ?? undefined),
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
