import { newNatsNamespace } from "@platform/local-stack/nats-namespace";
/**
 * The SSRF guard on the attempt path, in process against the real Postgres and nats-server:
 * endpoints are created through WebhookService over gRPC while their names resolve to a public
 * address, then every name's DNS answer flips to an address of a refused range (rebinding). The
 * delivery worker (with the same kind of injected resolver as the service) must record each
 * attempt as failed with `target_not_allowed` and never connect: the HTTPS sender is never called
 * and a trap listening on every local address of the endpoints' port sees no connection. Controls
 * prove the trap would have seen one: with WEBHOOKS_ALLOW_PRIVATE_TARGETS the same flow connects,
 * and a port outside WEBHOOKS_ALLOWED_PORTS is still refused.
 */
import { randomBytes } from "node:crypto";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { Writable } from "node:stream";
import { eventually } from "@platform/local-stack/https-receiver";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { WebhookServiceService } from "@platform/proto/webhooks/v1";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";
import {
  createGrpcInstrumentation,
  instrumentService,
  startGrpcServer,
  type RunningGrpcServer,
} from "@platform/service-kit/grpc-server";
import { defaultIdempotencyOptions } from "@platform/service-kit/idempotency";
import { createLogger } from "@platform/service-kit/logger";
import { createMetricsRegistry } from "@platform/service-kit/metrics";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { connect, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../migrations/index.js";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { createAttemptStore } from "../src/db/attempt-store.js";
import { startDeliveryWorker, type DeliveryWorker } from "../src/delivery/delivery-worker.js";
import { createHttpsSender, type HttpsSender } from "../src/delivery/https-sender.js";
import { createPipelineMetrics } from "../src/delivery/pipeline-metrics.js";
import { createTargetResolver, type TargetRefusal } from "../src/delivery/target-resolver.js";
import { currentApiVersion } from "../src/domain/endpoint.js";
import { newDeliveryId, newEndpointId, newEventId } from "../src/domain/ids.js";
import { generateSigningSecret, parseSecretsKey, sealSecret, type SecretKeyRing } from "../src/domain/secret-box.js";
import { parseAllowedPorts } from "../src/domain/target-address.js";
import type { DeliveryQueue } from "../src/domain/delivery-job.js";
import { createJetStreamDeliveryQueue } from "../src/events/delivery-queue.js";
import { declareStreams, deleteStreams, streamNames, type StreamNames } from "../src/events/streams.js";
import { createWebhookService } from "../src/grpc/webhook-service.js";
import { publicAddress, refusedTargets, stubLookup } from "./refused-targets.js";

interface AttemptRow {
  number: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
}

/** A TCP listener on every local address (IPv4 and IPv6) that counts and drops connections. */
async function startTrap(): Promise<{ server: Server; port: number; connections: () => number }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    count += 1;
    sockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: "::", ipv6Only: false }, () => resolve()));
  return { server, port: (server.address() as AddressInfo).port, connections: () => count };
}

