/**
 * Recovering an endpoint against real webhooks processes, a real HTTPS receiver, Postgres and
 * NATS: the recovery redrives exactly the failed and dead-lettered deliveries created since T
 * (not earlier ones, not succeeded ones), each once, at WEBHOOKS_RECOVER_RATE (measured on the
 * attempts' timestamps), with its progress readable while it runs; and a recovery whose process
 * is killed (-9) mid-way is finished by the next process once its lease has run out.
 */
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { WebhookServiceService, type Recovery } from "@platform/proto/webhooks/v1";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newDeliveryId, newEventId } from "../src/domain/ids.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";

const HOUR = 3_600_000;
const tenant = "ten_recover";

const recoveryEnv = (rate: number): Record<string, string> => ({
  WEBHOOKS_RECOVER_RATE: String(rate),
  WEBHOOKS_RECOVER_LEASE: "2s",
  WEBHOOKS_RECOVER_POLL_INTERVAL: "200ms",
  WEBHOOKS_DELIVERY_TIMEOUT: "2s",
  WEBHOOKS_LEASE: "7s",
  WEBHOOKS_SWEEP_INTERVAL: "1s",
  WEBHOOKS_SWEEP_OVERDUE: "5s",
});

interface Rig {
  service: WebhooksUnderTest;
  receiver: TestReceiver;
  client: ServiceClient<typeof WebhookServiceService>;
  endpointId: string;
}

function clientOf(service: WebhooksUnderTest) {
  return createClient(WebhookServiceService, `127.0.0.1:${service.process.listening.grpcPort as number}`, {
    timeoutMs: 10_000,
  });
}

async function seedDelivery(
  service: WebhooksUnderTest,
  endpointId: string,
  seed: { status: string; createdAt: Date; attempts?: number },
): Promise<string> {
  const eventId = newEventId();
  const id = newDeliveryId(seed.createdAt);
  await service.db("events").insert({
    id: eventId,
    tenant_id: tenant,
    type: "booking.created",
    occurred_at: seed.createdAt,
    data: JSON.stringify({ booking_id: "bkg_1" }),
    livemode: true,
    received_at: seed.createdAt,
  });
  const waiting = seed.status === "awaiting_retry";
  await service.db("deliveries").insert({
    id,
    tenant_id: tenant,
    endpoint_id: endpointId,
    event_id: eventId,
    event_type: "booking.created",
    livemode: true,
    payload: JSON.stringify({ id: eventId, type: "booking.created", tenant }),
    status: seed.status,
    attempts: seed.attempts ?? 0,
    attempts_total: seed.attempts ?? 0,
    // A failed delivery waiting for a retry far away: only the recovery makes it due now.
    next_attempt_at: waiting ? new Date(Date.now() + HOUR) : null,
    generation: 1,
    created_at: seed.createdAt,
    updated_at: seed.createdAt,
  });
  return id;
}

/** `count` recoverable deliveries created after `since`, half dead-lettered, half awaiting a retry; and decoys. */
async function seedScenario(rig: Rig, since: Date, count: number) {
  const expected: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const dead = i % 2 === 0;
    expected.push(
      await seedDelivery(rig.service, rig.endpointId, {
        status: dead ? "dead_lettered" : "awaiting_retry",
        createdAt: new Date(since.getTime() + 1000 * (i + 1)),
        attempts: dead ? 8 : 3,
      }),
    );
  }
  const decoys = [
    await seedDelivery(rig.service, rig.endpointId, {
      status: "dead_lettered",
      createdAt: new Date(since.getTime() - 1),
      attempts: 8,
    }),
    await seedDelivery(rig.service, rig.endpointId, {
      status: "awaiting_retry",
      createdAt: new Date(since.getTime() - HOUR),
      attempts: 2,
    }),
    await seedDelivery(rig.service, rig.endpointId, {
      status: "succeeded",
      createdAt: new Date(since.getTime() + 500),
      attempts: 1,
    }),
    await seedDelivery(rig.service, rig.endpointId, {
      status: "succeeded",
      createdAt: new Date(since.getTime() + 1500),
      attempts: 1,
    }),
  ];
  return { expected, decoys };
}

