/**
 * The DeliveryQueue on JetStream: a job `{deliveryId, generation}` (JSON) on
 * `${ns}webhooks.deliveries.<endpoint_id>` with Nats-Msg-Id `${deliveryId}:${generation}`, so the
 * same job enqueued twice within the duplicate window is stored once. `enqueue` resolves once the
 * stream has stored every job.
 */
import type { Knex } from "@platform/service-kit/postgres";
import type { JetStreamClient } from "nats";
import { endpointsOfDeliveries } from "../db/due-deliveries.js";
import type { DeliveryJob, DeliveryQueue } from "../domain/delivery-job.js";
import { deliverySubject } from "./streams.js";

export function encodeDeliveryJob(job: DeliveryJob): Uint8Array {
  return Buffer.from(JSON.stringify({ deliveryId: job.deliveryId, generation: job.generation }), "utf8");
}

/** The job a message carries, or undefined when it is not one. */
export function decodeDeliveryJob(data: Uint8Array): DeliveryJob | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(data).toString("utf8")) as Partial<DeliveryJob>;
    if (typeof parsed.deliveryId !== "string" || !Number.isSafeInteger(parsed.generation)) return undefined;
    return { deliveryId: parsed.deliveryId, generation: parsed.generation! };
  } catch {
    return undefined;
  }
}

export function createJetStreamDeliveryQueue(options: {
  js: JetStreamClient;
  /** Looks up the endpoint of jobs enqueued without one. */
  db: Knex;
  namespace: string;
  publishTimeoutMs?: number;
}): DeliveryQueue {
  const timeout = options.publishTimeoutMs ?? 5_000;
  return {
    async enqueue(jobs) {
      if (jobs.length === 0) return;
      const unrouted = jobs.filter((job) => job.endpointId === undefined).map((job) => job.deliveryId);
      const endpoints =
        unrouted.length > 0 ? await endpointsOfDeliveries(options.db, unrouted) : new Map<string, string>();
      await Promise.all(
        jobs.flatMap((job) => {
          const endpointId = job.endpointId ?? endpoints.get(job.deliveryId);
          // A delivery that no longer exists needs no job.
          if (endpointId === undefined) return [];
          return options.js.publish(deliverySubject(options.namespace, endpointId), encodeDeliveryJob(job), {
            msgID: `${job.deliveryId}:${job.generation}`,
            timeout,
          });
        }),
      );
    },
  };
}