describe("the SSRF guard at every attempt (DNS rebinding between creation and attempt)", () => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let names: StreamNames;
  let queue: DeliveryQueue;
  let keyRing: SecretKeyRing;
  let server: RunningGrpcServer;
  let client: ServiceClient<typeof WebhookServiceService>;
  let worker: DeliveryWorker;
  let trap: Awaited<ReturnType<typeof startTrap>>;
  let otherPortTrap: Awaited<ReturnType<typeof startTrap>>;
  const flips = new Map<string, string>();
  const lookup = stubLookup(flips);
  const attemptRefusals: TargetRefusal[] = [];
  const sent: string[] = [];
  let lenient = false;
  let n = 0;
  const tenant = `ten_${randomBytes(4).toString("hex")}`;

  const createEndpoint = async (url: string): Promise<string> => {
    const answer = await client.createEndpoint(
      {
        tenantId: tenant,
        url,
        description: "rebinding",
        eventTypes: ["booking.created"],
        idempotencyKey: `k-${n++}`,
      },
      { requestId: `req-${n++}` },
    );
    return answer.endpoint!.id;
  };

  /** A due delivery for the endpoint, announced on JetStream as fan-out would. */
  async function deliver(endpointId: string): Promise<string> {
    const eventId = newEventId();
    await db("events").insert({
      id: eventId,
      tenant_id: tenant,
      type: "booking.created",
      occurred_at: new Date(),
      data: "{}",
      livemode: true,
    });
    const id = newDeliveryId(new Date());
    await db("deliveries").insert({
      id,
      tenant_id: tenant,
      endpoint_id: endpointId,
      event_id: eventId,
      event_type: "booking.created",
      livemode: true,
      payload: `{"id":"${eventId}"}`,
      status: "pending",
      next_attempt_at: new Date(),
      generation: 1,
    });
    await queue.enqueue([{ deliveryId: id, generation: 1, endpointId }]);
    return id;
  }

  const firstAttempt = (deliveryId: string) =>
    eventually(
      `the first attempt of ${deliveryId}`,
      async () => {
        const rows = await db("attempts")
          .where({ delivery_id: deliveryId })
          .orderBy("number")
          .select<AttemptRow[]>("number", "succeeded", "status_code", "error");
        return rows.length > 0 ? rows[0] : undefined;
      },
      60_000,
    );

  beforeAll(async () => {
    scratch = await createScratchDatabase("whguard");
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 6 });
    await migrateToLatest(db, WEBHOOKS_SCHEMA, migrations);
    nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
    jsm = await nc.jetstreamManager();
    names = streamNames(newNatsNamespace());
    await declareStreams(jsm, names);
    const js = nc.jetstream();
    queue = createJetStreamDeliveryQueue({ js, db, namespace: names.namespace });
    keyRing = parseSecretsKey(randomBytes(32).toString("base64"));
    trap = await startTrap();
    otherPortTrap = await startTrap();

    const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
    const logger = createLogger("webhooks", "info", sink);
    const allowedPorts = parseAllowedPorts(String(trap.port));
    const instrumentation = createGrpcInstrumentation(logger, createMetricsRegistry("webhooks"));
    server = await startGrpcServer({
      host: "127.0.0.1",
      port: 0,
      instrumentation,
      services: [
        {
          definition: WebhookServiceService,
          implementation: instrumentService(
            WebhookServiceService,
            createWebhookService({
              db,
              keyRing,
              queue,
              targets: createTargetResolver({ allowPrivate: false, allowedPorts, lookup }),
              idempotency: defaultIdempotencyOptions,
            }),
            instrumentation,
          ),
        },
      ],
    });
    client = createClient(WebhookServiceService, `127.0.0.1:${server.port}`, { timeoutMs: 10_000 });

    const strict = createTargetResolver({
      allowPrivate: false,
      allowedPorts,
      lookup,
      onRefusal: (refusal) => attemptRefusals.push(refusal),
    });
    const lenientResolver = createTargetResolver({ allowPrivate: true, allowedPorts, lookup });
    const real = createHttpsSender({ socketsPerOrigin: 2 });
    const sender: HttpsSender = {
      send(request) {
        sent.push(`${request.url.host} -> ${request.target.address}`);
        return real.send(request);
      },
      close: () => real.close(),
    };
    worker = startDeliveryWorker({
      js,
      names,
      store: createAttemptStore(db),
      keyRing,
      leaseMs: 60_000,
      targets: { resolve: (target) => (lenient ? lenientResolver : strict).resolve(target) },
      sender,
      metrics: createPipelineMetrics(createMetricsRegistry("webhooks")),
      logger,
      retryDelaysMs: [600_000, 600_000, 600_000, 600_000, 600_000, 600_000, 600_000],
      timeoutMs: 5_000,
      concurrency: 16,
      endpointConcurrency: 4,
      fetchExpiresMs: 1_000,
    });
  });

  afterAll(async () => {
    await worker?.stop(2_000);
    client?.close();
    await server?.shutdown(1_000);
    if (jsm) await deleteStreams(jsm, names).catch(() => undefined);
    await nc?.close();
    await db?.destroy();
    await scratch?.drop();
    await Promise.all(
      [trap, otherPortTrap].map((t) => t && new Promise((resolve) => t.server.close(() => resolve(undefined)))),
    );
  });

  it("records a failed attempt target_not_allowed for every refused range, and never connects", async () => {
    // Created while every name answered a public address: the creation check lets them through.
    const endpoints = [];
    for (const row of refusedTargets) {
      const url = `https://${row.hostname}:${trap.port}/hook`;
      flips.set(row.hostname, publicAddress);
      endpoints.push({ row, id: await createEndpoint(url) });
    }
    // Then the names are rebound to their refused addresses, and deliveries become due.
    for (const { row } of endpoints) flips.set(row.hostname, row.address);
    const deliveries = await Promise.all(endpoints.map(async (e) => ({ ...e, deliveryId: await deliver(e.id) })));

    const results = await Promise.all(
      deliveries.map(async (d) => ({
        range: d.row.range,
        address: d.row.address,
        attempt: await firstAttempt(d.deliveryId),
      })),
    );
    for (const result of results) {
      expect(result, `${result.range} (${result.address})`).toMatchObject({
        attempt: { number: 1, succeeded: false, status_code: null, error: "target_not_allowed" },
      });
    }
    const rows = await db("deliveries")
      .whereIn(
        "id",
        deliveries.map((d) => d.deliveryId),
      )
      .select<{ status: string; last_error: string }[]>("status", "last_error");
    expect(new Set(rows.map((r) => `${r.status}/${r.last_error}`))).toEqual(
      new Set(["awaiting_retry/target_not_allowed"]),
    );
    expect([...attemptRefusals].sort()).toEqual(refusedTargets.map((row) => row.refusal).sort());
    expect(sent).toEqual([]);
    expect(trap.connections()).toBe(0);
  });

  it("control: with WEBHOOKS_ALLOW_PRIVATE_TARGETS the same rebinding connects to the trap", async () => {
    flips.set("control.ssrf.test", publicAddress);
    const id = await createEndpoint(`https://control.ssrf.test:${trap.port}/hook`);
    flips.set("control.ssrf.test", "127.0.0.1");
    lenient = true;
    try {
      const attempt = await firstAttempt(await deliver(id));
      // The trap drops the connection: a failed attempt, but one that reached the address.
      expect(attempt).toMatchObject({
        succeeded: false,
        error: expect.stringMatching(/connection_error|tls_error/) as string,
      });
      expect(sent).toEqual([`control.ssrf.test:${trap.port} -> 127.0.0.1`]);
      expect(trap.connections()).toBeGreaterThanOrEqual(1);
    } finally {
      lenient = false;
    }
  });

  it("WEBHOOKS_ALLOW_PRIVATE_TARGETS does not lift the port rule: a port outside WEBHOOKS_ALLOWED_PORTS is refused", async () => {
    // An endpoint on a port the list no longer names (stored before the list changed).
    const id = newEndpointId();
    await db("endpoints").insert({
      id,
      tenant_id: tenant,
      url: `https://127.0.0.1:${otherPortTrap.port}/hook`,
      description: "old port",
      event_types: ["booking.created"],
      api_version: currentApiVersion,
      secret_sealed: sealSecret(keyRing, generateSigningSecret(), id),
    });
    const sentBefore = sent.length;
    lenient = true;
    try {
      const attempt = await firstAttempt(await deliver(id));
      expect(attempt).toMatchObject({ succeeded: false, status_code: null, error: "target_not_allowed" });
    } finally {
      lenient = false;
    }
    expect(sent).toHaveLength(sentBefore);
    expect(otherPortTrap.connections()).toBe(0);
  });
});
