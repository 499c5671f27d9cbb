import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenApiContract } from "./openapi-contract.js";
import { tenantApiCall, type Answer } from "./tenant-api-call.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * Usage over the tenant interface end to end (gateway, notify and webhooks as processes): GET
 * /usage for the current UTC month, PUT /usage/limits with expectedVersion, scopes and bad bodies.
 * Every response is checked against /api/v1/openapi.json. Usage enters through the admin CLI
 * (`usage record`), the internal contract.
 */
describe("usage API", () => {
  let stack: TestStack;
  let contract: OpenApiContract;
  let n = 0;
  const keys: Record<string, string> = {};
  let tenant: string;
  let fresh: string;

  const call = tenantApiCall({
    gatewayUrl: () => stack.url,
    defaultKey: () => keys.full!,
    contract: () => contract,
  });
  const usagePath = (t = tenant) => `/api/v1/tenants/${t}/usage`;
  const put = (body: unknown, options: { key?: string; t?: string } = {}) =>
    call("PUT", `${usagePath(options.t)}/limits`, {
      key: options.key,
      headers: { "content-type": "application/json", "idempotency-key": `usage-${Date.now()}-${n++}` },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const expectProblem = (answer: Answer, status: number, code: string) =>
    expect({ status: answer.res.status, code: answer.body.code }).toEqual({ status, code });

  beforeAll(async () => {
    stack = await startTestStack();
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    const create = async (name: string) => (await stack.admin("tenant", "create", "--name", name)).id as string;
    [tenant, fresh] = await Promise.all([create("Usage"), create("Fresh")]);
    const grant = `${tenant},${fresh}`;
    keys.full = (await stack.admin("key", "create", "--scopes", "tenant:read,usage:manage", "--tenants", grant))
      .key as string;
    keys.readOnly = (await stack.admin("key", "create", "--scopes", "tenant:read", "--tenants", grant)).key as string;
    keys.manageOnly = (await stack.admin("key", "create", "--scopes", "usage:manage", "--tenants", grant))
      .key as string;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it("GET /usage: a tenant that never set limits and used nothing", async () => {
    const { res, body } = await call("GET", usagePath(fresh));
    expect(res.status).toBe(200);
    expect(body).toEqual({
      tenantId: fresh,
      month: new Date().toISOString().slice(0, 7),
      unit: "tokens",
      tokensUsed: 0,
      softCap: null,
      hardCap: null,
      limitsVersion: 0,
      thresholds: [],
    });
  });

  it("PUT /usage/limits honours expectedVersion: stale 412 usage.version_mismatch, current 200", async () => {
    const first = await put({ softCap: 100, hardCap: 200, expectedVersion: 0 });
    expect(first.res.status).toBe(200);
    expect(first.body).toMatchObject({ softCap: 100, hardCap: 200, version: 1 });
    const stale = await put({ softCap: 150, hardCap: 200, expectedVersion: 0 });
    expectProblem(stale, 412, "usage.version_mismatch");
    expect(stale.body.detail).toBe("the usage limits are at version 1, not 0");
    expectProblem(await put({ softCap: 150, hardCap: 200, expectedVersion: 7 }), 412, "usage.version_mismatch");
    const current = await put({ softCap: 150, hardCap: 200, expectedVersion: 1 });
    expect(current.res.status).toBe(200);
    expect(current.body).toMatchObject({ softCap: 150, hardCap: 200, version: 2 });
    // Without expectedVersion the change applies whatever the version (as before).
    expect((await put({ softCap: 150, hardCap: 300 })).body).toMatchObject({ version: 3 });
    const limits = await call("GET", `${usagePath()}/limits`);
    expect(limits.body).toMatchObject({ softCap: 150, hardCap: 300, version: 3 });
  });

  it("GET /usage shows the month's tokens, caps and each threshold crossed once", async () => {
    await stack.admin("usage", "record", "--tenant", tenant, "--tokens", "160");
    await stack.admin("usage", "record", "--tenant", tenant, "--tokens", "200");
    const { res, body } = await call("GET", usagePath());
    expect(res.status).toBe(200);
    const month = new Date().toISOString().slice(0, 7);
    expect(body).toMatchObject({
      tenantId: tenant,
      month,
      unit: "tokens",
      tokensUsed: 360,
      softCap: 150,
      hardCap: 300,
      limitsVersion: 3,
    });
    const thresholds = body.thresholds as Record<string, unknown>[];
    expect(thresholds.map((t) => [t.threshold, t.cap, t.tokensUsed])).toEqual([
      ["soft_cap", 150, 160],
      ["hard_cap", 300, 360],
    ]);
    for (const t of thresholds) {
      expect(t.eventId).toMatch(/^evt_[0-9a-f]{24}$/);
      expect(String(t.crossedAt).slice(0, 7)).toBe(month);
    }
  });

  it("scopes: GET needs tenant:read, PUT needs usage:manage", async () => {
    expect((await call("GET", usagePath(), { key: keys.readOnly })).res.status).toBe(200);
    expectProblem(await call("GET", usagePath(), { key: keys.manageOnly }), 403, "auth.scope_missing");
    expectProblem(await put({ softCap: 1, hardCap: 2 }, { key: keys.readOnly }), 403, "auth.scope_missing");
    expect((await put({ softCap: 150, hardCap: 300 }, { key: keys.manageOnly })).res.status).toBe(200);
  });

  it.each([
    [{ softCap: 1, hardCap: 2, expectedVersion: -1 }, "expectedVersion must be a whole number from 0"],
    [{ softCap: 1, hardCap: 2, expectedVersion: 1.5 }, "expectedVersion must be a whole number from 0"],
    [{ softCap: 1, hardCap: 2, expectedVersion: "3" }, "expectedVersion must be a whole number from 0"],
    [{ softCap: 3, hardCap: 2, expectedVersion: 0 }, "softCap must not be greater than hardCap"],
    [{ hardCap: 2 }, "softCap is required"],
  ])("PUT /usage/limits %j: 400 usage.limits_invalid naming the problem", async (body, detail) => {
    const answer = await put(body, { t: fresh });
    expectProblem(answer, 400, "usage.limits_invalid");
    expect(answer.body.detail).toContain(detail);
  });

  it("PUT /usage/limits with a body that is not JSON: 400 request.body_invalid", async () => {
    expectProblem(await put("{nope", { t: fresh }), 400, "request.body_invalid");
  });
});
