import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TenantRoute } from "../src/http/route.js";
import { tenantRoutes } from "../src/routes/index.js";
import { OpenApiContract } from "./openapi-contract.js";
import { tenantApiCall, type Answer } from "./tenant-api-call.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * The tenant interface's edge end to end (gateway, notify and catalog as processes): credentials,
 * scopes, grants, problem details, request ids, idempotency, rate limits. Every response is
 * checked against /api/v1/openapi.json.
 */
describe("tenant interface edge", () => {
  let stack: TestStack;
  let contract: OpenApiContract;
  let counter = 0;
  const keys: Record<string, string> = {};
  const allScopes = "notification:send,webhook:manage,tenant:read,usage:manage,tenant:manage";
  let tenant: string; // active, granted to keys.full
  let other: string; // exists, granted to nobody
  const ghost = "ten_doesnotexist000000000"; // granted to keys.full, does not exist

  const call = tenantApiCall({
    gatewayUrl: () => stack.url,
    defaultKey: () => keys.full!,
    contract: () => contract,
  });

  /** The customer's phone number in the routes that have a {to} segment. */
  const recipient = "+447700900123";

  /** A body each route with a request schema accepts, by operationId. */
  const validBodies: Record<string, unknown> = {
    setUsageLimits: { softCap: 10, hardCap: 20 },
    sendNotification: {
      to: recipient,
      type: "reminder",
      clientName: "Ana",
      businessName: "Paws & Co",
      serviceName: "grooming",
      when: "Mon 3 May 10:00",
      actor: { actorReference: "edge-walk" },
    },
    createWebhookEndpoint: { url: "https://localhost/edge-walk", description: "walk", eventTypes: ["booking.*"] },
    updateWebhookEndpoint: { description: "walked" },
    sendWebhookTestDelivery: { eventType: "booking.created" },
    // A window with no delivery in it: each walk's recovery completes at once (no two run together).
    recoverWebhookEndpoint: {
      since: new Date(Date.now() - 2 * 3_600_000).toISOString(),
      until: new Date(Date.now() - 3_600_000).toISOString(),
    },
    createConsoleLink: { email: "walk@example.com" },
    // The tenant's own number (the sandbox provider stores it and never reads it).
    connectChannel: {
      wabaId: "102290129340398",
      phoneNumberId: "106540352242922",
      accessToken: "EAAwalkTokenOfTheEdgeWalk0001",
    },
  };

  /** The {notificationId} the walk reads (a command written straight into notify: no send is counted). */
  const notificationId = "ntf_0123456789abcdef01234567";

  /** The {endpointId} and {deliveryId} the walk uses: deletion gets an endpoint of its own. */
  const webhookIds = { endpoint: "", deleted: "", delivery: "", recovery: "" };

  /** A request that is right in every way but the one a test varies. */
  function requestFor(route: TenantRoute, tenantId: string, key: string | null = keys.full!) {
    const path = route.path
      .replace(":tenantId", tenantId)
      .replace(":to", encodeURIComponent(recipient))
      .replace(":endpointId", route.operationId === "deleteWebhookEndpoint" ? webhookIds.deleted : webhookIds.endpoint)
      .replace(":deliveryId", webhookIds.delivery)
      .replace(":recoveryId", webhookIds.recovery)
      .replace(":notificationId", notificationId);
    expect(path, `${route.operationId}: a path parameter the walk does not fill`).not.toMatch(/\/:/);
    const headers: Record<string, string> = {};
    let body: string | undefined;
    if (route.mutation) headers["idempotency-key"] = `walk-${Date.now()}-${counter++}`;
    if (route.requestSchema) {
      expect(validBodies[route.operationId], `${route.operationId}: no valid body in the walk`).toBeDefined();
      headers["content-type"] = "application/json";
      body = JSON.stringify(validBodies[route.operationId]);
    }
    return call(route.method, path, { key, headers, body });
  }

  const expectProblem = (answer: Answer, status: number, code: string) => {
    expect({ status: answer.res.status, code: answer.body.code }).toEqual({ status, code });
  };

  beforeAll(async () => {
    stack = await startTestStack({ RATE_LIMIT_PER_SECOND: "1000", RATE_LIMIT_BURST: "1000" });
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    tenant = (await stack.admin("tenant", "create", "--name", "Acme")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    await stack.admin("user", "create", "--tenant", tenant, "--email", "walk@example.com", "--role", "viewer");
    other = (await stack.admin("tenant", "create", "--name", "Other", "--plan", "commercial")).id as string;
    // The CLI refuses to grant a tenant that does not exist; a grant of one that is gone (or never
    // was) is written straight into the table, as if the tenant had been deleted after the grant.
    const db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
    const key = async (scopes: string, tenants: string, alsoMissing = false) => {
      const created = await stack.admin("key", "create", "--scopes", scopes, "--tenants", tenants);
      if (alsoMissing) {
        await db.query("update gateway.api_keys set tenant_ids = array_append(tenant_ids, $1) where id = $2", [
          ghost,
          created.id,
        ]);
      }
      return created.key as string;
    };
    keys.full = await key(allScopes, tenant, true);
    keys.noScopes = await key("", tenant, true);
    keys.noTenants = await key(allScopes, "");
    // Webhook endpoints for the walk, and a dead-lettered delivery it may redrive once.
    const endpoint = async () => {
      const { body } = await call("POST", `/api/v1/tenants/${tenant}/webhooks`, {
        headers: { "content-type": "application/json", "idempotency-key": `walk-setup-${counter++}` },
        body: JSON.stringify(validBodies.createWebhookEndpoint),
      });
      return body.id as string;
    };
    webhookIds.endpoint = await endpoint();
    webhookIds.deleted = await endpoint();
    webhookIds.delivery = "dlv_0123456789abcdef01234567";
    await db.query(
      "insert into webhooks_history.events (id, tenant_id, type, occurred_at, data, livemode) values ('evt_walk', $1, 'booking.created', now(), '{}', true)",
      [tenant],
    );
    await db.query(
      `insert into webhooks_history.deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status)
       values ($1, $2, $3, 'evt_walk', 'booking.created', true, '{}', 'dead_lettered')`,
      [webhookIds.delivery, tenant, webhookIds.endpoint],
    );
    const recovered = await call("POST", `/api/v1/tenants/${tenant}/webhooks/${webhookIds.endpoint}/recover`, {
      headers: { "content-type": "application/json", "idempotency-key": `walk-setup-${counter++}` },
      body: JSON.stringify(validBodies.recoverWebhookEndpoint),
    });
    webhookIds.recovery = recovered.body.id as string;
    await db.query(
      `insert into notify.notification_commands (id, tenant_id, idempotency_key, type, recipient, state, counted, month,
         request_id, delivery_status, accepted_at)
       values ($1, $2, 'walk-notification', 'reminder', '447700900123', 'sent', false, to_char(now(), 'YYYY-MM'), 'req', 'accepted', now())`,
      [notificationId, tenant],
    );
    await db.end();
    const revoked = await stack.admin("key", "create", "--scopes", allScopes, "--tenants", tenant);
    await stack.admin("key", "revoke", "--id", revoked.id as string);
    keys.revoked = revoked.key as string;
  });
  afterAll(async () => stack?.stop());

  describe("tenants", () => {
    it("returns the tenant record", async () => {
      const { res, body } = await call("GET", `/api/v1/tenants/${tenant}`);
      expect(res.status).toBe(200);
      expect(body).toEqual({
        id: tenant,
        name: "Acme",
        status: "active",
        activated: true,
        channelReady: true,
        // No number connected yet (the walk below connects one).
        channel: null,
        version: 2,
        lastErrorCode: null,
        plan: "testing",
        createdAt: expect.any(String) as string,
        activationState: "live",
        planReason: null,
        planChangedAt: null,
        testingAllowance: {
          limit: 1000,
          used: 0,
          remaining: 1000,
          month: new Date().toISOString().slice(0, 7),
          resetsAt: expect.stringMatching(/^\d{4}-\d{2}-01T00:00:00\.000Z$/) as string,
        },
      });
    });

    it("reflects admin changes: channel state bumps the version", async () => {
      const created = await stack.admin("tenant", "create", "--name", "Chan", "--id", `chan_${counter++}`);
      expect(created).toMatchObject({ status: "pending_activation", activated: false, channelReady: false });
      const changed = await stack.admin("tenant", "channel", "--id", created.id as string, "--state", "ready");
      expect(changed).toMatchObject({ channelReady: true, version: 2 });
    });
  });

  describe("every route, every bad credential (driven by the route table)", () => {
    // GET .../channel reads the connected number: connect it before the walk.
    beforeAll(async () => {
      const { res, body } = await call("PUT", `/api/v1/tenants/${tenant}/channel`, {
        headers: { "idempotency-key": "walk-connect", "content-type": "application/json" },
        body: JSON.stringify(validBodies.connectChannel),
      });
      expect(res.status, JSON.stringify(body)).toBe(201);
    });

    it("documents every route of the table with its scope", () => {
      for (const route of tenantRoutes) {
        const template = route.path.replace(/^\/api\/v1/, "").replace(/:([A-Za-z]+)/g, "{$1}");
        expect(contract.template(`/api/v1${template}`), route.operationId).toBe(template);
      }
    });

    for (const route of tenantRoutes) {
      describe(`${route.method} ${route.path}`, () => {
        it("answers 401 auth.key_missing without a key", async () => {
          expectProblem(await requestFor(route, tenant, null), 401, "auth.key_missing");
        });

        it.each([
          ["malformed", "sk_live_nope"],
          ["unknown", `sk_live_${"a".repeat(24)}_${"B".repeat(43)}`],
        ])("answers 401 auth.key_invalid to a %s key", async (_label, key) => {
          const answer = await requestFor(route, tenant, key);
          expectProblem(answer, 401, "auth.key_invalid");
          expect(answer.res.headers.get("www-authenticate")).toMatch(/^Bearer/);
        });

        it("answers 401 auth.key_invalid to a revoked key", async () => {
          expectProblem(await requestFor(route, tenant, keys.revoked), 401, "auth.key_invalid");
        });

        it(`answers 403 auth.scope_missing to a key without ${route.scope}`, async () => {
          expectProblem(await requestFor(route, tenant, keys.noScopes), 403, "auth.scope_missing");
        });

        it("answers 404 to an ungranted tenant exactly as to one that does not exist", async () => {
          const ungranted = await requestFor(route, other);
          const missing = await requestFor(route, ghost);
          const noGrants = await requestFor(route, tenant, keys.noTenants);
          expectProblem(ungranted, 404, "tenant.not_found");
          const strip = ({ correlationId: _, ...rest }: Record<string, unknown>) => rest;
          expect(strip(missing.body)).toEqual(strip(ungranted.body));
          expect(strip(noGrants.body)).toEqual(strip(ungranted.body));
          expect(JSON.stringify(ungranted.body)).not.toContain(other);
        });

        it("succeeds with the right key", async () => {
          expect((await requestFor(route, tenant)).res.status).toBe(route.successStatus ?? 200);
        });
      });
    }
  });

  describe("problem details", () => {
    const limitsPath = () => `/api/v1/tenants/${tenant}/usage/limits`;
    const put = (body: string, headers: Record<string, string> = {}) =>
      call("PUT", limitsPath(), {
        body,
        headers: { "content-type": "application/json", "idempotency-key": `pd-${counter++}-xxxxxx`, ...headers },
      });

    it("answers unknown routes with 404 request.route_not_found", async () => {
      expectProblem(await call("GET", `/api/v1/tenants/${tenant}/nothing-here`), 404, "request.route_not_found");
      expectProblem(await call("GET", "/api/v2/whatever"), 404, "request.route_not_found");
    });

    it.each([
      ["GET", (t: string) => `/api/v1/TENANTS/${t}`],
      ["GET", (t: string) => `/api/v1/tenants/${t}/`],
      ["PUT", (t: string) => `/api/v1/tenants/${t}/usage/limits/`],
      ["PUT", (t: string) => `/api/v1/tenants/${t}/USAGE/limits`],
    ])("matches routes exactly: %s %s is 404", async (method, path) => {
      const answer = await call(method, path(tenant), {
        headers: { "content-type": "application/json", "idempotency-key": `alias-${counter++}-xxxx` },
        body: method === "PUT" ? JSON.stringify({ softCap: 1, hardCap: 2 }) : undefined,
      });
      expectProblem(answer, 404, "request.route_not_found");
    });

    it.each([
      ["65 characters", "t".repeat(65)],
      ["a dot", "ten.1"],
      ["a percent-encoded space", "ten%201"],
      ["non-ASCII letters", "%C3%A9t%C3%A9"],
    ])("answers 400 request.invalid to a tenantId with %s, after authentication", async (_label, tenantId) => {
      for (const route of tenantRoutes) {
        const answer = await requestFor(route, tenantId);
        expectProblem(answer, 400, "request.invalid");
        expect(answer.body.detail).toMatch(/tenantId/);
        expectProblem(await requestFor(route, tenantId, null), 401, "auth.key_missing");
      }
    });

    it("accepts a 64-character tenantId as syntax (then 404 when not granted)", async () => {
      expectProblem(await call("GET", `/api/v1/tenants/${"t".repeat(64)}`), 404, "tenant.not_found");
    });

    it("answers text that is not well-formed Unicode with 400 naming the field", async () => {
      const answer = await put('{"softCap":1,"hardCap":2,"label":"\\ud800"}');
      expectProblem(answer, 400, "request.invalid");
      expect(answer.body.detail).toMatch(/^label must be well-formed Unicode/);
    });

    it("answers a wrong method with 405 and Allow", async () => {
      const answer = await call("DELETE", `/api/v1/tenants/${tenant}`);
      expectProblem(answer, 405, "request.method_not_allowed");
      expect(answer.res.headers.get("allow")).toContain("GET");
    });

    it("answers bodies that are not JSON with 400, over 1 MiB with 413, wrong type with 415", async () => {
      expectProblem(await put("{nope"), 400, "request.body_invalid");
      expectProblem(
        await put(JSON.stringify({ softCap: 1, hardCap: 2, pad: "x".repeat(1 << 20) })),
        413,
        "request.body_too_large",
      );
      expectProblem(
        await put("softCap=1", { "content-type": "application/x-www-form-urlencoded" }),
        415,
        "request.unsupported_media_type",
      );
    });

    it("names every problem of the limits in one detail", async () => {
      const answer = await put(JSON.stringify({ softCap: -1, hardCap: "5" }));
      expectProblem(answer, 400, "usage.limits_invalid");
      expect(answer.body.detail).toBe(
        "softCap must be a whole number of tokens from 0 to 9007199254740991; hardCap must be an integer",
      );
      const both = await put(JSON.stringify({ hardCap: 1.5 }));
      expect(both.body.detail).toBe("softCap is required; hardCap must be an integer");
    });

    it("explains invalid fields and ignores unknown ones", async () => {
      expectProblem(await put(JSON.stringify({ softCap: "1", hardCap: 2 })), 400, "usage.limits_invalid");
      expectProblem(await put(JSON.stringify({ softCap: 30, hardCap: 20 })), 400, "usage.limits_invalid");
      expectProblem(await put(JSON.stringify({ softCap: -1, hardCap: 20 })), 400, "usage.limits_invalid");
      const ok = await put(JSON.stringify({ softCap: 1, hardCap: 2, colour: "blue" }));
      expect(ok.res.status).toBe(200);
      expect(ok.body).toMatchObject({ softCap: 1, hardCap: 2 });
    });

    it("echoes a safe X-Request-Id and carries it into notify's logs", async () => {
      const id = `tenant-trace-${counter++}`;
      const { res, body } = await call("GET", `/api/v1/tenants/${ghost}`, { headers: { "x-request-id": id } });
      expect(res.headers.get("x-request-id")).toBe(id);
      expect(body.correlationId).toBe(id);
      await expect.poll(() => stack.notify.logs.some((l) => l.requestId === id)).toBe(true);
    });

    it("replaces an unsafe X-Request-Id", async () => {
      const { res, body } = await call("GET", `/api/v1/tenants/${ghost}`, { headers: { "x-request-id": "bad id!" } });
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
      expect(body.correlationId).toBe(res.headers.get("x-request-id"));
    });
  });

  describe("usage limits", () => {
    it("reads back no limits as nulls with version 0, then the limits as set", async () => {
      const fresh = (await stack.admin("tenant", "create", "--name", "Fresh", "--id", `fresh_${counter++}`))
        .id as string;
      const key = (await stack.admin("key", "create", "--scopes", "tenant:read,usage:manage", "--tenants", fresh))
        .key as string;
      const path = `/api/v1/tenants/${fresh}/usage/limits`;
      const unset = await call("GET", path, { key });
      expect(unset.res.status).toBe(200);
      expect(unset.body).toEqual({ tenantId: fresh, softCap: null, hardCap: null, version: 0, updatedAt: null });
      const set = await call("PUT", path, {
        key,
        body: JSON.stringify({ softCap: 5, hardCap: 8 }),
        headers: { "content-type": "application/json", "idempotency-key": `read-back-${counter++}` },
      });
      expect(set.res.status).toBe(200);
      const read = await call("GET", path, { key });
      expect(read.body).toEqual(set.body);
      expect(read.body).toMatchObject({ softCap: 5, hardCap: 8, version: 1 });
    });
  });

  describe("idempotency", () => {
    const limitsPath = () => `/api/v1/tenants/${tenant}/usage/limits`;
    const put = (key: string | undefined, body: object) =>
      call("PUT", limitsPath(), {
        body: JSON.stringify(body),
        headers: { "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
      });

    it("requires a well-formed key on mutations", async () => {
      expectProblem(await put(undefined, { softCap: 1, hardCap: 2 }), 400, "request.idempotency_key_required");
      expectProblem(await put("short", { softCap: 1, hardCap: 2 }), 400, "request.idempotency_key_invalid");
    });

    it("replays the first result for a repeat, bare or quoted, and refuses reuse for another body", async () => {
      const key = `limits-${Date.now()}`;
      const first = await put(key, { softCap: 100, hardCap: 200 });
      expect(first.res.status).toBe(200);
      expect(first.res.headers.get("idempotent-replayed")).toBeNull();
      const again = await put(`"${key}"`, { softCap: 100, hardCap: 200 });
      expect(again.res.status).toBe(200);
      expect(again.res.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
      expectProblem(await put(key, { softCap: 100, hardCap: 300 }), 422, "idempotency.key_reused");
    });

    it("applies 20 concurrent repeats exactly once", async () => {
      const key = `burst-${Date.now()}`;
      const before = (await put(`probe-${Date.now()}`, { softCap: 1, hardCap: 1 })).body.version as number;
      const answers = await Promise.all(Array.from({ length: 20 }, () => put(key, { softCap: 7, hardCap: 9 })));
      const statuses = answers.map((a) => a.res.status);
      expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
      const applied = answers.filter((a) => a.res.status === 200 && a.res.headers.get("idempotent-replayed") === null);
      expect(applied).toHaveLength(1);
      for (const a of answers.filter((x) => x.res.status === 409)) expect(a.body.code).toBe("idempotency.in_progress");
      expect(applied[0]!.body.version).toBe(before + 1);
      const after = await put(key, { softCap: 7, hardCap: 9 });
      expect(after.res.headers.get("idempotent-replayed")).toBe("true");
      expect(after.body.version).toBe(before + 1);
    });
  });

  describe("unexpected failures", () => {
    it("answer 500 service.internal_error with no internals in the body", async () => {
      const db = new pg.Client({ connectionString: stack.scratch.url });
      await db.connect();
      await db.query("alter table notify.usage_limits rename to usage_limits_gone");
      try {
        const answer = await call("PUT", `/api/v1/tenants/${tenant}/usage/limits`, {
          body: JSON.stringify({ softCap: 1, hardCap: 2 }),
          headers: { "content-type": "application/json", "idempotency-key": `boom-${counter++}-xxxx` },
        });
        expectProblem(answer, 500, "service.internal_error");
        expect(answer.body.detail).toBe("an unexpected error occurred");
        expect(JSON.stringify(answer.body)).not.toMatch(/usage_limits|does not exist|postgres|knex|\s+at\s/i);
        // The cause is logged by the service that failed, under the request id.
        const id = answer.res.headers.get("x-request-id");
        await expect.poll(() => stack.notify.logs.some((l) => l.requestId === id && l.level === "error")).toBe(true);
      } finally {
        await db.query("alter table notify.usage_limits_gone rename to usage_limits");
        await db.end();
      }
    });
  });

  describe("when notify is down", () => {
    it("answers 503 service.unavailable with Retry-After and the gateway stays up", async () => {
      await stack.notify.stop();
      const answer = await call("GET", `/api/v1/tenants/${tenant}`);
      expectProblem(answer, 503, "service.unavailable");
      expect(Number(answer.res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
      // Still ready: only notify's routes are down (readiness is the gateway's own database).
      expect((await fetch(`${stack.url}/readyz`)).status).toBe(200);
      // A mutation always carries an Idempotency-Key, so its 503 says to retry with that key.
      const put = await call("PUT", `/api/v1/tenants/${tenant}/usage/limits`, {
        body: JSON.stringify({ softCap: 1, hardCap: 2 }),
        headers: { "content-type": "application/json", "idempotency-key": `down-${counter++}-xxxx` },
      });
      expectProblem(put, 503, "service.unavailable");
      expect(put.body.detail).toMatch(/retry with backoff and the same Idempotency-Key/);
      expect(Number(put.res.headers.get("retry-after"))).toBeGreaterThan(0);
    });
  });
});
