import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "@platform/local-stack/embedded-postgres";
import { ensureDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..", "..", "..");
const entry = (service: string, file = "main.js") => join(repo, "services", service, "dist", "src", file);

/**
 * A Postgres of the test's own (embedded, on a port the kernel chose) is stopped and started again under
 * running services: requests answer 503 while it is down, and everything recovers by itself —
 * pools reconnect and the gateway's key-change listener resubscribes.
 */
describe("a Postgres restart", () => {
  let dataDir: string;
  let postgres: EmbeddedPostgres;
  let url: string;
  const processes: ServiceProcess[] = [];
  let gatewayUrl: string;
  let key: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "pg-restart-"));
    postgres = await startEmbeddedPostgres({ databaseDir: join(dataDir, "pg") });
    url = await ensureDatabase(postgres.url, "platform");
    const common = { DATABASE_URL: url, METRICS_PORT: "0", LOG_LEVEL: "info" };
    const catalog = await startServiceProcess({
      name: "catalog",
      entry: entry("catalog"),
      env: { ...common, GRPC_HOST: "127.0.0.1", GRPC_PORT: "0" },
    });
    processes.push(catalog);
    const gateway = await startServiceProcess({
      name: "gateway",
      entry: entry("gateway"),
      env: {
        ...common,
        HOST: "127.0.0.1",
        PORT: "0",
        CATALOG_ADDR: `127.0.0.1:${catalog.listening.grpcPort as number}`,
        NOTIFY_ADDR: "127.0.0.1:1",
        API_KEY_CACHE_TTL: "1h",
      },
    });
    processes.push(gateway);
    gatewayUrl = `http://127.0.0.1:${gateway.listening.port as number}`;
    const { stdout } = await run(process.execPath, [entry("gateway", "cli/admin.js"), "key", "create"], {
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: url },
    });
    key = (JSON.parse(stdout) as { key: string }).key;
  }, 90_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await postgres?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const list = () => fetch(`${gatewayUrl}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });

  it("answers 503 while Postgres is down and recovers by itself, revocations included", async () => {
    expect((await list()).status).toBe(200); // key now cached
    await postgres.stop();
    const down = await list();
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ code: "unavailable", status: 503 });
    expect(down.headers.get("retry-after")).toBe("1");

    await postgres.start(); // the same port: the services keep their URL
    await expect.poll(async () => (await list()).status, { timeout: 20_000, interval: 250 }).toBe(200);

    // The listener has resubscribed: a revocation made now is seen at once despite the 1 h cache.
    const id = `key_${/^sk_live_([0-9a-f]{24})_/.exec(key)![1]}`;
    await run(process.execPath, [entry("gateway", "cli/admin.js"), "key", "revoke", "--id", id], {
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: url },
    });
    await expect.poll(async () => (await list()).status, { timeout: 5_000, interval: 100 }).toBe(401);
    for (const p of processes) expect(p.child.exitCode).toBeNull();
  }, 60_000);
});
