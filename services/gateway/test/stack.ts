import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..", "..", "..");
const entry = (service: string, file = "main.js") => join(repo, "services", service, "dist", "src", file);

export interface TestStack {
  scratch: ScratchDatabase;
  /** The run's NATS_NAMESPACE (its streams are `${natsNamespace}EVENTS`, ...). */
  natsNamespace: string;
  catalog: ServiceProcess;
  notify: ServiceProcess;
  webhooks: ServiceProcess;
  gateway: ServiceProcess;
  url: string;
  metricsUrl: string;
  /** Runs the admin CLI against this stack's database; resolves with its parsed JSON output. */
  admin(...args: string[]): Promise<Record<string, unknown>>;
  startCatalog(): Promise<ServiceProcess>;
  /** Another catalog replica on the same database, on its own port; stopped with the stack. */
  startCatalogReplica(env?: Record<string, string>): Promise<ServiceProcess>;
  /** Starts notify again on the same gRPC port (after a test stopped or killed it). */
  restartNotify(): Promise<ServiceProcess>;
  /** Another notify replica on the same database and event bus, on its own port; stopped with the stack. */
  startNotify(env?: Record<string, string>): Promise<ServiceProcess>;
  /**
   * Another gateway replica over the same services and database; stopped with the stack. It calls
   * the stack's catalog, notify and webhooks unless `env` names others: `CATALOG_ADDR:
   * grpcAddresses(a, b)` balances its catalog calls over two processes (round_robin).
   */
  startGateway(env?: Record<string, string>): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

/** The `*_ADDR` value naming these gRPC processes: `127.0.0.1:<port>,127.0.0.1:<port>`. */
export function grpcAddresses(...processes: ServiceProcess[]): string {
  return processes.map((p) => `127.0.0.1:${p.listening.grpcPort as number}`).join(",");
}

/**
 * catalog, notify, webhooks and gateway as separate processes over a scratch database, on free
 * ports; webhooks with its own NATS namespace (its streams are deleted at stop) and
 * WEBHOOKS_ALLOW_PRIVATE_TARGETS=true and WEBHOOKS_ALLOWED_PORTS=1-65535 unless `extraWebhooksEnv` says otherwise.
 */
export async function startTestStack(
  extraGatewayEnv: Record<string, string> = {},
  extraNotifyEnv: Record<string, string> = {},
  extraWebhooksEnv: Record<string, string> = {},
): Promise<TestStack> {
  const scratch = await createScratchDatabase("gw");
  const natsNamespace = newNatsNamespace();
  const common = {
    DATABASE_URL: scratch.url,
    METRICS_PORT: "0",
    METRICS_HOST: "127.0.0.1",
    LOG_LEVEL: "debug",
    // notify and webhooks share the run's event bus.
    NATS_URL: testNatsUrl(),
    NATS_NAMESPACE: natsNamespace,
  };
  // notify seals the tenants' WhatsApp tokens with it, webhooks its endpoint secrets.
  const secretsKey = randomBytes(32).toString("base64");
  let catalogPort = 0;
  const startCatalog = async () => {
    const started = await startServiceProcess({
      name: "catalog",
      entry: entry("catalog"),
      env: { ...common, GRPC_HOST: "127.0.0.1", GRPC_PORT: String(catalogPort) },
    });
    catalogPort = started.listening.grpcPort as number;
    return started;
  };
  const stack: Partial<TestStack> & { scratch: ScratchDatabase } = { scratch };
  const replicas: ServiceProcess[] = [];
  const startGateway = async (env: Record<string, string> = {}) => {
    const started = await startServiceProcess({
      name: "gateway",
      entry: entry("gateway"),
      env: {
        ...common,
        HOST: "127.0.0.1",
        PORT: "0",
        CATALOG_ADDR: `127.0.0.1:${catalogPort}`,
        NOTIFY_ADDR: `127.0.0.1:${stack.notify!.listening.grpcPort as number}`,
        WEBHOOKS_ADDR: `127.0.0.1:${stack.webhooks!.listening.grpcPort as number}`,
        UPSTREAM_TIMEOUT: "2s",
        // Tests send bursts; the rate-limit tests set their own limits.
        RATE_LIMIT_PER_SECOND: "100000",
        RATE_LIMIT_BURST: "100000",
        ...env,
      },
    });
    replicas.push(started);
    return started;
  };
  try {
    [stack.catalog, stack.notify, stack.webhooks] = await Promise.all([
      startCatalog(),
      startServiceProcess({
        name: "notify",
        entry: entry("notify"),
        env: { ...common, SECRETS_KEY: secretsKey, GRPC_HOST: "127.0.0.1", GRPC_PORT: "0", ...extraNotifyEnv },
      }),
      startServiceProcess({
        name: "webhooks",
        entry: entry("webhooks"),
        env: {
          ...common,
          GRPC_HOST: "127.0.0.1",
          GRPC_PORT: "0",
          SECRETS_KEY: secretsKey,
          WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
          // Tests point endpoints at random ports and at port 9 (nothing listens there).
          WEBHOOKS_ALLOWED_PORTS: "1-65535",
          ...extraWebhooksEnv,
        },
      }),
    ]);
    stack.gateway = await startGateway(extraGatewayEnv);
  } catch (error) {
    await Promise.all([stack.catalog?.stop("SIGKILL"), stack.notify?.stop("SIGKILL"), stack.webhooks?.stop("SIGKILL")]);
    await deleteNamespaceStreams(natsNamespace);
    await scratch.drop();
    throw error;
  }
  const gateway = stack.gateway;
  return {
    ...(stack as TestStack),
    natsNamespace,
    url: `http://127.0.0.1:${gateway.listening.port as number}`,
    metricsUrl: `http://127.0.0.1:${gateway.listening.metricsPort as number}/metrics`,
    startCatalog,
    startGateway,
    async startCatalogReplica(env = {}) {
      const started = await startServiceProcess({
        name: "catalog",
        entry: entry("catalog"),
        env: { ...common, GRPC_HOST: "127.0.0.1", GRPC_PORT: "0", ...env },
      });
      replicas.push(started);
      return started;
    },
    async startNotify(env = {}) {
      const started = await startServiceProcess({
        name: "notify",
        entry: entry("notify"),
        env: { ...common, SECRETS_KEY: secretsKey, GRPC_HOST: "127.0.0.1", GRPC_PORT: "0", ...extraNotifyEnv, ...env },
      });
      replicas.push(started);
      return started;
    },
    async restartNotify(this: TestStack) {
      this.notify = await startServiceProcess({
        name: "notify",
        entry: entry("notify"),
        env: {
          ...common,
          SECRETS_KEY: secretsKey,
          GRPC_HOST: "127.0.0.1",
          GRPC_PORT: String(this.notify.listening.grpcPort),
          ...extraNotifyEnv,
        },
      });
      return this.notify;
    },
    async admin(...args) {
      const { stdout } = await run(process.execPath, [entry("gateway", "cli/admin.js"), ...args], {
        env: {
          PATH: process.env.PATH ?? "",
          DATABASE_URL: scratch.url,
          NOTIFY_ADDR: `127.0.0.1:${stack.notify!.listening.grpcPort as number}`,
          WEBHOOKS_ADDR: `127.0.0.1:${stack.webhooks!.listening.grpcPort as number}`,
        },
      });
      return JSON.parse(stdout) as Record<string, unknown>;
    },
    async stop(this: TestStack) {
      await Promise.all([
        ...replicas.map((r) => r.stop()),
        this.catalog.stop(),
        this.notify.stop(),
        this.webhooks.stop(),
      ]);
      await deleteNamespaceStreams(natsNamespace);
      await scratch.drop();
    },
  };
}