async function startRig(certs: TestCertificates, name: string, rate: number): Promise<Rig> {
  const receiver = await startReceiver(certs);
  const service = await startWebhooks({ name, caPath: certs.caPath, env: recoveryEnv(rate) });
  const { id: endpointId } = await service.seedEndpoint({
    tenantId: tenant,
    url: receiver.url,
    eventTypes: ["booking.*"],
  });
  return { service, receiver, client: clientOf(service), endpointId };
}

const deliveryIdsReceived = (receiver: TestReceiver) =>
  receiver.requests.map((request) => request.headers["service-delivery-id"] as string);

async function recoveryOf(rig: Rig, id: string): Promise<Recovery> {
  const answer = await rig.client.getRecovery(
    { tenantId: tenant, endpointId: rig.endpointId, recoveryId: id },
    { requestId: "test" },
  );
  return answer.recovery!;
}

describe("a recovery run by the webhooks process", () => {
  const RATE = 5;
  const COUNT = 10;
  let certs: TestCertificates;
  let rig: Rig;

  beforeAll(async () => {
    certs = await createTestCertificates();
    rig = await startRig(certs, "whrecover", RATE);
  });
  afterAll(async () => {
    rig?.client.close();
    await rig?.service.stop();
    await rig?.receiver.close();
    await certs?.remove();
  });

  it("redrives exactly the failed and dead-lettered deliveries since T, each once, throttled, with progress", async () => {
    const since = new Date(Date.now() - HOUR);
    const { expected, decoys } = await seedScenario(rig, since, COUNT);
    const request = {
      tenantId: tenant,
      endpointId: rig.endpointId,
      since: since.toISOString(),
      dryRun: true,
      idempotencyKey: "recover-dry",
      actor: "console:ana@example.com",
    };
    const dry = await rig.client.recoverDeliveries(request, { requestId: "dry" });
    expect(dry).toMatchObject({ wouldRecover: String(COUNT) });
    const started = await rig.client.recoverDeliveries(
      { ...request, dryRun: false, idempotencyKey: "recover-1" },
      { requestId: "recover" },
    );
    const id = started.recovery!.id;
    expect(started.recovery).toMatchObject({ total: String(COUNT), state: "queued" });

    // Mid-way: running, some done, not all.
    const midway = await eventually(
      "the recovery under way",
      async () => {
        const recovery = await recoveryOf(rig, id);
        return Number(recovery.done) >= 2 && Number(recovery.done) < COUNT ? recovery : undefined;
      },
      30_000,
    );
    expect(midway.state).toBe("running");
    expect(midway.startedAt).toBeDefined();
    expect(midway.finishedAt).toBeUndefined();

    const finished = await eventually(
      "the recovery completed",
      async () => {
        const recovery = await recoveryOf(rig, id);
        return recovery.state === "completed" ? recovery : undefined;
      },
      30_000,
    );
    expect(finished).toMatchObject({
      total: String(COUNT),
      done: String(COUNT),
      redriven: String(COUNT),
      skipped: "0",
      actor: "console:ana@example.com",
    });
    expect(finished.finishedAt).toBeDefined();

    await eventually(
      "every recovered delivery succeeded",
      async () =>
        Number(
          (
            await rig.service
              .db("deliveries")
              .whereIn("id", expected)
              .andWhere({ status: "succeeded" })
              .count<{ count: string }[]>()
          )[0]?.count,
        ) === COUNT,
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Each recovered delivery reached the receiver exactly once; nothing else did.
    expect(deliveryIdsReceived(rig.receiver).sort()).toEqual([...expected].sort());
    const untouched = await rig.service
      .db("deliveries")
      .whereIn("id", decoys)
      .orderBy("created_at")
      .select<{ status: string; generation: number }[]>("status", "generation");
    expect(untouched.map((d) => d.generation)).toEqual([1, 1, 1, 1]);
    expect(await rig.service.db("attempts").whereIn("delivery_id", decoys).count<{ count: string }[]>()).toEqual([
      { count: "0" },
    ]);

    // The throttle: N redrives at R a second take at least (N - 1) / R seconds, attempt to attempt.
    const times = (await rig.service.db("attempts").whereIn("delivery_id", expected).pluck<Date[]>("attempted_at")).map(
      (t) => t.getTime(),
    );
    expect(times).toHaveLength(COUNT);
    const spanMs = Math.max(...times) - Math.min(...times);
    console.log(`[recovery] ${COUNT} redrives at ${RATE}/s: attempts spread over ${spanMs} ms`);
    // The runner spaces the redrives themselves (recorded as each item's done_at) at least 1/R apart;
    // the attempts follow through the queue, whose latency varies by some tens of ms per job.
    const redrives = (
      await rig.service.db("recovery_items").where({ recovery_id: id }).orderBy("done_at").pluck<Date[]>("done_at")
    ).map((t) => t.getTime());
    const gaps = redrives.slice(1).map((t, i) => t - redrives[i]!);
    console.log(`[recovery] redrive gaps (ms): ${gaps.join(", ")}`);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000 / RATE);
    expect(redrives.at(-1)! - redrives[0]!).toBeGreaterThanOrEqual(((COUNT - 1) / RATE) * 1000);
    expect(spanMs).toBeGreaterThanOrEqual(((COUNT - 1) / RATE) * 1000 - 100);

    // A replay answers the same recovery; the same key with another body is refused.
    const replay = await rig.client.recoverDeliveries(
      { ...request, dryRun: false, idempotencyKey: "recover-1" },
      { requestId: "replay" },
    );
    expect(replay).toMatchObject({ replayed: true, recovery: { id } });
  }, 90_000);
});

