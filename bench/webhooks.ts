/**
 * npm run bench:webhooks — the webhook delivery pipeline against a plain loop, in the same run:
 *
 *   pipeline:  this process -> EventService/PublishEvent (gRPC) -> webhooks (outbox row, relay to
 *              JetStream EVENTS, fan-out into one delivery per endpoint, delivery job on JetStream,
 *              worker: claim, sign, HTTPS POST, attempt recorded in Postgres, then ack) -> the
 *              receivers (a separate process: RECEIVERS HTTPS servers answering 200 at once)
 *   baseline:  this process, one Node event loop: signed HTTPS POSTs (the same headers, HMAC-SHA256
 *              per request, keep-alive) to the same receivers at the same concurrency, closed loop
 *
 * Every event matches every endpoint (one endpoint per receiver), so an event makes RECEIVERS
 * deliveries. Rounds alternate baseline / pipeline (BENCH_ROUNDS, default 2):
 *   - saturation: BENCH_EVENTS events (default 1500) published as fast as PublishEvent answers
 *     (16 calls in flight); deliveries/s over the middle 80% of receipts (p10 -> p90 receipt time);
 *   - baseline: BENCH_DURATION seconds (default 8) of the plain loop.
 * Then an open-loop run at half the pipeline's measured saturation rate: events published on a
 * fixed schedule for BENCH_DURATION seconds; end-to-end latency per delivery from the scheduled
 * emit to the receiver's receipt (p50, p99). Around that run: Postgres commits (pg_stat_database
 * xact_commit of the scratch database) and JetStream messages published (stream sequence deltas;
 * each publish awaits its PubAck) and handed to consumers (consumer delivery counts: each one is
 * answered by one ack or nak) per delivery. Every delivery's attempt is checked in Postgres.
 *
 * Concurrency: the service's WEBHOOKS_CONCURRENCY (64) and WEBHOOKS_ENDPOINT_CONCURRENCY (8) cap
 * attempts in flight at min(64, 8 x RECEIVERS); the baseline uses that many. Targets (issue 9):
 * pipeline >= 0.5 of the baseline's deliveries/s; open-loop p99 < 250 ms. Env: BENCH_ROUNDS,
 * BENCH_EVENTS, BENCH_DURATION, BENCH_RECEIVERS (4), BENCH_LOG_LEVEL (warn), BENCH_CPU_PROF,
 * BENCH_OPEN_RATE (deliveries/s of the open-loop run instead of half the measured rate),
 * and WEBHOOKS_* variables, which are passed to the service.
 */
