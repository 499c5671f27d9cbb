/**
 * What the usage tests run: notify's TenantService and UsageService IN-PROCESS on a real gRPC
 * server (port 0) over a scratch database, with notify's outbox relay on a NATS namespace of their
 * own and a controllable clock; a real webhooks service PROCESS (its own scratch database, the same
 * NATS namespace) that fans notify's events out to HTTPS receivers whose CA it trusts.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { credentials, type ServiceError } from "@grpc/grpc-js";
import {
  createTestCertificates,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { TenantServiceClient, TenantServiceService } from "@platform/proto/notify/v1";
import { UsageServiceClient, UsageServiceService } from "@platform/proto/notify/v1/usage";
import { WebhookServiceClient, type CreateEndpointResponse } from "@platform/proto/webhooks/v1";
import { declareEventsStream } from "@platform/service-kit/event-bus";
import {
  createGrpcInstrumentation,
  instrumentService,
  startGrpcServer,
  type RunningGrpcServer,
} from "@platform/service-kit/grpc-server";
import { defaultIdempotencyOptions } from "@platform/service-kit/idempotency";
import { createLogger } from "@platform/service-kit/logger";
import { startOutboxRelay, type OutboxRelay } from "@platform/service-kit/outbox";
import { createDatabase, migrateToLatest, type Knex } from "@platform/service-kit/postgres";
import { connect, type NatsConnection } from "nats";
import { Registry } from "prom-client";
import { migrations } from "../migrations/index.js";
import { NOTIFY_SCHEMA } from "../src/config.js";
import { createTenantRepository } from "../src/db/tenant-repository.js";
import { createUsageStore } from "../src/db/usage-store.js";
import { createEventOutbox } from "../src/db/event-outbox.js";
import { createTenantService } from "../src/grpc/tenant-service.js";
import { createUsageService } from "../src/grpc/usage-service.js";

const webhooksEntry = join(import.meta.dirname, "..", "..", "webhooks", "dist", "src", "main.js");

/** A unary gRPC call as a promise. */
export function unary<Res>(
  invoke: (callback: (error: ServiceError | null, response?: Res) => void) => unknown,
): Promise<Res> {
  return new Promise((resolve, reject) => invoke((error, response) => (error ? reject(error) : resolve(response!))));
}

export interface UsageHarness {
  notifyDb: Knex;
  webhooksDb: Knex;
  namespace: string;
  grpcAddress: string;
  /** The injected clock: `value` is the current instant (set it to move time), unless `read` is set. */
  now: { value: Date; read?: () => Date };
  tenants: TenantServiceClient;
  usage: UsageServiceClient;
  /** A new client on its own connection. */
  newUsageClient(): UsageServiceClient;
  /** An HTTPS receiver subscribed (through the webhooks service) to usage.threshold_crossed of `tenantId`. */
  subscribe(tenantId: string): Promise<{ receiver: TestReceiver; secret: string }>;
  stop(): Promise<void>;
}

