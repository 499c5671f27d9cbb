/**
 * The delivery pipeline's metrics (the outbox relay registers its own two). Kept modest: issue 9
 * extends them.
 */
import { Counter, Histogram, type Registry } from "prom-client";

export interface PipelineMetrics {
  /** outcome: succeeded or the failure reason (non_2xx_status, timeout, connection_error, ...). */
  attempts: Counter<"outcome">;
  attemptSeconds: Histogram;
  deadLetters: Counter;
  eventsFannedOut: Counter;
}

export function createPipelineMetrics(registry: Registry): PipelineMetrics {
  return {
    attempts: new Counter({
      name: "webhooks_delivery_attempts_total",
      help: "Delivery attempts made, by outcome (succeeded or the failure reason).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    attemptSeconds: new Histogram({
      name: "webhooks_delivery_attempt_duration_seconds",
      help: "How long delivery attempts took, connection to last byte.",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
    deadLetters: new Counter({
      name: "webhooks_dead_letters_total",
      help: "Deliveries dead-lettered after their last failed attempt.",
      registers: [registry],
    }),
    eventsFannedOut: new Counter({
      name: "webhooks_events_fanned_out_total",
      help: "Events taken from the EVENTS stream and turned into deliveries (first receipt only).",
      registers: [registry],
    }),
  };
}
