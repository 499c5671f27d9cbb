/**
 * The README's webhook loop, on the stack `npm start` runs: a developer subscribes a local HTTPS
 * receiver with a self-signed certificate (trusted through NODE_EXTRA_CA_CERTS, the address check
 * lifted with WEBHOOKS_ALLOW_PRIVATE_TARGETS=true), publishes an event with `admin event emit`,
 * and sees it arrive, verified by our verifier and by the stripe SDK's.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { verifyWebhook } from "@platform/webhook-verifier";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../src/embedded-postgres.js";
import { eventually, startReceiver, type TestReceiver } from "../src/https-receiver.js";
import { deleteNamespaceStreams, newNatsNamespace } from "../src/nats-namespace.js";
import { createScratchDatabase, type ScratchDatabase } from "../src/postgres-databases.js";
import { parseStackEnv } from "../src/stack-environment.js";
import { adminCli, launch, repo } from "./launcher.js";

const receiverCli = join(repo, "packages", "local-stack", "dist", "src", "receiver.js");

const run = promisify(execFile);

describe("the webhook loop a developer runs on npm start (README)", () => {
  const namespace = newNatsNamespace("loop");
  let scratch: ScratchDatabase;
  let dataDir: string;
  let certDir: string;
  let caPath: string;
  let readme: ChildProcess | undefined;
  let receiver: TestReceiver;
  let stack: Awaited<ReturnType<typeof launch>>;
  /** The CLI as the README runs it: the addresses `npm start` recorded in its stack.env. */
  let admin: (...args: string[]) => Promise<Record<string, unknown>>;
  let recorded: Record<string, string>;

  beforeAll(async () => {
    scratch = await createScratchDatabase("loop");
    dataDir = await mkdtemp(join(tmpdir(), "stack-loop-"));
    // The README's first step: the receiver's certificate, before the stack starts.
    certDir = join(dataDir, "receiver");
    const made = await run(process.execPath, [receiverCli, "cert", "--dir", certDir]);
    caPath = (JSON.parse(made.stdout) as { ca: string }).ca;
    receiver = await startReceiver({
      key: await readFile(join(certDir, "server.key")),
      cert: await readFile(join(certDir, "server.pem")),
    });
    stack = await launch(
      {
        DATABASE_URL: scratch.url,
        STACK_DATA_DIR: dataDir,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
        // The README says 8443; this test cannot count on that port being free.
        WEBHOOKS_ALLOWED_PORTS: "1024-65535",
        NODE_EXTRA_CA_CERTS: caPath,
        // Seconds instead of minutes, so the whole retry schedule runs within the test.
        WEBHOOKS_RETRY_DELAYS: "1s,1s,1s,1s,1s,1s,1s",
      },
      namespace,
    );
    recorded = parseStackEnv(await readFile(join(dataDir, "stack.env"), "utf8"));
    admin = async (...args) =>
      JSON.parse(
        (await run(process.execPath, [adminCli, ...args], { env: { PATH: process.env.PATH ?? "", ...recorded } }))
          .stdout,
      ) as Record<string, unknown>;
  }, 120_000);

  afterAll(async () => {
    if (stack && stack.child.exitCode === null) await stack.stop();
    readme?.kill();
    await receiver?.close();
    await deleteNamespaceStreams(namespace).catch(() => undefined);
    await scratch?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  let tenant: string;
  let key: string;
  let endpoint: { id: string; secret: string };
  /** A call of the tenant interface with the key; mutations get a fresh Idempotency-Key. */
  const api = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.url}/api/v1/tenants/${tenant}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(method === "GET" ? {} : { "idempotency-key": `loop-${randomUUID()}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (response.status === 204 ? null : await response.json()) as T };
  };
  const emit = async (type: string, data: Record<string, unknown>) =>
    (await admin("event", "emit", "--tenant", tenant, "--type", type, "--data", JSON.stringify(data))).id as string;
  const deliveryOf = async (eventId: string) => {
    type Page = { data: { id: string; eventId: string; status: string; attempts: number }[] };
    const page = await api<Page>("GET", `/webhooks/${endpoint.id}/deliveries?limit=100`);
    return page.body.data.find((d) => d.eventId === eventId);
  };
  const receivedEvent = (eventId: string) =>
    eventually(`event ${eventId} at the receiver`, () =>
      receiver.requests.find((r) => (JSON.parse(r.body.toString()) as { id: string }).id === eventId),
    );

  it("runs the README: a key, an endpoint to `npm run receiver`, event emit, a verified receipt", async () => {
    tenant = (await admin("tenant", "create", "--name", "Acme")).id as string;
    key = (await admin("key", "create", "--tenants", tenant, "--scopes", "webhook:manage")).key as string;
    const port = await freePort();
    const created = await api<{ id: string; secret: string }>("POST", "/webhooks", {
      url: `https://127.0.0.1:${port}/hooks`,
      description: "my laptop",
      eventTypes: ["booking.*"],
    });
    expect(created.status).toBe(201);

    readme = spawn(process.execPath, [
      receiverCli,
      "listen",
      "--secret",
      created.body.secret,
      "--port",
      String(port),
      "--dir",
      certDir,
    ]);
    const printed: Record<string, unknown>[] = [];
    createInterface({ input: readme.stdout! }).on("line", (line) =>
      printed.push(JSON.parse(line) as Record<string, unknown>),
    );
    await eventually("the receiver to listen", () => printed.find((line) => "url" in line));

    const emitted = await admin(
      ...["event", "emit", "--tenant", tenant, "--type", "booking.created"],
      ...["--data", '{"booking_id":"bk_0","status":"confirmed"}'],
    );
    const receipt = await eventually("the receiver to print the verified event", () =>
      printed.find((line) => line.id === emitted.id),
    );
    expect(receipt).toMatchObject({ verified: true, type: "booking.created", tenant, livemode: true });
    expect((await api("DELETE", `/webhooks/${created.body.id}`)).status).toBe(204);
    readme.kill();
  }, 120_000);

  it("delivers to a subscribed endpoint what stripe's verifier accepts too, and the ledger agrees", async () => {
    const created = await fetch(`${stack.url}/api/v1/tenants/${tenant}/webhooks`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": "endpoint-local-2",
      },
      body: JSON.stringify({ url: receiver.url, description: "my laptop", eventTypes: ["booking.*"] }),
    });
    expect(created.status).toBe(201);
    endpoint = (await created.json()) as { id: string; secret: string };
    expect(endpoint.secret).toMatch(/^whsec_/);

    const emitted = await admin(
      ...["event", "emit", "--tenant", tenant, "--type", "booking.created"],
      ...["--data", JSON.stringify({ booking_id: "bk_1", status: "confirmed" })],
    );
    expect(emitted.id).toMatch(/^evt_/);

    const request = await receivedEvent(emitted.id as string);
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

  it("refuses to emit an unknown type, or one the platform emits itself, with exit 2 and a reason", async () => {
    for (const [type, reason] of [
      ["booking.exploded", /booking\.exploded/],
      ["usage.threshold_crossed", /usage/],
      ["capability.suspended", /capability report/],
      ["tenant.activated", /activation/],
      ["booking.created", /data\.object\.booking_id: is required/],
    ] as const) {
      const failed = await run(
        process.execPath,
        [adminCli, "event", "emit", "--tenant", tenant, "--type", type, "--data", "{}"],
        { env: { PATH: process.env.PATH ?? "", ...recorded } },
      ).catch((error: { code: number; stderr: string }) => error);
      expect(failed).toMatchObject({ code: 2 });
      expect((JSON.parse((failed as { stderr: string }).stderr) as { error: string }).error).toMatch(reason);
    }
  });

  it("holds what arrives while the endpoint is paused, and delivers it on resume", async () => {
    expect((await api("POST", `/webhooks/${endpoint.id}/pause`)).body).toMatchObject({ paused: true });
    const eventId = await emit("booking.cancelled", { booking_id: "bk_2", status: "cancelled" });
    await eventually("the delivery to be held", async () => (await deliveryOf(eventId))?.status === "held");
    expect(receiver.requests.some((r) => r.body.includes(eventId))).toBe(false);
    expect((await api("POST", `/webhooks/${endpoint.id}/resume`)).body).toMatchObject({ paused: false });
    await receivedEvent(eventId);
    await eventually("the delivery to succeed", async () => (await deliveryOf(eventId))?.status === "succeeded");
  });

  it("sends a test delivery: synthetic, livemode false, signed with the real secret", async () => {
    const test = await api<{ eventId: string }>("POST", `/webhooks/${endpoint.id}/test`, {
      eventType: "booking.created",
    });
    expect(test.status).toBe(202);
    expect(test.body).toMatchObject({ livemode: false, eventType: "booking.created" });
    const request = await receivedEvent(test.body.eventId);
    const event = verifyWebhook({
      payload: request.body,
      header: request.headers["service-signature"],
      secrets: endpoint.secret,
    });
    expect(event).toMatchObject({ type: "booking.created", livemode: false, tenant });
  });

  it("signs with both secrets for 24 hours after a rotation", async () => {
    const rotated = await api<{ secret: string }>("POST", `/webhooks/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret;
    expect(newSecret).not.toBe(endpoint.secret);
    const eventId = await emit("booking.created", { booking_id: "bk_3" });
    const request = await receivedEvent(eventId);
    const header = request.headers["service-signature"] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    const stripe = new Stripe("sk_test_unused");
    for (const secret of [newSecret, endpoint.secret]) {
      expect(stripe.webhooks.constructEvent(request.body, header, secret).id).toBe(eventId);
    }
    endpoint = { ...endpoint, secret: newSecret };
  });

  it("retries a failing receiver 8 times, dead-letters, pauses the endpoint, and a redrive delivers after resume", async () => {
    receiver.answer(() => ({ status: 503, body: "down for maintenance" }));
    const eventId = await emit("booking.created", { booking_id: "bk_4" });
    const dead = await eventually(
      "the delivery to dead-letter",
      async () => {
        const delivery = await deliveryOf(eventId);
        return delivery?.status === "dead_lettered" ? delivery : undefined;
      },
      90_000,
    );
    expect(dead.attempts).toBe(8);
    expect(receiver.requests.filter((r) => r.body.includes(eventId))).toHaveLength(8);
    const inspected = await api<{ attemptHistory: unknown[] }>("GET", `/webhooks/${endpoint.id}/deliveries/${dead.id}`);
    expect(inspected.body.attemptHistory).toHaveLength(8);
    expect(inspected.body.attemptHistory[7]).toMatchObject({ statusCode: 503, responseBody: "down for maintenance" });
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body).toMatchObject({
      paused: true,
      attentionReason: "webhook.endpoint_dead_lettered",
    });

    receiver.answer(() => ({ status: 200, body: "ok" }));
    const redriven = await api("POST", `/webhooks/${endpoint.id}/deliveries/${dead.id}/redrive`);
    expect(redriven.body).toMatchObject({ status: "held", attempts: 0 }); // still paused
    await api("POST", `/webhooks/${endpoint.id}/resume`);
    await eventually(
      "the redriven delivery to succeed",
      async () => (await deliveryOf(eventId))?.status === "succeeded",
    );
    expect(receiver.requests.filter((r) => r.body.includes(eventId))).toHaveLength(9);

    const stats = await api<{ attempts: number; attemptsSucceeded: number }>("GET", `/webhooks/${endpoint.id}/stats`);
    expect(stats.body).toMatchObject({ deliveries: { succeeded: 5, deadLettered: 0, pending: 0, held: 0 } });
    expect(stats.body.attempts).toBe(13);
    expect(stats.body.attemptsSucceeded).toBe(5);
  }, 120_000);
});
