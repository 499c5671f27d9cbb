/**
 * `npm start`: the whole stack as local processes — catalog, notify, webhooks and the gateway —
 * over Postgres and NATS (found, or started: see infrastructure.ts). Ctrl-C stops everything.
 *
 * Environment (all optional):
 *   DATABASE_URL, NATS_URL       use these servers instead of looking for / starting local ones
 *   PORT                         gateway HTTP port (8080)
 *   CATALOG_GRPC_PORT, NOTIFY_GRPC_PORT, WEBHOOKS_GRPC_PORT   (50051, 50052, 50053)
 *   GATEWAY_METRICS_PORT, CATALOG_METRICS_PORT, NOTIFY_METRICS_PORT, WEBHOOKS_METRICS_PORT
 *                                (9464, 9465, 9466, 9467)
 *   SECRETS_KEY                  32 bytes, base64; else generated once into the data dir
 *   STACK_DATA_DIR               where local state lives (<repo>/.data)
 *   STACK_POSTGRES_PROBE_URL     the local Postgres to look for (postgres://postgres@127.0.0.1:5432/postgres)
 *   STACK_EMBEDDED_PG_PORT       port of the embedded Postgres fallback (54329)
 *   STACK_NATS_PORT              port of the nats-server fallback (4223)
 *   LOG_LEVEL                    passed to every service (info)
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { provisionNats, provisionPostgres, provisionSecretsKey, type Provisioned } from "./infrastructure.js";
import { startServiceProcess, type ServiceProcess } from "./service-process.js";

const repo = join(import.meta.dirname, "..", "..", "..", "..");
const env = process.env;
const port = (name: string, fallback: number) => env[name] ?? String(fallback);
const say = (line: string) => process.stdout.write(`[stack] ${line}\n`);

async function main(): Promise<void> {
  const dataDir = env.STACK_DATA_DIR ?? join(repo, ".data");
  await mkdir(dataDir, { recursive: true });
  const infrastructure: Provisioned[] = [];
  const services: ServiceProcess[] = [];
  let stopping = false;

  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say("stopping");
    await Promise.all(services.reverse().map((s) => s.stop()));
    for (const item of infrastructure.reverse()) await item.stop().catch(() => undefined);
    process.exit(code);
  };
  process.on("SIGINT", () => void stopAll(0));
  process.on("SIGTERM", () => void stopAll(0));

  try {
    const postgres = await provisionPostgres({
      databaseUrl: env.DATABASE_URL,
      probeUrl: env.STACK_POSTGRES_PROBE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
      dataDir,
      embeddedPort: Number(env.STACK_EMBEDDED_PG_PORT ?? 54329),
      log: say,
    });
    infrastructure.push(postgres);
    say(`Postgres: ${postgres.source}`);
    const nats = await provisionNats({
      natsUrl: env.NATS_URL,
      dataDir,
      fallbackPort: Number(env.STACK_NATS_PORT ?? 4223),
      log: say,
    });
    if (nats) {
      infrastructure.push(nats);
      say(`NATS: ${nats.source}`);
    }
    const secretsKey = await provisionSecretsKey(env.SECRETS_KEY, dataDir);

    const common: Record<string, string> = {
      DATABASE_URL: postgres.url,
      SECRETS_KEY: secretsKey,
      LOG_LEVEL: env.LOG_LEVEL ?? "info",
      ...(nats ? { NATS_URL: nats.url } : {}),
    };
    const entry = (service: string) => join(repo, "services", service, "dist", "src", "main.js");
    const start = async (name: string, extra: Record<string, string>) => {
      const started = await startServiceProcess({
        name,
        entry: entry(name),
        env: { ...common, ...extra },
        inheritOutput: true,
      });
      services.push(started);
      void started.exited.then((code) => {
        if (stopping) return;
        say(`${name} exited (${code}); stopping the stack`);
        void stopAll(1);
      });
      return started;
    };
    const [catalog, notify] = await Promise.all([
      start("catalog", {
        GRPC_PORT: port("CATALOG_GRPC_PORT", 50051),
        METRICS_PORT: port("CATALOG_METRICS_PORT", 9465),
      }),
      start("notify", { GRPC_PORT: port("NOTIFY_GRPC_PORT", 50052), METRICS_PORT: port("NOTIFY_METRICS_PORT", 9466) }),
      start("webhooks", {
        GRPC_PORT: port("WEBHOOKS_GRPC_PORT", 50053),
        METRICS_PORT: port("WEBHOOKS_METRICS_PORT", 9467),
      }),
    ]);
    const addresses = {
      CATALOG_ADDR: `127.0.0.1:${catalog.listening.grpcPort as number}`,
      NOTIFY_ADDR: `127.0.0.1:${notify.listening.grpcPort as number}`,
    };
    const gateway = await start("gateway", {
      ...addresses,
      PORT: port("PORT", 8080),
      METRICS_PORT: port("GATEWAY_METRICS_PORT", 9464),
    });
    // The admin CLI reads this when DATABASE_URL / NOTIFY_ADDR are not set.
    const stackEnv = { DATABASE_URL: postgres.url, ...addresses, ...(nats ? { NATS_URL: nats.url } : {}) };
    await writeFile(
      join(dataDir, "stack.env"),
      Object.entries(stackEnv)
        .map(([k, v]) => `${k}=${v}`)
        .join("\n") + "\n",
    );
    say(`Gateway ready at http://127.0.0.1:${gateway.listening.port as number}`);
    say("Create an API key: npm run -s admin -- key create --name me");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/EADDRINUSE/.test(message)) {
      const busy = /EADDRINUSE[^\d]*(?:[\d.]+:)?(\d+)/.exec(message)?.[1];
      say(
        `port ${busy ?? "(see above)"} is already in use: stop what uses it or move the service (PORT, *_GRPC_PORT, *_METRICS_PORT)`,
      );
    } else {
      say(`start-up failed: ${message}`);
    }
    await stopAll(1);
  }
}

void main();
