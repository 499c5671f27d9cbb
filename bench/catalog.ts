/**
 * npm run bench:catalog — GET /v1/pets?limit=20 through the microservice path against a
 * single-process baseline, on the same data, in the same run.
 *
 *   microservices: autocannon -> gateway (auth, routing, errors) -> gRPC -> catalog -> Postgres
 *   baseline:      autocannon -> one Koa process running the same SQL with pg
 *
 * Runs alternate A B A B to share the machine's noise. Target: the microservice path keeps at
 * least 60% of the baseline's throughput. Env: BENCH_CONNECTIONS (default 32), BENCH_DURATION
 * seconds per run (default 8), BENCH_PETS (default 10000).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { compareAlternating, recordResult } from "./load-generator.js";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..", "..");
const entry = (service: string, file = "main.js") => join(repo, "services", service, "dist", "src", file);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const durationSeconds = Number(process.env.BENCH_DURATION ?? 8);
const petCount = Number(process.env.BENCH_PETS ?? 10_000);

async function main() {
  const scratch = await createScratchDatabase("benchcatalog");
  const processes: ServiceProcess[] = [];
  try {
    const common = { DATABASE_URL: scratch.url, METRICS_PORT: "0" };
    const catalog = await startServiceProcess({
      name: "catalog",
      entry: entry("catalog"),
      env: { ...common, GRPC_HOST: "127.0.0.1", GRPC_PORT: "0", LOG_LEVEL: "warn" },
    });
    processes.push(catalog);
    const db = new pg.Client({ connectionString: scratch.url });
    await db.connect();
    await db.query(
      `insert into catalog.pets (name, category_id, status)
       select 'pet-' || i, 1 + i % 50, (array['available','pending','sold'])[1 + i % 3]
       from generate_series(1, $1) as i`,
      [petCount],
    );
    await db.query("analyze catalog.pets");
    await db.end();
    const { stdout } = await run(
      process.execPath,
      [entry("gateway", "cli/admin.js"), "key", "create", "--name", "bench"],
      {
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: scratch.url },
      },
    );
    const key = (JSON.parse(stdout) as { key: string }).key;
    const gateway = await startServiceProcess({
      name: "gateway",
      entry: entry("gateway"),
      env: {
        ...common,
        HOST: "127.0.0.1",
        PORT: "0",
        CATALOG_ADDR: `127.0.0.1:${catalog.listening.grpcPort as number}`,
        LOG_LEVEL: "warn",
        // High enough never to refuse: the bookkeeping is measured, not the refusals.
        RATE_LIMIT_PER_SECOND: "10000000",
        RATE_LIMIT_BURST: "10000000",
      },
    });
    processes.push(gateway);
    const baseline = await startServiceProcess({
      name: "catalog-baseline",
      entry: join(repo, "bench", "dist", "catalog-baseline-koa.js"),
      env: { DATABASE_URL: scratch.url },
    });
    processes.push(baseline);

    const path = "/v1/pets?limit=20";
    const serviceUrl = `http://127.0.0.1:${gateway.listening.port as number}${path}`;
    const baseUrl = `http://127.0.0.1:${baseline.listening.port as number}${path}`;
    const headers = { authorization: `Bearer ${key}` };
    const [viaServices, viaBaseline] = await Promise.all([
      fetch(serviceUrl, { headers }).then((r) => r.json()),
      fetch(baseUrl).then((r) => r.json()),
    ]);
    if (JSON.stringify(viaServices) !== JSON.stringify(viaBaseline)) {
      throw new Error("the two paths answer different bodies; the comparison would be unfair");
    }

    const result = await compareAlternating(
      { label: "baseline (Koa + SQL, one process)", url: baseUrl },
      { label: "microservices (gateway -> gRPC -> catalog)", url: serviceUrl, headers },
      { connections, durationSeconds },
    );
    const { baseline: base, candidate: services, ratio } = result;
    console.log(
      `microservice path keeps ${(ratio * 100).toFixed(1)}% of baseline throughput; ` +
        `p99 ${services.p99Ms.toFixed(2)} ms vs ${base.p99Ms.toFixed(2)} ms; ` +
        `target >= 60% -> ${ratio >= 0.6 ? "PASS" : "BELOW TARGET"}`,
    );
    await recordResult(repo, "catalog", {
      bench: "catalog",
      connections,
      durationSeconds,
      pets: petCount,
      baseline: base,
      services,
      ratio,
    });
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await scratch.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