describe("a recovery whose process is killed (-9)", () => {
  const RATE = 4;
  const COUNT = 12;
  let certs: TestCertificates;
  let rig: Rig;

  beforeAll(async () => {
    certs = await createTestCertificates();
    rig = await startRig(certs, "whrecoverkill", RATE);
  });
  afterAll(async () => {
    rig?.client.close();
    await rig?.service.stop();
    await rig?.receiver.close();
    await certs?.remove();
  });

  it("is finished by the next process once its lease has run out, each delivery redriven once", async () => {
    const since = new Date(Date.now() - HOUR);
    const { expected } = await seedScenario(rig, since, COUNT);
    const started = await rig.client.recoverDeliveries(
      {
        tenantId: tenant,
        endpointId: rig.endpointId,
        since: since.toISOString(),
        dryRun: false,
        idempotencyKey: "recover-kill",
      },
      { requestId: "recover" },
    );
    const id = started.recovery!.id;
    const before = await eventually(
      "the recovery under way",
      async () => {
        const recovery = await recoveryOf(rig, id);
        return Number(recovery.done) >= 3 ? recovery : undefined;
      },
      30_000,
    );
    rig.service.process.child.kill("SIGKILL");
    const doneAtKill = Number(
      (await rig.service.db("recoveries").where({ id }).first<{ redriven: number }>("redriven")).redriven,
    );
    expect(doneAtKill).toBeLessThan(COUNT);
    console.log(`[recovery kill -9] done at the kill: ${doneAtKill} of ${COUNT} (read ${before.done} before it)`);
    await rig.service.restart("SIGKILL");
    rig.client.close();
    rig.client = clientOf(rig.service);

    const finished = await eventually(
      "the recovery completed by the second process",
      async () => {
        const recovery = await recoveryOf(rig, id);
        return recovery.state === "completed" ? recovery : undefined;
      },
      60_000,
    );
    expect(finished).toMatchObject({
      total: String(COUNT),
      done: String(COUNT),
      redriven: String(COUNT),
      skipped: "0",
    });
    // Every item was redriven once: one redrive bumps the generation once (the sweeper may add one for a job lost in the kill).
    const items = await rig.service.db("recovery_items").where({ recovery_id: id }).whereNull("done_at");
    expect(items).toEqual([]);
    await eventually(
      "every recovered delivery succeeded",
      async () =>
        Number(
          (
            await rig.service
              .db("deliveries")
              .whereIn("id", expected)
              .andWhere({ status: "succeeded" })
              .count<{ count: string }[]>()
          )[0]?.count,
        ) === COUNT,
      60_000,
    );
    expect(new Set(deliveryIdsReceived(rig.receiver))).toEqual(new Set(expected));
  }, 120_000);
});
