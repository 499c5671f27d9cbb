/**
 * The durable pull consumer `notify-projections` on `${ns}EVENTS`: its name and its declaration,
 * shared by the projector (projector.ts) and its metrics (projector-metrics.ts).
 */
import { eventsStreamName } from "@platform/service-kit/event-bus";
import { ensureDurableConsumer, nanos } from "@platform/service-kit/nats";
import { AckPolicy, DeliverPolicy, type JetStreamManager } from "nats";

export const PROJECTIONS_CONSUMER = "notify-projections";

/**
 * Declares the durable consumer (idempotent; at every start). `ackWaitMs` (PROJECTIONS_ACK_WAIT) is
 * how long the events a process had fetched stay with it before they come back to another: after a
 * kill -9, the bound on when the polls show them. `replicas` (NATS_STREAM_REPLICAS) is how many
 * servers keep its state, as many as keep the stream.
 */
export async function declareProjectionsConsumer(
  jsm: JetStreamManager,
  namespace: string,
  options: { ackWaitMs: number; replicas: number },
): Promise<void> {
  await ensureDurableConsumer(jsm, eventsStreamName(namespace), {
    durable_name: PROJECTIONS_CONSUMER,
    num_replicas: options.replicas,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(options.ackWaitMs),
    max_deliver: -1,
    max_ack_pending: 10_000,
  });
}