import { fork, type ChildProcess } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { createTestCertificates } from "@platform/local-stack/https-receiver";
import { createScratchDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import {
  EventServiceClient,
  WebhookServiceClient,
  type CreateEndpointResponse,
  type PublishEventResponse,
} from "@platform/proto/webhooks/v1";
import { connect, type JetStreamManager } from "nats";
import pg from "pg";
import { recordResult } from "./load-generator.js";
import { profiled } from "./profiled-env.js";

const repo = join(import.meta.dirname, "..", "..");
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const burstEvents = Number(process.env.BENCH_EVENTS ?? 1500);
const durationSeconds = Number(process.env.BENCH_DURATION ?? 8);
const receiverCount = Number(process.env.BENCH_RECEIVERS ?? 4);
const logLevel = process.env.BENCH_LOG_LEVEL ?? "warn";
const serviceConcurrency = Number(process.env.WEBHOOKS_CONCURRENCY ?? 64);
const endpointConcurrency = Number(process.env.WEBHOOKS_ENDPOINT_CONCURRENCY ?? 8);
const concurrency = Math.min(serviceConcurrency, endpointConcurrency * receiverCount);
const publishConcurrency = 16;
const tenant = "bench";
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The receivers' process: its ports, and their receipts since the last drain. */
async function startReceivers(keyPath: string, certPath: string) {
  const child: ChildProcess = fork(join(repo, "bench", "dist", "webhooks-receivers.js"), [], {
    env: {
      PATH: process.env.PATH ?? "",
      RECEIVERS: String(receiverCount),
      RECEIVER_KEY: keyPath,
      RECEIVER_CERT: certPath,
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ports = await new Promise<number[]>((resolve, reject) => {
    child.once("message", (m: { type: string; ports: number[] }) => resolve(m.ports));
    child.once("exit", (code) => reject(new Error(`the receivers exited (${code})`)));
  });
  const drain = () =>
    new Promise<{ ids: string[]; at: number[] }>((resolve) => {
      child.once("message", (m: { ids: string[]; at: number[] }) => resolve(m));
      child.send({ type: "drain" });
    });
  return { child, ports, drain };
}

/** Collects receipts until `expected` deliveries of the given events arrived (or the deadline). */
async function awaitReceipts(
  drain: () => Promise<{ ids: string[]; at: number[] }>,
  wanted: Set<string>,
  expected: number,
  timeoutMs: number,
): Promise<{ id: string; at: number }[]> {
  const receipts: { id: string; at: number }[] = [];
  const deadline = Date.now() + timeoutMs;
  while (receipts.length < expected) {
    if (Date.now() > deadline) {
      throw new Error(`only ${receipts.length} of ${expected} deliveries arrived within ${timeoutMs} ms`);
    }
    await sleep(200);
    const { ids, at } = await drain();
    ids.forEach((id, i) => {
      if (wanted.has(id)) receipts.push({ id, at: at[i]! });
    });
  }
  return receipts;
}

interface Saturation {
  deliveries: number;
  /** Jobs handed to the delivery worker per delivery (above 1: naks, e.g. an endpoint at its limit). */
  jobsHandedPerDelivery: number;
  deliveriesPerSecond: number;
  publishPerSecond: number;
  seconds: number;
}

async function main() {
  const scratch = await createScratchDatabase("benchwebhooks");
  const certs = await createTestCertificates();
  const namespace = `bench${process.pid}_${randomBytes(3).toString("hex")}_`;
  const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const nc = await connect({ servers: natsUrl });
  const jsm: JetStreamManager = await nc.jetstreamManager();
  const db = new pg.Client({ connectionString: scratch.url });
  await db.connect();
  let service: ServiceProcess | undefined;
  let receivers: Awaited<ReturnType<typeof startReceivers>> | undefined;
  try {
    receivers = await startReceivers(join(certs.dir, "server.key"), join(certs.dir, "server.pem"));
    const passed = Object.fromEntries(
      Object.entries(process.env).filter(([name, value]) => name.startsWith("WEBHOOKS_") && value !== undefined),
    ) as Record<string, string>;
    service = await startServiceProcess({
      name: "webhooks",
      entry: join(repo, "services", "webhooks", "dist", "src", "main.js"),
      env: profiled({
        DATABASE_URL: scratch.url,
        SECRETS_KEY: randomBytes(32).toString("base64"),
        NATS_URL: natsUrl,
        NATS_NAMESPACE: namespace,
        GRPC_HOST: "127.0.0.1",
        GRPC_PORT: "0",
        METRICS_PORT: "0",
        LOG_LEVEL: logLevel,
        NODE_EXTRA_CA_CERTS: certs.caPath,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
        WEBHOOKS_ALLOWED_PORTS: "1024-65535",
        ...passed,
      }),
      timeoutMs: 60_000,
    });
    const address = `127.0.0.1:${service.listening.grpcPort as number}`;
    const events = new EventServiceClient(address, credentials.createInsecure());
    const hooks = new WebhookServiceClient(address, credentials.createInsecure());
    const secrets: string[] = [];
    for (const port of receivers.ports) {
      const created = await new Promise<CreateEndpointResponse>((resolve, reject) =>
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
      );
      secrets.push(created.secret);
    }
    let sequence = 0;
    const data = JSON.stringify({ booking_id: "bk_bench", starts_at: "2026-12-01T09:00:00Z", status: "confirmed" });
    const publish = (eventId: string) =>
      new Promise<PublishEventResponse>((resolve, reject) =>
        events.publishEvent(
          { tenantId: tenant, type: "booking.created", dataJson: data, eventId, occurredAt: "" },
          (e, r) => (e ? reject(e) : resolve(r)),
        ),
      );
    const nextId = () => `evt_bench_${process.pid}_${sequence++}`;

    /** BENCH_EVENTS events as fast as PublishEvent answers; deliveries/s over the middle 80%. */
    async function saturation(count: number): Promise<Saturation> {
      const ids = Array.from({ length: count }, nextId);
      const wanted = new Set(ids);
      const handed = async () =>
        (await jsm.consumers.info(`${namespace}WEBHOOK_DELIVERIES`, "webhooks-delivery")).delivered.consumer_seq;
      const handedBefore = await handed();
      const started = now();
      let next = 0;
      const publishing = Promise.all(
        Array.from({ length: publishConcurrency }, async () => {
          while (next < ids.length) await publish(ids[next++]!);
        }),
      ).then(() => now());
      const receipts = awaitReceipts(receivers!.drain, wanted, count * receiverCount, 300_000);
      const published = await publishing;
      const times = (await receipts).map((r) => r.at).sort((a, b) => a - b);
      const t10 = percentile(times, 10);
      const t90 = percentile(times, 90);
      return {
        deliveries: times.length,
        jobsHandedPerDelivery: ((await handed()) - handedBefore) / times.length,
        deliveriesPerSecond: (0.8 * times.length) / ((t90 - t10) / 1000),
        publishPerSecond: count / ((published - started) / 1000),
        seconds: (times.at(-1)! - started) / 1000,
      };
    }

    /** The plain loop: `concurrency` clients, each POSTing signed envelopes to its receiver. */
    async function baseline(
      seconds: number,
    ): Promise<{ deliveriesPerSecond: number; deliveries: number; p99Ms: number }> {
      const ca = readFileSync(certs.caPath);
      const agents = receivers!.ports.map(
        () => new Agent({ keepAlive: true, maxSockets: endpointConcurrency, ca, scheduling: "lifo" }),
      );
      const latencies: number[] = [];
      const deadline = performance.now() + seconds * 1000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async (_, client) => {
          const index = client % receivers!.ports.length;
          const port = receivers!.ports[index]!;
          const secret = secrets[index]!;
          while (performance.now() < deadline) {
            const id = nextId();
            const body = Buffer.from(
              JSON.stringify({
                id,
                type: "booking.created",
                api_version: "2026-07-01",
                occurred_at: new Date().toISOString(),
                tenant,
                livemode: true,
                data: { object: JSON.parse(data) as unknown },
              }),
            );
            const t = Math.floor(Date.now() / 1000);
            const signature = createHmac("sha256", secret).update(`${t}.`).update(body).digest("hex");
            const sent = performance.now();
            await new Promise<void>((resolve, reject) => {
              const req = httpsRequest(
                {
                  host: "127.0.0.1",
                  port,
                  path: "/hook",
                  method: "POST",
                  agent: agents[index],
                  headers: {
                    "content-type": "application/json",
                    "user-agent": "bench-baseline/1.0",
                    "service-signature": `t=${t},v1=${signature}`,
                    "service-event-id": id,
                    "service-delivery-id": `dlv_${id}`,
                    "content-length": String(body.length),
                  },
                },
                (res) => {
                  res.resume();
                  res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`${res.statusCode}`))));
                },
              );
              req.on("error", reject);
              req.end(body);
            });
            latencies.push(performance.now() - sent);
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1000;
      for (const agent of agents) agent.destroy();
      await receivers!.drain();
      latencies.sort((a, b) => a - b);
      return {
        deliveriesPerSecond: latencies.length / elapsed,
        deliveries: latencies.length,
        p99Ms: percentile(latencies, 99),
      };
    }

    // Warm-up (JIT, pools, TLS sessions), not counted.
    await saturation(200);
    await baseline(2);

    const pipelineRuns: Saturation[] = [];
    const baselineRuns: Awaited<ReturnType<typeof baseline>>[] = [];
    for (let round = 0; round < rounds; round++) {
      baselineRuns.push(await baseline(durationSeconds));
      pipelineRuns.push(await saturation(burstEvents));
      console.log(
        `round ${round + 1}: baseline ${baselineRuns.at(-1)!.deliveriesPerSecond.toFixed(0)} deliveries/s; ` +
          `pipeline ${pipelineRuns.at(-1)!.deliveriesPerSecond.toFixed(0)} deliveries/s ` +
          `(publish ${pipelineRuns.at(-1)!.publishPerSecond.toFixed(0)} events/s, ` +
          `${pipelineRuns.at(-1)!.jobsHandedPerDelivery.toFixed(2)} jobs handed per delivery)`,
      );
    }
    const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;
    const pipelineRate = mean(pipelineRuns.map((r) => r.deliveriesPerSecond));
    const baselineRate = mean(baselineRuns.map((r) => r.deliveriesPerSecond));

    // Open loop at half the saturation rate, with commits and JetStream traffic counted around it.
    // BENCH_OPEN_RATE (deliveries/s) replaces half the measured rate (to compare builds at one rate).
    const openRate = Number(process.env.BENCH_OPEN_RATE ?? 0) || pipelineRate / 2;
    const eventRate = Math.max(1, openRate / receiverCount);
    const counters = async () => {
      // An idle backend flushes its pending statistics within PGSTAT_IDLE_INTERVAL (10 s).
      await sleep(11_000);
      await db.query("select pg_stat_clear_snapshot()");
      const { rows } = await db.query<{ n: string }>(
        "select xact_commit as n from pg_stat_database where datname = current_database()",
      );
      const eventsStream = await jsm.streams.info(`${namespace}EVENTS`);
      const jobsStream = await jsm.streams.info(`${namespace}WEBHOOK_DELIVERIES`);
      const fanout = await jsm.consumers.info(`${namespace}EVENTS`, "webhooks-fanout");
      const worker = await jsm.consumers.info(`${namespace}WEBHOOK_DELIVERIES`, "webhooks-delivery");
      return {
        commits: Number(rows[0]!.n),
        published: eventsStream.state.last_seq + jobsStream.state.last_seq,
        handed: fanout.delivered.consumer_seq + worker.delivered.consumer_seq,
      };
    };
    const before = await counters();
    const total = Math.floor(eventRate * durationSeconds);
    const ids = Array.from({ length: total }, nextId);
    const scheduledAt = new Map<string, number>();
    const receipts = awaitReceipts(receivers.drain, new Set(ids), total * receiverCount, 300_000);
    const start = now();
    const inFlight: Promise<unknown>[] = [];
    let issued = 0;
    while (issued < total) {
      const due = Math.min(total, Math.floor(((now() - start) / 1000) * eventRate) + 1);
      for (; issued < due; issued++) {
        const id = ids[issued]!;
        scheduledAt.set(id, start + (issued * 1000) / eventRate);
        inFlight.push(publish(id));
      }
      await sleep(1);
    }
    await Promise.all(inFlight);
    const openReceipts = await receipts;
    const latencies = openReceipts.map((r) => r.at - scheduledAt.get(r.id)!).sort((a, b) => a - b);
    // Every attempt recorded before its ack: wait until the ledger shows them all, then count.
    const ledger = async () =>
      (
        await db.query<{ succeeded: string; attempts: string }>(
          `select count(*) filter (where status = 'succeeded') as succeeded,
                  (select count(*) from webhooks.attempts a join webhooks.deliveries d2 on d2.id = a.delivery_id
                    where d2.event_id = any($1)) as attempts
             from webhooks.deliveries where event_id = any($1)`,
          [ids],
        )
      ).rows[0]!;
    let recorded = await ledger();
    for (let i = 0; i < 50 && Number(recorded.succeeded) < ids.length * receiverCount; i++) {
      await sleep(200);
      recorded = await ledger();
    }
    const after = await counters();
    const deliveries = openReceipts.length;
    const commitsPerDelivery = (after.commits - before.commits) / deliveries;
    const publishedPerDelivery = (after.published - before.published) / deliveries;
    const handedPerDelivery = (after.handed - before.handed) / deliveries;
    const open = {
      eventsPerSecond: eventRate,
      deliveriesPerSecond: eventRate * receiverCount,
      deliveries,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies.at(-1)!,
      succeededInLedger: Number(recorded.succeeded),
      attemptsInLedger: Number(recorded.attempts),
    };

    console.table([
      ...baselineRuns.map((r, i) => ({
        run: `baseline ${i + 1}: plain signed HTTPS loop, ${concurrency} concurrent`,
        "deliveries/s": Math.round(r.deliveriesPerSecond),
        deliveries: r.deliveries,
      })),
      ...pipelineRuns.map((r, i) => ({
        run: `pipeline ${i + 1}: PublishEvent -> webhooks -> receivers (burst of ${burstEvents} events)`,
        "deliveries/s": Math.round(r.deliveriesPerSecond),
        deliveries: r.deliveries,
      })),
    ]);
    const ratio = pipelineRate / baselineRate;
    console.log(
      `pipeline / baseline: ${ratio.toFixed(2)} (target >= 0.5 -> ${ratio >= 0.5 ? "PASS" : "BELOW TARGET"}); ` +
        `open loop at ${open.deliveriesPerSecond.toFixed(0)} deliveries/s (${eventRate.toFixed(1)} events/s x ${receiverCount}): ` +
        `end-to-end p50 ${open.p50Ms.toFixed(1)} ms, p99 ${open.p99Ms.toFixed(1)} ms, max ${open.maxMs.toFixed(1)} ms ` +
        `(target p99 < 250 -> ${open.p99Ms < 250 ? "PASS" : "ABOVE TARGET"})`,
    );
    console.log(
      `per delivery: Postgres commits ${commitsPerDelivery.toFixed(2)}, JetStream publishes (each with its PubAck) ` +
        `${publishedPerDelivery.toFixed(2)}, JetStream messages handed to consumers (each acked or nak'ed once) ` +
        `${handedPerDelivery.toFixed(2)}; ledger: ${open.succeededInLedger}/${deliveries} deliveries succeeded, ` +
        `${open.attemptsInLedger} attempts recorded`,
    );
    if (open.succeededInLedger !== deliveries) throw new Error("the ledger does not show every delivery as succeeded");
    await recordResult(repo, "webhooks", {
      bench: "webhooks",
      receivers: receiverCount,
      concurrency,
      rounds,
      burstEvents,
      durationSeconds,
      baseline: baselineRuns,
      pipeline: pipelineRuns,
      ratio,
      openLoop: open,
      commitsPerDelivery,
      publishedPerDelivery,
      handedPerDelivery,
    });
    events.close();
    hooks.close();
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
