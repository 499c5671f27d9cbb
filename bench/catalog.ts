/**
 * npm run bench:catalog — GET /v1/pets?limit=20 three ways, on the same data, in the same run:
 *
 *   monolith:      autocannon -> one Koa process running the SQL with pg
 *   floor:         autocannon -> bare Koa -> plain grpc-js unary -> bare grpc-js server -> pg
 *                  (bench/catalog-floor-*.ts: the hop with none of our code)
 *   microservices: autocannon -> gateway (request id, metrics, log, rate limit, auth, routing,
 *                  errors) -> gRPC -> catalog (interceptor, domain, pg on knex's pool) -> Postgres
 *
 * Same rows, same pool sizes (10), same connections. Runs alternate A B C A B C to share the
 * machine's noise; each run also reads the CPU every process spent per request (/proc), and the
 * summary prints the per-round path/floor ratios, by req/s and by CPU per request. Target: the microservice path keeps at least 90% of the floor's
 * throughput (issue 6, item 8); its ratio to the monolith is printed too. Env: BENCH_CONNECTIONS
 * (default 32), BENCH_DURATION seconds per run (default 5), BENCH_ROUNDS (default 6),
 * BENCH_PETS (default 10000), BENCH_CPU_PROF (a directory: write a CPU profile per process).
 *
 * A/B against an earlier build: BENCH_BASELINE_REF=<a commit of main> adds a fourth target, the
 * same gateway -> catalog path as built from that commit (local-stack's release-build.ts), on the same
 * database and key, measured in the same alternation; the summary prints this build's ratio to it.
 * Tracing's cost when off (OTEL_EXPORTER_OTLP_ENDPOINT unset, the default of every run here) is
 * this A/B with BENCH_BASELINE_REF set to the commit before tracing came in.
 *
 * BENCH_TRACING=1 adds another target: a second gateway -> catalog pair of this build with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointed at a local OTLP/HTTP sink (every request traced and
 * exported), in the same alternation; the summary prints its ratio to the untraced path.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { startOtlpReceiver, type OtlpReceiver } from "@platform/local-stack/otlp-receiver";
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { releaseBuild } from "@platform/local-stack/release-build";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { profiled } from "./profiled-env.js";
import { measureAlternating, printTable, recordResult, type LoadResult, type Target } from "./load-generator.js";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..", "..");
const entry = (service: string, file = "main.js") => join(repo, "services", service, "dist", "src", file);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
// Six short rounds rather than two long ones: on a shared 2-core machine one 8 s round's
// path/floor ratio ranged from 0.58 to 0.97 with the same build, so the median needs many pairs.
const durationSeconds = Number(process.env.BENCH_DURATION ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const petCount = Number(process.env.BENCH_PETS ?? 10_000);
const baselineRef = process.env.BENCH_BASELINE_REF;
const tracing = process.env.BENCH_TRACING === "1";

async function main() {
  const scratch = await createScratchDatabase("benchcatalog");
  const processes: ServiceProcess[] = [];
  let sink: OtlpReceiver | undefined;
  try {
    const common = profiled({ DATABASE_URL: scratch.url, METRICS_PORT: "0" });
    const catalog = await startCatalog(entry, common, "catalog");
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
    const gateway = await startGateway(entry, common, "gateway", catalog);
    processes.push(gateway);
    const baseline = await startServiceProcess({
      name: "catalog-baseline",
      entry: join(repo, "bench", "dist", "catalog-baseline-koa.js"),
      env: profiled({ DATABASE_URL: scratch.url }),
    });
    processes.push(baseline);
    const floorGrpc = await startServiceProcess({
      name: "catalog-floor-grpc",
      entry: join(repo, "bench", "dist", "catalog-floor-grpc.js"),
      env: profiled({ DATABASE_URL: scratch.url }),
    });
    processes.push(floorGrpc);
    const floorKoa = await startServiceProcess({
      name: "catalog-floor-koa",
      entry: join(repo, "bench", "dist", "catalog-floor-koa.js"),
      env: profiled({ CATALOG_ADDR: `127.0.0.1:${floorGrpc.listening.grpcPort as number}` }),
    });
    processes.push(floorKoa);

    const path = "/v1/pets?limit=20";
    const url = (p: ServiceProcess) => `http://127.0.0.1:${p.listening.port as number}${path}`;
    const headers = { authorization: `Bearer ${key}` };
    const cpuOf = (...named: [string, ServiceProcess][]) => named.map(([name, p]) => ({ name, pid: p.child.pid! }));
    const monolithTarget: Target = {
      label: "monolith (Koa + SQL, one process)",
      url: url(baseline),
      processes: cpuOf(["koa", baseline]),
    };
    const floorTarget: Target = {
      label: "floor (bare Koa -> grpc-js -> pg)",
      url: url(floorKoa),
      processes: cpuOf(["koa", floorKoa], ["grpc", floorGrpc]),
    };
    const servicesTarget: Target = {
      label: "microservices (gateway -> gRPC -> catalog)",
      url: url(gateway),
      headers,
      processes: cpuOf(["gateway", gateway], ["catalog", catalog]),
    };
    const earlier = baselineRef === undefined ? undefined : await startBaselinePath(baselineRef, scratch.url, key);
    processes.push(...(earlier?.processes ?? []));
    let tracedTarget: Target | undefined;
    if (tracing) {
      sink = await startOtlpReceiver({ keep: false });
      const traced = { ...common, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
      const tracedCatalog = await startCatalog(entry, traced, "catalog-traced");
      processes.push(tracedCatalog);
      const tracedGateway = await startGateway(entry, traced, "gateway-traced", tracedCatalog);
      processes.push(tracedGateway);
      tracedTarget = {
        label: "microservices, traced (OTLP to a local sink)",
        url: url(tracedGateway),
        headers,
        processes: cpuOf(["gateway", tracedGateway], ["catalog", tracedCatalog]),
      };
    }
    const targets = [
      monolithTarget,
      floorTarget,
      servicesTarget,
      ...(earlier ? [earlier.target] : []),
      ...(tracedTarget ? [tracedTarget] : []),
    ];
    const tracedIndex = tracedTarget ? targets.length - 1 : undefined;
    const bodies = await Promise.all(
      targets.map((t) => fetch(t.url, { headers: t.headers ?? {} }).then((r) => r.text())),
    );
    if (new Set(bodies).size !== 1) {
      throw new Error("the paths answer different bodies; the comparison would be unfair");
    }
    const { runs, means } = await measureAlternating(targets, {
      connections,
      durationSeconds,
      rounds,
    });
    const [monolith, floor, services] = means as [LoadResult, LoadResult, LoadResult];
    printTable(runs);
    printTable(means);
    const ratio = services.requestsPerSecond / floor.requestsPerSecond;
    const ratioToMonolith = services.requestsPerSecond / monolith.requestsPerSecond;
    const floorToMonolith = floor.requestsPerSecond / monolith.requestsPerSecond;
    // Per round (each round ran the three back to back): the spread the means hide.
    const n = targets.length;
    const perRound = (
      pick: (monolith: LoadResult, floor: LoadResult, services: LoadResult, baseline?: LoadResult) => number,
    ) =>
      Array.from({ length: rounds }, (_, i) => pick(runs[n * i]!, runs[n * i + 1]!, runs[n * i + 2]!, runs[n * i + 3]));
    const roundRatios = perRound((_, f, s) => s.requestsPerSecond / f.requestsPerSecond);
    // CPU per request summed over each target's processes: floor / path is the throughput ratio
    // the path would reach if CPU were the only limit; it moves far less with the machine's load.
    const cpuPerRequest = (r: LoadResult) => Object.values(r.cpuMsPerRequest ?? {}).reduce((a, b) => a + b, 0);
    const cpuRatios = perRound((_, f, s) => cpuPerRequest(f) / cpuPerRequest(s));
    console.log(
      `microservice path keeps ${(ratio * 100).toFixed(1)}% of the floor's throughput ` +
        `(target >= 90% -> ${ratio >= 0.9 ? "PASS" : "BELOW TARGET"}); ` +
        `${(ratioToMonolith * 100).toFixed(1)}% of the monolith's (floor: ${(floorToMonolith * 100).toFixed(1)}%); ` +
        `p99 ${services.p99Ms.toFixed(2)} ms vs floor ${floor.p99Ms.toFixed(2)} ms, monolith ${monolith.p99Ms.toFixed(2)} ms`,
    );
    console.log(
      `path/floor per round: req/s ${roundRatios.map((r) => r.toFixed(3)).join(" ")} (median ${median(roundRatios).toFixed(3)}); ` +
        `CPU per request floor/path ${cpuRatios.map((r) => r.toFixed(3)).join(" ")} (median ${median(cpuRatios).toFixed(3)})`,
    );
    const ab = earlier && {
      commit: earlier.commit,
      roundRatios: perRound((_, __, s, b) => s.requestsPerSecond / b!.requestsPerSecond),
      cpuRatios: perRound((_, __, s, b) => cpuPerRequest(b!) / cpuPerRequest(s)),
    };
    if (ab) {
      console.log(
        `this build / baseline ${ab.commit.slice(0, 12)} per round: req/s ${ab.roundRatios.map((r) => r.toFixed(3)).join(" ")} ` +
          `(median ${median(ab.roundRatios).toFixed(3)}); CPU per request baseline/this ` +
          `${ab.cpuRatios.map((r) => r.toFixed(3)).join(" ")} (median ${median(ab.cpuRatios).toFixed(3)}); ` +
          `p99 ${services.p99Ms.toFixed(2)} ms vs ${means[3]!.p99Ms.toFixed(2)} ms`,
      );
    }
    const traced = tracedIndex !== undefined && {
      spansExported: sink!.spanCount(),
      roundRatios: Array.from(
        { length: rounds },
        (_, i) => runs[n * i + tracedIndex]!.requestsPerSecond / runs[n * i + 2]!.requestsPerSecond,
      ),
      cpuRatios: Array.from(
        { length: rounds },
        (_, i) => cpuPerRequest(runs[n * i + 2]!) / cpuPerRequest(runs[n * i + tracedIndex]!),
      ),
    };
    if (traced) {
      console.log(
        `traced / untraced path per round: req/s ${traced.roundRatios.map((r) => r.toFixed(3)).join(" ")} ` +
          `(median ${median(traced.roundRatios).toFixed(3)}); CPU per request untraced/traced ` +
          `${traced.cpuRatios.map((r) => r.toFixed(3)).join(" ")} (median ${median(traced.cpuRatios).toFixed(3)}); ` +
          `${traced.spansExported} spans exported`,
      );
    }
    await recordResult(repo, "catalog", {
      bench: "catalog",
      connections,
      durationSeconds,
      rounds,
      pets: petCount,
      monolith,
      floor,
      services,
      ratio,
      ratioToMonolith,
      floorToMonolith,
      roundRatios,
      cpuRatios,
      ...(ab ? { baseline: { ...ab, result: means[3] } } : {}),
      ...(traced ? { traced: { ...traced, result: means[tracedIndex] } } : {}),
      runs,
    });
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await sink?.close();
    await scratch.drop();
  }
}

/** The gateway -> catalog path as built from an earlier commit, on the same database and API key. */
async function startBaselinePath(ref: string, databaseUrl: string, key: string) {
  const build = await releaseBuild(repo, ref, ["catalog", "gateway"], {
    log: (line) => console.error(`[bench] ${line}`),
  });
  const at = (service: string) => build.entry(service);
  const common = profiled({ DATABASE_URL: databaseUrl, METRICS_PORT: "0" });
  const catalog = await startCatalog(at, common, "catalog-baseline-build");
  const gateway = await startGateway(at, common, "gateway-baseline-build", catalog).catch(async (error: unknown) => {
    await catalog.stop();
    throw error;
  });
  const target: Target = {
    label: `microservices @ ${build.commit.slice(0, 12)}`,
    url: `http://127.0.0.1:${gateway.listening.port as number}/v1/pets?limit=20`,
    headers: { authorization: `Bearer ${key}` },
    processes: [
      { name: "gateway", pid: gateway.child.pid! },
      { name: "catalog", pid: catalog.child.pid! },
    ],
  };
  return { commit: build.commit, target, processes: [catalog, gateway] };
}

/** A catalog process of a build (`entryOf` names its services' main.js). */
function startCatalog(entryOf: (service: string) => string, common: Record<string, string>, name: string) {
  return startServiceProcess({
    name,
    entry: entryOf("catalog"),
    env: { ...common, GRPC_HOST: "127.0.0.1", GRPC_PORT: "0", LOG_LEVEL: "warn" },
  });
}

/** A gateway process of a build, in front of `catalog`, with a rate limit it never reaches. */
function startGateway(
  entryOf: (service: string) => string,
  common: Record<string, string>,
  name: string,
  catalog: ServiceProcess,
) {
  return startServiceProcess({
    name,
    entry: entryOf("gateway"),
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
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
