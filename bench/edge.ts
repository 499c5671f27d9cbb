/**
 * npm run bench:edge — what the tenant interface's edge costs.
 *
 * The same authenticated tenant GET (/api/v1/tenants/{id}) is driven through:
 *   edge:     the real gateway process (request id, metrics, error mapping, rate-limit bookkeeping,
 *             API key authentication, scope and tenant-grant checks) -> gRPC -> notify -> Postgres
 *   baseline: the same route handler and gRPC client in a Koa app with that middleware off
 * in the same run, alternating A B A B. Target: the edge costs under 25% of throughput.
 * Env: BENCH_CONNECTIONS (default 32), BENCH_DURATION seconds per run (default 8).
 */
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { compareAlternating, recordResult } from "./load-generator.js";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..", "..");
const entry = (service: string, file = "main.js") => join(repo, "services", service, "dist", "src", file);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const durationSeconds = Number(process.env.BENCH_DURATION ?? 8);

async function main() {
  const scratch = await createScratchDatabase("benchedge");
  const natsNamespace = newNatsNamespace("bench");
  const processes: ServiceProcess[] = [];
  try {
    const common = {
      DATABASE_URL: scratch.url,
      METRICS_PORT: "0",
      LOG_LEVEL: "info",
      GRPC_HOST: "127.0.0.1",
      NATS_URL: testNatsUrl(),
      NATS_NAMESPACE: natsNamespace,
    };
    const notify = await startServiceProcess({
      name: "notify",
      entry: entry("notify"),
      env: { ...common, GRPC_PORT: "0", SECRETS_KEY: randomBytes(32).toString("base64") },
    });
    processes.push(notify);
    const notifyAddr = `127.0.0.1:${notify.listening.grpcPort as number}`;
    const admin = async (...args: string[]) =>
      JSON.parse(
        (
          await run(process.execPath, [entry("gateway", "cli/admin.js"), ...args], {
            env: { PATH: process.env.PATH ?? "", DATABASE_URL: scratch.url, NOTIFY_ADDR: notifyAddr },
          })
        ).stdout,
      ) as Record<string, string>;
    const tenant = (await admin("tenant", "create", "--name", "Bench")).id!;
    const key = (await admin("key", "create", "--scopes", "tenant:read", "--tenants", tenant)).key!;
    const gateway = await startServiceProcess({
      name: "gateway",
      entry: entry("gateway"),
      env: {
        ...common,
        LOG_LEVEL: "warn",
        HOST: "127.0.0.1",
        PORT: "0",
        NOTIFY_ADDR: notifyAddr,
        // High enough never to refuse: the bookkeeping is measured, not the refusals.
        RATE_LIMIT_PER_SECOND: "10000000",
        RATE_LIMIT_BURST: "10000000",
      },
    });
    processes.push(gateway);
    const baseline = await startServiceProcess({
      name: "edge-baseline",
      entry: join(repo, "bench", "dist", "edge-baseline-gateway.js"),
      env: { NOTIFY_ADDR: notifyAddr },
    });
    processes.push(baseline);

    const path = `/api/v1/tenants/${tenant}`;
    const edgeUrl = `http://127.0.0.1:${gateway.listening.port as number}${path}`;
    const baseUrl = `http://127.0.0.1:${baseline.listening.port as number}${path}`;
    const headers = { authorization: `Bearer ${key}` };
    for (const [url, h] of [
      [edgeUrl, headers],
      [baseUrl, {}],
    ] as const) {
      const res = await fetch(url, { headers: h });
      if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
    }

    const result = await compareAlternating(
      { label: "baseline (edge off)", url: baseUrl },
      { label: "edge (full gateway)", url: edgeUrl, headers },
      { connections, durationSeconds },
    );
    const { baseline: base, candidate: edge, ratio } = result;
    const cost = 1 - ratio;
    console.log(
      `edge keeps ${(ratio * 100).toFixed(1)}% of baseline throughput (edge cost ${(cost * 100).toFixed(1)}%); ` +
        `p99 ${edge.p99Ms.toFixed(2)} ms vs ${base.p99Ms.toFixed(2)} ms; target: cost < 25% -> ${cost < 0.25 ? "PASS" : "BELOW TARGET"}`,
    );
    await recordResult(repo, "edge", {
      bench: "edge",
      connections,
      durationSeconds,
      baseline: base,
      edge,
      ratio,
      cost,
    });
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await deleteNamespaceStreams(natsNamespace);
    await scratch.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
