/**
 * The delivery pipeline's metrics (the outbox relay registers its own two; the backlog gauges are
 * set by backlog-collector.ts). Labels have bounded values only: never an endpoint or a tenant.
 * docs/operations.md (Observability) describes each one.
 */
import { Counter, Histogram, type Registry } from "prom-client";

/** Where an endpoint host was refused: at creation / URL change, or at an attempt. */
export type RefusalPath = "create" | "attempt";

export interface PipelineMetrics {
  /** outcome: succeeded or the failure reason (non_2xx_status, timeout, connection_error, ...). */
  attempts: Counter<"outcome">;
  attemptSeconds: Histogram;
  deadLetters: Counter;
  eventsFannedOut: Counter;
  /** From the delivery's creation (its event's fan-out) to the end of its successful attempt. */
  deliverySeconds: Histogram;
  /** Failed attempts after which another attempt is scheduled. */
  retriesScheduled: Counter;
  /** Jobs sent back because their endpoint was at its concurrency limit. */
  jobsDeferred: Counter;
  /** Endpoint hosts refused by the address check, by address class and path. */
  targetRefusals: Counter<"address_class" | "path">;
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
    deliverySeconds: new Histogram({
      name: "webhooks_delivery_latency_seconds",
      help: "From a delivery's creation (the fan-out of its event) to the end of its successful attempt.",
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400],
      registers: [registry],
    }),
    retriesScheduled: new Counter({
      name: "webhooks_retries_scheduled_total",
      help: "Failed attempts after which another attempt was scheduled.",
      registers: [registry],
    }),
    jobsDeferred: new Counter({
      name: "webhooks_delivery_jobs_deferred_total",
      help: "Delivery jobs sent back for later because their endpoint was at its concurrency limit.",
      registers: [registry],
    }),
    targetRefusals: new Counter({
      name: "webhooks_target_refusals_total",
      help: "Endpoint hosts refused by the address check (SSRF guard), by address class and path (create, attempt).",
      labelNames: ["address_class", "path"],
      registers: [registry],
    }),
  };
}
