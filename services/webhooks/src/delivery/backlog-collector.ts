/**
 * The backlog gauges, per endpoint class, computed by a periodic query (WEBHOOKS_BACKLOG_INTERVAL),
 * never per scrape:
 *
 *   webhooks_deliveries_pending{endpoint_class}                    deliveries not finished yet
 *                                                                  (pending, awaiting_retry, held)
 *   webhooks_deliveries_oldest_pending_age_seconds{endpoint_class} how long the one waiting longest
 *                                                                  has waited, as of the scrape
 *
 * A delivery waits from when it became due (next_attempt_at: its creation, its retry time, a
 * resume or redrive) or, held, from when it was held; one awaiting a retry that is not due yet does
 * not wait. So a resumed endpoint's week-old deliveries start at 0, and an alert on the age means
 * "due and not attempted for that long".
 *   webhooks_endpoints_with_pending{endpoint_class}                endpoints that have any
 *
 * Endpoint class (bounded: three values, never an endpoint or a tenant):
 *   paused   the endpoint is paused (by its owner or by a dead-letter) or deleted: its deliveries
 *            are held, or dead-lettered at their next job
 *   failing  not paused, and at least one of its deliveries is awaiting a retry (an attempt failed)
 *   healthy  every other endpoint with deliveries to make
 *
 * A growing oldest age for `healthy` means the pipeline is stuck or behind (the alert); `failing`
 * and `paused` backlogs are the partners' receivers (expected to be old).
 */
import type { Logger } from "@platform/service-kit/logger";
import type { Knex } from "@platform/service-kit/postgres";
import { Gauge, type Registry } from "prom-client";
import { endpointClasses, measureBacklog, type BacklogByClass, type EndpointClass } from "../db/delivery-backlog.js";
import { every, type Periodic } from "./periodic.js";

export function startBacklogCollector(options: {
  db: Knex;
  registry: Registry;
  logger: Logger;
  intervalMs: number;
}): Periodic {
  let latest: { at: number; byClass: Record<EndpointClass, BacklogByClass> } | undefined;
  const perClass = (pick: (b: BacklogByClass, sinceMeasuredS: number) => number) =>
    function (this: Gauge<"endpoint_class">) {
      // Before the first measurement nothing is known: no samples rather than zeros.
      if (!latest) return;
      const since = (performance.now() - latest.at) / 1000;
      for (const c of endpointClasses) this.set({ endpoint_class: c }, pick(latest.byClass[c], since));
    };
  new Gauge({
    name: "webhooks_deliveries_pending",
    help: "Deliveries not finished (pending, awaiting_retry, held), by endpoint class (healthy, failing, paused).",
    labelNames: ["endpoint_class"],
    registers: [options.registry],
    collect: perClass((b) => b.pending),
  });
  new Gauge({
    name: "webhooks_deliveries_oldest_pending_age_seconds",
    help: "How long the longest-waiting unfinished delivery has waited since it became due (or was held), by endpoint class; 0 when none waits.",
    labelNames: ["endpoint_class"],
    registers: [options.registry],
    // The age as of the scrape: the measured age plus the time since the measurement.
    collect: perClass((b, since) => (b.oldestAgeSeconds === null ? 0 : Math.max(0, b.oldestAgeSeconds + since))),
  });
  new Gauge({
    name: "webhooks_endpoints_with_pending",
    help: "Endpoints with unfinished deliveries, by endpoint class.",
    labelNames: ["endpoint_class"],
    registers: [options.registry],
    collect: perClass((b) => b.endpoints),
  });
  const measure = async () => {
    try {
      const at = performance.now();
      latest = { at, byClass: await measureBacklog(options.db) };
    } catch (error) {
      options.logger.warn({ err: error }, "measuring the delivery backlog failed; the gauges keep the last values");
    }
  };
  const first = measure();
  const periodic = every(options.intervalMs, measure);
  return {
    async stop() {
      await first;
      await periodic.stop();
    },
  };
}
