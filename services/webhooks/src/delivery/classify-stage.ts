/**
 * The classify stage of a delivery attempt: what the answer means (a 2xx, or the failure reason:
 * domain/attempt-outcome.ts), noted on the attempt's span (never the URL or the body). The stages
 * in order: delivery-attempt.ts.
 */
import { SpanStatusCode, type Span } from "@platform/service-kit/tracing";
import { classifyAttempt, type AttemptOutcome } from "../domain/attempt-outcome.js";
import type { DeliveryResponse } from "./https-sender.js";

export function classify(response: DeliveryResponse, span: Pick<Span, "setAttribute" | "setStatus">): AttemptOutcome {
  const outcome = classifyAttempt(response.result);
  span.setAttribute("webhooks.outcome", outcome.ok ? "succeeded" : outcome.reason);
  if (outcome.statusCode !== null) span.setAttribute("http.response.status_code", outcome.statusCode);
  if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
  return outcome;
}
