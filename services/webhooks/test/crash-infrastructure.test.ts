/**
 * Nothing lost when the infrastructure under the webhooks process restarts: a burst of 1,000
 * events fanned out to three HTTPS receivers, and (b) the nats-server (with its store, and once
 * with its store lost), (c) Postgres stopped in the middle and started again. Each is the test's own (a nats-server on a free port with its store in
 * a temp dir; an embedded Postgres), never the shared one. The webhooks process is not touched: it
 * reconnects by itself. After each: every event reached every matching receiver, nothing is left
 * pending or leased, and the ledger agrees with what the receivers saw.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startEmbeddedPostgres, type EmbeddedPostgres } from "@platform/local-stack/embedded-postgres";
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
import { startNatsServer, stopNatsServer } from "./nats-server.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";

const EVENTS = 1_000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a nats-server restart mid-burst", () => {
  let certs: TestCertificates;
  let storeDir: string;
  let port: number;
  let nats: ChildProcess | undefined;
  let service: WebhooksUnderTest;
  let rig: BurstRig;

  beforeAll(async () => {
    certs = await createTestCertificates();
    storeDir = await mkdtemp(join(tmpdir(), "webhooks-burst-nats-"));
    port = await freePort();
    nats = await startNatsServer(port, storeDir);
    service = await startWebhooks({
      name: "whburstnats",
      caPath: certs.caPath,
      natsUrl: `nats://127.0.0.1:${port}`,
      env: fastRecoveryEnv,
    });
    rig = await startBurstRig(service, certs, "nats");
  });
  afterAll(async () => {
    await service?.stop();
    await stopNatsServer(nats, "SIGTERM");
    await rig?.close();
    await certs?.remove();
    if (storeDir) await rm(storeDir, { recursive: true, force: true });
  });

  it("(b) every event reaches every matching receiver after NATS comes back", async () => {
    const events = burstEvents("b", EVENTS);
    const startedAt = Date.now();
    const burst = publishBurst(service, rig, events);
    await eventually("deliveries under way", () => receivedCount(rig) >= 200, 60_000);
    await stopNatsServer(nats, "SIGKILL");
    await pause(2_000);
    nats = await startNatsServer(port, storeDir);
    await expectNothingLost("nats-server restart", service, rig, burst, events, startedAt);
    expect(service.process.logs.some((line) => line.natsStatus === "reconnect")).toBe(true);
  }, 180_000);

  it("(b) after a restart with an empty store: events not yet fanned out are published again, lost jobs swept", async () => {
    const events = burstEvents("b_fresh", EVENTS);
    const startedAt = Date.now();
    const burst = publishBurst(service, rig, events);
    await eventually("deliveries under way", () => receivedCount(rig) >= 200, 60_000);
    await stopNatsServer(nats, "SIGKILL");
    // The volume is lost: the streams, the consumers and every message in them.
    await rm(storeDir, { recursive: true, force: true });
    await pause(2_000);
    nats = await startNatsServer(port, storeDir);
    await expectNothingLost("nats-server restart, empty store", service, rig, burst, events, startedAt);
  }, 180_000);
});

describe("a Postgres restart mid-burst", () => {
  let certs: TestCertificates;
  let dataDir: string;
  let postgres: EmbeddedPostgres;
  let service: WebhooksUnderTest;
  let rig: BurstRig;

  beforeAll(async () => {
    certs = await createTestCertificates();
    dataDir = await mkdtemp(join(tmpdir(), "webhooks-burst-pg-"));
    postgres = await startEmbeddedPostgres({ databaseDir: join(dataDir, "pg") });
    service = await startWebhooks({
      name: "whburstpg",
      caPath: certs.caPath,
      postgresUrl: postgres.url,
      env: fastRecoveryEnv,
    });
    rig = await startBurstRig(service, certs, "pg");
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await postgres?.stop();
    await rig?.close();
    await certs?.remove();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("(c) every event reaches every matching receiver after Postgres comes back", async () => {
    const events = burstEvents("c", EVENTS);
    const startedAt = Date.now();
    const burst = publishBurst(service, rig, events);
    await eventually("deliveries under way", () => receivedCount(rig) >= 200, 60_000);
    await postgres.stop();
    await pause(2_000);
    await postgres.start();
    await expectNothingLost("postgres restart", service, rig, burst, events, startedAt);
  }, 180_000);
});
