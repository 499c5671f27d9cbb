/**
 * npm run bench:retries — do retries wake on time under a backlog (issue 19 item 5)?
 *
 *   this process -> EventService/PublishEvent (gRPC) -> webhooks (the real service process: outbox,
 *   JetStream, fan-out, delivery worker) -> the receivers (bench/webhooks-retry-receivers.ts, a
 *   separate process: RECEIVERS HTTPS servers answering 503 to the first attempt of each delivery
 *   and 200 to the next)
 *
 * The service runs with a short retry schedule, WEBHOOKS_RETRY_DELAYS = BENCH_RETRY_DELAY x 7
 * (default 10s; the spec's is 10m,20m,40m,...: only the wait after the first failure is used
 * here). A round publishes BENCH_EVENTS events (default 250; 16 PublishEvent calls in flight),
 * each matching all BENCH_RECEIVERS endpoints (default 4, one per receiver): 1,000 deliveries,
 * attempted as they are fanned out (on a quiet machine publishing and fan-out run at about the
 * worker's pace, ~1,000 deliveries/s), so they all fail within about a second and their retries all
 * come due within about the same second, BENCH_RETRY_DELAY later. (250 x 4 rather than 1,000 x 1:
 * one endpoint is capped at WEBHOOKS_ENDPOINT_CONCURRENCY = 8 attempts in flight by design, which
 * alone would spread 1,000 retries over well over a second; four endpoints use the service's 32
 * slots, as bench:webhooks does.) BENCH_HOLD=1 pauses the endpoints (PauseEndpoint) while the
 * events are published, so every delivery waits `held`, then resumes all four at once
 * (ResumeEndpoint releases every held delivery, due at once): the first attempts run at the
 * worker's pace whatever the publisher's, but resume enqueues each endpoint's jobs as one block,
 * which the endpoint scheduler serves with many deferrals (at load 20 this was slower than
 * BENCH_HOLD=0: 1,000 first attempts over 14-30 s against 10-14 s).
 *
 * Due time: while the deliveries fail, the bench reads (every 50 ms) deliveries.next_attempt_at of
 * each one that is `awaiting_retry` after its failed first attempt: the due time the service
 * recorded (the end of the failed attempt + the wait; the worker naks the job with that delay).
 * Lateness of a delivery = the time the receiver got its second attempt (Date.now() in the
 * receivers, the clock the service computes due times with) - that due time. Printed per round
 * and over all rounds: p50 / p99 / max lateness, retries early by more than 1 ms (the millisecond
 * granularity of Date.now() and of the recorded due time; must be 0), the spread of the first
 * attempts and of the due times, the service-side lateness (attempts.attempted_at of attempt 2 -
 * due: the wake and the claim, without the HTTPS request), JetStream jobs handed to the worker per
 * delivery (2 = the first attempt and one timely redelivery; more: jobs the endpoint scheduler
 * sent back, stale or early jobs) and the jobs sent back (webhooks_delivery_jobs_deferred_total).
 * Every delivery must end `succeeded` with 2 attempts in the ledger. Target: p99 <= 1 s and none
 * early -> PASS. "due amid first attempts" counts retries that came due before the round's last
 * first attempt: when the first attempts take longer than BENCH_RETRY_DELAY (a loaded machine),
 * those retries queue behind the first attempts still waiting for the same endpoints' slots, and
 * their lateness measures that backlog; raise BENCH_RETRY_DELAY to measure the wake alone.
 *
 * Env: BENCH_ROUNDS (2, after a warm-up round of 100 events), BENCH_EVENTS, BENCH_RECEIVERS,
 * BENCH_RETRY_DELAY, BENCH_HOLD, BENCH_LOG_LEVEL (warn), BENCH_CPU_PROF, BENCH_DUMP=<prefix>
 * (writes <prefix>-<round>.csv: per delivery its due time, both receipts and the service's attempt
 * time), and WEBHOOKS_* variables, which are passed to the service. A backlog beyond what the
 * service does in a second: BENCH_EVENTS=1000 npm run bench:retries (4,000 retries).
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { createTestCertificates } from "@platform/local-stack/https-receiver";
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { EventServiceClient, WebhookServiceClient } from "@platform/proto/webhooks/v1";
import { connect, type JetStreamManager } from "nats";
import pg from "pg";
import { percentile, recordResult } from "./load-generator.js";
import { profiled } from "./profiled-env.js";
import {
  bookingPublisher,
  createReceiverEndpoints,
  forkReceivers,
  passedWebhooksSettings,
  webhooksServiceEnv,
} from "./webhooks-bench-setup.js";
import type { RetryReceipt } from "./webhooks-retry-receivers.js";

const repo = join(import.meta.dirname, "..", "..");
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const eventsPerRound = Number(process.env.BENCH_EVENTS ?? 250);
const receiverCount = Number(process.env.BENCH_RECEIVERS ?? 4);
const retryDelay = process.env.BENCH_RETRY_DELAY ?? "10s";
const hold = (process.env.BENCH_HOLD ?? "0") === "1";
const logLevel = process.env.BENCH_LOG_LEVEL ?? "warn";
const publishConcurrency = 16;
/** Retries earlier than their due time by more than this are counted early (ms granularity). */
const earlyToleranceMs = 1;
const targetP99Ms = 1000;
const tenant = "bench";
const failPrefix = "evt_retry_";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The receivers' process: its ports, and every request they got, by delivery id. */
async function startReceivers(keyPath: string, certPath: string) {
  const { child, ports } = await forkReceivers("webhooks-retry-receivers.js", {
    receivers: receiverCount,
    keyPath,
    certPath,
    env: { FAIL_FIRST_PREFIX: failPrefix },
  });
  /** Delivery id -> its requests' receipt times (index 0: attempt 1) and answers. */
  const byDelivery = new Map<string, { at: number[]; status: number[] }>();
  const collect = () =>
    new Promise<void>((resolve) => {
      child.once("message", (m: { receipts: RetryReceipt[] }) => {
        for (const [id, number, status, at] of m.receipts) {
          const entry = byDelivery.get(id) ?? { at: [], status: [] };
          entry.at[number - 1] = at;
          entry.status[number - 1] = status;
          byDelivery.set(id, entry);
        }
        resolve();
      });
      child.send({ type: "drain" });
    });
  return { child, ports, byDelivery, collect };
}

