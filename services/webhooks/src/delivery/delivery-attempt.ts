/**
 * One delivery attempt, its stages in order (each in its own file, each a function of what it is
 * given; no NATS: a job is any message that can be acked, nak'ed, terminated and kept alive):
 *
 *   claim     claim-stage.ts     the delivery claimed for one attempt, or the job answered at once
 *   sign      sign-stage.ts      the endpoint's secrets opened; the body signed when it is sent
 *   send      send-stage.ts      the target resolved within the deadline, the signed POST
 *   classify  classify-stage.ts  what the answer means, on the attempt's span
 *   record    record-stage.ts    the attempt written, counted and logged; then ack, or nak until
 *                                the next attempt
 *
 * The delivery worker (delivery-worker.ts) runs attemptJob for every job it admits.
 */
import { inSpan, SpanKind, type Tracer } from "@platform/service-kit/tracing";
import { claimJob, type ClaimDeps, type JobMessage } from "./claim-stage.js";
import { classify } from "./classify-stage.js";
import { answerJob, recordAttempt, reportAttempt, type AttemptMetrics, type RecordDeps } from "./record-stage.js";
import { sendDelivery, type SendDeps } from "./send-stage.js";
import { openSecrets, type SignDeps } from "./sign-stage.js";

/** What the stages use: the worker's collaborators and settings, the same for every attempt. */
export interface AttemptDeps extends ClaimDeps, SignDeps, SendDeps, RecordDeps {
  metrics: AttemptMetrics;
  /** One span per attempt, the child of the delivery's fan-out span. */
  tracer: Tracer;
}

/**
 * Every path but a throw answers the job (a throw: the worker naks it); the ack or nak of an
 * attempt made comes after its record committed.
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
