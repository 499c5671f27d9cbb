/**
 * Two webhooks processes on one database and namespace; a burst of 300 events (420 deliveries)
 * to three HTTPS receivers, and the second process stopped with SIGTERM in the middle (about 6 s
 * in all). Its shutdown drains (not ready, then no new jobs, attempts in flight finish or go back
 * with nak) and it exits 0 within drain + grace; every delivery succeeds, each received once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

const EVENTS = 300;

describe("a webhooks process stopped with SIGTERM mid-burst, beside another", () => {
  let certs: TestCertificates;
  let service: WebhooksUnderTest;
  let rig: BurstRig;

  beforeAll(async () => {
    certs = await createTestCertificates();
    service = await startWebhooks({ name: "whdrain", caPath: certs.caPath, env: fastRecoveryEnv });
    rig = await startBurstRig(service, certs, "drain");
  });
  afterAll(async () => {
    await service?.stop();
    await rig?.close();
    await certs?.remove();
  });

  it("delivers every event to every matching receiver exactly once; the stopped process exits 0 in time", async () => {
    const other = await service.startAnother({ SHUTDOWN_DRAIN_DELAY: "500ms", SHUTDOWN_GRACE: "3s" });
    const events = burstEvents("d", EVENTS);
    const startedAt = Date.now();
    const burst = publishBurst(service, rig, events);
    await eventually("deliveries under way", () => receivedCount(rig) >= 60, 30_000);
    const signalled = Date.now();
    other.child.kill("SIGTERM");
    expect(await other.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(500 + 3_000 + 2_000);
    expect(other.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(["shutting down", "stopped"]));
    const summary = await expectNothingLost(
      "webhooks SIGTERM beside another",
      service,
      rig,
      burst,
      events,
      startedAt,
      30_000,
    );
    expect(summary.duplicates).toBe(0);
  }, 60_000);
});
