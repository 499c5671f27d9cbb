import { newNatsNamespace } from "@platform/local-stack/nats-namespace";
/**
 * The delivery worker's per-endpoint admission, in process against the real Postgres and
 * nats-server, with a sender that holds every request until the test lets it answer: never more
 * than WEBHOOKS_ENDPOINT_CONCURRENCY attempts in flight to one endpoint; a busy endpoint's next
 * jobs wait in the worker (no nak) and start as soon as a slot frees; jobs beyond that are nak'ed
 * and still delivered later; another endpoint is served meanwhile.
 */
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { eventually } from "@platform/local-stack/https-receiver";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { createLogger } from "@platform/service-kit/logger";
import { createMetricsRegistry } from "@platform/service-kit/metrics";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { connect, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { createAttemptStore } from "../src/db/attempt-store.js";
import { startDeliveryWorker, type DeliveryWorker } from "../src/delivery/delivery-worker.js";
import type { DeliveryResponse, HttpsSender } from "../src/delivery/https-sender.js";
import { createPipelineMetrics } from "../src/delivery/pipeline-metrics.js";
import { createTargetResolver } from "../src/delivery/target-resolver.js";
import { currentApiVersion } from "../src/domain/endpoint.js";
import { newDeliveryId, newEndpointId, newEventId } from "../src/domain/ids.js";
import { generateSigningSecret, parseSecretsKey, sealSecret, type SecretKeyRing } from "../src/domain/secret-box.js";
import type { DeliveryQueue } from "../src/domain/delivery-job.js";
import { createJetStreamDeliveryQueue } from "../src/events/delivery-queue.js";
import { declareStreams, deleteStreams, streamNames, type StreamNames } from "../src/events/streams.js";

interface Held {
  host: string;
  answer: () => void;
}

describe("per-endpoint admission in the delivery worker", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let names: StreamNames;
  let queue: DeliveryQueue;
  let keyRing: SecretKeyRing;
  let worker: DeliveryWorker;
  const held: Held[] = [];
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  const limit = 2;

  async function endpoint(host: string): Promise<string> {
    const id = newEndpointId();
    await db("endpoints").insert({
      id,
      tenant_id: "adm",
      url: `https://${host}/hook`,
      description: "d",
      event_types: ["booking.*"],
      api_version: currentApiVersion,
      secret_sealed: sealSecret(keyRing, generateSigningSecret(), id),
    });
    return id;
  }

  async function deliver(endpointId: string): Promise<string> {
    const eventId = newEventId();
    await db("events").insert({
      id: eventId,
      tenant_id: "adm",
      type: "booking.created",
      occurred_at: new Date(),
      data: "{}",
      livemode: true,
    });
    const id = newDeliveryId(new Date());
    await db("deliveries").insert({
      id,
      tenant_id: "adm",
      endpoint_id: endpointId,
      event_id: eventId,
      event_type: "booking.created",
      livemode: true,
      payload: "{}",
      status: "pending",
      next_attempt_at: new Date(),
      generation: 1,
    });
    await queue.enqueue([{ deliveryId: id, generation: 1, endpointId }]);
    return id;
  }

  const heldFor = (host: string) => held.filter((h) => h.host === host);

  beforeAll(async () => {
    scratch = await createScratchDatabase("whadmit");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 6 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    jsm = await nc.jetstreamManager();
    names = streamNames(newNatsNamespace());
    await declareStreams(jsm, names);
    const js = nc.jetstream();
    queue = createJetStreamDeliveryQueue({ js, db, namespace: names.namespace });
    keyRing = parseSecretsKey(randomBytes(32).toString("base64"));
    const sender: HttpsSender = {
      send(request) {
        const host = request.url.hostname;
        inFlight.set(host, (inFlight.get(host) ?? 0) + 1);
        maxInFlight.set(host, Math.max(maxInFlight.get(host) ?? 0, inFlight.get(host)!));
        return new Promise<DeliveryResponse>((resolve) =>
          held.push({
            host,
            answer: () => {
              inFlight.set(host, inFlight.get(host)! - 1);
              resolve({
                result: { kind: "response", status: 200 },
                responseBody: Buffer.from("ok"),
                truncated: false,
                durationMs: 1,
              });
            },
          }),
        );
      },
      close: () => undefined,
    };
    worker = startDeliveryWorker({
      js,
      names,
      store: createAttemptStore(db),
      keyRing,
      leaseMs: 60_000,
      targets: createTargetResolver({
        allowPrivate: false,
        lookup: () => Promise.resolve([{ address: "93.184.215.14", family: 4 }]),
      }),
      sender,
      metrics: createPipelineMetrics(createMetricsRegistry("webhooks")),
      logger: createLogger("webhooks", "info", new Writable({ write: (_c, _e, done) => done() })),
      retryDelaysMs: [1000, 1000, 1000, 1000, 1000, 1000, 1000],
      timeoutMs: 30_000,
      concurrency: 16,
      endpointConcurrency: limit,
      fetchExpiresMs: 1_000,
    });
  });

  afterAll(async () => {
    for (const h of held) h.answer();
    await worker?.stop(2_000);
    if (jsm) await deleteStreams(jsm, names).catch(() => undefined);
    await nc?.close();
    await db?.destroy();
    await scratch?.drop();
  });

  it("holds an endpoint to its limit, serves the others meanwhile, and delivers every job", async () => {
    const slow = await endpoint("slow.example.com");
    const other = await endpoint("other.example.com");
    // 2 run, 2 wait in the worker, 2 are nak'ed (they come back after the busy delay).
    const slowDeliveries: string[] = [];
    for (let i = 0; i < 6; i++) slowDeliveries.push(await deliver(slow));
    await eventually("the slow endpoint's first two attempts", () => heldFor("slow.example.com").length === limit);
    const otherDelivery = await deliver(other);
    // The other endpoint is served while the slow one holds its slots.
    await eventually("the other endpoint's attempt", () => heldFor("other.example.com").length === 1);
    heldFor("other.example.com")[0]!.answer();

    // Each answer lets exactly one more of the slow endpoint's jobs in.
    let answered = 0;
    while (answered < slowDeliveries.length) {
      const pending = heldFor("slow.example.com").slice(answered);
      expect(inFlight.get("slow.example.com")).toBeLessThanOrEqual(limit);
      if (pending.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      pending[0]!.answer();
      answered += 1;
      await eventually(
        "the next attempt or the end",
        () => answered === slowDeliveries.length || heldFor("slow.example.com").length > answered,
        20_000,
      ).catch(() => undefined);
    }
    expect(maxInFlight.get("slow.example.com")).toBe(limit);

    const rows = await eventually("every delivery succeeded", async () => {
      const found = await db("deliveries")
        .whereIn("id", [...slowDeliveries, otherDelivery])
        .select<{ status: string; attempts: number }[]>("status", "attempts");
      return found.every((r) => r.status === "succeeded") ? found : undefined;
    });
    expect(rows).toHaveLength(7);
    expect(rows.every((r) => r.attempts === 1)).toBe(true);
    // Only the jobs beyond the queue were nak'ed (a second apart while the endpoint was busy).
    const info = await jsm.consumers.info(names.deliveries, "webhooks-delivery");
    expect(info.delivered.consumer_seq).toBeGreaterThanOrEqual(7);
    expect(info.num_redelivered).toBeLessThanOrEqual(2);
  });
});
