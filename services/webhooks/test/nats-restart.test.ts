/**
 * The webhooks process rides out a NATS restart: it reconnects by itself, an event published while
 * NATS is down waits in the outbox, and everything published is delivered once NATS is back. The
 * test runs its own nats-server (a private port and store), never the shared one.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { freePort } from "@platform/local-stack/embedded-postgres";
import { startNatsServer, stopNatsServer } from "./nats-server.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";
import { sampleSnapshot } from "./sample-snapshot.js";

describe("NATS restarts and crashes under the webhooks process", () => {
  let certs: TestCertificates;
  let hooks: TestReceiver;
  let storeDir: string;
  let port: number;
  let nats: ChildProcess | undefined;
  let service: WebhooksUnderTest;

  beforeAll(async () => {
    certs = await createTestCertificates();
    hooks = await startReceiver(certs);
    storeDir = await mkdtemp(join(tmpdir(), "webhooks-nats-"));
    port = await freePort();
    nats = await startNatsServer(port, storeDir);
    service = await startWebhooks({ name: "whnats", caPath: certs.caPath, natsUrl: `nats://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await service?.stop();
    await stopNatsServer(nats, "SIGTERM");
    await hooks?.close();
    await certs?.remove();
    if (storeDir) await rm(storeDir, { recursive: true, force: true });
  });

  it("delivers what was published before, during and after the outage", async () => {
    await service.seedEndpoint({ tenantId: "nr", url: hooks.url, eventTypes: ["booking.*"] });
    const before = await service.publish({
      tenantId: "nr",
      type: "booking.created",
      dataJson: sampleSnapshot("booking.created", 1),
    });
    await eventually("the first delivery", () => hooks.requests.length === 1);

    await stopNatsServer(nats, "SIGKILL");
    // Accepted while NATS is down: it waits in the outbox.
    const during = await service.publish({
      tenantId: "nr",
      type: "booking.created",
      dataJson: sampleSnapshot("booking.created", 2),
    });
    expect(during.duplicate).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await service.db("outbox").pluck("event_id")).toEqual([during.eventId]);

    nats = await startNatsServer(port, storeDir);
    const after = await service.publish({
      tenantId: "nr",
      type: "booking.cancelled",
      dataJson: sampleSnapshot("booking.cancelled", 3),
    });
    await eventually(
      "every event delivered",
      () => {
        const ids = new Set(hooks.requests.map((r) => r.headers["service-event-id"]));
        return [before.eventId, during.eventId, after.eventId].every((id) => ids.has(id));
      },
      60_000,
    );
    expect(await service.db("outbox").count<{ count: string }[]>()).toEqual([{ count: "0" }]);
    expect(service.process.logs.some((line) => line.natsStatus === "reconnect")).toBe(true);
  }, 90_000);
  it("delivers an event accepted while NATS was down even when the process is killed (-9) before it could publish", async () => {
    await service.seedEndpoint({ tenantId: "crash", url: hooks.url, eventTypes: ["escalation.*"] });
    await stopNatsServer(nats, "SIGKILL");
    const accepted = await service.publish({
      tenantId: "crash",
      type: "escalation.raised",
      dataJson: sampleSnapshot("escalation.raised", 4),
    });
    expect(await service.db("outbox").pluck("event_id")).toEqual([accepted.eventId]);

    // The process dies with the event only in its outbox; a new one starts while NATS comes back.
    const restarting = service.restart("SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 500));
    nats = await startNatsServer(port, storeDir);
    await restarting;
    await eventually(
      "the event delivered by the new process",
      () => hooks.requests.some((r) => r.headers["service-event-id"] === accepted.eventId),
      60_000,
    );
    expect(await service.db("outbox").count<{ count: string }[]>()).toEqual([{ count: "0" }]);
  }, 90_000);
});
