/**
 * The delivery worker's slots without NATS: a fake consumer records what each fetch asks for, and
 * receivers that answer when told show which jobs run, wait in their endpoint's line or go back.
 * Against the real nats-server: services/webhooks/test (endpoint-admission, shutdown, ...).
 */
import { createLogger } from "@platform/service-kit/logger";
import type { ConsumerMessages, JetStreamClient, JsMsg } from "nats";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import type { AttemptStore } from "../db/attempt-store.js";
import { sealSecret } from "../domain/secret-box.js";
import { deliverySubject, streamNames } from "../events/streams.js";
import { claimedDelivery, ring, secret } from "./attempt-fakes.testing.js";
import { startDeliveryWorker, type DeliveryWorker } from "./delivery-worker.js";
import type { DeliveryResponse } from "./https-sender.js";
import { createPipelineMetrics } from "./pipeline-metrics.js";

const names = streamNames("wtest.");

/** A job for `endpointId`, and how it was answered. */
function job(endpointId: string, deliveryId: string) {
  const answers: string[] = [];
  const msg = {
    data: Buffer.from(JSON.stringify({ deliveryId, generation: 1 })),
    subject: deliverySubject(names.namespace, endpointId),
    seq: 1,
    ack: () => void answers.push("ack"),
    nak: (delay?: number) => void answers.push(delay === undefined ? "nak" : `nak ${delay}`),
    term: () => void answers.push("term"),
    working: () => undefined,
  } as unknown as JsMsg;
  return { msg, answers, deliveryId };
}

/** A consumer whose fetches hand out the queued jobs (as many as asked for), or wait until stopped. */
function fakeJetStream() {
  const queued: JsMsg[] = [];
  const asked: number[] = [];
  const consumer = {
    fetch({ max_messages }: { max_messages: number }): Promise<ConsumerMessages> {
      asked.push(max_messages);
      const batch = queued.splice(0, max_messages);
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      return Promise.resolve({
        stop,
        async *[Symbol.asyncIterator]() {
          yield* batch;
          if (batch.length === 0) await stopped;
        },
      } as unknown as ConsumerMessages);
    },
  };
  const js = { consumers: { get: () => Promise.resolve(consumer) } } as unknown as JetStreamClient;
  return { js, asked, queued };
}

/** A store that claims every job for an attempt now and records every attempt as succeeded. */
function claimingStore(): AttemptStore {
  return {
    claim(job) {
      // The fakes' delivery ids are "<endpoint>/<n>".
      const endpointId = job.deliveryId.split("/")[0]!;
      const secretSealed = sealSecret(ring, secret, endpointId);
      const delivery = claimedDelivery({ id: job.deliveryId, endpointId, generation: job.generation, secretSealed });
      return Promise.resolve({ kind: "claimed", delivery });
    },
    reserveRateSlot: () => Promise.resolve(0),
    release: () => Promise.resolve(),
    holdClaimed: () => Promise.resolve(),
    abandonClaimed: () => Promise.resolve(),
    recordAttempt: () =>
      Promise.resolve({
        number: 1,
        status: "succeeded",
        nextAttemptAt: null,
        deadLettered: false,
        createdAt: new Date(),
      }),
  };
}

/** Receivers that answer each delivery (by its id) only when told to. */
function heldReceivers() {
  const waiting = new Map<string, () => void>();
  return {
    sender: {
      send: ({ headers }: { headers: Record<string, string> }) =>
        new Promise<DeliveryResponse>((resolve) => {
          waiting.set(headers["service-delivery-id"]!, () =>
            resolve({
              result: { kind: "response", status: 200 },
              responseBody: Buffer.alloc(0),
              truncated: false,
              durationMs: 1,
            }),
          );
        }),
      close: () => undefined,
    },
    /** The deliveries whose POST is in flight. */
    inFlight: () => [...waiting.keys()].sort(),
    answer(deliveryId: string) {
      waiting.get(deliveryId)!();
      waiting.delete(deliveryId);
    },
  };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the delivery worker's slots (fake consumer, no NATS)", () => {
  const workers: DeliveryWorker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop(0)));
  });

  function start(js: JetStreamClient, sender: ReturnType<typeof heldReceivers>["sender"], concurrency: number) {
    const worker = startDeliveryWorker({
      js,
      names,
      store: claimingStore(),
      keyRing: ring,
      targets: { resolve: () => Promise.resolve({ address: "93.184.216.34", family: 4 }) },
      sender,
      metrics: createPipelineMetrics(new Registry()),
      logger: createLogger("webhooks", "silent"),
      retryDelaysMs: [1_000],
      timeoutMs: 5_000,
      leaseMs: 60_000,
      concurrency,
      endpointConcurrency: 1,
    });
    workers.push(worker);
    return worker;
  }

  it("fetches only as many jobs as it has free slots, counting the jobs waiting in an endpoint's line", async () => {
    const fake = fakeJetStream();
    const receivers = heldReceivers();
    const jobs = [job("ep_a", "ep_a/1"), job("ep_a", "ep_a/2"), job("ep_b", "ep_b/1"), job("ep_c", "ep_c/1")];
    const later = [job("ep_d", "ep_d/1"), job("ep_e", "ep_e/1")];
    fake.queued.push(...[...jobs, ...later].map((j) => j.msg));
    start(fake.js, receivers.sender, 4);

    // Four slots: a, b and c run, a's second job waits in a's line; nothing more is fetched.
    await expect.poll(() => receivers.inFlight()).toEqual(["ep_a/1", "ep_b/1", "ep_c/1"]);
    await settle();
    expect(fake.asked).toEqual([4]);

    // b's attempt ends (acked after its record): one slot, one job fetched.
    receivers.answer("ep_b/1");
    await expect.poll(() => fake.asked).toEqual([4, 1]);
    expect(jobs[2]!.answers).toEqual(["ack"]);
    await expect.poll(() => receivers.inFlight()).toEqual(["ep_a/1", "ep_c/1", "ep_d/1"]);

    // a's attempt ends: the next job of a's line takes its slot, and the place that job held in
    // the line is the one job fetched.
    receivers.answer("ep_a/1");
    await expect.poll(() => receivers.inFlight()).toEqual(["ep_a/2", "ep_c/1", "ep_d/1", "ep_e/1"]);
    await settle();
    expect(fake.asked).toEqual([4, 1, 1]);
    expect(jobs[0]!.answers).toEqual(["ack"]);
  });

  it("at stop, gives back the jobs waiting in a line at once and the attempts still running at the end of the grace", async () => {
    const fake = fakeJetStream();
    const receivers = heldReceivers();
    const first = job("ep_a", "ep_a/1");
    const second = job("ep_a", "ep_a/2");
    fake.queued.push(first.msg, second.msg);
    const worker = start(fake.js, receivers.sender, 4);
    await expect.poll(() => receivers.inFlight()).toEqual(["ep_a/1"]);

    await worker.stop(20);
    expect(second.answers).toEqual(["nak"]);
    expect(first.answers).toEqual(["nak"]);
    workers.splice(0);
  });
});
