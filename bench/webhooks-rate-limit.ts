/**
 * npm run bench:webhooks-rate-limit — does an endpoint's rate limit hold across replicas, and
 * leave the tenant's other endpoints alone (issue 34, item 3)?
 *
 *   this process -> EventService/PublishEvent (gRPC, both replicas in turn) -> two webhooks
 *   processes on one database and NATS namespace -> the receivers (bench/webhooks-receivers.ts,
 *   a separate process; each receipt noted with its delivery id and time)
 *
 * One tenant, two endpoints: A (`booking.created`, rateLimit BENCH_LIMIT, default 20/s) and B
 * (`booking.*`, unlimited). Two phases, each an open loop of BENCH_RATE events per second (default
 * 100) for BENCH_DURATION seconds (default 20):
 *
 *   1. baseline: `booking.cancelled` events, which only B subscribes to: B's rate alone;
 *   2. beside A: `booking.created` events, to both: A gets BENCH_RATE offered and must receive
 *      BENCH_LIMIT per second (the rest waits for its slot), B must keep its rate.
 *
 * Then a control, 3: A's limit removed (PATCH), the same `booking.created` loop: B beside an A
 * that takes every delivery, so B's latency in 2 can be told apart from the work of the second
 * endpoint itself (twice the deliveries fanned out).
 *
 * Printed: A's received rate over phase 2 (from its first receipt + 1 s to the end of the phase)
 * against the limit (PASS within 5%), the most A received in any one second and the most slots the
 * limiter gave in any one second (the database's clock) (the limit's burst is 1: at most BENCH_LIMIT + 1 in a closed second),
 * A's attempts per received delivery (waiting is no attempt: 1.00), and B's received rate and p50 /
 * p99 latency (publish to receipt) alone and beside A. A's backlog is left behind (the database is
 * dropped at the end).
 *
 * Env: BENCH_LIMIT, BENCH_RATE, BENCH_DURATION, BENCH_LOG_LEVEL (warn), and WEBHOOKS_* variables,
 * which are passed to both replicas.
 */
import { randomBytes } from "node:crypto";
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
import { connect } from "nats";
import pg from "pg";
import { percentile, recordResult } from "./load-generator.js";
import { bookingData, forkReceivers, webhooksServiceEnv } from "./webhooks-bench-setup.js";

const repo = join(import.meta.dirname, "..", "..");
const limit = Number(process.env.BENCH_LIMIT ?? 20);
const rate = Number(process.env.BENCH_RATE ?? 100);
const durationS = Number(process.env.BENCH_DURATION ?? 20);
const logLevel = process.env.BENCH_LOG_LEVEL ?? "warn";
const tenant = "bench";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Receipts {
  ids: string[];
  deliveries: string[];
  at: number[];
}

/** The open loop: `rate` events a second of `type` for `durationS`, through the clients in turn; publish times by event id. */
async function openLoop(clients: readonly EventServiceClient[], type: string, label: string) {
  const published = new Map<string, number>();
  const pending: Promise<PublishEventResponse>[] = [];
  const start = performance.timeOrigin + performance.now();
  let sent = 0;
  const total = Math.round(rate * durationS);
  while (sent < total) {
    const now = performance.timeOrigin + performance.now();
    const due = Math.min(total, Math.floor(((now - start) / 1000) * rate) + 1);
    for (; sent < due; sent++) {
      const eventId = `evt_${label}_${sent}`;
      published.set(eventId, performance.timeOrigin + performance.now());
      const client = clients[sent % clients.length]!;
      pending.push(
        new Promise<PublishEventResponse>((resolve, reject) =>
          client.publishEvent({ tenantId: tenant, type, dataJson: bookingData, eventId, occurredAt: "" }, (e, r) =>
            e ? reject(e) : resolve(r),
          ),
        ),
      );
    }
    await sleep(5);
  }
  await Promise.all(pending);
  return { published, start, end: start + durationS * 1000 };
}