export async function startUsageHarness(name: string, start: Date): Promise<UsageHarness> {
  const namespace = newNatsNamespace();
  const natsUrl = testNatsUrl();
  const stack: {
    notifyScratch?: ScratchDatabase;
    webhooksScratch?: ScratchDatabase;
    notifyDb?: Knex;
    webhooksDb?: Knex;
    nc?: NatsConnection;
    relay?: OutboxRelay;
    grpc?: RunningGrpcServer;
    webhooks?: ServiceProcess;
    certs?: TestCertificates;
    clients: { close(): void }[];
    receivers: TestReceiver[];
  } = { clients: [], receivers: [] };
  const stop = async () => {
    for (const client of stack.clients) client.close();
    await Promise.allSettled(stack.receivers.map((r) => r.close()));
    await stack.webhooks?.stop();
    await stack.grpc?.shutdown(1_000);
    await stack.relay?.stop();
    await stack.nc?.close();
    await stack.notifyDb?.destroy();
    await stack.webhooksDb?.destroy();
    await deleteNamespaceStreams(namespace, natsUrl).catch(() => undefined);
    await stack.notifyScratch?.drop();
    await stack.webhooksScratch?.drop();
    await stack.certs?.remove();
  };
  try {
    const logger = createLogger("notify", "silent");
    stack.notifyScratch = await createScratchDatabase(`${name}n`);
    stack.webhooksScratch = await createScratchDatabase(`${name}w`);
    const notifyDb = createDatabase({ url: stack.notifyScratch.url, schema: NOTIFY_SCHEMA, poolMax: 12 });
    stack.notifyDb = notifyDb;
    await migrateToLatest(notifyDb, NOTIFY_SCHEMA, migrations);

    const nc = await connect({ servers: natsUrl });
    stack.nc = nc;
    await declareEventsStream(await nc.jetstreamManager(), namespace, { replicas: 1 });
    const relay = startOutboxRelay({
      db: notifyDb,
      js: nc.jetstream(),
      logger,
      pollIntervalMs: 200,
      // Rows are kept (notify's projector removes them); no republish within a test.
      republishAfterMs: 600_000,
    });
    stack.relay = relay;
    const events = createEventOutbox({ namespace, kick: () => relay.kick() });
    const usageStore = createUsageStore(notifyDb);
    const now: { value: Date; read?: () => Date } = { value: start };
    const clock = () => (now.read ? now.read() : now.value);
    const instrumentation = createGrpcInstrumentation(logger, new Registry());
    stack.grpc = await startGrpcServer({
      host: "127.0.0.1",
      port: 0,
      instrumentation,
      services: [
        {
          definition: TenantServiceService,
          implementation: instrumentService(
            TenantServiceService,
            createTenantService({
              db: notifyDb,
              tenants: createTenantRepository(notifyDb),
              events,
              usage: usageStore,
              clock,
              idempotency: defaultIdempotencyOptions,
            }),
            instrumentation,
          ),
        },
        {
          definition: UsageServiceService,
          implementation: instrumentService(
            UsageServiceService,
            createUsageService({ db: notifyDb, usage: usageStore, events, clock }),
            instrumentation,
          ),
        },
      ],
    });
    const grpcAddress = `127.0.0.1:${stack.grpc.port}`;

    stack.certs = await createTestCertificates();
    stack.webhooks = await startServiceProcess({
      name: "webhooks",
      entry: webhooksEntry,
      env: {
        DATABASE_URL: stack.webhooksScratch.url,
        SECRETS_KEY: randomBytes(32).toString("base64"),
        NATS_URL: natsUrl,
        NATS_NAMESPACE: namespace,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
        WEBHOOKS_ALLOWED_PORTS: "1-65535",
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: "0",
        METRICS_PORT: "0",
        OUTBOX_POLL_INTERVAL: "200ms",
        NODE_EXTRA_CA_CERTS: stack.certs.caPath,
      },
      timeoutMs: 60_000,
    });
    // The webhooks service's own search_path: its delivery history lives in webhooks_history.
    stack.webhooksDb = createDatabase({
      url: stack.webhooksScratch.url,
      schema: "webhooks",
      searchPath: ["webhooks_history", "webhooks"],
      poolMax: 2,
    });
    const webhooksClient = new WebhookServiceClient(
      `127.0.0.1:${stack.webhooks.listening.grpcPort as number}`,
      credentials.createInsecure(),
    );
    stack.clients.push(webhooksClient);

    const newUsageClient = () => {
      // Each client its own connection (no shared subchannel): concurrent clients, not one channel.
      const client = new UsageServiceClient(grpcAddress, credentials.createInsecure(), {
        "grpc.use_local_subchannel_pool": 1,
      });
      stack.clients.push(client);
      return client;
    };
    const tenants = new TenantServiceClient(grpcAddress, credentials.createInsecure());
    stack.clients.push(tenants);
    const certs = stack.certs;
    return {
      notifyDb,
      webhooksDb: stack.webhooksDb,
      namespace,
      grpcAddress,
      now,
      tenants,
      usage: newUsageClient(),
      newUsageClient,
      async subscribe(tenantId) {
        const receiver = await startReceiver(certs);
        stack.receivers.push(receiver);
        const created = await unary<CreateEndpointResponse>((cb) =>
          webhooksClient.createEndpoint(
            {
              tenantId,
              url: receiver.url,
              description: "usage thresholds",
              eventTypes: ["usage.threshold_crossed"],
              idempotencyKey: `sub-${tenantId}`,
            },
            cb,
          ),
        );
        return { receiver, secret: created.secret };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
