import { createHmac, timingSafeEqual } from "node:crypto";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenApiContract } from "./openapi-contract.js";
import { startTestStack, type TestStack } from "./stack.js";
import { tenantApiCall, type Answer } from "./tenant-api-call.js";

interface DeliveredEvent {
  id: string;
  type: string;
  tenant: string;
  data: { object: Record<string, unknown> };
}

/** The `Service-Signature` check a receiver makes: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">. */
function verifySignature(body: Buffer, header: string, secret: string): boolean {
  const entries = header.split(",").map((entry) => entry.trim().split("=") as [string, string]);
  const t = entries.find(([name]) => name === "t")?.[1];
  const expected = createHmac("sha256", secret).update(`${t}.${body.toString()}`).digest();
  return entries
    .filter(([name]) => name === "v1")
    .some(([, value]) => value.length === 64 && timingSafeEqual(Buffer.from(value, "hex"), expected));
}

/**
 * Activation end to end: catalog, notify, webhooks and gateway as processes over a scratch
 * database and the run's NATS namespace; an endpoint subscribed to tenant.* and capability.* on a
 * local HTTPS receiver gets each transition's event as a signed delivery, exactly once. Every
 * answer is checked against /api/v1/openapi.json.
 */
describe("activation and capabilities", () => {
  let certs: TestCertificates;
  let receiver: TestReceiver;
  let stack: TestStack;
  let contract: OpenApiContract;
  let tenant: string;
  let secret: string;
  const keys: Record<string, string> = {};
  let n = 0;

  const call = tenantApiCall({
    gatewayUrl: () => stack.url,
    defaultKey: () => keys.full!,
    contract: () => contract,
  });
  const activation = (tenantId = tenant) => `/api/v1/tenants/${tenantId}/activation`;
  const start = (idempotencyKey = `act-${n++}`, key?: string) =>
    call("POST", activation(), { key, headers: { "idempotency-key": idempotencyKey } });
  const tenantRecord = async () => (await call("GET", `/api/v1/tenants/${tenant}`)).body;
  const report = (...args: string[]) =>
    stack.admin("capability", "report", "--tenant", tenant, "--capability", "messaging_channel", ...args);

  /** The verified events the receiver got so far, in arrival order. */
  const delivered = (): DeliveredEvent[] =>
    receiver.requests.map((request) => {
      expect(verifySignature(request.body, request.headers["service-signature"] as string, secret)).toBe(true);
      return JSON.parse(request.body.toString()) as DeliveredEvent;
    });
  const deliveredOf = (type: string) => delivered().filter((event) => event.type === type && event.tenant === tenant);
  const awaitDelivery = (type: string, count = 1) =>
    eventually(`${count} ${type} at the receiver`, () => deliveredOf(type).length >= count && deliveredOf(type));

  beforeAll(async () => {
    certs = await createTestCertificates();
    receiver = await startReceiver({ key: certs.key, cert: certs.cert });
    stack = await startTestStack({}, {}, { NODE_EXTRA_CA_CERTS: certs.caPath });
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    tenant = (await stack.admin("tenant", "create", "--name", "Activation")).id as string;
    keys.full = (
      await stack.admin("key", "create", "--scopes", "tenant:read,tenant:manage,webhook:manage", "--tenants", tenant)
    ).key as string;
    keys.readOnly = (await stack.admin("key", "create", "--scopes", "tenant:read", "--tenants", tenant)).key as string;
    const endpoint = await call("POST", `/api/v1/tenants/${tenant}/webhooks`, {
      headers: { "content-type": "application/json", "idempotency-key": "endpoint-1" },
      body: JSON.stringify({ url: receiver.url, description: "activation", eventTypes: ["tenant.*", "capability.*"] }),
    });
    expect(endpoint.res.status).toBe(201);
    secret = endpoint.body.secret as string;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
    await certs?.remove();
  });

  it("starts in provisioning: the manifest, the capability report and the tenant record say so", async () => {
    const manifest = await call("GET", activation());
    expect(manifest.res.status).toBe(200);
    expect(manifest.body).toMatchObject({
      tenantId: tenant,
      state: "provisioning",
      blockingReasons: [],
      requiredCapabilities: ["messaging_channel"],
      version: 1,
    });
    expect((manifest.body.steps as { name: string; state: string }[]).map((s) => [s.name, s.state])).toEqual([
      ["provisioning", "in_progress"],
      ["validation", "pending"],
      ["live", "pending"],
    ]);
    const capabilities = await call("GET", `/api/v1/tenants/${tenant}/capabilities`);
    expect(capabilities.body).toEqual({
      tenantId: tenant,
      data: [
        {
          name: "messaging_channel",
          state: "unchecked",
          required: true,
          lastResult: null,
          lastCheckedAt: null,
          reasonCode: null,
          changedAt: null,
        },
      ],
    });
    expect(await tenantRecord()).toMatchObject({
      activationState: "provisioning",
      activated: false,
      lastErrorCode: null,
    });
  });

  it("refuses POST /activation without tenant:manage (403) and without an Idempotency-Key (400)", async () => {
    const forbidden = await start("no-scope", keys.readOnly);
    expect(forbidden.res.status).toBe(403);
    const noKey = await call("POST", activation(), {});
    expect(noKey.res.status).toBe(400);
    expect((await call("GET", activation())).body.state).toBe("provisioning");
  });

  it("walks validation -> stalled -> live -> suspended -> restored, each event delivered signed, exactly once", async () => {
    // POST /activation with nothing checked: validation, waiting for messaging_channel.
    const started = await start("walk-key-1");
    expect(started.res.status, JSON.stringify(started.body)).toBe(200);
    expect(started.res.headers.get("idempotent-replayed")).toBeNull();
    expect(started.body).toMatchObject({ state: "validation", idempotencyStatus: "Applied" });
    expect(started.body.blockingReasons).toEqual([
      { code: "activation.capability_unchecked", capability: "messaging_channel", since: expect.any(String) as string },
    ]);

    // The replay answers the same body, Replayed.
    const replay = await start("walk-key-1");
    expect(replay.res.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual({ ...started.body, idempotencyStatus: "Replayed" });

    // A failing check stalls activation: tenant.validation_failed; lastErrorCode follows.
    const failed = await report("--result", "fail", "--reason", "capability.credentials_revoked");
    expect(failed.emittedEvents).toEqual(["tenant.validation_failed"]);
    const [validationFailed] = await awaitDelivery("tenant.validation_failed");
    expect(validationFailed!.data.object).toEqual({
      tenant_id: tenant,
      state: "stalled",
      failing_step: "validation",
      blocking_reasons: [{ code: "capability.credentials_revoked", capability: "messaging_channel" }],
    });
    expect(await tenantRecord()).toMatchObject({
      activationState: "stalled",
      lastErrorCode: "capability.credentials_revoked",
      activated: false,
    });
    const stalled = await call("GET", activation());
    expect(stalled.body.blockingReasons).toEqual([
      { code: "capability.credentials_revoked", capability: "messaging_channel", since: expect.any(String) as string },
    ]);

    // POST /activation while still failing: stays stalled, no second validation_failed.
    expect((await start("walk-key-2")).body).toMatchObject({ state: "stalled", idempotencyStatus: "Applied" });

    // The check passes (first ever pass after a fail): restored, and activation completes.
    const passed = await report("--result", "pass");
    expect(passed.emittedEvents).toEqual(["capability.restored", "tenant.activated"]);
    const [activated] = await awaitDelivery("tenant.activated");
    expect(activated!.data.object).toEqual({
      tenant_id: tenant,
      state: "live",
      activated_at: expect.any(String) as string,
    });
    expect(await tenantRecord()).toMatchObject({
      activationState: "live",
      activated: true,
      status: "active",
      channelReady: true,
      lastErrorCode: null,
    });

    // A live tenant's capability fails: suspended, still live, lastErrorCode the reason.
    const suspended = await report("--result", "fail", "--reason", "capability.permission_missing");
    expect(suspended.emittedEvents).toEqual(["capability.suspended"]);
    const [suspendedEvent] = await awaitDelivery("capability.suspended");
    expect(suspendedEvent!.data.object).toEqual({
      tenant_id: tenant,
      capability: "messaging_channel",
      state: "off",
      reason_code: "capability.permission_missing",
      checked_at: expect.any(String) as string,
    });
    expect(await tenantRecord()).toMatchObject({
      activationState: "live",
      lastErrorCode: "capability.permission_missing",
      channelReady: false,
    });
    const report1 = await call("GET", `/api/v1/tenants/${tenant}/capabilities`);
    expect(report1.body.data).toEqual([
      expect.objectContaining({
        name: "messaging_channel",
        state: "off",
        lastResult: "fail",
        reasonCode: "capability.permission_missing",
      }),
    ]);

    // A repeated identical report emits nothing.
    expect((await report("--result", "fail", "--reason", "capability.permission_missing")).emittedEvents).toEqual([]);

    // Restored: capability.restored (the second one), lastErrorCode cleared.
    expect((await report("--result", "pass")).emittedEvents).toEqual(["capability.restored"]);
    await awaitDelivery("capability.restored", 2);
    expect((await tenantRecord()).lastErrorCode).toBeNull();
    expect((await start("walk-key-3")).body).toMatchObject({ state: "live", blockingReasons: [] });

    // Exactly once each: wait for the ledger to settle, then count.
    await eventually("every delivery to succeed", async () => {
      const endpoints = await call("GET", `/api/v1/tenants/${tenant}/webhooks`);
      const id = (endpoints.body.data as { id: string }[])[0]!.id;
      const page = await call("GET", `/api/v1/tenants/${tenant}/webhooks/${id}/deliveries?limit=100`);
      const data = page.body.data as { status: string }[];
      return data.length === 5 && data.every((d) => d.status === "succeeded");
    });
    // Deliveries of different events may arrive in any order; each arrives once.
    expect(
      delivered()
        .map((event) => event.type)
        .sort(),
    ).toEqual([
      "capability.restored",
      "capability.restored",
      "capability.suspended",
      "tenant.activated",
      "tenant.validation_failed",
    ]);
    expect(new Set(delivered().map((event) => event.id)).size).toBe(5);
  }, 120_000);

  it("answers 404 tenant.not_found for a tenant the key is not granted", async () => {
    const other = (await stack.admin("tenant", "create", "--name", "Other")).id as string;
    const answer: Answer = await call("GET", activation(other));
    expect({ status: answer.res.status, code: answer.body.code }).toEqual({ status: 404, code: "tenant.not_found" });
  });
});
