import { fork, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import {
  type CreateEndpointResponse,
  type EventServiceClient,
  type PublishEventResponse,
  type WebhookServiceClient,
} from "@platform/proto/webhooks/v1";

/**
 * Forks a receivers script of bench/ (webhooks-receivers.js, webhooks-retry-receivers.js) with
 * RECEIVERS receivers on the given TLS key and certificate, and waits for the ports it announces.
 */
export async function forkReceivers(
  script: string,
  options: { receivers: number; keyPath: string; certPath: string; env?: Record<string, string> },
): Promise<{ child: ChildProcess; ports: number[] }> {
  const child = fork(join(import.meta.dirname, script), [], {
    env: {
      PATH: process.env.PATH ?? "",
      RECEIVERS: String(options.receivers),
      RECEIVER_KEY: options.keyPath,
      RECEIVER_CERT: options.certPath,
      ...options.env,
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ports = await new Promise<number[]>((resolve, reject) => {
    child.once("message", (m: { type: string; ports: number[] }) => resolve(m.ports));
    child.once("exit", (code) => reject(new Error(`the receivers exited (${code})`)));
  });
  return { child, ports };
}

/** One endpoint per receiver port, through WebhookService (booking.* events), in port order. */
export async function createReceiverEndpoints(
  hooks: WebhookServiceClient,
  tenant: string,
  ports: readonly number[],
): Promise<CreateEndpointResponse[]> {
  const created: CreateEndpointResponse[] = [];
  for (const port of ports) {
    created.push(
      await new Promise<CreateEndpointResponse>((resolve, reject) =>
        hooks.createEndpoint(
          {
            tenantId: tenant,
            url: `https://127.0.0.1:${port}/hook`,
            description: "bench receiver",
            eventTypes: ["booking.*"],
            idempotencyKey: `bench-${port}`,
          },
          (error, answer) => (error ? reject(error) : resolve(answer)),
        ),
      ),
    );
  }
  return created;
}

/** The data of every bench event. */
export const bookingData = JSON.stringify({
  booking_id: "bk_bench",
  starts_at: "2026-12-01T09:00:00Z",
  status: "confirmed",
});

/** Publishes a booking.created event of this id, through the clients in turn. */
export function bookingPublisher(
  clients: readonly EventServiceClient[],
  tenant: string,
): (eventId: string) => Promise<PublishEventResponse> {
  let turn = 0;
  return (eventId) =>
    new Promise<PublishEventResponse>((resolve, reject) =>
      clients[turn++ % clients.length]!.publishEvent(
        { tenantId: tenant, type: "booking.created", dataJson: bookingData, eventId, occurredAt: "" },
        (e, r) => (e ? reject(e) : resolve(r)),
      ),
    );
}

/** The WEBHOOKS_* variables of the bench's own environment: passed on to the service. */
export function passedWebhooksSettings(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name, value]) => name.startsWith("WEBHOOKS_") && value !== undefined),
  ) as Record<string, string>;
}

/**
 * The webhooks service's environment in a bench: its database, NATS namespace and secrets key,
 * ports chosen by the system, receivers on this machine trusted and allowed, then `defaults`, then
 * the bench's own WEBHOOKS_* variables over all of it.
 */
export function webhooksServiceEnv(options: {
  databaseUrl: string;
  secretsKey: string;
  natsUrl: string;
  namespace: string;
  logLevel: string;
  caPath: string;
  defaults?: Record<string, string>;
}): Record<string, string> {
  return {
    DATABASE_URL: options.databaseUrl,
    SECRETS_KEY: options.secretsKey,
    NATS_URL: options.natsUrl,
    NATS_NAMESPACE: options.namespace,
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    LOG_LEVEL: options.logLevel,
    NODE_EXTRA_CA_CERTS: options.caPath,
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
    WEBHOOKS_ALLOWED_PORTS: "1024-65535",
    ...options.defaults,
    ...passedWebhooksSettings(),
  };
}
