/**
 * The README's webhook loop, on the stack `npm start` runs: a developer subscribes a local HTTPS
 * receiver with a self-signed certificate (trusted through NODE_EXTRA_CA_CERTS, the address check
 * lifted with WEBHOOKS_ALLOW_PRIVATE_TARGETS=true), publishes an event with `admin event emit`,
 * and sees it arrive, verified by our verifier and by the stripe SDK's.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { verifyWebhook } from "@platform/webhook-verifier";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "../src/https-receiver.js";
import { deleteNamespaceStreams, newNatsNamespace } from "../src/nats-namespace.js";
import { createScratchDatabase, type ScratchDatabase } from "../src/postgres-databases.js";
import { adminCli, launch } from "./launcher.js";

const run = promisify(execFile);

describe("the webhook loop a developer runs on npm start (README)", () => {
  const namespace = newNatsNamespace("loop");
  let scratch: ScratchDatabase;
  let dataDir: string;
  let certificates: TestCertificates;
  let receiver: TestReceiver;
  let stack: Awaited<ReturnType<typeof launch>>;
  /** The CLI as the README runs it: the addresses `npm start` recorded in its stack.env. */
  let admin: (...args: string[]) => Promise<Record<string, unknown>>;

  beforeAll(async () => {
    scratch = await createScratchDatabase("loop");
    dataDir = await mkdtemp(join(tmpdir(), "stack-loop-"));
    certificates = await createTestCertificates();
    receiver = await startReceiver(certificates);
    stack = await launch(
      {
        DATABASE_URL: scratch.url,
        STACK_DATA_DIR: dataDir,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
        NODE_EXTRA_CA_CERTS: certificates.caPath,
      },
      namespace,
    );
    const recorded = Object.fromEntries(
      (await readFile(join(dataDir, "stack.env"), "utf8"))
        .trim()
        .split("\n")
        .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
    );
    admin = async (...args) =>
      JSON.parse(
        (await run(process.execPath, [adminCli, ...args], { env: { PATH: process.env.PATH ?? "", ...recorded } }))
          .stdout,
      ) as Record<string, unknown>;
  }, 120_000);

  afterAll(async () => {
    if (stack && stack.child.exitCode === null) await stack.stop();
    await receiver?.close();
    await certificates?.remove();
    await deleteNamespaceStreams(namespace).catch(() => undefined);
    await scratch?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("creates a key and an endpoint, emits an event, and the receiver gets it signed", async () => {
    const tenant = (await admin("tenant", "create", "--name", "Acme")).id as string;
    const key = (await admin("key", "create", "--tenants", tenant, "--scopes", "webhook:manage")).key as string;

    const created = await fetch(`${stack.url}/api/v1/tenants/${tenant}/webhooks`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": "endpoint-local-1",
      },
      body: JSON.stringify({ url: receiver.url, description: "my laptop", eventTypes: ["booking.*"] }),
    });
    expect(created.status).toBe(201);
    const endpoint = (await created.json()) as { id: string; secret: string; apiVersion: string };
    expect(endpoint.secret).toMatch(/^whsec_/);

    const emitted = await admin(
      ...["event", "emit", "--tenant", tenant, "--type", "booking.created"],
      ...["--data", JSON.stringify({ booking_id: "bk_1", status: "confirmed" })],
    );
    expect(emitted.id).toMatch(/^evt_/);

    const request = await eventually("the delivery", () => receiver.requests[0]);
    const header = request.headers["service-signature"] as string;
    const event = verifyWebhook({ payload: request.body, header, secrets: endpoint.secret });
    expect(event).toMatchObject({
      id: emitted.id,
      type: "booking.created",
      api_version: "2026-07-01",
      tenant,
      livemode: true,
      data: { object: { booking_id: "bk_1", status: "confirmed" } },
    });
    // A verifier this project did not write accepts the same bytes, header and secret.
    const stripe = new Stripe("sk_test_unused");
    expect(stripe.webhooks.constructEvent(request.body, header, endpoint.secret).id).toBe(emitted.id);

    // The ledger says so too: one delivery, succeeded on its first attempt.
    const ledger = await eventually("the ledger to show the delivery succeeded", async () => {
      const response = await fetch(`${stack.url}/api/v1/tenants/${tenant}/webhooks/${endpoint.id}/deliveries`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const page = (await response.json()) as { data: { eventId: string; status: string; attempts: number }[] };
      return page.data[0]?.status === "succeeded" ? page : undefined;
    });
    expect(ledger.data).toEqual([expect.objectContaining({ eventId: emitted.id, status: "succeeded", attempts: 1 })]);
    expect(receiver.requests).toHaveLength(1);
  }, 120_000);
});
