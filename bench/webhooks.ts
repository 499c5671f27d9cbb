/**
 * npm run bench:webhooks (= `npx tsc -b && node bench/dist/webhooks.js`): the webhook delivery
 * pipeline against its floor and a plain loop, in the same run:
 *
 *   pipeline:  this process -> EventService/PublishEvent (gRPC) -> webhooks (outbox row, relay to
 *              JetStream EVENTS, fan-out into one delivery per endpoint, delivery job on JetStream,
 *              worker: claim, sign, HTTPS POST, attempt recorded in Postgres, then ack) -> the
 *              receivers (a separate process: RECEIVERS HTTPS servers answering 200 at once)
 *   floor:     the same hops written plainly with grpc-js, pg and nats in one process, none of our
 *              code (bench/webhooks-floor.ts, its own scratch database and streams): PublishEvent ->
 *              event row + outbox row in one transaction -> relay to JetStream (PubAcks awaited,
 *              outbox rows deleted in batch) -> pull consumer -> one transaction per batch of
 *              events inserting one delivery row per matching endpoint -> one job per delivery on
 *              a second stream (PubAcks awaited) -> ack the events -> pull consumer (64 attempts in
 *              flight, 8 per endpoint) -> sign HMAC-SHA256, HTTPS POST (keep-alive) -> attempt rows
 *              and delivery updates of the attempts that finished together in one transaction ->
 *              ack the jobs. The same durable work and the same commit-before-ack order.
 *   baseline:  this process, one Node event loop: signed HTTPS POSTs (the same headers, HMAC-SHA256
 *              per request, keep-alive) to the same receivers at the same concurrency, closed loop
 *              (the sender's ceiling: nothing durable).
 *
 * Every event matches every endpoint (one endpoint per receiver), so an event makes RECEIVERS
 * deliveries. Phases:
 *   1. rounds (BENCH_ROUNDS, default 2) alternating baseline / floor / pipeline, each at
 *      saturation: BENCH_EVENTS events (default 1500) published as fast as PublishEvent answers
 *      (16 calls in flight), deliveries/s over the middle 80% of receipts (p10 -> p90 receipt
 *      time); the baseline runs BENCH_DURATION seconds (default 8). CPU ms per delivery around
 *      each run (/proc): the service process(es), Postgres (the backends of the target's own
 *      database, and every postgres process of the shared server), nats-server (shared too),
 *      the receivers and this driver.
 *   2. scale (BENCH_REPLICAS=0 skips it): rounds alternating two webhooks processes (a second one
 *      started on the same database and NATS namespace, as STACK_REPLICAS does; publishes
 *      alternate between them) and one (the second stopped); two/one by deliveries/s.
 *   3. open loop, for the floor and the pipeline each at half its own saturation rate (or
 *      BENCH_OPEN_RATE deliveries/s for both): events on a fixed schedule for BENCH_DURATION
 *      seconds; end-to-end latency per delivery from the scheduled emit to the receiver's
 *      receipt (p50, p99). Every delivery must reach its receiver exactly once (by
 *      Service-Delivery-Id, the same ids as the target's deliveries table) and have its
 *      succeeded attempt in the target's tables; one signature per target is verified.
 *   4. counting: both targets restarted with their DATABASE_URL through a counting proxy
 *      (bench/pg-counting-proxy.ts: the 'Q' and 'E' messages of the wire protocol), then an
 *      open loop of BENCH_COUNT_DURATION seconds (default 4) each at the same rates; around it
 *      Postgres commits (pg_stat_database xact_commit of the target's database), statements
 *      (proxy) and JetStream publishes (stream sequences; each awaits a PubAck) and messages
 *      handed to consumers (each acked or nak'ed once) per delivery.
 *
 * Concurrency: the service's WEBHOOKS_CONCURRENCY (64) and WEBHOOKS_ENDPOINT_CONCURRENCY (8) cap
 * attempts in flight at min(64, 8 x RECEIVERS); the floor gets the same caps and the baseline
 * uses that many clients. Targets: pipeline >= 0.6 of the floor's deliveries/s (issue 19);
 * pipeline >= 0.5 of the baseline (issue 9); open-loop p99 < 250 ms. Env: BENCH_ROUNDS,
 * BENCH_EVENTS, BENCH_DURATION, BENCH_RECEIVERS (4), BENCH_REPLICAS (1), BENCH_COUNT_DURATION,
 * BENCH_LOG_LEVEL (warn), BENCH_CPU_PROF (profiles webhooks and the floor), BENCH_OPEN_RATE, and
 * WEBHOOKS_* variables, which are passed to the service (the two caps to the floor too).
 */
import { createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { createTestCertificates } from "@platform/local-stack/https-receiver";
import { createScratchDatabase, withDatabase } from "@platform/local-stack/postgres-databases";
import { startServiceProcess, type ServiceProcess } from "@platform/local-stack/service-process";
import { EventServiceClient, WebhookServiceClient } from "@platform/proto/webhooks/v1";
import { connect, type JetStreamManager } from "nats";
import pg from "pg";
import { percentile, recordResult } from "./load-generator.js";
import { startCountingProxy, type CountingProxy } from "./pg-counting-proxy.js";
import { cpuSnapshot, cpuSpent, pidsByCommand, postgresBackendsOf, type ProcessGroups } from "./process-cpu.js";
import { profiled } from "./profiled-env.js";
import {
  bookingData,
  bookingPublisher,
  createReceiverEndpoints,
  forkReceivers,
  webhooksServiceEnv,
} from "./webhooks-bench-setup.js";
import { addFloorEndpoint, createFloorSchema, floorSchema } from "./webhooks-floor-schema.js";

const repo = join(import.meta.dirname, "..", "..");
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const burstEvents = Number(process.env.BENCH_EVENTS ?? 1500);
const durationSeconds = Number(process.env.BENCH_DURATION ?? 8);
const countSeconds = Number(process.env.BENCH_COUNT_DURATION ?? 4);
const receiverCount = Number(process.env.BENCH_RECEIVERS ?? 4);
const withReplicas = (process.env.BENCH_REPLICAS ?? "1") !== "0";
const logLevel = process.env.BENCH_LOG_LEVEL ?? "warn";
const serviceConcurrency = Number(process.env.WEBHOOKS_CONCURRENCY ?? 64);
const endpointConcurrency = Number(process.env.WEBHOOKS_ENDPOINT_CONCURRENCY ?? 8);
const concurrency = Math.min(serviceConcurrency, endpointConcurrency * receiverCount);
const publishConcurrency = 16;
const tenant = "bench";
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mean = (values: number[]) => values.reduce((s, v) => s + v, 0) / values.length;

interface Drained {
  ids: string[];
  deliveries: string[];
  at: number[];
  sample?: { receiver: number; signature: string; body: string };
}

/** The receivers' process: its ports, and their receipts since the last drain. */
async function startReceivers(keyPath: string, certPath: string) {
  const { child, ports } = await forkReceivers("webhooks-receivers.js", {
    receivers: receiverCount,
    keyPath,
    certPath,
  });
  const drain = () =>
    new Promise<Drained>((resolve) => {
      child.once("message", (m: Drained) => resolve(m));
      child.send({ type: "drain" });
    });
  return { child, ports, drain };
}

interface Receipt {
  id: string;
  delivery: string;
  at: number;
}

/** Receipts of events outside the run being awaited (a delivery received again after its run). */
let strayReceipts = 0;

/** Collects receipts until `expected` deliveries of the given events arrived (or the deadline). */
async function awaitReceipts(
  drain: () => Promise<Drained>,
  wanted: Set<string>,
  expected: number,
  timeoutMs: number,
): Promise<{ receipts: Receipt[]; sample: Drained["sample"] }> {
  const receipts: Receipt[] = [];
  let sample: Drained["sample"];
  const deadline = Date.now() + timeoutMs;
  while (receipts.length < expected) {
    if (Date.now() > deadline) {
      throw new Error(`only ${receipts.length} of ${expected} deliveries arrived within ${timeoutMs} ms`);
    }
    await sleep(200);
    const drained = await drain();
    if (drained.sample && wanted.has((JSON.parse(drained.sample.body) as { id: string }).id)) sample = drained.sample;
    drained.ids.forEach((id, i) => {
      if (wanted.has(id)) receipts.push({ id, delivery: drained.deliveries[i]!, at: drained.at[i]! });
      else strayReceipts += 1;
    });
  }
  return { receipts, sample };
}

type Cpu = Record<string, number>;

interface Saturation {
  target: string;
  deliveries: number;
  /** Jobs handed to the delivery worker per delivery (above 1: naks, e.g. an endpoint at its limit). */
  jobsHandedPerDelivery: number;
  deliveriesPerSecond: number;
  publishPerSecond: number;
  seconds: number;
  /** Deliveries received more than once. */
  duplicates: number;
  cpuMsPerDelivery: Cpu;
}

interface OpenLoop {
  target: string;
  eventsPerSecond: number;
  deliveriesPerSecond: number;
  deliveries: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  succeededInLedger: number;
  attemptsInLedger: number;
  duplicates: number;
  /** Every delivery received once, and the received ids are exactly the target's delivery rows. */
  exactlyOnce: boolean;
  signatureChecked: boolean;
  cpuMsPerDelivery: Cpu;
}

interface Counted {
  target: string;
  deliveries: number;
  commitsPerDelivery: number;
  statementsPerDelivery: number;
  simpleQueriesPerDelivery: number;
  executesPerDelivery: number;
  publishedPerDelivery: number;
  handedPerDelivery: number;
}

/** A system under test: how to publish to it, its processes, database and streams. */
interface Target {
  name: string;
  publish(eventId: string): Promise<unknown>;
  pids(): number[];
  database: string;
  streams: { events: string; jobs: string; fanout: string; delivery: string };
  /** The delivery rows of these events: id, succeeded or not, attempts recorded. */
  ledger(ids: string[]): Promise<{ id: string; succeeded: boolean; attempts: number }[]>;
  secrets: string[];
  close(): void;
}

async function main() {
  const scratch = await createScratchDatabase("benchwebhooks");
  // The floor in a database of its own: commits (pg_stat_database) and backend CPU are per database.
  const floorScratch = await createScratchDatabase("benchwhfloor");
  const certs = await createTestCertificates();
  const namespace = `bench${process.pid}_${randomBytes(3).toString("hex")}_`;
  const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const nc = await connect({ servers: natsUrl });
  const jsm: JetStreamManager = await nc.jetstreamManager();
  const db = new pg.Client({ connectionString: scratch.url });
  await db.connect();
  const floorDb = new pg.Client({ connectionString: floorScratch.url });
  await floorDb.connect();
  // pg_stat_database is read from another database, so reading it commits nothing in the measured ones.
  const stats = new pg.Client({ connectionString: withDatabase(scratch.url, "postgres") });
  await stats.connect();
  const secretsKey = randomBytes(32).toString("base64");
  const floorKey = randomBytes(32);
  const services: ServiceProcess[] = [];
  const proxies: CountingProxy[] = [];
  let receivers: Awaited<ReturnType<typeof startReceivers>> | undefined;
  const targets: Target[] = [];
  try {
    receivers = await startReceivers(join(certs.dir, "server.key"), join(certs.dir, "server.pem"));
    const start = async (name: string, entry: string, env: Record<string, string>, inheritOutput = false) => {
      const started = await startServiceProcess({ name, entry, env: profiled(env), timeoutMs: 60_000, inheritOutput });
      services.push(started);
      return started;
    };
    const stop = async (service: ServiceProcess) => {
      await service.stop();
      services.splice(services.indexOf(service), 1);
    };
    const startWebhooks = (databaseUrl: string, name = "webhooks") =>
      start(
        name,
        join(repo, "services", "webhooks", "dist", "src", "main.js"),
        webhooksServiceEnv({ databaseUrl, secretsKey, natsUrl, namespace, logLevel, caPath: certs.caPath }),
      );
    const startFloor = (databaseUrl: string) =>
      start(
        "webhooks-floor",
        join(repo, "bench", "dist", "webhooks-floor.js"),
        {
          DATABASE_URL: databaseUrl,
          NATS_URL: natsUrl,
          FLOOR_NAMESPACE: namespace,
          SECRETS_KEY: floorKey.toString("base64"),
          FLOOR_CONCURRENCY: String(serviceConcurrency),
          FLOOR_ENDPOINT_CONCURRENCY: String(endpointConcurrency),
          NODE_EXTRA_CA_CERTS: certs.caPath,
        },
        true, // its only lines besides "listening" are failures
      );
    const grpcAddress = (service: ServiceProcess) => `127.0.0.1:${service.listening.grpcPort as number}`;

    // The pipeline's endpoints, through its API.
    let webhooks = await startWebhooks(scratch.url);
    const pipelineSecrets: string[] = [];
    {
      const hooks = new WebhookServiceClient(grpcAddress(webhooks), credentials.createInsecure());
      for (const created of await createReceiverEndpoints(hooks, tenant, receivers.ports)) {
        pipelineSecrets.push(created.secret);
      }
      hooks.close();
    }
    // The floor's endpoints, in its tables (it loads them once at start).
    await createFloorSchema(floorDb);
    const floorSecrets: string[] = [];
    for (const port of receivers.ports) {
      const added = await addFloorEndpoint(floorDb, floorKey, {
        tenant,
        url: `https://127.0.0.1:${port}/hook`,
        eventTypes: ["booking.*"],
      });
      floorSecrets.push(added.secret);
    }
    let floor = await startFloor(floorScratch.url);

    const publisher = (clients: EventServiceClient[]) => bookingPublisher(clients, tenant);
    // The bench's own ledger queries commit in the measured databases: counted, and taken off.
    const ledgerQueries: Record<string, number> = {};
    const ledgerOf =
      (client: pg.Client, schema: string) =>
      async (ids: string[]): Promise<{ id: string; succeeded: boolean; attempts: number }[]> => {
        const database = client.database!;
        ledgerQueries[database] = (ledgerQueries[database] ?? 0) + 1;
        const { rows } = await client.query<{ id: string; status: string; attempts: string }>(
          `select d.id, d.status, (select count(*) from ${schema}.attempts a where a.delivery_id = d.id) as attempts
             from ${schema}.deliveries d where d.event_id = any($1)`,
          [ids],
        );
        return rows.map((r) => ({ id: r.id, succeeded: r.status === "succeeded", attempts: Number(r.attempts) }));
      };
    const makeFloorTarget = (service: ServiceProcess): Target => {
      const client = new EventServiceClient(grpcAddress(service), credentials.createInsecure());
      return {
        name: "floor",
        publish: publisher([client]),
        pids: () => [service.pid],
        database: floorScratch.name,
        streams: {
          events: `${namespace}FLOOR_EVENTS`,
          jobs: `${namespace}FLOOR_JOBS`,
          fanout: "floor-fanout",
          delivery: "floor-delivery",
        },
        ledger: ledgerOf(floorDb, floorSchema),
        secrets: floorSecrets,
        close: () => client.close(),
      };
    };
    const makePipelineTarget = (name: string, processes: ServiceProcess[]): Target => {
      const clients = processes.map((p) => new EventServiceClient(grpcAddress(p), credentials.createInsecure()));
      return {
        name,
        publish: publisher(clients),
        pids: () => processes.map((p) => p.pid),
        database: scratch.name,
        streams: {
          events: `${namespace}EVENTS`,
          jobs: `${namespace}WEBHOOK_DELIVERIES`,
          fanout: "webhooks-fanout",
          delivery: "webhooks-delivery",
        },
        // The delivery history of the webhooks service: its day partitions (webhooks_history).
        ledger: ledgerOf(db, "webhooks_history"),
        secrets: pipelineSecrets,
        close: () => clients.forEach((c) => c.close()),
      };
    };
    let floorTarget = makeFloorTarget(floor);
    let pipelineTarget = makePipelineTarget("pipeline", [webhooks]);
    targets.push(floorTarget, pipelineTarget);

    const groups = (target: Target | undefined): ProcessGroups => ({
      ...(target ? { [target.name.startsWith("floor") ? "floor" : "webhooks"]: () => target.pids() } : {}),
      ...(target ? { "postgres (own db)": () => postgresBackendsOf(target.database) } : {}),
      "postgres (all)": () => pidsByCommand("postgres"),
      "nats-server": () => pidsByCommand("nats-server"),
      receivers: () => [receivers!.child.pid!],
      driver: () => [process.pid],
    });
    const perDelivery = (spent: Cpu, deliveries: number): Cpu =>
      Object.fromEntries(Object.entries(spent).map(([name, ms]) => [name, ms / deliveries]));

    let sequence = 0;
    const nextId = () => `evt_bench_${process.pid}_${sequence++}`;

    /** Polls the target's tables until every delivery of `ids` succeeded (or 10 s passed). */
    async function settledLedger(target: Target, ids: string[], expected: number) {
      let rows = await target.ledger(ids);
      for (let i = 0; i < 50 && rows.filter((r) => r.succeeded).length < expected; i++) {
        await sleep(200);
        rows = await target.ledger(ids);
      }
      return rows;
    }

    /** BENCH_EVENTS events as fast as PublishEvent answers; deliveries/s over the middle 80%. */
    async function saturation(target: Target, count: number): Promise<Saturation> {
      const ids = Array.from({ length: count }, nextId);
      const wanted = new Set(ids);
      const handed = async () =>
        (await jsm.consumers.info(target.streams.jobs, target.streams.delivery)).delivered.consumer_seq;
      const handedBefore = await handed();
      const cpuBefore = cpuSnapshot(groups(target));
      const started = now();
      let next = 0;
      const publishing = Promise.all(
        Array.from({ length: publishConcurrency }, async () => {
          while (next < ids.length) await target.publish(ids[next++]!);
        }),
      ).then(() => now());
      const collected = awaitReceipts(receivers!.drain, wanted, count * receiverCount, 300_000);
      const published = await publishing;
      const { receipts } = await collected;
      await settledLedger(target, ids, count * receiverCount);
      const cpu = perDelivery(cpuSpent(cpuBefore, cpuSnapshot(groups(target))), receipts.length);
      const times = receipts.map((r) => r.at).sort((a, b) => a - b);
      const t10 = percentile(times, 10);
      const t90 = percentile(times, 90);
      return {
        target: target.name,
        deliveries: times.length,
        jobsHandedPerDelivery: ((await handed()) - handedBefore) / times.length,
        deliveriesPerSecond: (0.8 * times.length) / ((t90 - t10) / 1000),
        publishPerSecond: count / ((published - started) / 1000),
        seconds: (times.at(-1)! - started) / 1000,
        duplicates: receipts.length - new Set(receipts.map((r) => r.delivery)).size,
        cpuMsPerDelivery: cpu,
      };
    }

    /** The plain loop: `concurrency` clients, each POSTing signed envelopes to its receiver. */
    async function baseline(seconds: number) {
      const ca = readFileSync(certs.caPath);
      const agents = receivers!.ports.map(
        () => new Agent({ keepAlive: true, maxSockets: endpointConcurrency, ca, scheduling: "lifo" }),
      );
      const latencies: number[] = [];
      const cpuBefore = cpuSnapshot(groups(undefined));
      const deadline = performance.now() + seconds * 1000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async (_, client) => {
          const index = client % receivers!.ports.length;
          const port = receivers!.ports[index]!;
          const secret = pipelineSecrets[index]!;
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
                data: { object: JSON.parse(bookingData) as unknown },
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
      const cpu = perDelivery(cpuSpent(cpuBefore, cpuSnapshot(groups(undefined))), latencies.length);
      latencies.sort((a, b) => a - b);
      return {
        target: "baseline",
        deliveriesPerSecond: latencies.length / elapsed,
        deliveries: latencies.length,
        p99Ms: percentile(latencies, 99),
        cpuMsPerDelivery: cpu,
      };
    }

    /** Events on a fixed schedule; latency from the scheduled emit to the receipt; ledger checks. */
    async function openLoop(target: Target, deliveriesPerSecond: number, seconds: number): Promise<OpenLoop> {
      const eventRate = Math.max(1, deliveriesPerSecond / receiverCount);
      const total = Math.max(1, Math.floor(eventRate * seconds));
      const ids = Array.from({ length: total }, nextId);
      const scheduledAt = new Map<string, number>();
      const expected = total * receiverCount;
      const collected = awaitReceipts(receivers!.drain, new Set(ids), expected, 300_000);
      const cpuBefore = cpuSnapshot(groups(target));
      const start = now();
      const inFlight: Promise<unknown>[] = [];
      let issued = 0;
      while (issued < total) {
        const due = Math.min(total, Math.floor(((now() - start) / 1000) * eventRate) + 1);
        for (; issued < due; issued++) {
          const id = ids[issued]!;
          scheduledAt.set(id, start + (issued * 1000) / eventRate);
          inFlight.push(target.publish(id));
        }
        await sleep(1);
      }
      await Promise.all(inFlight);
      const { receipts, sample } = await collected;
      // Every attempt recorded before its ack: wait until the ledger shows them all.
      const rows = await settledLedger(target, ids, expected);
      const cpu = perDelivery(cpuSpent(cpuBefore, cpuSnapshot(groups(target))), receipts.length);
      const latencies = receipts.map((r) => r.at - scheduledAt.get(r.id)!).sort((a, b) => a - b);
      const received = new Set(receipts.map((r) => r.delivery));
      const exactlyOnce =
        received.size === receipts.length &&
        receipts.length === expected &&
        rows.length === expected &&
        rows.every((r) => received.has(r.id));
      let signatureChecked = false;
      if (sample) {
        const [t, v1] = sample.signature.split(",").map((part) => part.slice(part.indexOf("=") + 1));
        const secret = target.secrets[sample.receiver]!;
        signatureChecked = createHmac("sha256", secret).update(`${t}.${sample.body}`).digest("hex") === v1;
      }
      return {
        target: target.name,
        eventsPerSecond: eventRate,
        deliveriesPerSecond: eventRate * receiverCount,
        deliveries: receipts.length,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        maxMs: latencies.at(-1)!,
        succeededInLedger: rows.filter((r) => r.succeeded).length,
        attemptsInLedger: rows.reduce((s, r) => s + r.attempts, 0),
        duplicates: receipts.length - received.size,
        exactlyOnce,
        signatureChecked,
        cpuMsPerDelivery: cpu,
      };
    }

    const round = (n: number) => Math.round(n);
    const ms = (n: number | undefined) => (n === undefined ? "" : n.toFixed(3));
    const cpuLine = (cpu: Cpu) =>
      Object.entries(cpu)
        .map(([name, v]) => `${name} ${v.toFixed(3)}`)
        .join(", ");

    // Warm-up (JIT, pools, TLS sessions), not counted.
    await saturation(floorTarget, 200);
    await saturation(pipelineTarget, 200);
    await baseline(2);

    // 1. Rounds at saturation: baseline, floor, pipeline.
    const baselineRuns: Awaited<ReturnType<typeof baseline>>[] = [];
    const floorRuns: Saturation[] = [];
    const pipelineRuns: Saturation[] = [];
    for (let r = 0; r < rounds; r++) {
      baselineRuns.push(await baseline(durationSeconds));
      floorRuns.push(await saturation(floorTarget, burstEvents));
      pipelineRuns.push(await saturation(pipelineTarget, burstEvents));
      const [b, f, p] = [baselineRuns.at(-1)!, floorRuns.at(-1)!, pipelineRuns.at(-1)!];
      console.log(
        `round ${r + 1}: baseline ${round(b.deliveriesPerSecond)} deliveries/s; floor ${round(f.deliveriesPerSecond)} ` +
          `(publish ${round(f.publishPerSecond)} events/s); pipeline ${round(p.deliveriesPerSecond)} ` +
          `(publish ${round(p.publishPerSecond)} events/s, ${p.jobsHandedPerDelivery.toFixed(2)} jobs handed per delivery); ` +
          `pipeline/floor ${(p.deliveriesPerSecond / f.deliveriesPerSecond).toFixed(2)}`,
      );
      console.log(`  CPU ms/delivery floor: ${cpuLine(f.cpuMsPerDelivery)}`);
      console.log(`  CPU ms/delivery pipeline: ${cpuLine(p.cpuMsPerDelivery)}`);
    }
    const floorRate = mean(floorRuns.map((r) => r.deliveriesPerSecond));
    const pipelineRate = mean(pipelineRuns.map((r) => r.deliveriesPerSecond));
    const baselineRate = mean(baselineRuns.map((r) => r.deliveriesPerSecond));

    // 2. Scale: two webhooks processes against one, alternating.
    const twoRuns: Saturation[] = [];
    const oneRuns: Saturation[] = [];
    if (withReplicas) {
      for (let r = 0; r < rounds; r++) {
        const second = await startWebhooks(scratch.url, "webhooks-2");
        const two = makePipelineTarget("pipeline x2", [webhooks, second]);
        await saturation(two, 100); // the second process's pools and connections
        twoRuns.push(await saturation(two, burstEvents));
        two.close();
        await stop(second);
        oneRuns.push(await saturation(pipelineTarget, burstEvents));
        const [t, o] = [twoRuns.at(-1)!, oneRuns.at(-1)!];
        console.log(
          `scale round ${r + 1}: two webhooks processes ${round(t.deliveriesPerSecond)} deliveries/s ` +
            `(publish ${round(t.publishPerSecond)} events/s), one ${round(o.deliveriesPerSecond)}: ` +
            `two/one ${(t.deliveriesPerSecond / o.deliveriesPerSecond).toFixed(2)}`,
        );
        console.log(`  CPU ms/delivery two: ${cpuLine(t.cpuMsPerDelivery)}`);
      }
    }

    // 3. Open loop at half each one's own saturation rate.
    const fixedRate = Number(process.env.BENCH_OPEN_RATE ?? 0);
    const floorOpenRate = fixedRate || floorRate / 2;
    const pipelineOpenRate = fixedRate || pipelineRate / 2;
    const floorOpen = await openLoop(floorTarget, floorOpenRate, durationSeconds);
    const pipelineOpen = await openLoop(pipelineTarget, pipelineOpenRate, durationSeconds);

    // 4. Counting: both restarted through the counting proxies; commits and statements per delivery.
    const pgUrl = new URL(scratch.url);
    const upstream = { host: pgUrl.hostname, port: Number(pgUrl.port || 5432) };
    const viaProxy = (url: string, proxy: CountingProxy) => {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(proxy.port);
      return u.toString();
    };
    const floorProxy = await startCountingProxy(upstream);
    const pipelineProxy = await startCountingProxy(upstream);
    proxies.push(floorProxy, pipelineProxy);
    floorTarget.close();
    pipelineTarget.close();
    await stop(floor);
    await stop(webhooks);
    floor = await startFloor(viaProxy(floorScratch.url, floorProxy));
    webhooks = await startWebhooks(viaProxy(scratch.url, pipelineProxy));
    floorTarget = makeFloorTarget(floor);
    pipelineTarget = makePipelineTarget("pipeline", [webhooks]);
    targets.push(floorTarget, pipelineTarget);
    await saturation(floorTarget, 100);
    await saturation(pipelineTarget, 100);
    const counters = async () => {
      const { rows } = await stats.query<{ datname: string; n: string }>(
        "select datname, xact_commit as n from pg_stat_database where datname = any($1)",
        [[scratch.name, floorScratch.name]],
      );
      const commits = Object.fromEntries(rows.map((r) => [r.datname, Number(r.n)]));
      const of = async (target: Target, proxy: CountingProxy) => {
        const events = await jsm.streams.info(target.streams.events);
        const jobs = await jsm.streams.info(target.streams.jobs);
        const fanout = await jsm.consumers.info(target.streams.events, target.streams.fanout);
        const worker = await jsm.consumers.info(target.streams.jobs, target.streams.delivery);
        return {
          commits: commits[target.database]! - (ledgerQueries[target.database] ?? 0),
          ...proxy.counts(),
          published: events.state.last_seq + jobs.state.last_seq,
          handed: fanout.delivered.consumer_seq + worker.delivered.consumer_seq,
        };
      };
      return { floor: await of(floorTarget, floorProxy), pipeline: await of(pipelineTarget, pipelineProxy) };
    };
    // An idle backend flushes its pending statistics within PGSTAT_IDLE_INTERVAL (10 s).
    await sleep(11_000);
    await stats.query("select pg_stat_clear_snapshot()");
    const before = await counters();
    const floorCountRun = await openLoop(floorTarget, floorOpenRate, countSeconds);
    const pipelineCountRun = await openLoop(pipelineTarget, pipelineOpenRate, countSeconds);
    await sleep(11_000);
    await stats.query("select pg_stat_clear_snapshot()");
    const after = await counters();
    const counted = (name: "floor" | "pipeline", deliveries: number): Counted => {
      const [b, a] = [before[name], after[name]];
      const d = (key: keyof typeof a) => (a[key] - b[key]) / deliveries;
      return {
        target: name,
        deliveries,
        commitsPerDelivery: d("commits"),
        statementsPerDelivery: d("simple") + d("executes"),
        simpleQueriesPerDelivery: d("simple"),
        executesPerDelivery: d("executes"),
        publishedPerDelivery: d("published"),
        handedPerDelivery: d("handed"),
      };
    };
    const floorCounted = counted("floor", floorCountRun.deliveries);
    const pipelineCounted = counted("pipeline", pipelineCountRun.deliveries);

    // The report.
    console.table([
      ...baselineRuns.map((r, i) => ({
        run: `baseline ${i + 1}: plain signed HTTPS loop, ${concurrency} concurrent`,
        "deliveries/s": round(r.deliveriesPerSecond),
        deliveries: r.deliveries,
      })),
      ...[...floorRuns, ...pipelineRuns, ...twoRuns, ...oneRuns].map((r) => ({
        run: `${r.target}: burst of ${burstEvents} events`,
        "deliveries/s": round(r.deliveriesPerSecond),
        deliveries: r.deliveries,
      })),
    ]);
    const meanCpu = (runs: { cpuMsPerDelivery: Cpu }[], name: string) =>
      runs.some((r) => name in r.cpuMsPerDelivery) ? mean(runs.map((r) => r.cpuMsPerDelivery[name] ?? 0)) : undefined;
    const service = (runs: { cpuMsPerDelivery: Cpu }[]) =>
      meanCpu(runs, runs.some((r) => "floor" in r.cpuMsPerDelivery) ? "floor" : "webhooks");
    const column = (
      runs: { cpuMsPerDelivery: Cpu; deliveriesPerSecond: number }[],
      open: OpenLoop | undefined,
      count: Counted | undefined,
    ) => ({
      "deliveries/s at saturation (mean)": runs.length ? round(mean(runs.map((r) => r.deliveriesPerSecond))) : "",
      "open loop: deliveries/s": open ? round(open.deliveriesPerSecond) : "",
      "open loop: p50 ms": open ? open.p50Ms.toFixed(1) : "",
      "open loop: p99 ms": open ? open.p99Ms.toFixed(1) : "",
      "Postgres commits/delivery": count ? count.commitsPerDelivery.toFixed(2) : "",
      "Postgres statements/delivery": count ? count.statementsPerDelivery.toFixed(2) : "",
      "JetStream publishes/delivery": count ? count.publishedPerDelivery.toFixed(2) : "",
      "JetStream msgs handed/delivery": count ? count.handedPerDelivery.toFixed(2) : "",
      "CPU ms/delivery: service": ms(service(runs)),
      "CPU ms/delivery: postgres (own db)": ms(meanCpu(runs, "postgres (own db)")),
      "CPU ms/delivery: postgres (all)": ms(meanCpu(runs, "postgres (all)")),
      "CPU ms/delivery: nats-server": ms(meanCpu(runs, "nats-server")),
      "CPU ms/delivery: receivers": ms(meanCpu(runs, "receivers")),
      "CPU ms/delivery: bench driver": ms(meanCpu(runs, "driver")),
      "open loop CPU ms/delivery: service": open
        ? ms(open.cpuMsPerDelivery.floor ?? open.cpuMsPerDelivery.webhooks)
        : "",
      "open loop CPU ms/delivery: postgres (own db)": open ? ms(open.cpuMsPerDelivery["postgres (own db)"]) : "",
      "open loop CPU ms/delivery: nats-server": open ? ms(open.cpuMsPerDelivery["nats-server"]) : "",
    });
    const summary: Record<string, Record<string, string | number>> = {
      floor: column(floorRuns, floorOpen, floorCounted),
      pipeline: column(pipelineRuns, pipelineOpen, pipelineCounted),
      ...(twoRuns.length ? { "pipeline x2": column(twoRuns, undefined, undefined) } : {}),
      baseline: column(baselineRuns, undefined, undefined),
    };
    console.log(
      "CPU at saturation (mean of the rounds); postgres (all) and nats-server include other users of the shared servers",
    );
    // One row per figure, one column per target.
    const columns = Object.entries(summary);
    console.table(
      Object.fromEntries(
        Object.keys(columns[0]![1]).map((figure) => [
          figure,
          Object.fromEntries(columns.map(([name, values]) => [name, values[figure]])),
        ]),
      ),
    );
    const ratio = pipelineRate / floorRate;
    console.log(
      `pipeline / floor: ${ratio.toFixed(2)} (target >= 0.6 -> ${ratio >= 0.6 ? "PASS" : "BELOW TARGET"}); ` +
        `pipeline / baseline: ${(pipelineRate / baselineRate).toFixed(2)} (issue 9 target >= 0.5); ` +
        `floor / baseline: ${(floorRate / baselineRate).toFixed(2)}`,
    );
    if (twoRuns.length) {
      const scale = mean(twoRuns.map((r) => r.deliveriesPerSecond)) / mean(oneRuns.map((r) => r.deliveriesPerSecond));
      console.log(`two webhooks processes / one: ${scale.toFixed(2)} (rounds alternating, one = the second stopped)`);
    }
    for (const open of [floorOpen, pipelineOpen]) {
      console.log(
        `${open.target} open loop at ${open.deliveriesPerSecond.toFixed(0)} deliveries/s ` +
          `(${open.eventsPerSecond.toFixed(1)} events/s x ${receiverCount}): end-to-end p50 ${open.p50Ms.toFixed(1)} ms, ` +
          `p99 ${open.p99Ms.toFixed(1)} ms, max ${open.maxMs.toFixed(1)} ms (target p99 < 250 -> ` +
          `${open.p99Ms < 250 ? "PASS" : "ABOVE TARGET"}); ledger: ${open.succeededInLedger}/${open.deliveries} ` +
          `succeeded, ${open.attemptsInLedger} attempts; received exactly once: ${open.exactlyOnce ? "yes" : "NO"}` +
          `; signature verified: ${open.signatureChecked ? "yes" : "NO"}`,
      );
    }
    for (const c of [floorCounted, pipelineCounted]) {
      console.log(
        `${c.target} per delivery (counting run of ${c.deliveries} deliveries through the proxy): Postgres commits ` +
          `${c.commitsPerDelivery.toFixed(2)}, statements ${c.statementsPerDelivery.toFixed(2)} (simple ` +
          `${c.simpleQueriesPerDelivery.toFixed(2)} + extended ${c.executesPerDelivery.toFixed(2)}), JetStream ` +
          `publishes ${c.publishedPerDelivery.toFixed(2)}, messages handed ${c.handedPerDelivery.toFixed(2)}`,
      );
    }
    const perCore = (runs: Saturation[], name: string) => {
      const cpu = meanCpu(runs, name);
      return cpu ? round(1000 / cpu) : NaN;
    };
    for (const [label, runs, own] of [
      ["floor", floorRuns, "floor"],
      ["pipeline", pipelineRuns, "webhooks"],
    ] as const) {
      console.log(
        `${label}: deliveries/s per core at saturation (1000 / CPU ms per delivery): ${own} ${perCore(runs, own)}, ` +
          `Postgres (own db backends) ${perCore(runs, "postgres (own db)")}, nats-server ${perCore(runs, "nats-server")}`,
      );
    }
    if (strayReceipts > 0) console.log(`stray receipts (deliveries received after their run ended): ${strayReceipts}`);
    const failures = [
      ...[floorOpen, pipelineOpen, floorCountRun, pipelineCountRun]
        .filter((o) => o.succeededInLedger !== o.deliveries || !o.exactlyOnce)
        .map((o) => `${o.target}: not every delivery succeeded in the ledger and was received exactly once`),
      ...[floorOpen, pipelineOpen]
        .filter((o) => !o.signatureChecked)
        .map((o) => `${o.target}: the sampled signature did not verify`),
      ...floorRuns.filter((r) => r.duplicates > 0).map(() => "floor: a delivery was received twice at saturation"),
    ];
    await recordResult(repo, "webhooks", {
      bench: "webhooks",
      receivers: receiverCount,
      concurrency,
      rounds,
      burstEvents,
      durationSeconds,
      countSeconds,
      baseline: baselineRuns,
      floor: floorRuns,
      pipeline: pipelineRuns,
      pipelineTwoProcesses: twoRuns,
      pipelineOneProcessBetween: oneRuns,
      ratio,
      ratioToBaseline: pipelineRate / baselineRate,
      openLoop: { floor: floorOpen, pipeline: pipelineOpen },
      counted: { floor: floorCounted, pipeline: pipelineCounted },
      strayReceipts,
    });
    if (failures.length > 0) throw new Error(failures.join("; "));
  } finally {
    for (const target of targets) target.close();
    for (const service of [...services].reverse()) await service.stop();
    for (const proxy of proxies) await proxy.close();
    receivers?.child.kill();
    await db.end().catch(() => undefined);
    await floorDb.end().catch(() => undefined);
    await stats.end().catch(() => undefined);
    for (const name of [
      `${namespace}EVENTS`,
      `${namespace}WEBHOOK_DELIVERIES`,
      `${namespace}FLOOR_EVENTS`,
      `${namespace}FLOOR_JOBS`,
    ]) {
      await jsm.streams.delete(name).catch(() => undefined);
    }
    await nc.close();
    await certs.remove();
    await scratch.drop();
    await floorScratch.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
