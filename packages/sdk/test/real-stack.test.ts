/**
 * The SDK against the stack `npm start` runs (its launcher, every service a process, over a
 * scratch database and a NATS namespace of its own), through a fault proxy in front of the
 * gateway: the README's flows (a pet, a notification, an endpoint and a verified delivery at a
 * local HTTPS receiver, a paged delivery ledger, a 304 poll) and injected faults (a dropped
 * connection after the request was applied, a 503 with Retry-After, a 504 outcome unknown), each
 * showing exactly one effect. Also runs packages/sdk/README.md's quick start as written.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { eventually, startReceiver, type TestReceiver } from "@platform/local-stack/https-receiver";
import { deleteNamespaceStreams, newNatsNamespace } from "@platform/local-stack/nats-namespace";
import { createScratchDatabase, type ScratchDatabase } from "@platform/local-stack/postgres-databases";
import { ANY_PORTS, parseStackEnv } from "@platform/local-stack/stack-environment";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, isApiError, OutcomeUnknownError, type Client, type TenantComponents } from "../src/index.js";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.js";
import { quickStart } from "./quick-start.js";

const run = promisify(execFile);
const repo = join(import.meta.dirname, "..", "..", "..");
const launcher = join(repo, "packages", "local-stack", "dist", "src", "main.js");
const adminCli = join(repo, "services", "gateway", "dist", "src", "cli", "admin.js");
const receiverCli = join(repo, "packages", "local-stack", "dist", "src", "receiver.js");

type NotificationRequest = TenantComponents["schemas"]["NotificationRequest"];

const reminder = (to: string): NotificationRequest => ({
  to,
  type: "reminder",
  clientName: "Ana",
  businessName: "Paws & Co",
  serviceName: "grooming",
  when: "Mon 3 May 10:00",
  actor: { actorReference: "crm-user-7" },
});

let phoneSequence = 0;
const phone = () => `+4477009${String(Date.now() % 10_000).padStart(4, "0")}${phoneSequence++}`;

describe("the SDK on npm start's stack, through a fault proxy", () => {
  const namespace = newNatsNamespace("sdk");
  let scratch: ScratchDatabase;
  let dataDir: string;
  let receiver: TestReceiver;
  let stack: ChildProcess;
  let stackLines: string[];
  let gateway: string;
  let proxy: FaultProxy;
  let admin: (...args: string[]) => Promise<Record<string, unknown>>;
  /** The waits the SDK asked for, in ms (it really waits them). */
  const waits: number[] = [];
  const client = (apiKey: string): Client =>
    createClient({
      baseUrl: proxy.url,
      apiKey,
      retry: { baseDelayMs: 50, maxDelayMs: 5_000 },
      sleep: (ms) => {
        waits.push(ms);
        return new Promise((resolve) => setTimeout(resolve, ms));
      },
    });

  beforeAll(async () => {
    scratch = await createScratchDatabase("sdk");
    dataDir = await mkdtemp(join(tmpdir(), "sdk-stack-"));
    const certDir = join(dataDir, "receiver");
    const made = await run(process.execPath, [receiverCli, "cert", "--dir", certDir]);
    const caPath = (JSON.parse(made.stdout) as { ca: string }).ca;
    receiver = await startReceiver({
      key: await readFile(join(certDir, "server.key")),
      cert: await readFile(join(certDir, "server.pem")),
    });
    stackLines = [];
    stack = spawn(process.execPath, [launcher], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? "",
        ...ANY_PORTS,
        LOG_LEVEL: "warn",
        NATS_NAMESPACE: namespace,
        DATABASE_URL: scratch.url,
        STACK_DATA_DIR: dataDir,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
        WEBHOOKS_ALLOWED_PORTS: "1024-65535",
        NODE_EXTRA_CA_CERTS: caPath,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    createInterface({ input: stack.stdout! }).on("line", (line) => stackLines.push(line));
    createInterface({ input: stack.stderr! }).on("line", (line) => stackLines.push(line));
    gateway = await eventually(
      "npm start's launcher to print the gateway's URL",
      () => {
        if (stack.exitCode !== null) throw new Error(`the stack exited ${stack.exitCode}:\n${stackLines.join("\n")}`);
        return stackLines.map((l) => /^\[stack\] Gateway ready at (\S+)$/.exec(l)?.[1]).find(Boolean);
      },
      90_000,
    );
    const recorded = parseStackEnv(await readFile(join(dataDir, "stack.env"), "utf8"));
    admin = async (...args) =>
      JSON.parse(
        (await run(process.execPath, [adminCli, ...args], { env: { PATH: process.env.PATH ?? "", ...recorded } }))
          .stdout,
      ) as Record<string, unknown>;
    proxy = await startFaultProxy(gateway);
  }, 120_000);

  afterAll(async () => {
    await proxy?.close();
    if (stack && stack.exitCode === null) {
      const exited = new Promise((resolve) => stack.once("exit", resolve));
      stack.kill("SIGTERM");
      await exited;
    }
    await receiver?.close();
    await deleteNamespaceStreams(namespace).catch(() => undefined);
    await scratch?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** A live tenant and a key for it with `scopes`. */
  async function tenantWithKey(scopes: string) {
    const tenantId = (await admin("tenant", "create", "--name", `sdk-${randomUUID().slice(0, 8)}`)).id as string;
    await admin("tenant", "activate", "--id", tenantId);
    const key = (await admin("key", "create", "--tenants", tenantId, "--scopes", scopes)).key as string;
    return { tenantId, key };
  }

  it("creates a pet once when the connection drops after the gateway applied it, and once under a 504 outcome unknown", async () => {
    const key = (await admin("key", "create", "--name", "sdk-pets")).key as string;
    const sdk = client(key);
    const name = `Rex ${randomUUID().slice(0, 8)}`;
    const before = proxy.requests.length;
    proxy.arm("POST", "/v1/pets", { kind: "drop" });
    const pet = await sdk.catalog.call("post", "/pets", { body: { name, categoryId: 1 } });
    expect(pet.status).toBe(201);
    expect(pet.attempts).toBe(2);
    const posts = proxy.requests.slice(before);
    expect(posts.map((r) => [r.upstreamStatus, r.fault])).toEqual([
      [201, "drop"],
      [201, undefined],
    ]);
    expect(posts[0]!.headers["idempotency-key"]).toBe(posts[1]!.headers["idempotency-key"]);

    // The gateway applied the create, a hop in between answered 504 outcome_unknown (the catalog's
    // shape): the SDK asks again with the same key, which answers the outcome.
    const other = `Bella ${randomUUID().slice(0, 8)}`;
    proxy.arm("POST", "/v1/pets", {
      kind: "replace",
      answer: {
        status: 504,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code: "outcome_unknown", message: "the outcome is unknown", status: 504 }),
      },
    });
    const second = await sdk.catalog.call("post", "/pets", { body: { name: other, categoryId: 1 } });
    expect(second.attempts).toBe(2);

    const names: string[] = [];
    for await (const p of sdk.catalog.items("/pets", { query: { limit: 2 } })) names.push(p.name);
    expect(names.filter((n) => n === name)).toHaveLength(1);
    expect(names.filter((n) => n === other)).toHaveLength(1);
    expect(names.find((n) => n === name)).toBe(pet.data.name);
  }, 90_000);

  it("sends a notification exactly once under a dropped connection, a 503 with Retry-After and a 504, and never again after a 409 outcome unknown", async () => {
    const { tenantId, key } = await tenantWithKey("notification:send,tenant:read");
    const sdk = client(key);
    const path = `/api/v1/tenants/${tenantId}/notifications`;
    const transcript = async (to: string) => {
      const messages = [];
      for await (const m of sdk.tenant.items("/tenants/{tenantId}/conversations/{to}/messages", {
        path: { tenantId, to },
      })) {
        messages.push(m);
      }
      return messages;
    };

    // Dropped after the gateway answered 200: the retry replays the first send.
    const dropped = phone();
    proxy.arm("POST", path, { kind: "drop" });
    const first = await sdk.tenant.call("post", "/tenants/{tenantId}/notifications", {
      path: { tenantId },
      body: reminder(dropped),
    });
    expect(first.attempts).toBe(2);
    expect(first.data).toMatchObject({ state: "sent", idempotencyStatus: "replayed" });
    expect((await transcript(dropped)).map((m) => m.notificationId)).toEqual([first.data.notificationId]);

    // 503 with Retry-After: 1 before the gateway saw it: one wait of exactly 1 s, then one send.
    const busy = phone();
    proxy.arm("POST", path, {
      kind: "answer",
      answer: {
        status: 503,
        headers: { "content-type": "application/problem+json", "retry-after": "1" },
        body: JSON.stringify({
          type: "about:blank",
          title: "Service unavailable",
          status: 503,
          detail: "the service is temporarily unavailable",
          code: "service.unavailable",
          correlationId: "proxy-503",
        }),
      },
    });
    const waitsBefore = waits.length;
    const second = await sdk.tenant.call("post", "/tenants/{tenantId}/notifications", {
      path: { tenantId },
      body: reminder(busy),
    });
    expect(waits.slice(waitsBefore)).toEqual([1000]);
    expect(second.data).toMatchObject({ state: "sent", idempotencyStatus: "applied" });
    expect(await transcript(busy)).toHaveLength(1);

    // The gateway sent it, a hop in between answered 504: the same key answers the outcome.
    const lost = phone();
    proxy.arm("POST", path, {
      kind: "replace",
      answer: { status: 504, headers: { "content-type": "text/html" }, body: "<h1>504 Gateway Time-out</h1>" },
    });
    const third = await sdk.tenant.call("post", "/tenants/{tenantId}/notifications", {
      path: { tenantId },
      body: reminder(lost),
    });
    expect(third.data).toMatchObject({ state: "sent", idempotencyStatus: "replayed" });
    expect((await transcript(lost)).map((m) => m.notificationId)).toEqual([third.data.notificationId]);

    // The channel's answer was lost (409 partner.action_outcome_unknown, as notify answers it; here
    // the proxy puts it in place of the gateway's 200): never sent again, the transcript read instead.
    const unknown = phone();
    proxy.arm("POST", path, {
      kind: "replace",
      answer: {
        status: 409,
        headers: { "content-type": "application/problem+json" },
        body: JSON.stringify({
          type: "about:blank",
          title: "Outcome unknown",
          status: 409,
          detail: "the channel did not confirm the send",
          code: "partner.action_outcome_unknown",
          correlationId: "proxy-409",
        }),
      },
    });
    const outcome = await sdk.tenant
      .request("post", "/tenants/{tenantId}/notifications", { path: { tenantId }, body: reminder(unknown) })
      .catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(OutcomeUnknownError);
    expect(outcome).toMatchObject({
      code: "partner.action_outcome_unknown",
      correlationId: "proxy-409",
      advice: "Check the conversation transcript before acting again.",
    });
    expect((outcome as OutcomeUnknownError).transcript?.map((m) => m.state)).toEqual(["sent"]);
    expect(await transcript(unknown)).toHaveLength(1);

    const sends = proxy.requests.filter((r) => r.method === "POST" && r.path === path);
    expect(sends.map((r) => [r.fault ?? "-", r.upstreamStatus ?? "-"])).toEqual([
      ["drop", 200],
      ["-", 200],
      ["answer", "-"],
      ["-", 200],
      ["replace", 200],
      ["-", 200],
      ["replace", 200],
    ]);
    for (const [a, b] of [
      [0, 1],
      [2, 3],
      [4, 5],
    ] as const) {
      expect(sends[a]!.headers["idempotency-key"]).toBe(sends[b]!.headers["idempotency-key"]);
    }

    // A refusal is typed by its catalogue code, with the advice and correlationId.
    const refused = await sdk.tenant
      .request("post", "/tenants/{tenantId}/notifications", { path: { tenantId }, body: reminder("not-a-phone") })
      .catch((e: unknown) => e);
    expect(isApiError(refused, "partner.notification_recipient_invalid")).toBe(true);
    expect(refused).toMatchObject({ status: 400, advice: "Fix the number; never retry it as it is." });
    expect((refused as { correlationId: string }).correlationId).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  }, 90_000);

  it("creates an endpoint, verifies its delivery at an HTTPS receiver, pages the delivery ledger, and polls with a 304", async () => {
    const { tenantId, key } = await tenantWithKey("webhook:manage,tenant:read");
    const sdk = client(key);
    const endpoint = await sdk.tenant.request("post", "/tenants/{tenantId}/webhooks", {
      path: { tenantId },
      body: { url: receiver.url, description: "sdk test", eventTypes: ["booking.*"] },
    });
    const received = receiver.requests.length;
    for (const booking of ["bk_1", "bk_2", "bk_3"]) {
      await admin(
        "event",
        "emit",
        "--tenant",
        tenantId,
        "--type",
        "booking.created",
        "--data",
        JSON.stringify({ booking_id: booking, status: "confirmed" }),
      );
    }
    await eventually("three deliveries at the receiver", () => receiver.requests.length >= received + 3);
    const ours = receiver.requests.slice(received);
    const events = ours.map((r) => sdk.webhooks.verify<{ booking_id: string }>(r.body, r.headers, endpoint.secret));
    expect(events.map((e) => e.data.object.booking_id).sort()).toEqual(["bk_1", "bk_2", "bk_3"]);
    expect(events.every((e) => e.type === "booking.created" && e.tenant === tenantId)).toBe(true);
    expect(() => sdk.webhooks.verify(ours[0]!.body, ours[0]!.headers, `whsec_${"x".repeat(44)}`)).toThrow(
      /no v1 signature matches/,
    );

    // The ledger, one delivery per page.
    const deliveries = "/tenants/{tenantId}/webhooks/{endpointId}/deliveries" as const;
    const init = { path: { tenantId, endpointId: endpoint.id } };
    await eventually("all three deliveries recorded as succeeded", async () => {
      const page = await sdk.tenant.request("get", deliveries, init);
      return page.data.filter((d) => d.status === "succeeded").length === 3;
    });
    const pagesBefore = proxy.requests.length;
    const paged: string[] = [];
    for await (const delivery of sdk.tenant.items(deliveries, { ...init, query: { limit: 1 } }))
      paged.push(delivery.id);
    const whole = await sdk.tenant.request("get", deliveries, { ...init, query: { limit: 50 } });
    expect(paged).toEqual(whole.data.map((d) => d.id));
    expect(paged).toHaveLength(3);
    const pageRequests = proxy.requests.slice(pagesBefore, -1);
    expect(pageRequests.length).toBeGreaterThanOrEqual(3);
    expect(pageRequests.filter((r) => r.headers["idempotency-key"] !== undefined)).toEqual([]);

    // A 304 poll of the tenant record.
    const poller = sdk.tenant.poller("/tenants/{tenantId}", { path: { tenantId } });
    const first = await poller.next();
    expect(first.unchanged).toBe(false);
    if (!first.unchanged) expect(first.data.id).toBe(tenantId);
    const second = await poller.next();
    expect(second).toEqual({ unchanged: true, etag: first.etag });
    const polled = proxy.requests.at(-1)!;
    expect([polled.headers["if-none-match"], polled.upstreamStatus]).toEqual([first.etag, 304]);
  }, 90_000);

  it("runs packages/sdk/README.md's quick start as written", async () => {
    const { tenantId, key } = await tenantWithKey("notification:send");
    const dir = await mkdtemp(join(repo, "packages", "sdk", "dist", "quick-start-"));
    try {
      const file = join(dir, "quick-start.ts");
      await writeFile(file, quickStart(await readFile(join(repo, "packages", "sdk", "README.md"), "utf8")));
      const { stdout } = await run(process.execPath, [file], {
        env: { PATH: process.env.PATH ?? "", GATEWAY: gateway, API_KEY: key, TENANT: tenantId },
      });
      const lines = stdout.trim().split("\n");
      expect(lines[0]).toMatch(/^pet \d+ Rex$/);
      expect(lines).toContain("sent applied");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
