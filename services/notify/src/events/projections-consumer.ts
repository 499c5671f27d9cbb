/**
 * The durable pull consumer `notify-projections` on `${ns}EVENTS`: its name and its declaration,
 * shared by the projector (projector.ts) and its metrics (projector-metrics.ts).
 */
import { eventsStreamName } from "@platform/service-kit/event-bus";
import { ensureDurableConsumer, nanos } from "@platform/service-kit/nats";
import { AckPolicy, DeliverPolicy, type JetStreamManager } from "nats";

export const PROJECTIONS_CONSUMER = "notify-projections";

/** Declares the durable consumer (idempotent; at every start). */
export async function declareProjectionsConsumer(jsm: JetStreamManager, namespace: string): Promise<void> {
  await ensureDurableConsumer(jsm, eventsStreamName(namespace), {
    durable_name: PROJECTIONS_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(30_000),
    max_deliver: -1,
    max_ack_pending: 10_000,
  });
}
