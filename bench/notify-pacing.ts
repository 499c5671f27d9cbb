/**
 * npm run bench:pacing (npx tsc -b && node bench/dist/notify-pacing.js) — pacing per number
 * (issue 32 item 6, docs/notifications.md "Pacing") with TWO notify replicas over one database
 * behind one gateway (NOTIFY_ADDR names both; the gateway balances round robin), sandbox channel
 * (each tenant a stand-in number of its own, `sandbox:<tenant>`):
 *
 *   1. baseline: tenant B alone, open loop at BENCH_B_RATE (default 10/s) for BENCH_DURATION s
 *      (default 10): its accepted rate and latency;
 *   2. paced: tenant A, whose number is held to BENCH_A_LIMIT (default 50/s, the replicas'
 *      NOTIFY_CHANNEL_MESSAGES_PER_SECOND), open loop at BENCH_A_RATE (default 150/s, three times
 *      its limit) for a warm-up second plus BENCH_DURATION s, while B runs as in 1 at the same time.
 *      Prints A's accepted sends per second over the measured seconds (the warm-up second spends
 *      the idle number's burst, one second's worth) and per second, the 429s and whether every one
 *      carried Retry-After, and B's accepted rate and p50/p99 against the baseline;
 *   3. the limiter's cost: the same two replicas started again with NOTIFY_CHANNEL_PACING=on at a
 *      pace nothing reaches (1000000/s) and with NOTIFY_CHANNEL_PACING=off, a closed loop of
 *      BENCH_CONNECTIONS (default 32) clients on one tenant (one number: the limiter's row is as
 *      hot as it gets), alternating twice: sends per second with and without the limiter's row.
 *
 * Until tenants connect their own channels (issue 32 item 1) the limit is one setting for every
 * number, so B's number has A's limit too (50/s); B sends at a fifth of it.
 */
import { execFile } from "node:child_process";
import { request as httpRequest, Agent } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import autocannon from "autocannon";
import pg from "pg";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { deleteNamespaceStreams, newNatsNamespace, testNatsUrl } from "@platform/local-stack/nats-namespace";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { percentile, recordResult } from "./load-generator.js";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..", "..");
const entry = (service: string, file = "main.js") => join(repo, "services", service, "dist", "src", file);
const seconds = Number(process.env.BENCH_DURATION ?? 10);
const aLimit = Number(process.env.BENCH_A_LIMIT ?? 50);
const aRate = Number(process.env.BENCH_A_RATE ?? 150);
const bRate = Number(process.env.BENCH_B_RATE ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

const body = JSON.stringify({
  to: "+447700900123",
  type: "reminder",
  clientName: "Ana",
  businessName: "Paws & Co",
  serviceName: "grooming",
  when: "Mon 3 May 10:00",
  actor: { actorReference: "bench-client", delegationReference: null },
});
let sequence = 0;
const nextKey = (prefix: string) => `${prefix}-${process.pid}-${sequence++}-bench`;

interface OpenLoopResult {
  accepted: number;
  refused429: number;
  refusedWithoutRetryAfter: number;
  retryAfterValues: Record<string, number>;
  otherStatuses: Record<string, number>;
  /** Latency of the accepted ones, from their scheduled time (ms, ascending). */
  latencies: number[];
}

/**
 * Open loop: requests start on a fixed schedule at `rate` per second, whatever the answers;
 * `warmUpSeconds` of them first (answered, not counted), then `seconds` measured.
 */
async function openLoop(
  url: string,
  headers: Record<string, string>,
  rate: number,
  warmUpSeconds: number,
): Promise<OpenLoopResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
  const target = new URL(url);
  const result: OpenLoopResult = {
    accepted: 0,
    refused429: 0,
    refusedWithoutRetryAfter: 0,
    retryAfterValues: {},
    otherStatuses: {},
    latencies: [],
  };
  const warmUp = Math.floor(rate * warmUpSeconds);
  const total = warmUp + Math.floor(rate * seconds);
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  const fire = (index: number, scheduled: number) =>
    new Promise<void>((resolve) => {
      const counted = index >= warmUp;
      const req = httpRequest(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          headers: { ...headers, "content-type": "application/json", "idempotency-key": nextKey("pace") },
        },
        (res) => {
          res.resume();
          res.on("end", () => {
            if (counted) {
              if (res.statusCode === 200) {
                result.accepted++;
                result.latencies.push(performance.now() - scheduled);
              } else if (res.statusCode === 429) {
                result.refused429++;
                const retryAfter = res.headers["retry-after"];
                if (retryAfter === undefined) result.refusedWithoutRetryAfter++;
                else result.retryAfterValues[retryAfter] = (result.retryAfterValues[retryAfter] ?? 0) + 1;
              } else {
                const status = String(res.statusCode);
                result.otherStatuses[status] = (result.otherStatuses[status] ?? 0) + 1;
              }
            }
            resolve();
          });
        },
      );
      req.on("error", (error) => {
        if (counted) result.otherStatuses[error.message] = (result.otherStatuses[error.message] ?? 0) + 1;
        resolve();
      });
      req.end(body);
    });
  let issued = 0;
  while (issued < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
    for (; issued < due; issued++) inFlight.push(fire(issued, start + (issued * 1000) / rate));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  agent.destroy();
  result.latencies.sort((a, b) => a - b);
  return result;
}

