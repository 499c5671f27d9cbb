import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..", "..", "..");
const entry = (service: string, file = "main.js") => join(repo, "services", service, "dist", "src", file);

/** One gateway over `count` catalog processes on a scratch database, with an API key and a client. */
export interface CatalogReplicas {
  scratch: ScratchDatabase;
  /** The catalog processes, in CATALOG_ADDR's order; a test may replace one it restarted. */
  catalogs: ServiceProcess[];
  gateway: ServiceProcess;
  /** The gateway's base URL. */
  url: string;
  /** A catalog API key (no tenants). */
  key: string;
  /** A client on the scratch database (the catalog's schema is `catalog`). */
  database: pg.Client;
  /** Starts a catalog process again on `grpcPort` (its old port, after a kill). */
  startCatalog(name: string, grpcPort: number): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

/**
 * For the balancing and replica-kill tests: `count` catalog processes started one after the other
 * (the first migrates the scratch database), then a gateway whose CATALOG_ADDR names them all
 * (notify and webhooks point where nothing listens: these tests call only the catalog), with no
 * rate limit in the way.
 */
export async function startCatalogReplicas(options: {
  prefix: string;
  count: number;
  catalogEnv?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
}): Promise<CatalogReplicas> {
  const scratch = await createScratchDatabase(options.prefix);
  const env = {
    DATABASE_URL: scratch.url,
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    ...options.catalogEnv,
  };
  const startCatalog = (name: string, grpcPort: number) =>
    startServiceProcess({ name, entry: entry("catalog"), env: { ...env, GRPC_PORT: String(grpcPort) } });
  const catalogs: ServiceProcess[] = [];
  let gateway: ServiceProcess | undefined;
  const stopAll = () => Promise.all([gateway?.stop(), ...catalogs.map((c) => c.stop())]);
  try {
    for (let i = 0; i < options.count; i++) catalogs.push(await startCatalog(`catalog-${i}`, 0));
    gateway = await startServiceProcess({
      name: "gateway",
      entry: entry("gateway"),
      env: {
        DATABASE_URL: scratch.url,
        PORT: "0",
        METRICS_PORT: "0",
        CATALOG_ADDR: catalogs.map((c) => `127.0.0.1:${c.listening.grpcPort as number}`).join(","),
        NOTIFY_ADDR: "127.0.0.1:9",
        WEBHOOKS_ADDR: "127.0.0.1:9",
        RATE_LIMIT_PER_SECOND: "100000",
        RATE_LIMIT_BURST: "100000",
        ...options.gatewayEnv,
      },
    });
  } catch (error) {
    await stopAll();
    await scratch.drop();
    throw error;
  }
  const { stdout } = await run(process.execPath, [entry("gateway", "cli/admin.js"), "key", "create", "--name", "k"], {
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: scratch.url },
  });
  const database = new pg.Client({ connectionString: scratch.url });
  await database.connect();
  const replicas: CatalogReplicas = {
    scratch,
    catalogs,
    gateway,
    url: `http://127.0.0.1:${gateway.listening.port as number}`,
    key: (JSON.parse(stdout) as { key: string }).key,
    database,
    startCatalog,
    async stop() {
      await database.end();
      await stopAll();
      await scratch.drop();
    },
  };
  return replicas;
}