function createEndpoint(
  hooks: WebhookServiceClient,
  port: number,
  eventTypes: string[],
  rateLimit: number | undefined,
): Promise<CreateEndpointResponse> {
  return new Promise((resolve, reject) =>
    hooks.createEndpoint(
      {
        tenantId: tenant,
        url: `https://127.0.0.1:${port}/hook`,
        description: "bench receiver",
        eventTypes,
        rateLimit,
        idempotencyKey: `bench-${port}`,
      },
      (error, answer) => (error ? reject(error) : resolve(answer)),
    ),
  );
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

async function main() {
  const scratch = await createScratchDatabase("benchratelimit");
  const certs = await createTestCertificates();
  const namespace = `benchrate${process.pid}_${randomBytes(3).toString("hex")}_`;
  const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const nc = await connect({ servers: natsUrl });
  const db = new pg.Client({ connectionString: scratch.url });
  await db.connect();
  const services: ServiceProcess[] = [];
  const { child, ports } = await forkReceivers("webhooks-receivers.js", {
    receivers: 2,
    keyPath: join(certs.dir, "server.key"),
    certPath: join(certs.dir, "server.pem"),
  });
  const drain = () =>
    new Promise<Receipts>((resolve) => {
      const onMessage = (m: { type: string } & Receipts) => {
        if (m.type !== "receipts") return;
        child.off("message", onMessage);
        resolve(m);
      };
      child.on("message", onMessage);
      child.send({ type: "drain" });
    });
  try {
    const env = webhooksServiceEnv({
      databaseUrl: scratch.url,
      secretsKey: randomBytes(32).toString("base64"),
      natsUrl,
      namespace,
      logLevel,
      caPath: certs.caPath,
    });
    const entry = join(repo, "services", "webhooks", "dist", "src", "main.js");
    // The first replica migrates; the second starts on the migrated schema.
    services.push(await startServiceProcess({ name: "webhooks-1", entry, env, timeoutMs: 60_000 }));
    services.push(await startServiceProcess({ name: "webhooks-2", entry, env, timeoutMs: 60_000 }));
    const addresses = services.map((service) => `127.0.0.1:${service.listening.grpcPort as number}`);
    const events = addresses.map((address) => new EventServiceClient(address, credentials.createInsecure()));
    const hooks = new WebhookServiceClient(addresses[0]!, credentials.createInsecure());
    const a = (await createEndpoint(hooks, ports[0]!, ["booking.created"], limit)).endpoint!;
    const b = (await createEndpoint(hooks, ports[1]!, ["booking.*"], undefined)).endpoint!;
    console.log(
      `endpoint A ${a.id} rateLimit ${a.rateLimit}/s; endpoint B ${b.id} unlimited; ${rate} events/s for ${durationS} s per phase, two replicas`,
    );

    // Warm-up: a second of B-only events, waited for, not measured.
    await openLoop(events, "booking.cancelled", "warm").then(() => sleep(2_000));
    await drain();

    /** B's receipts of the phase's events (waits until B has all of them, up to 60 s). */
    const phaseOfB = async (published: Map<string, number>, receipts: Receipts[]) => {
      const deadline = Date.now() + 60_000;
      const seen = new Map<string, number>();
      for (;;) {
        const got = await drain();
        receipts.push(got);
        const endpoints = await endpointsOf(db, got.deliveries);
        got.deliveries.forEach((delivery, i) => {
          if (endpoints.get(delivery) === b.id && published.has(got.ids[i]!)) seen.set(got.ids[i]!, got.at[i]!);
        });
        if (seen.size >= published.size || Date.now() > deadline) break;
        await sleep(500);
      }
      const latencies = [...seen].map(([id, at]) => at - published.get(id)!).sort((x, y) => x - y);
      const times = [...seen.values()].sort((x, y) => x - y);
      return {
        received: seen.size,
        ratePerS: round(seen.size / ((times.at(-1)! - Math.min(...published.values())) / 1000)),
        p50Ms: round(percentile(latencies, 50)),
        p99Ms: round(percentile(latencies, 99)),
      };
    };

    const alone = await openLoop(events, "booking.cancelled", "alone");
    const bAlone = await phaseOfB(alone.published, []);
    console.log(`phase 1, B alone: ${JSON.stringify(bAlone)}`);

    const beside = await openLoop(events, "booking.created", "beside");
    const receipts: Receipts[] = [];
    const bBeside = await phaseOfB(beside.published, receipts);
    // A's receipts during phase 2's open loop.
    const endpointOf = await endpointsOf(
      db,
      receipts.flatMap((r) => r.deliveries),
    );
    const aTimes = receipts
      .flatMap((r) => r.deliveries.map((delivery, i) => ({ delivery, at: r.at[i]! })))
      .filter(({ delivery }) => endpointOf.get(delivery) === a.id)
      .filter(({ at }) => at <= beside.end)
      .map(({ at }) => at)
      .sort((x, y) => x - y);
    const from = aTimes[0]! + 1_000;
    const measured = aTimes.filter((at) => at >= from);
    const aRate = measured.length / ((beside.end - from) / 1000);
    const maxInSecond = maxInAnySecond(aTimes);
    const ledger = await db.query<{ delivered: string; attempts: string }>(
      `select count(*) filter (where status = 'succeeded') as delivered, coalesce(sum(attempts_total), 0) as attempts
         from webhooks_history.deliveries where endpoint_id = $1`,
      [a.id],
    );
    const { delivered, attempts } = ledger.rows[0]!;
    // The limiter's own instants (the database's clock): the most slots in any closed second.
    const slotRows = await db.query<{ at: string }>(
      `select (extract(epoch from rate_slot_at) * 1000)::float8 as at from webhooks_history.deliveries
        where endpoint_id = $1 and rate_slot_at is not null order by rate_slot_at`,
      [a.id],
    );
    const maxSlotsInSecond = maxInAnySecond(slotRows.rows.map((row) => Number(row.at)));

    // Control: A's limit removed, the same events to both (A's waiting deliveries keep their slots).
    await new Promise<void>((resolve, reject) =>
      hooks.updateEndpoint(
        {
          tenantId: tenant,
          endpointId: a.id,
          eventTypes: undefined,
          clearRateLimit: true,
          idempotencyKey: "bench-clear",
        },
        (error) => (error ? reject(error) : resolve()),
      ),
    );
    const control = await openLoop(events, "booking.created", "control");
    const bControl = await phaseOfB(control.published, []);
    console.log(`phase 3, B beside A unlimited: ${JSON.stringify(bControl)}`);
    const withinPct = round((Math.abs(aRate - limit) / limit) * 100, 2);
    const summary = {
      limit,
      offeredPerS: rate,
      durationS,
      aReceivedPerS: round(aRate, 2),
      aOffByPct: withinPct,
      aVerdict: withinPct <= 5 ? "PASS" : "FAIL",
      aMaxInAnySecond: maxInSecond,
      aMaxSlotsInAnySecond: maxSlotsInSecond,
      aAttemptsPerDelivered: round(Number(attempts) / Math.max(1, Number(delivered)), 2),
      bAlone,
      bBesideA: bBeside,
      bBesideUnlimitedA: bControl,
      bRateRatio: round(bBeside.ratePerS / bAlone.ratePerS, 3),
    };
    console.log(
      `A: ${summary.aReceivedPerS}/s received against its limit of ${limit}/s (${withinPct}% off: ${summary.aVerdict}); ` +
        `at most ${maxInSecond} received in any one second (${maxSlotsInSecond} slots by the database's clock); ` +
        `${summary.aAttemptsPerDelivered} attempts per delivered`,
    );
    console.log(
      `B: ${bBeside.ratePerS}/s beside A against ${bAlone.ratePerS}/s alone (ratio ${summary.bRateRatio}); ` +
        `latency p50/p99 ${bBeside.p50Ms}/${bBeside.p99Ms} ms beside against ${bAlone.p50Ms}/${bAlone.p99Ms} ms alone ` +
        `and ${bControl.p50Ms}/${bControl.p99Ms} ms beside A unlimited (${bControl.ratePerS}/s)`,
    );
    await recordResult(repo, "webhooks-rate-limit", summary);
  } finally {
    for (const service of [...services].reverse()) await service.stop();
    child.kill();
    await db.end();
    await nc.close();
    await scratch.drop();
    await certs.remove();
  }
}

/** The most instants (ms, sorted) in any closed one-second window. */
function maxInAnySecond(sorted: readonly number[]): number {
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! > 1_000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** The endpoint of each delivery id. */
async function endpointsOf(db: pg.Client, deliveryIds: string[]): Promise<Map<string, string>> {
  if (deliveryIds.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; endpoint_id: string }>(
    "select id, endpoint_id from webhooks_history.deliveries where id = any($1::text[])",
    [deliveryIds],
  );
  return new Map(rows.map((row) => [row.id, row.endpoint_id]));
}

await main();
