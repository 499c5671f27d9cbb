import { newNatsNamespace } from "@platform/local-stack/nats-namespace";
/**
 * A webhooks service process for cross-process tests: its own scratch database and NATS
 * namespace, private targets and ports 1024-65535 allowed, retries a second apart; and what a test needs around it (a
 * knex handle on its schema, an EventService client, a NATS connection, endpoint seeding).
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { EventServiceClient, type PublishEventRequest, type PublishEventResponse } from "@platform/proto/webhooks/v1";
import { createDatabase, type Knex } from "@platform/service-kit/postgres";
import { connect, type NatsConnection } from "nats";
import { WEBHOOKS_SCHEMA, WEBHOOKS_SEARCH_PATH } from "../src/config.js";
import { currentApiVersion } from "../src/domain/endpoint.js";
import { newEndpointId } from "../src/domain/ids.js";
import { generateSigningSecret, parseSecretsKey, sealSecret, type SecretKeyRing } from "../src/domain/secret-box.js";
import { deleteStreams, streamNames, type StreamNames } from "../src/events/streams.js";
import { sampleSnapshot } from "./sample-snapshot.js";

const entry = join(import.meta.dirname, "..", "dist", "src", "main.js");

export interface WebhooksUnderTest {
  /** The current process (a restart replaces it). */
  readonly process: ServiceProcess;
  db: Knex;
  nc: NatsConnection;
  names: StreamNames;
  ring: SecretKeyRing;
  publish(request: Partial<PublishEventRequest> & { tenantId: string; type: string }): Promise<PublishEventResponse>;
  seedEndpoint(endpoint: SeedEndpoint): Promise<SeededEndpoint>;
  /**
   * Stops the process with `signal` (SIGKILL: a crash) and starts a new one on the same database
   * and namespace, with `env` added to its environment.
   */
  restart(signal?: NodeJS.Signals, env?: Record<string, string>): Promise<void>;
  /** Another process on the same database and namespace (a second replica); stopped with stop(). */
  startAnother(env?: Record<string, string>): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

export interface SeedEndpoint {
  tenantId: string;
  url: string;
  eventTypes: string[];
  paused?: boolean;
  /** A rotation: the previous secret and when it stops signing. */
  previous?: { secret: string; expiresAt: Date };
}

export interface SeededEndpoint {
  id: string;
  secret: string;
}

export async function startWebhooks(options: {
  name: string;
  /** NODE_EXTRA_CA_CERTS for the process (a receiver CA it trusts), or none. */
  caPath?: string;
  env?: Record<string, string>;
  /** Another NATS than NATS_URL's (or the local one); servers of a cluster comma-separated. */
  natsUrl?: string;
  /** Another Postgres server (a URL of its) for the scratch database than the local one. */
  postgresUrl?: string;
}): Promise<WebhooksUnderTest> {
  const scratch: ScratchDatabase = await createScratchDatabase(options.name, options.postgresUrl);
  const namespace = newNatsNamespace();
  const names = streamNames(namespace);
  const secretsKey = randomBytes(32).toString("base64");
  const ring = parseSecretsKey(secretsKey);
  const natsUrl = options.natsUrl ?? process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const nc = await connect({ servers: natsUrl.split(","), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  let proc: ServiceProcess | undefined;
  const others: ServiceProcess[] = [];
  let db: Knex | undefined;
  let client: EventServiceClient | undefined;
  const stop = async () => {
    client?.close();
    await Promise.all([proc?.stop(), ...others.map((other) => other.stop())]);
    await db?.destroy();
    // Best effort, all of it: a NATS that was just restarted may not answer JetStream requests yet
    // (the jetstreamManager() call itself asks it), and a private server's store is removed anyway.
    await nc
      .jetstreamManager()
      .then((jsm) => deleteStreams(jsm, names))
      .catch(() => undefined);
    await nc.close();
    await scratch.drop();
  };
  const spawn = (env: Record<string, string> = {}) =>
    startServiceProcess({
      name: "webhooks",
      entry,
      env: {
        DATABASE_URL: scratch.url,
        SECRETS_KEY: secretsKey,
        NATS_URL: natsUrl,
        NATS_NAMESPACE: namespace,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
        // Receivers listen on random ports: the port rule is not lifted by the flag above.
        WEBHOOKS_ALLOWED_PORTS: "1024-65535",
        WEBHOOKS_RETRY_DELAYS: "1s,1s,1s,1s,1s,1s,1s",
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: "0",
        METRICS_PORT: "0",
        OUTBOX_POLL_INTERVAL: "200ms",
        ...(options.caPath ? { NODE_EXTRA_CA_CERTS: options.caPath } : {}),
        ...options.env,
        ...env,
      },
      timeoutMs: 60_000,
    });
  const launch = async (env?: Record<string, string>) => {
    proc = await spawn(env);
    client?.close();
    client = new EventServiceClient(`127.0.0.1:${proc.listening.grpcPort as number}`, credentials.createInsecure());
  };
  try {
    await launch();
    db = createDatabase({ url: scratch.url, schema: WEBHOOKS_SCHEMA, searchPath: WEBHOOKS_SEARCH_PATH, poolMax: 4 });
  } catch (error) {
    await stop();
    throw error;
  }
  const knex = db;
  return {
    get process() {
      return proc!;
    },
    db: knex,
    nc,
    names,
    ring,
    publish: (request) =>
      new Promise((resolve, reject) =>
        client!.publishEvent(
          { dataJson: sampleSnapshot(request.type), eventId: "", occurredAt: "", ...request },
          (error: Error | null, response?: PublishEventResponse) => (error ? reject(error) : resolve(response!)),
        ),
      ),
    async restart(signal = "SIGTERM", env) {
      await proc?.stop(signal);
      await launch(env);
    },
    async startAnother(env) {
      const other = await spawn(env);
      others.push(other);
      return other;
    },
    async seedEndpoint(endpoint) {
      const id = newEndpointId();
      const secret = generateSigningSecret();
      await knex("endpoints").insert({
        id,
        tenant_id: endpoint.tenantId,
        url: endpoint.url,
        description: "test receiver",
        event_types: endpoint.eventTypes,
        api_version: currentApiVersion,
        secret_sealed: sealSecret(ring, secret, id),
        previous_secret_sealed: endpoint.previous ? sealSecret(ring, endpoint.previous.secret, id) : null,
        previous_secret_expires_at: endpoint.previous?.expiresAt ?? null,
        paused: endpoint.paused ?? false,
      });
      return { id, secret };
    },
    stop,
  };
}
