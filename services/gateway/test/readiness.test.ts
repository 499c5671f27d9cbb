import { createServer, connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "./stack.js";

// About 8 s: one stack; notify stopped and started again; a gateway replica stopped with a 1 s drain.
describe("gateway readiness per capability", () => {
  let stack: TestStack;
  let key: string;
  let tenant: string;
  let n = 0;
  beforeAll(async () => {
    stack = await startTestStack();
    tenant = (await stack.admin("tenant", "create", "--name", "Acme")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    key = (await stack.admin("key", "create", "--scopes", "notification:send,tenant:read", "--tenants", tenant))
      .key as string;
  });
  afterAll(async () => stack?.stop());

  const get = (path: string) => fetch(`${stack.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const send = (url = stack.url) =>
    fetch(`${url}/api/v1/tenants/${tenant}/notifications`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": `ready-${Date.now()}-${n++}`,
      },
      body: JSON.stringify({
        to: `+4477009${String(10000 + n).padStart(5, "0")}`,
        type: "reminder",
        clientName: "Ana",
        businessName: "Paws",
        serviceName: "grooming",
        when: "Mon 3 May 10:00",
        actor: { actorReference: "crm-user-7", delegationReference: null },
      }),
    });
  const readyz = async () => {
    const res = await fetch(`${stack.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
  };

  it("with notify down: catalog answers 200, /readyz stays 200 naming notify, notify's routes answer 503 with Retry-After, and recover", async () => {
    expect((await send()).status).toBe(200);
    expect((await get(`/api/v1/tenants/${tenant}`)).status).toBe(200);

    await stack.notify.stop("SIGTERM");

    const catalog = await get("/v1/pets");
    expect(catalog.status).toBe(200);
    // The view is kept in the background (checks every DOWNSTREAM_CHECK_INTERVAL, 1 s): it names
    // notify UNREACHABLE after two unanswered checks, and /readyz answers 200 all along.
    await expect
      .poll(async () => (await readyz()).body.checks.notify, { timeout: 5_000, interval: 100 })
      .toBe("UNREACHABLE");
    const ready = await readyz();
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe("ready");
    expect(ready.body.checks).toMatchObject({
      database: "ok",
      catalog: "SERVING",
      notify: "UNREACHABLE",
      webhooks: "SERVING",
      gateway: "ok",
    });
    for (const call of [() => send(), () => get(`/api/v1/tenants/${tenant}`)]) {
      const started = performance.now();
      const res = await call();
      const elapsed = performance.now() - started;
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(((await res.json()) as { code: string }).code).toBe("service.unavailable");
      // Fast: refused by the gateway's view before anything is sent, not after UPSTREAM_TIMEOUT (2 s).
      expect(elapsed).toBeLessThan(1_000);
    }
    // The catalog is untouched by notify's absence.
    expect((await get("/v1/pets")).status).toBe(200);

    await stack.restartNotify();
    await expect.poll(async () => (await send()).status, { timeout: 10_000, interval: 200 }).toBe(200);
    // The health checks go over the calls' own channel: once a call is answered the view cannot
    // still be waiting out a reconnect backoff of its own, so no call after it is refused.
    expect((await readyz()).body.checks.notify).not.toBe("UNREACHABLE");
    const until = performance.now() + 1_500;
    const after: number[] = [];
    while (performance.now() < until) after.push((await get(`/api/v1/tenants/${tenant}`)).status);
    expect(new Set(after)).toEqual(new Set([200]));
    await expect
      .poll(async () => (await readyz()).body.checks.notify, { timeout: 3_000, interval: 100 })
      .toBe("SERVING");
    expect((await readyz()).status).toBe(200);
  });

  it("opens one connection to a downstream, shared by its calls, its health checks and its other clients", async () => {
    // A TCP relay in front of notify counts the connections the replica opens to it.
    let accepted = 0;
    const target = stack.notify.listening.grpcPort as number;
    const relay = createServer((socket) => {
      accepted += 1;
      const upstream = connect(target, "127.0.0.1");
      socket.pipe(upstream).pipe(socket);
      const end = () => (socket.destroy(), upstream.destroy());
      socket.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    try {
      const replica = await stack.startGateway({ NOTIFY_ADDR: `127.0.0.1:${(relay.address() as AddressInfo).port}` });
      const url = `http://127.0.0.1:${replica.listening.port as number}`;
      const headers = { authorization: `Bearer ${key}` };
      // A send (NotificationService), a tenant read (TenantService), an activity poll (ProjectionService).
      expect((await send(url)).status).toBe(200);
      expect((await fetch(`${url}/api/v1/tenants/${tenant}`, { headers })).status).toBe(200);
      expect((await fetch(`${url}/api/v1/tenants/${tenant}/activity`, { headers })).status).toBe(200);
      // Health checks every second: two more.
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      expect(((await (await fetch(`${url}/readyz`)).json()) as { checks: { notify: string } }).checks.notify).toBe(
        "SERVING",
      );
      expect(accepted).toBe(1);
      await replica.stop();
    } finally {
      relay.close();
    }
  });

  it("on SIGTERM answers /readyz 503 at once yet goes on serving for SHUTDOWN_DRAIN_DELAY, then exits 0", async () => {
    const replica = await stack.startGateway({ SHUTDOWN_DRAIN_DELAY: "1s", SHUTDOWN_GRACE: "2s" });
    const url = `http://127.0.0.1:${replica.listening.port as number}`;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const signalled = performance.now();
    replica.child.kill("SIGTERM");
    await expect.poll(() => replica.logs.some((l) => l.msg === "shutting down")).toBe(true);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: { gateway: string } }).checks.gateway).toBe("stopping");
    const during = await fetch(`${url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
    expect(during.status).toBe(200);
    expect(during.headers.get("connection")).toBe("close"); // the client reconnects elsewhere
    expect(performance.now() - signalled).toBeLessThan(1_000);
    expect(await replica.exited).toBe(0);
    expect(performance.now() - signalled).toBeGreaterThanOrEqual(1_000);
  });
});