interface Round {
  deliveries: number;
  /** From the first to the last first attempt received (s). */
  firstAttemptsSpreadS: number;
  /** From the earliest to the latest recorded due time (s). */
  dueSpreadS: number;
  /** From the earliest due time to the last retry received (s). */
  retriesDoneAfterS: number;
  /**
   * Retries due before the round's last first attempt was received: they came due into a backlog
   * of first attempts (the same endpoints, at their limit), not into an idle worker.
   */
  dueDuringFirstAttempts: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  early: number;
  /** attempts.attempted_at of attempt 2 - due time: the wake without the request. */
  serviceP50Ms: number;
  serviceP99Ms: number;
  jobsHandedPerDelivery: number;
  /** Jobs the endpoint scheduler sent back because their endpoint was at its limit. */
  jobsDeferred: number;
  lateness: number[];
}

async function main() {
  const scratch = await createScratchDatabase("benchretries");
  const certs = await createTestCertificates();
  const namespace = `benchretry${process.pid}_${randomBytes(3).toString("hex")}_`;
  const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const nc = await connect({ servers: natsUrl });
  const jsm: JetStreamManager = await nc.jetstreamManager();
  const db = new pg.Client({ connectionString: scratch.url });
  await db.connect();
  let service: ServiceProcess | undefined;
  let receivers: Awaited<ReturnType<typeof startReceivers>> | undefined;
  try {
    receivers = await startReceivers(join(certs.dir, "server.key"), join(certs.dir, "server.pem"));
    const retryDelays =
      passedWebhooksSettings().WEBHOOKS_RETRY_DELAYS ?? Array.from({ length: 7 }, () => retryDelay).join(",");
    service = await startServiceProcess({
      name: "webhooks",
      entry: join(repo, "services", "webhooks", "dist", "src", "main.js"),
      env: profiled(
        webhooksServiceEnv({
          databaseUrl: scratch.url,
          secretsKey: randomBytes(32).toString("base64"),
          natsUrl,
          namespace,
          logLevel,
          caPath: certs.caPath,
          defaults: { WEBHOOKS_RETRY_DELAYS: retryDelays },
        }),
      ),
      timeoutMs: 60_000,
    });
    const address = `127.0.0.1:${service.listening.grpcPort as number}`;
    const events = new EventServiceClient(address, credentials.createInsecure());
    const hooks = new WebhookServiceClient(address, credentials.createInsecure());
    const endpointIds = (await createReceiverEndpoints(hooks, tenant, receivers.ports)).map(
      (created) => created.endpoint!.id,
    );
    let actions = 0;
    /** Pauses or resumes every endpoint (all four calls at once). */
    const setPaused = (paused: boolean) =>
      Promise.all(
        endpointIds.map(
          (endpointId) =>
            new Promise<void>((resolve, reject) => {
              const request = { tenantId: tenant, endpointId, idempotencyKey: `bench-action-${actions++}` };
              const done = (error: Error | null) => (error ? reject(error) : resolve());
              if (paused) hooks.pauseEndpoint(request, done);
              else hooks.resumeEndpoint(request, done);
            }),
        ),
      );
    const publish = bookingPublisher([events], tenant);
    const publishAll = async (ids: string[]) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: publishConcurrency }, async () => {
          while (next < ids.length) await publish(ids[next++]!);
        }),
      );
    };
    const metricsUrl = `http://127.0.0.1:${service.listening.metricsPort as number}/metrics`;
    /** webhooks_delivery_jobs_deferred_total: jobs the endpoint scheduler sent back (endpoint at its limit). */
    const deferred = async () => {
      const text = await (await fetch(metricsUrl)).text();
      return Number(/^webhooks_delivery_jobs_deferred_total(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? 0);
    };
    const handed = async () =>
      (await jsm.consumers.info(`${namespace}WEBHOOK_DELIVERIES`, "webhooks-delivery")).delivered.consumer_seq;

    /** Polls `check` every 50 ms until it answers true (or throws after `timeoutMs`). */
    async function until(what: string, timeoutMs: number, check: () => Promise<boolean>) {
      const deadline = Date.now() + timeoutMs;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(50);
      }
    }

    async function round(index: number, count: number): Promise<Round> {
      const ids = Array.from({ length: count }, (_, i) => `${failPrefix}${process.pid}_${index}_${i}`);
      const expected = count * receiverCount;
      const handedBefore = await handed();
      const deferredBefore = await deferred();
      // The deliveries wait held while the events are published and fanned out, then all are
      // released at once: the first attempts run back to back at the worker's own pace.
      if (hold) await setPaused(true);
      await publishAll(ids);
      if (hold) {
        await until("every delivery to be held", 120_000, async () => {
          const { rows } = await db.query<{ held: string }>(
            `select count(*) as held from webhooks_history.deliveries where event_id = any($1) and status = 'held'`,
            [ids],
          );
          return Number(rows[0]!.held) === expected;
        });
        await setPaused(false);
      }
      // Each delivery's due time as the service recorded it after the failed first attempt, read
      // every 50 ms while deliveries fail (a retry waits BENCH_RETRY_DELAY, far longer).
      const dueOf = new Map<string, number>();
      await until("every first attempt to be recorded", 300_000, async () => {
        const { rows } = await db.query<{ id: string; due: number; attempts: number }>(
          `select id, extract(epoch from next_attempt_at) * 1000 as due, attempts_total as attempts
             from webhooks_history.deliveries
            where event_id = any($1) and (status = 'awaiting_retry' or attempts_total >= 2)`,
          [ids],
        );
        for (const row of rows) {
          if (dueOf.has(row.id)) continue;
          if (row.attempts !== 1) {
            await receivers!.collect();
            throw new Error(
              `delivery ${row.id} was retried before its due time could be read: ${JSON.stringify({ ...row, receipts: receivers!.byDelivery.get(row.id), now: Date.now() })}`,
            );
          }
          dueOf.set(row.id, Number(row.due));
        }
        return dueOf.size === expected;
      });

      await until("every retry to reach its receiver", 300_000, async () => {
        await receivers!.collect();
        for (const id of dueOf.keys()) if (receivers!.byDelivery.get(id)?.at[1] === undefined) return false;
        return true;
      });
      // The ledger: every delivery succeeded, with its two attempts.
      await until("the ledger to show every delivery succeeded", 60_000, async () => {
        const { rows } = await db.query<{ done: string }>(
          `select count(*) as done from webhooks_history.deliveries
            where event_id = any($1) and status = 'succeeded' and attempts_total = 2`,
          [ids],
        );
        return Number(rows[0]!.done) === expected;
      });
      const { rows: attempted } = await db.query<{ id: string; at: number }>(
        `select a.delivery_id as id, extract(epoch from a.attempted_at) * 1000 as at
           from webhooks_history.attempts a join webhooks_history.deliveries d on d.id = a.delivery_id
          where d.event_id = any($1) and a.number = 2`,
        [ids],
      );
      const jobsHanded = (await handed()) - handedBefore;
      const jobsDeferred = (await deferred()) - deferredBefore;

      let early = 0;
      const firsts: number[] = [];
      const lateness: number[] = [];
      let lastRetry = 0;
      for (const [id, dueAt] of dueOf) {
        const got = receivers!.byDelivery.get(id)!;
        if (got.status[0] !== 503 || got.status[1] !== 200 || got.at.length !== 2) {
          throw new Error(`delivery ${id}: the receivers answered ${got.status.join(", ")}; expected 503 then 200`);
        }
        firsts.push(got.at[0]!);
        lateness.push(got.at[1]! - dueAt);
        lastRetry = Math.max(lastRetry, got.at[1]!);
        if (got.at[1]! < dueAt - earlyToleranceMs) early += 1;
      }
      if (process.env.BENCH_DUMP) {
        const attemptAt = new Map(attempted.map((row) => [row.id, Number(row.at)]));
        const lines = [...dueOf].map(([id, dueAt]) => {
          const got = receivers!.byDelivery.get(id)!;
          return [id, dueAt, got.at[0], got.at[1], attemptAt.get(id)].join(",");
        });
        await writeFile(
          `${process.env.BENCH_DUMP}-${index}.csv`,
          `id,due,first,retry,attempted\n${lines.join("\n")}\n`,
        );
      }
      const serviceLateness = attempted.map((row) => Number(row.at) - dueOf.get(row.id)!).sort((a, b) => a - b);
      lateness.sort((a, b) => a - b);
      firsts.sort((a, b) => a - b);
      const dues = [...dueOf.values()].sort((a, b) => a - b);
      return {
        deliveries: expected,
        firstAttemptsSpreadS: (firsts.at(-1)! - firsts[0]!) / 1000,
        dueSpreadS: (dues.at(-1)! - dues[0]!) / 1000,
        retriesDoneAfterS: (lastRetry - dues[0]!) / 1000,
        dueDuringFirstAttempts: dues.filter((d) => d < firsts.at(-1)!).length,
        p50Ms: percentile(lateness, 50),
        p99Ms: percentile(lateness, 99),
        maxMs: lateness.at(-1)!,
        early,
        serviceP50Ms: percentile(serviceLateness, 50),
        serviceP99Ms: percentile(serviceLateness, 99),
        jobsHandedPerDelivery: jobsHanded / expected,
        jobsDeferred,
        lateness,
      };
    }

    // Warm-up (JIT, pools, TLS sessions), not counted.
    await round(0, 100);
    const results: Round[] = [];
    for (let i = 1; i <= rounds; i++) {
      const r = await round(i, eventsPerRound);
      results.push(r);
      console.log(
        `round ${i}: ${r.deliveries} retries (first attempts over ${r.firstAttemptsSpreadS.toFixed(2)} s, ` +
          `due over ${r.dueSpreadS.toFixed(2)} s): ` +
          `lateness p50 ${r.p50Ms.toFixed(0)} ms, p99 ${r.p99Ms.toFixed(0)} ms, max ${r.maxMs.toFixed(0)} ms; ` +
          `${r.early} early; last retry ${r.retriesDoneAfterS.toFixed(2)} s after the first due time; ` +
          `${r.dueDuringFirstAttempts} came due while first attempts were still being made`,
      );
      if (r.dueDuringFirstAttempts > 0) {
        console.log(
          `  note: the first attempts took longer than BENCH_RETRY_DELAY (${retryDelay}); retries due amid them ` +
            `wait behind them for the same endpoints' slots, so their lateness is that backlog, not the wake`,
        );
      }
    }
    const all = results.flatMap((r) => r.lateness).sort((a, b) => a - b);
    const early = results.reduce((s, r) => s + r.early, 0);
    const summary = {
      deliveries: all.length,
      p50Ms: percentile(all, 50),
      p99Ms: percentile(all, 99),
      maxMs: all.at(-1)!,
      early,
    };
    console.table(
      results.map((r, i) => ({
        round: i + 1,
        retries: r.deliveries,
        "first attempts over (s)": Number(r.firstAttemptsSpreadS.toFixed(2)),
        "due over (s)": Number(r.dueSpreadS.toFixed(2)),
        "due amid first attempts": r.dueDuringFirstAttempts,
        "lateness p50 (ms)": Math.round(r.p50Ms),
        "p99 (ms)": Math.round(r.p99Ms),
        "max (ms)": Math.round(r.maxMs),
        early: r.early,
        "service-side p50/p99 (ms)": `${Math.round(r.serviceP50Ms)}/${Math.round(r.serviceP99Ms)}`,
        "jobs handed / delivery": Number(r.jobsHandedPerDelivery.toFixed(2)),
        "deferred (endpoint at limit)": r.jobsDeferred,
      })),
    );
    const pass = summary.p99Ms <= targetP99Ms && early === 0;
    console.log(
      `retries due together (WEBHOOKS_RETRY_DELAYS=${retryDelays}; ${eventsPerRound} events x ${receiverCount} endpoints ` +
        `per round, ${rounds} rounds): lateness (receiver's receipt of attempt 2 - recorded next_attempt_at) ` +
        `p50 ${summary.p50Ms.toFixed(0)} ms, p99 ${summary.p99Ms.toFixed(0)} ms, max ${summary.maxMs.toFixed(0)} ms; ` +
        `${early} of ${summary.deliveries} early by more than ${earlyToleranceMs} ms; ledger: all succeeded with 2 attempts ` +
        `(target p99 <= ${targetP99Ms} ms and none early -> ${pass ? "PASS" : "FAIL"})`,
    );
    await recordResult(repo, "webhooks-retries", {
      bench: "webhooks-retries",
      receivers: receiverCount,
      eventsPerRound,
      rounds,
      retryDelays,
      hold,
      perRound: results.map(({ lateness: _, ...r }) => r),
      ...summary,
      pass,
    });
    events.close();
    hooks.close();
  } catch (error) {
    // What the service said last (warnings and errors) explains most failures under load.
    for (const line of (service?.logs ?? []).filter((l) => Number(l.level) >= 40).slice(-10)) {
      console.error(`webhooks: ${JSON.stringify(line)}`);
    }
    throw error;
  } finally {
    await service?.stop();
    receivers?.child.kill();
    await db.end().catch(() => undefined);
    for (const name of [`${namespace}EVENTS`, `${namespace}WEBHOOK_DELIVERIES`]) {
      await jsm.streams.delete(name).catch(() => undefined);
    }
    await nc.close();
    await certs.remove();
    await scratch.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
