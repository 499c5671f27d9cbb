import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenApiContract } from "./openapi-contract.js";
import { tenantApiCall, type Answer } from "./tenant-api-call.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * Webhook management end to end: the gateway and the webhooks service as processes over a
 * scratch database. Every response is checked against /api/v1/openapi.json. Endpoint URLs point
 * at localhost (the stack allows private targets); nothing here waits for a delivery attempt.
 */
describe("webhook management", () => {
  let stack: TestStack;
  let contract: OpenApiContract;
  let db: pg.Client;
  let n = 0;
  const keys: Record<string, string> = {};
  let tenant: string;
  let second: string; // also granted to keys.full
  let outsider: string; // granted to nobody

  const call = tenantApiCall({
    gatewayUrl: () => stack.url,
    defaultKey: () => keys.full!,
    contract: () => contract,
  });
  const idempotencyKey = (label = "k") => `${label}-${Date.now()}-${n++}`;
  const base = (tenantId = tenant) => `/api/v1/tenants/${tenantId}/webhooks`;

  const post = (path: string, body?: unknown, options: { key?: string; idempotencyKey?: string | null } = {}) =>
    call("POST", path, {
      key: options.key,
      headers: {
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...(options.idempotencyKey === null ? {} : { "idempotency-key": options.idempotencyKey ?? idempotencyKey() }),
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
  const patch = (path: string, body: unknown, key = idempotencyKey()) =>
    call("PATCH", path, {
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(body),
    });
  const endpointBody = (extra: Record<string, unknown> = {}) => ({
    url: `https://localhost:9/hooks/${n++}`,
    description: "receiver",
    eventTypes: ["booking.created", "capability.*"],
    ...extra,
  });
  const createEndpoint = async (tenantId = tenant) => {
    const answer = await post(base(tenantId), endpointBody());
    expect(answer.res.status).toBe(201);
    return answer.body;
  };
  const expectProblem = (answer: Answer, status: number, code: string) =>
    expect({ status: answer.res.status, code: answer.body.code }).toEqual({ status, code });

  async function seedDelivery(endpointId: string, status: string, createdAgo = "0 seconds"): Promise<string> {
    const suffix = `${Date.now().toString(16).padStart(12, "0")}${(n++).toString(16).padStart(12, "0")}`.slice(-24);
    const eventId = `evt_${suffix}`;
    const id = `dlv_${suffix}`;
    await db.query(
      `insert into webhooks_history.events (id, tenant_id, type, occurred_at, data, livemode, received_at)
       values ($1, $2, 'booking.created', now() - $3::interval, '{"booking_id":"bkg_1"}', true, now() - $3::interval)`,
      [eventId, tenant, createdAgo],
    );
    await db.query(
      `insert into webhooks_history.deliveries (id, tenant_id, endpoint_id, event_id, event_type, livemode, payload, status,
         attempts, attempts_total, generation, created_at, updated_at)
       values ($1, $2, $3, $4, 'booking.created', true, $5, $6, $7, $7, 1, now() - $8::interval, now() - $8::interval)`,
      [id, tenant, endpointId, eventId, `{"id":"${eventId}"}`, status, status === "dead_lettered" ? 8 : 1, createdAgo],
    );
    return id;
  }

  beforeAll(async () => {
    stack = await startTestStack();
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
    const create = async (name: string) => (await stack.admin("tenant", "create", "--name", name)).id as string;
    [tenant, second, outsider] = await Promise.all([create("Hooks"), create("Second"), create("Outsider")]);
    const grant = `${tenant},${second}`;
    keys.full = (await stack.admin("key", "create", "--scopes", "webhook:manage", "--tenants", grant)).key as string;
    keys.readOnly = (await stack.admin("key", "create", "--scopes", "tenant:read", "--tenants", grant)).key as string;
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  it("reports the webhooks service in /readyz", async () => {
    const ready = (await (await fetch(`${stack.url}/readyz`)).json()) as { checks: Record<string, string> };
    expect(ready.checks.webhooks).toBe("SERVING");
  });

  describe("endpoints", () => {
    it("rateLimit: created with it, read, changed, cleared with null; bad values 400 webhook.endpoint_invalid", async () => {
      const created = await post(base(), endpointBody({ rateLimit: 5 }));
      expect(created.res.status).toBe(201);
      expect(created.body.rateLimit).toBe(5);
      const id = created.body.id as string;
      expect((await call("GET", `${base()}/${id}`)).body.rateLimit).toBe(5);
      const listed = await call("GET", base());
      expect((listed.body.data as { id: string; rateLimit: number }[]).find((e) => e.id === id)?.rateLimit).toBe(5);

      const raised = await patch(`${base()}/${id}`, { rateLimit: 10_000 });
      expect({ status: raised.res.status, rateLimit: raised.body.rateLimit, version: raised.body.version }).toEqual({
        status: 200,
        rateLimit: 10_000,
        version: 2,
      });
      // Changing another field leaves it.
      const renamed = await patch(`${base()}/${id}`, { description: "renamed" });
      expect(renamed.body.rateLimit).toBe(10_000);
      const cleared = await patch(`${base()}/${id}`, { rateLimit: null });
      expect({ status: cleared.res.status, rateLimit: cleared.body.rateLimit }).toEqual({
        status: 200,
        rateLimit: null,
      });
      expect((await call("GET", `${base()}/${id}`)).body.rateLimit).toBeNull();
      const { rows } = await db.query<{ rate_limit: number | null }>(
        "select rate_limit from webhooks.endpoints where id = $1",
        [id],
      );
      expect(rows[0]!.rate_limit).toBeNull();
      // null on create: unlimited.
      const unlimited = await post(base(), endpointBody({ rateLimit: null }));
      expect({ status: unlimited.res.status, rateLimit: unlimited.body.rateLimit }).toEqual({
        status: 201,
        rateLimit: null,
      });

      for (const bad of [0, -1, 10_001, 2.5, "5", true, 2 ** 31, 1e300]) {
        expectProblem(await post(base(), endpointBody({ rateLimit: bad })), 400, "webhook.endpoint_invalid");
        expectProblem(await patch(`${base()}/${id}`, { rateLimit: bad }), 400, "webhook.endpoint_invalid");
      }
      expect((await call("GET", `${base()}/${id}`)).body).toMatchObject({ rateLimit: null, version: 4 });
      // The limit is part of the request: the same key with another limit is a reused key.
      const key = idempotencyKey("rate");
      expect((await patch(`${base()}/${id}`, { rateLimit: 7 }, key)).res.status).toBe(200);
      expectProblem(await patch(`${base()}/${id}`, { rateLimit: 8 }, key), 422, "idempotency.key_reused");
    });

    it("creates an endpoint: 201 with the secret once, pinned to 2026-07-01; reads never show the secret", async () => {
      const { res, body } = await post(base(), endpointBody({ url: "https://LOCALHOST:9/created" }));
      expect(res.status).toBe(201);
      expect(res.headers.get("idempotent-replayed")).toBeNull();
      expect(body).toEqual({
        id: expect.stringMatching(/^ep_[0-9a-f]{24}$/) as string,
        url: "https://localhost:9/created",
        description: "receiver",
        eventTypes: ["booking.created", "capability.*"],
        apiVersion: "2026-07-01",
        paused: false,
        attentionReason: null,
        version: 1,
        createdAt: expect.any(String) as string,
        updatedAt: body.createdAt,
        previousSecretExpiresAt: null,
        health: "healthy",
        successRate24h: null,
        attempts24h: 0,
        attentionCause: null,
        attentionSince: null,
        rateLimit: null,
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9]{44}$/) as string,
      });
      const read = await call("GET", `${base()}/${body.id as string}`);
      expect(read.res.status).toBe(200);
      expect(read.body).toEqual(Object.fromEntries(Object.entries(body).filter(([name]) => name !== "secret")));
      expect(JSON.stringify(read.body)).not.toContain("whsec_");
      // Sealed at rest.
      const { rows } = await db.query<{ secret_sealed: string }>(
        "select secret_sealed from webhooks.endpoints where id = $1",
        [body.id],
      );
      expect(rows[0]!.secret_sealed).toMatch(/^v1\./);
      expect(rows[0]!.secret_sealed).not.toContain((body.secret as string).slice(6));
    });

    it("replays a create with the same Idempotency-Key: same endpoint, same secret, Idempotent-Replayed", async () => {
      const key = idempotencyKey("create");
      const request = endpointBody();
      const first = await post(base(), request, { idempotencyKey: key });
      const again = await post(base(), request, { idempotencyKey: key });
      expect(again.res.status).toBe(201);
      expect(again.res.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
      expectProblem(
        await post(base(), { ...request, description: "other" }, { idempotencyKey: key }),
        422,
        "idempotency.key_reused",
      );
    });

    it.each([
      ["an http URL", { url: "http://localhost:9/x" }, "webhook.endpoint_invalid"],
      ["a non-URL", { url: "localhost/x" }, "webhook.endpoint_invalid"],
      ["no filters", { eventTypes: [] }, "webhook.endpoint_invalid"],
      ["an unknown filter", { eventTypes: ["booking.exploded"] }, "webhook.event_type_unknown"],
      ["a coming-soon filter", { eventTypes: ["invoice.issued"] }, "webhook.event_type_not_subscribable"],
      ["an unknown member", { secret: "whsec_mine" }, "webhook.endpoint_invalid"],
      ["a filter that is not a string", { eventTypes: [1] }, "webhook.endpoint_invalid"],
    ])("refuses %s with 400", async (_label, extra, code) => {
      expectProblem(await post(base(), endpointBody(extra)), 400, code);
    });

    it("names every problem of a body in one detail", async () => {
      const answer = await post(base(), { url: 5, eventTypes: "booking.created", extra: true });
      expectProblem(answer, 400, "webhook.endpoint_invalid");
      expect(answer.body.detail).toBe(
        '"extra" is not a member of this request; url must be a string; description is required; eventTypes must be an array of strings',
      );
    });

    it("needs an Idempotency-Key on mutations, the webhook:manage scope, and a granted tenant", async () => {
      expectProblem(
        await post(base(), endpointBody(), { idempotencyKey: null }),
        400,
        "request.idempotency_key_required",
      );
      expectProblem(await call("GET", base(), { key: keys.readOnly }), 403, "auth.scope_missing");
      expectProblem(await post(base(), endpointBody(), { key: keys.readOnly }), 403, "auth.scope_missing");
      expectProblem(await call("GET", base(outsider)), 404, "tenant.not_found");
      const endpoint = await createEndpoint(second);
      expectProblem(await call("GET", `${base()}/${endpoint.id as string}`), 404, "webhook.endpoint_not_found");
      expectProblem(await call("GET", `${base()}/ep_nope`), 404, "webhook.endpoint_not_found");
    });

    it("lists newest first, visiting every endpoint exactly once across pages", async () => {
      const pager = (await stack.admin("tenant", "create", "--name", "Pager")).id as string;
      const key = (await stack.admin("key", "create", "--scopes", "webhook:manage", "--tenants", pager)).key as string;
      const created: string[] = [];
      for (let i = 0; i < 5; i++) {
        const answer = await post(base(pager), endpointBody(), { key });
        created.push(answer.body.id as string);
      }
      const seen: string[] = [];
      let query = "?limit=2";
      for (;;) {
        const page = await call("GET", `${base(pager)}${query}`, { key });
        expect(page.res.status).toBe(200);
        seen.push(...(page.body.data as { id: string }[]).map((e) => e.id));
        if (page.body.nextCursor === null) break;
        await post(base(pager), endpointBody(), { key }); // newer ones never appear on later pages
        query = `?limit=2&cursor=${encodeURIComponent(page.body.nextCursor as string)}`;
      }
      expect(seen).toEqual([...created].reverse());
      expectProblem(await call("GET", `${base(pager)}?limit=101`, { key }), 400, "request.invalid");
      expectProblem(await call("GET", `${base(pager)}?cursor=bogus`, { key }), 400, "request.invalid");
    });

    it("updates with expectedVersion: 200 and version+1, then 412 webhook.version_mismatch when stale", async () => {
      const endpoint = await createEndpoint();
      const path = `${base()}/${endpoint.id as string}`;
      const updated = await patch(path, { description: "renamed", eventTypes: ["usage.*"], expectedVersion: 1 });
      expect(updated.res.status).toBe(200);
      expect(updated.body).toMatchObject({ description: "renamed", eventTypes: ["usage.*"], version: 2 });
      const stale = await patch(path, { description: "again", expectedVersion: 1 });
      expectProblem(stale, 412, "webhook.version_mismatch");
      expectProblem(await patch(path, {}), 400, "webhook.endpoint_invalid");
      expectProblem(await patch(path, { expectedVersion: "2" }), 400, "webhook.endpoint_invalid");
      expectProblem(await patch(path, { eventTypes: ["task.completed"] }), 400, "webhook.event_type_not_subscribable");
      expect((await call("GET", path)).body).toMatchObject({ description: "renamed", version: 2 });
    });

    it("pauses and resumes, bumping the version; a stale expectedVersion is 412", async () => {
      const endpoint = await createEndpoint();
      const path = `${base()}/${endpoint.id as string}`;
      const paused = await post(`${path}/pause`);
      expect(paused.res.status).toBe(200);
      expect(paused.body).toMatchObject({ paused: true, version: 2 });
      expectProblem(await post(`${path}/resume?expectedVersion=1`), 412, "webhook.version_mismatch");
      expectProblem(await post(`${path}/resume?expectedVersion=x`), 400, "request.invalid");
      const resumed = await post(`${path}/resume?expectedVersion=2`);
      expect(resumed.res.status).toBe(200);
      expect(resumed.body).toMatchObject({ paused: false, attentionReason: null, version: 3 });
    });

    it("rotates the secret: a new one, shown once, the previous one signing for 24 hours", async () => {
      const endpoint = await createEndpoint();
      const key = idempotencyKey("rotate");
      const before = Date.now();
      const rotated = await post(`${base()}/${endpoint.id as string}/rotate-secret`, undefined, {
        idempotencyKey: key,
      });
      expect(rotated.res.status).toBe(200);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      expect(rotated.body.secret).not.toBe(endpoint.secret);
      expect(rotated.body.version).toBe(2);
      const expires = Date.parse(rotated.body.previousSecretExpiresAt as string);
      expect(expires - before).toBeGreaterThan(24 * 3_600_000 - 60_000);
      expect(expires - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);
      const replay = await post(`${base()}/${endpoint.id as string}/rotate-secret`, undefined, { idempotencyKey: key });
      expect(replay.res.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(rotated.body);
      expect(JSON.stringify((await call("GET", `${base()}/${endpoint.id as string}`)).body)).not.toContain("whsec_");
    });

    it("deletes: 204, then 404; a replay is 204 with Idempotent-Replayed", async () => {
      const endpoint = await createEndpoint();
      const path = `${base()}/${endpoint.id as string}`;
      const key = idempotencyKey("delete");
      const deleted = await call("DELETE", path, { headers: { "idempotency-key": key } });
      expect(deleted.res.status).toBe(204);
      const replay = await call("DELETE", path, { headers: { "idempotency-key": key } });
      expect(replay.res.status).toBe(204);
      expect(replay.res.headers.get("idempotent-replayed")).toBe("true");
      expectProblem(await call("GET", path), 404, "webhook.endpoint_not_found");
      expectProblem(
        await call("DELETE", path, { headers: { "idempotency-key": idempotencyKey() } }),
        404,
        "webhook.endpoint_not_found",
      );
    });
  });

  it("lists the event catalog: 20 types (spec 6.3's 15, issue 22's two, issue 32's three), five coming soon and not subscribable", async () => {
    const { res, body } = await call("GET", `${base()}/event-types`);
    expect(res.status).toBe(200);
    const types = body.data as { type: string; emission: string; subscribable: boolean }[];
    expect(types).toHaveLength(20);
    expect(types.filter((t) => !t.subscribable)).toHaveLength(5);
    expect(types.filter((t) => !t.subscribable).every((t) => t.emission === "coming_soon")).toBe(true);
    expect(body.currentApiVersion).toBe("2026-07-01");
  });

  describe("deliveries", () => {
    it("sends a test delivery (202, livemode false), lists and inspects it, and counts it in the stats", async () => {
      const endpoint = await createEndpoint();
      const path = `${base()}/${endpoint.id as string}`;
      const sent = await post(`${path}/test`, { eventType: "booking.created" });
      expect(sent.res.status).toBe(202);
      expect(sent.body).toMatchObject({
        endpointId: endpoint.id,
        eventType: "booking.created",
        status: "pending",
        livemode: false,
        attempts: 0,
        attemptsTotal: 0,
        lastStatusCode: null,
      });
      const list = await call("GET", `${path}/deliveries`);
      expect(list.res.status).toBe(200);
      expect((list.body.data as { id: string }[]).map((d) => d.id)).toEqual([sent.body.id]);
      expect(list.body.nextCursor).toBeNull();
      const detail = await call("GET", `${path}/deliveries/${sent.body.id as string}`);
      expect(detail.res.status).toBe(200);
      expect(Array.isArray(detail.body.attemptHistory)).toBe(true);
      const envelope = JSON.parse(detail.body.payload as string) as Record<string, unknown>;
      expect(envelope).toMatchObject({
        id: sent.body.eventId,
        type: "booking.created",
        api_version: "2026-07-01",
        tenant,
        livemode: false,
      });
      const stats = await call("GET", `${path}/stats`);
      expect(stats.res.status).toBe(200);
      expect(stats.body.endpointId).toBe(endpoint.id);
      const deliveries = stats.body.deliveries as Record<string, number>;
      expect(Object.values(deliveries).reduce((a, b) => a + b, 0)).toBe(1);

      expectProblem(await post(`${path}/test`, { eventType: "nope.x" }), 400, "webhook.event_type_unknown");
      expectProblem(
        await post(`${path}/test`, { eventType: "usage.snapshot" }),
        400,
        "webhook.event_type_not_subscribable",
      );
      expectProblem(await post(`${path}/test`, { type: "booking.created" }), 400, "request.invalid");
    });

    it("pages, filters and inspects seeded deliveries; redrives a dead-lettered one and resends a succeeded one", async () => {
      const endpoint = await createEndpoint();
      const path = `${base()}/${endpoint.id as string}`;
      const ids: string[] = [];
      for (const status of ["succeeded", "dead_lettered", "awaiting_retry", "succeeded", "dead_lettered"]) {
        ids.push(await seedDelivery(endpoint.id as string, status));
      }
      const seen: string[] = [];
      let query = "?limit=2";
      for (;;) {
        const page = await call("GET", `${path}/deliveries${query}`);
        expect(page.res.status).toBe(200);
        seen.push(...(page.body.data as { id: string }[]).map((d) => d.id));
        if (page.body.nextCursor === null) break;
        query = `?limit=2&cursor=${encodeURIComponent(page.body.nextCursor as string)}`;
      }
      expect(seen).toEqual([...ids].reverse());
      const dead = await call("GET", `${path}/deliveries?status=dead_lettered&eventType=booking.created`);
      expect((dead.body.data as { id: string }[]).map((d) => d.id)).toEqual([ids[4], ids[1]]);
      expectProblem(await call("GET", `${path}/deliveries?status=failed`), 400, "request.invalid");

      const key = idempotencyKey("redrive");
      const redriven = await post(`${path}/deliveries/${ids[1]!}/redrive`, undefined, { idempotencyKey: key });
      expect(redriven.res.status).toBe(200);
      expect(redriven.body).toMatchObject({ id: ids[1], status: "pending", attempts: 0, attemptsTotal: 8 });
      const replay = await post(`${path}/deliveries/${ids[1]!}/redrive`, undefined, { idempotencyKey: key });
      expect(replay.res.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(redriven.body);
      // Held (its endpoint paused): still on its way, not redrivable.
      const held = await seedDelivery(endpoint.id as string, "held");
      expectProblem(await post(`${path}/deliveries/${held}/redrive`), 409, "webhook.delivery_not_redrivable");
      // A succeeded one is resent: a fresh run.
      const resent = await post(`${path}/deliveries/${ids[0]!}/redrive`);
      expect(resent.res.status).toBe(200);
      expect(resent.body).toMatchObject({ id: ids[0], status: "pending", attempts: 0, attemptsTotal: 1 });
      const old = await seedDelivery(endpoint.id as string, "dead_lettered", "31 days");
      expectProblem(await post(`${path}/deliveries/${old}/redrive`), 409, "webhook.redrive_window_closed");
      expectProblem(
        await call("GET", `${path}/deliveries/dlv_000000000000000000000000`),
        404,
        "webhook.delivery_not_found",
      );
    });

    it("lists the message log across the tenant's endpoints: a date window, status, event id, the cursor", async () => {
      const [one, two] = [await createEndpoint(), await createEndpoint()];
      const oldest = await seedDelivery(one.id as string, "succeeded", "50 hours");
      const middle = await seedDelivery(two.id as string, "dead_lettered", "49 hours");
      const newest = await seedDelivery(one.id as string, "succeeded", "48 hours");
      const ago = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
      const window = `createdAfter=${ago(51)}&createdBefore=${ago(47)}`;
      const first = await call("GET", `${base()}/deliveries?${window}&limit=2`);
      expect(first.res.status).toBe(200);
      const rest = await call(
        "GET",
        `${base()}/deliveries?${window}&limit=2&cursor=${encodeURIComponent(first.body.nextCursor as string)}`,
      );
      expect(rest.body.nextCursor).toBeNull();
      type Row = { id: string; endpointId: string };
      expect([...(first.body.data as Row[]), ...(rest.body.data as Row[])].map((d) => [d.id, d.endpointId])).toEqual([
        [newest, one.id],
        [middle, two.id],
        [oldest, one.id],
      ]);
      const succeeded = await call("GET", `${base()}/deliveries?${window}&status=succeeded`);
      expect((succeeded.body.data as { id: string }[]).map((d) => d.id)).toEqual([newest, oldest]);
      const eventId = `evt_${middle.slice(4)}`;
      const ofEvent = await call("GET", `${base()}/deliveries?eventId=${eventId}&eventType=booking.created`);
      expect((ofEvent.body.data as { id: string }[]).map((d) => d.id)).toEqual([middle]);
      expectProblem(await call("GET", `${base()}/deliveries?createdAfter=2026-11-01`), 400, "request.invalid");
      expectProblem(
        await call("GET", `${base()}/deliveries?createdAfter=${ago(1)}&createdBefore=${ago(2)}`),
        400,
        "request.invalid",
      );
      expectProblem(await call("GET", `${base()}/deliveries?status=late`), 400, "request.invalid");
    });

    it("shows each attempt's error class, the endpoint's health and 24 h success rate, and hourly stats", async () => {
      const endpoint = await createEndpoint();
      const path = `${base()}/${endpoint.id as string}`;
      const id = await seedDelivery(endpoint.id as string, "awaiting_retry");
      await db.query(
        `insert into webhooks_history.attempts (delivery_id, endpoint_id, number, attempted_at, duration_ms, succeeded,
           status_code, error, response_body, response_body_truncated, delivery_created_at)
         values ($1, $2, 1, now() - interval '2 hours', 31, false, 503, 'non_2xx_status', 'busy', false, (select created_at from webhooks_history.deliveries where id = $1)),
                ($1, $2, 2, now() - interval '90 minutes', 10000, false, null, 'timeout', null, false, (select created_at from webhooks_history.deliveries where id = $1)),
                ($1, $2, 3, now() - interval '1 minute', 12, true, 200, null, 'ok', false, (select created_at from webhooks_history.deliveries where id = $1))`,
        [id, endpoint.id],
      );
      const detail = await call("GET", `${path}/deliveries/${id}`);
      expect(detail.res.status).toBe(200);
      expect(
        (detail.body.attemptHistory as Record<string, unknown>[]).map((a) => [
          a.statusCode,
          a.errorClass,
          a.responseBody,
        ]),
      ).toEqual([
        [503, "http_5xx", "busy"],
        [null, "timeout", ""],
        [200, null, "ok"],
      ]);
      const read = await call("GET", path);
      expect(read.body).toMatchObject({
        health: "failing",
        successRate24h: 1 / 3,
        attempts24h: 3,
        attentionCause: null,
      });
      const stats = await call("GET", `${path}/stats`);
      expect(stats.res.status).toBe(200);
      const hourly = stats.body.hourly as { start: string; succeeded: number; failed: number }[];
      expect(hourly).toHaveLength(24);
      expect(hourly[0]!.start).toBe(stats.body.windowStart);
      expect(hourly.reduce((sum, b) => sum + b.succeeded, 0)).toBe(1);
      expect(hourly.reduce((sum, b) => sum + b.failed, 0)).toBe(2);
      expect(hourly[23]).toMatchObject({ succeeded: 1, failed: 0 });
    });
  });

  describe("recover", () => {
    it("counts with a dry run, starts a throttled job (202) and reports its progress; idempotent", async () => {
      const endpoint = await createEndpoint();
      const path = `${base()}/${endpoint.id as string}`;
      const expected = [
        await seedDelivery(endpoint.id as string, "dead_lettered", "50 minutes"),
        await seedDelivery(endpoint.id as string, "awaiting_retry", "40 minutes"),
        await seedDelivery(endpoint.id as string, "dead_lettered", "30 minutes"),
      ];
      await seedDelivery(endpoint.id as string, "dead_lettered", "2 hours");
      await seedDelivery(endpoint.id as string, "succeeded", "20 minutes");
      const since = new Date(Date.now() - 3_600_000).toISOString();

      const dryKey = idempotencyKey("dry");
      const dry = await post(`${path}/recover`, { since, dryRun: true }, { idempotencyKey: dryKey });
      expect(dry.res.status).toBe(200);
      expect(dry.body).toEqual({ wouldRecover: 3 });
      const dryReplay = await post(`${path}/recover`, { since, dryRun: true }, { idempotencyKey: dryKey });
      expect(dryReplay.res.headers.get("idempotent-replayed")).toBe("true");
      expect(dryReplay.body).toEqual({ wouldRecover: 3 });
      expectProblem(
        await post(`${path}/recover`, { since, dryRun: false }, { idempotencyKey: dryKey }),
        422,
        "idempotency.key_reused",
      );

      const key = idempotencyKey("recover");
      const started = await post(`${path}/recover`, { since }, { idempotencyKey: key });
      expect(started.res.status).toBe(202);
      expect(started.body).toMatchObject({
        id: expect.stringMatching(/^rcv_[0-9a-f]{24}$/) as string,
        endpointId: endpoint.id,
        since,
        until: null,
        total: 3,
        failureCode: null,
        actor: expect.stringMatching(/^api_key:key_[0-9a-f]{24}$/) as string,
      });
      const id = started.body.id as string;
      const replay = await post(`${path}/recover`, { since }, { idempotencyKey: key });
      expect(replay.res.status).toBe(202);
      expect(replay.res.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body).toEqual(started.body);

      let progress: Answer | undefined;
      for (let i = 0; i < 100; i += 1) {
        progress = await call("GET", `${path}/recoveries/${id}`);
        expect(progress.res.status).toBe(200);
        if (progress.body.state === "completed") break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(progress!.body).toMatchObject({ id, state: "completed", total: 3, done: 3, redriven: 3, skipped: 0 });
      expect(progress!.body.finishedAt).toEqual(expect.any(String));
      const { rows } = await db.query<{ id: string; generation: number }>(
        "select id, generation from webhooks_history.deliveries where id = any($1) order by created_at",
        [expected],
      );
      expect(rows.every((row) => row.generation >= 2)).toBe(true);
      expectProblem(
        await call("GET", `${path}/recoveries/rcv_000000000000000000000000`),
        404,
        "webhook.recovery_not_found",
      );
    });

    it("refuses a window in the future or past the retention, a bad body, a paused endpoint", async () => {
      const endpoint = await createEndpoint();
      const path = `${base()}/${endpoint.id as string}`;
      const future = await post(`${path}/recover`, { since: new Date(Date.now() + 60_000).toISOString() });
      expectProblem(future, 400, "webhook.recovery_window_invalid");
      expect(future.body.detail).toBe("since is in the future");
      const old = await post(`${path}/recover`, { since: new Date(Date.now() - 31 * 86_400_000).toISOString() });
      expectProblem(old, 400, "webhook.recovery_window_invalid");
      expect(old.body.detail).toContain("older than the 30-day retention");
      expectProblem(await post(`${path}/recover`, { since: "2026-01-01", extra: 1 }), 400, "request.invalid");
      expectProblem(await post(`${path}/recover`, { dryRun: "yes" }), 400, "request.invalid");
      expect((await post(`${path}/pause`)).res.status).toBe(200);
      expectProblem(
        await post(`${path}/recover`, { since: new Date(Date.now() - 60_000).toISOString() }),
        409,
        "webhook.endpoint_paused",
      );
    });
  });
});
