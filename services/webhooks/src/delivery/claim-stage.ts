/**
 * The claim stage of a delivery attempt: the job's delivery claimed for one attempt (a lease),
 * or the job answered at once: stale (ack), leased by another worker (nak 5 s), its endpoint
 * deleted (dead-lettered without an attempt, ack) or paused (held, ack), not due yet (the claim
 * given back, nak until it is due), or over its endpoint's rate limit (rescheduled to the
 * limiter's next slot, the claim given back, nak until then: not an attempt). The stages in
 * order: delivery-attempt.ts.
 */
import type { Logger } from "@platform/service-kit/logger";
import { withTraceId } from "@platform/service-kit/tracing";
import type { JsMsg } from "nats";
import type { AttemptStore, ClaimedDelivery } from "../db/attempt-store.js";
import { decodeDeliveryJob } from "../events/delivery-queue.js";

/** A delivery job's message as the stages use it (a JetStream message in production). */
export type JobMessage = Pick<JsMsg, "data" | "subject" | "seq" | "ack" | "nak" | "term" | "working">;

/** The delay for a job that another worker holds. */
export const leasedDelayMs = 5_000;

export interface ClaimDeps {
  store: AttemptStore;
  /** The claim's lease (WEBHOOKS_LEASE). */
  leaseMs: number;
  logger: Logger;
}

/** A delivery claimed for an attempt, and what every line about it carries. */
export interface ClaimedAttempt {
  delivery: ClaimedDelivery;
  ids: { eventId: string; deliveryId: string; endpointId: string };
  /** The worker's logger with the delivery's trace id (the fan-out's trace, kept on the row). */
  log: Logger;
}

/** The delivery to attempt now, or undefined when the job is answered already. */
export async function claimJob(msg: JobMessage, deps: ClaimDeps): Promise<ClaimedAttempt | undefined> {
  const job = decodeDeliveryJob(msg.data);
  if (!job) {
    deps.logger.error({ subject: msg.subject, seq: msg.seq }, "a message on the delivery stream is not a job; dropped");
    msg.term();
    return undefined;
  }
  const claim = await deps.store.claim(job, deps.leaseMs);
  if (claim.kind === "stale") {
    msg.ack();
    return undefined;
  }
  if (claim.kind === "leased") {
    msg.nak(leasedDelayMs);
    return undefined;
  }
  const delivery = claim.delivery;
  const ids = { eventId: delivery.eventId, deliveryId: delivery.id, endpointId: delivery.endpointId };
  const log = withTraceId(deps.logger, delivery.traceparent ?? undefined);
  if (delivery.deleted) {
    await deps.store.abandonClaimed(delivery.id);
    log.info(ids, "the endpoint was deleted; the delivery is dead-lettered without an attempt");
    msg.ack();
    return undefined;
  }
  if (delivery.paused) {
    await deps.store.holdClaimed(delivery.id);
    log.debug(ids, "the endpoint is paused; the delivery is held");
    msg.ack();
    return undefined;
  }
  if (delivery.dueInMs > 0) {
    await deps.store.release(delivery.id);
    msg.nak(Math.ceil(delivery.dueInMs));
    return undefined;
  }
  if (delivery.rateLimit !== null && !delivery.rateSlotHeld) {
    // Every replica shares the endpoint's limiter row: a later slot frees this process's slot
    // now and the job comes back when the slot is due (then it holds it: no second look).
    const waitMs = await deps.store.reserveRateSlot(delivery, delivery.rateLimit);
    if (waitMs > 0) {
      log.debug({ ...ids, waitMs }, "over the endpoint's rate limit; the delivery waits for its slot");
      msg.nak(Math.ceil(waitMs));
      return undefined;
    }
  }
  return { delivery, ids, log };
}
