/**
 * A delivery job: "attempt delivery `deliveryId`", as of the delivery's `generation`. Postgres
 * holds the truth about every delivery (status, when its next attempt is due); a job message on
 * JetStream is how a worker learns that one is due, and `nak(delay)` of that message is how a
 * retry waits. Whoever makes a delivery due (fan-out, resume, redrive, a test delivery, the
 * sweeper) bumps its generation in the same transaction and enqueues a job for the new
 * generation after the commit; a job whose generation is not the row's is stale and is acked
 * without effect. A crash between the commit and the enqueue leaves a due delivery without a
 * job, which the sweeper finds and enqueues again.
 */
export interface DeliveryJob {
  deliveryId: string;
  generation: number;
  /**
   * The delivery's endpoint, when the caller has it at hand: jobs travel on a per-endpoint
   * subject, and the JetStream queue looks the endpoint up when it is not given.
   */
  endpointId?: string;
}

/** Where due deliveries are announced: JetStream in the service, awaited until stored. */
export interface DeliveryQueue {
  enqueue(jobs: readonly DeliveryJob[]): Promise<void>;
}
