/**
 * The projector's metrics: how many events it applied, and how far the poll reads trail the
 * stream (`notify_projector_pending_events`: events of EVENTS the consumer `notify-projections`
 * has not acknowledged yet, read from JetStream at each scrape).
 */
import { eventsStreamName } from "@platform/service-kit/event-bus";
import type { JetStreamClient } from "nats";
import { Counter, Gauge, type Registry } from "prom-client";
import { PROJECTIONS_CONSUMER } from "./projections-consumer.js";

export interface ProjectorMetrics {
  projected: Counter;
}

export function createProjectorMetrics(
  registry: Registry,
  options: { js: JetStreamClient; namespace: string },
): ProjectorMetrics {
  new Gauge({
    name: "notify_projector_pending_events",
    help: "Events on EVENTS the projector has not applied yet (not delivered, or delivered and not acknowledged).",
    registers: [registry],
    async collect() {
      try {
        const jsm = await options.js.jetstreamManager();
        const info = await jsm.consumers.info(eventsStreamName(options.namespace), PROJECTIONS_CONSUMER);
        this.set(info.num_pending + info.num_ack_pending);
      } catch {
        // NATS is away: keep the last value; the projector logs the outage.
      }
    },
  });
  return {
    projected: new Counter({
      name: "notify_projected_events_total",
      help: "Events of EVENTS the projector processed and acknowledged (an event seen again counts again; it changes nothing).",
      registers: [registry],
    }),
  };
}
