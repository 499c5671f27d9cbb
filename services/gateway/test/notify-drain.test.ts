/**
 * Two notify processes on one database and event bus, partner sends through a gateway balancing
 * over both (NOTIFY_ADDR names both, round_robin), and one process stopped with SIGTERM in the
 * middle of 50 POST /notifications a second for 2 s, each with its own Idempotency-Key (about
 * 10 s in all): every send is answered 200 "sent", the provider got each notification exactly
 * once, and the stopped process exits 0 within drain + grace.
 */
import { startCloudApiStub, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcAddresses, startTestStack, type TestStack } from "./stack.js";

const DRAIN_MS = 500;
// Generous against a loaded CI machine (a send still in flight when the drain ends may take that
// long); the process exits as soon as its in-flight sends are done, long before.
const GRACE_MS = 10_000;

describe("a notify process stopped with SIGTERM under sends, beside another", () => {
  let stub: CloudApiStub;
  let stack: TestStack;
  let tenant: string;
  let key: string;
  beforeAll(async () => {
    stub = await startCloudApiStub();
    stack = await startTestStack(
      {},
      {
        NOTIFY_CHANNEL_PROVIDER: "whatsapp",
        WHATSAPP_API_BASE_URL: stub.url,
        WHATSAPP_ACCESS_TOKEN: "EAAG-drain-token",
        WHATSAPP_PHONE_NUMBER_ID: "106540352242922",
        WHATSAPP_TIMEOUT: "5s",
        SHUTDOWN_DRAIN_DELAY: `${DRAIN_MS}ms`,
        SHUTDOWN_GRACE: `${GRACE_MS}ms`,
      },
    );
    tenant = (await stack.admin("tenant", "create", "--name", "Drain", "--plan", "commercial")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    key = (await stack.admin("key", "create", "--tenants", tenant, "--scopes", "notification:send")).key as string;
  });
  afterAll(async () => {
    await stack?.stop();
    await stub?.close();
  });

  it("answers every send and sends each notification once", async () => {
    const second = await stack.startNotify();
    const stopping = stack.notify;
    // A send is never cut off by the gateway's deadline on a slow machine: this test is about the
    // drain, not latency.
    const gateway = await stack.startGateway({ NOTIFY_ADDR: grpcAddresses(stopping, second), UPSTREAM_TIMEOUT: "10s" });
    const url = `http://127.0.0.1:${gateway.listening.port as number}/api/v1/tenants/${tenant}/notifications`;
    const send = async (i: number) => {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "idempotency-key": `drain-send-${String(i).padStart(3, "0")}`,
        },
        body: JSON.stringify({
          to: `+4477009${String(20000 + i)}`,
          type: "reminder",
          clientName: "Ana",
          businessName: "Paws",
          serviceName: "grooming",
          when: "Mon 3 May 10:00",
          actor: { actorReference: "crm-user-7" },
        }),
      });
      const body = (await res.json()) as { state?: string; idempotencyStatus?: string; code?: string };
      return res.status === 200 ? `${body.state} ${body.idempotencyStatus}` : `${res.status} ${body.code}`;
    };
    // Warm both processes up (connections, JIT) before the load: a cold process's first sends on
    // a busy machine take seconds, which is not what this test measures.
    for (let i = 0; i < 6; i++) expect(await send(900 + i)).toBe("sent applied");
    const exit = stopping.exited.then((code) => ({ code, at: performance.now() }));
    const before = stub.requests.length;
    const outcomes: Promise<string>[] = []; // "sent applied", or the status and problem code, or the error
    const sends = 100;
    let signalled = 0;
    await new Promise<void>((resolve) => {
      let n = 0;
      const tick = setInterval(() => {
        const i = n++;
        if (i === 30) {
          stopping.child.kill("SIGTERM");
          signalled = performance.now();
        }
        outcomes.push(send(i).catch((error: Error) => error.message));
        if (n === sends) {
          clearInterval(tick);
          resolve();
        }
      }, 20);
    });
    const states = await Promise.all(outcomes);
    expect(states.filter((s) => s !== "sent applied")).toEqual([]);
    const { code, at } = await exit;
    expect(code).toBe(0);
    expect(at - signalled).toBeGreaterThanOrEqual(DRAIN_MS);
    expect(at - signalled).toBeLessThan(DRAIN_MS + GRACE_MS + 2_000);
    // Both processes took sends (the stack logs at debug: one "rpc handled" line per call).
    const handled = (p: typeof second) => p.logs.filter((l) => l.msg === "rpc handled").length;
    expect(handled(stopping)).toBeGreaterThan(10);
    expect(handled(second)).toBeGreaterThan(40);
    const sent = stub.requests.slice(before).map((r) => JSON.stringify(r.body));
    expect(sent).toHaveLength(sends);
    expect(new Set(sent).size).toBe(sends);
  }, 30_000);
});