/** An autocannon request: a send with a fresh Idempotency-Key each time. */
const sendRequest = (auth: Record<string, string>, prefix: string): autocannon.Request => ({
  method: "POST",
  setupRequest: (req) => ({
    ...req,
    headers: { ...auth, "content-type": "application/json", "idempotency-key": nextKey(prefix) },
    body,
  }),
});

interface Fleet {
  url: string;
  processes: ServiceProcess[];
  stop(): Promise<void>;
}

async function main() {
  const scratch: ScratchDatabase = await createScratchDatabase("benchpacing");
  const natsNamespace = newNatsNamespace("bench");
  const common = {
    DATABASE_URL: scratch.url,
    METRICS_PORT: "0",
    LOG_LEVEL: "warn",
    NATS_URL: testNatsUrl(),
    NATS_NAMESPACE: natsNamespace,
  };
  const fleets: Fleet[] = [];
  /** Two notify replicas with `notifyEnv`, one gateway in front of both. */
  const startFleet = async (notifyEnv: Record<string, string>): Promise<Fleet> => {
    // One after the other: the first migrates the database (two at once would race on it).
    const notify: ServiceProcess[] = [];
    for (let replica = 0; replica < 2; replica++) {
      notify.push(
        await startServiceProcess({
          name: "notify",
          entry: entry("notify"),
          env: { ...common, GRPC_HOST: "127.0.0.1", GRPC_PORT: "0", NOTIFY_CHANNEL_PROVIDER: "sandbox", ...notifyEnv },
        }),
      );
    }
    const gateway = await startServiceProcess({
      name: "gateway",
      entry: entry("gateway"),
      env: {
        ...common,
        HOST: "127.0.0.1",
        PORT: "0",
        NOTIFY_ADDR: notify.map((p) => `127.0.0.1:${p.listening.grpcPort as number}`).join(","),
        RATE_LIMIT_PER_SECOND: "10000000",
        RATE_LIMIT_BURST: "10000000",
      },
    });
    const processes = [...notify, gateway];
    const fleet: Fleet = {
      url: `http://127.0.0.1:${gateway.listening.port as number}`,
      processes,
      stop: async () => {
        await Promise.all(processes.map((p) => p.stop()));
        fleets.splice(fleets.indexOf(fleet), 1);
      },
    };
    fleets.push(fleet);
    return fleet;
  };
  try {
    let fleet = await startFleet({ NOTIFY_CHANNEL_MESSAGES_PER_SECOND: String(aLimit) });
    const notifyAddr = `127.0.0.1:${fleet.processes[0]!.listening.grpcPort as number}`;
    const admin = async (...args: string[]) =>
      JSON.parse(
        (
          await run(process.execPath, [entry("gateway", "cli/admin.js"), ...args], {
            env: { PATH: process.env.PATH ?? "", DATABASE_URL: scratch.url, NOTIFY_ADDR: notifyAddr },
          })
        ).stdout,
      ) as Record<string, unknown>;
    const tenants: Record<"A" | "B" | "C", { id: string; auth: Record<string, string> }> = {} as never;
    for (const name of ["A", "B", "C"] as const) {
      const id = (await admin("tenant", "create", "--name", `Bench ${name}`, "--plan", "commercial")).id as string;
      await admin("tenant", "activate", "--id", id);
      const key = (await admin("key", "create", "--scopes", "notification:send", "--tenants", id)).key as string;
      tenants[name] = { id, auth: { authorization: `Bearer ${key}` } };
    }
    const urlOf = (base: string, name: "A" | "B" | "C") => `${base}/api/v1/tenants/${tenants[name].id}/notifications`;

    // Warm-up (JIT, pools) on C's number, then let its row idle.
    await autocannon({
      url: urlOf(fleet.url, "C"),
      connections: 4,
      amount: 200,
      requests: [sendRequest(tenants.C.auth, "warm")],
    });

    console.log(
      `two notify replicas, sandbox, NOTIFY_CHANNEL_MESSAGES_PER_SECOND=${aLimit} (burst: one second's worth)`,
    );
    const baseline = await openLoop(urlOf(fleet.url, "B"), tenants.B.auth, bRate, 1);
    const [paced, withA] = await Promise.all([
      openLoop(urlOf(fleet.url, "A"), tenants.A.auth, aRate, 1),
      openLoop(urlOf(fleet.url, "B"), tenants.B.auth, bRate, 1),
    ]);
    // A's admissions by the database's clock (each command's recorded instant): the answers reach
    // the client later, and on a busy machine much later, so their arrival says little.
    const db = new pg.Client({ connectionString: scratch.url });
    await db.connect();
    const admitted = (
      await db.query<{ at: number }>(
        "select extract(epoch from created_at)::float8 as at from notify.notification_commands where tenant_id = $1 order by created_at",
        [tenants.A.id],
      )
    ).rows.map((r) => r.at);
    await db.end();
    const first = admitted[0] ?? 0;
    const last = admitted.at(-1) ?? 0;
    const bySecond = Array.from({ length: Math.ceil(last - first + 1e-9) }, () => 0);
    for (const at of admitted) bySecond[Math.floor(at - first)]!++;
    // The first second spends the idle number's burst (one second's worth) on top of the rate.
    const steady = admitted.filter((at) => at >= first + 1);
    const aPerSecond = steady.length / (last - (first + 1));
    const within = Math.abs(aPerSecond - aLimit) / aLimit;
    console.log(
      `A (limit ${aLimit}/s, offered ${aRate}/s for 1 + ${seconds} s): ${admitted.length} admitted over ` +
        `${(last - first).toFixed(2)} s of the database's clock; after the first second ${aPerSecond.toFixed(2)}/s ` +
        `(${(within * 100).toFixed(1)}% from ${aLimit}); by second from the first admission ${JSON.stringify(bySecond)}; ` +
        `answers to the measured requests: ${paced.accepted} 200, ${paced.refused429} 429, ` +
        `${paced.refusedWithoutRetryAfter} of those without Retry-After ` +
        `(Retry-After values ${JSON.stringify(paced.retryAfterValues)}), other ${JSON.stringify(paced.otherStatuses)}`,
    );
    const bLine = (label: string, r: OpenLoopResult) =>
      `B ${label}: ${(r.accepted / seconds).toFixed(2)} accepted/s of ${bRate}/s offered, p50 ` +
      `${percentile(r.latencies, 50).toFixed(2)} ms, p99 ${percentile(r.latencies, 99).toFixed(2)} ms, ` +
      `429: ${r.refused429}, other ${JSON.stringify(r.otherStatuses)}`;
    console.log(bLine("alone", baseline));
    console.log(bLine("beside A's load", withA));
    await fleet.stop();

    // The limiter's cost: a closed loop on one number, with the limiter's row and without it.
    const costs: { label: string; sendsPerSecond: number; p50Ms: number; p99Ms: number; non2xx: number }[] = [];
    const closed = async (label: string, env: Record<string, string>) => {
      fleet = await startFleet(env);
      const url = urlOf(fleet.url, "C");
      const drive = (duration: number) =>
        autocannon({ url, connections, duration, requests: [sendRequest(tenants.C.auth, "cost")] });
      await drive(2); // warm-up
      const result = await drive(seconds);
      costs.push({
        label,
        sendsPerSecond: result["2xx"] / seconds,
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        non2xx: result.non2xx + result.errors + result.timeouts,
      });
      console.log(
        `${label}: ${(result["2xx"] / seconds).toFixed(1)} sends/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
          `${result.non2xx + result.errors + result.timeouts} not 200`,
      );
      await fleet.stop();
    };
    for (let round = 0; round < 2; round++) {
      await closed(`closed loop ${connections} clients, limiter on (1000000/s, never refuses)`, {
        NOTIFY_CHANNEL_MESSAGES_PER_SECOND: "1000000",
      });
      await closed(`closed loop ${connections} clients, limiter off`, { NOTIFY_CHANNEL_PACING: "off" });
    }
    const mean = (prefix: string) => {
      const runs = costs.filter((c) => c.label.includes(prefix));
      return runs.reduce((sum, c) => sum + c.sendsPerSecond, 0) / runs.length;
    };
    const on = mean("limiter on");
    const off = mean("limiter off");
    console.log(
      `limiter's cost on one number: ${on.toFixed(1)} vs ${off.toFixed(1)} sends/s (${((on / off) * 100).toFixed(1)}%)`,
    );

    await recordResult(repo, "notify-pacing", {
      bench: "notify-pacing",
      seconds,
      a: {
        limit: aLimit,
        offered: aRate,
        admittedPerSecondAfterFirst: aPerSecond,
        withinPercent: within * 100,
        admittedBySecond: bySecond,
        answered200: paced.accepted,
        refused429: paced.refused429,
        refusedWithoutRetryAfter: paced.refusedWithoutRetryAfter,
        retryAfterValues: paced.retryAfterValues,
        other: paced.otherStatuses,
      },
      b: (
        [
          ["alone", baseline],
          ["beside A", withA],
        ] as const
      ).map(([label, r]) => ({
        label,
        acceptedPerSecond: r.accepted / seconds,
        p50Ms: percentile(r.latencies, 50),
        p99Ms: percentile(r.latencies, 99),
        refused429: r.refused429,
      })),
      limiterCost: { on, off, ratio: on / off, runs: costs },
    });
  } finally {
    for (const fleet of [...fleets]) await fleet.stop();
    await deleteNamespaceStreams(natsNamespace).catch(() => undefined);
    await scratch.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
