/**
 * Nothing lost when the webhooks process dies: a burst of 1,000 events fanned out to three HTTPS
 * receivers, and the process killed (-9) in the middle, then started again. (a) kills it while
 * deliveries are being attempted; (d) kills it while the events are being published, as the
 * service that emits them (EventService writes each event to its outbox; the relay publishes
 * it): every publish that was answered must come out, and the publishes that failed during the
 * outage are tried again with the same event id. After each: every event reached every matching
 * receiver, nothing is left pending or leased, and the ledger agrees with what the receivers saw.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { createTestCertificates, eventually, type TestCertificates } from "@platform/local-stack/https-receiver";
import {
  burstEvents,
  expectNothingLost,
  fastRecoveryEnv,
  publishBurst,
  receivedCount,
  startBurstRig,
  type BurstRig,
} from "./burst.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";

const EVENTS = 1_000;

describe("a kill -9 of the webhooks process mid-burst", () => {
  let certs: TestCertificates;
  let service: WebhooksUnderTest;
  let rig: BurstRig;

  beforeAll(async () => {
    certs = await createTestCertificates();
    service = await startWebhooks({ name: "whkill", caPath: certs.caPath, env: fastRecoveryEnv });
    rig = await startBurstRig(service, certs, "kill");
  });
  afterAll(async () => {
    await service?.stop();
    await rig?.close();
    await certs?.remove();
  });

  it("(a) while delivering: every event reaches every matching receiver once the process is back", async () => {
    const events = burstEvents("a", EVENTS);
    const startedAt = Date.now();
    const burst = publishBurst(service, rig, events);
    await eventually("deliveries under way", () => receivedCount(rig) >= 200, 60_000);
    await service.restart("SIGKILL");
    await expectNothingLost("webhooks kill -9 while delivering", service, rig, burst, events, startedAt);
  }, 180_000);
});

describe("a kill -9 of the emitting service mid-burst", () => {
  let certs: TestCertificates;
  let service: WebhooksUnderTest;
  let rig: BurstRig;

  beforeAll(async () => {
    certs = await createTestCertificates();
    service = await startWebhooks({ name: "whemit", caPath: certs.caPath, env: fastRecoveryEnv });
    rig = await startBurstRig(service, certs, "emit");
  });
  afterAll(async () => {
    await service?.stop();
    await rig?.close();
    await certs?.remove();
  });

  it("(d) while publishing: every accepted event comes out of the outbox after the restart", async () => {
    const events = burstEvents("d", EVENTS);
    const startedAt = Date.now();
    const burst = publishBurst(service, rig, events, { concurrency: 4 });
    // Killed while events it accepted wait in its outbox (committed, not yet on the stream).
    const outboxed = async () => Number((await service.db("outbox").count<{ count: string }[]>())[0]?.count);
    await eventually("publishes under way", async () => burst.accepted.size >= 300 && (await outboxed()) > 0, 60_000);
    service.process.child.kill("SIGKILL");
    const acceptedAtKill = burst.accepted.size;
    const restarting = service.restart("SIGKILL");
    const [waiting] = await service.db("outbox").count<{ count: string }[]>();
    await restarting;
    console.log(`[emitter kill -9] accepted at the kill: ${acceptedAtKill}; in the outbox then: ${waiting?.count}`);
    await expectNothingLost("emitter kill -9 while publishing", service, rig, burst, events, startedAt);
  }, 180_000);
});
