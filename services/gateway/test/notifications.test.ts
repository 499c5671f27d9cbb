import { startCloudApiStub, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { notificationRoutes } from "../src/routes/notifications/routes.js";
import { OpenApiContract } from "./openapi-contract.js";
import { tenantApiCall, type Answer } from "./tenant-api-call.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * POST /notifications and GET /conversations/{to}/messages end to end: gateway and notify as
 * processes, notify pointed at a local server that answers as the WhatsApp Cloud API does and
 * counts the sends it receives. Every response is checked against /api/v1/openapi.json.
 */
describe("notifications", () => {
  let stack: TestStack;
  let stub: CloudApiStub;
  let contract: OpenApiContract;
  let db: pg.Client;
  let gatewayUrl: string;
  let n = 0;
  const keys: Record<string, string> = {};
  let tenant: string; // testing plan, activated
  let pending: string; // not activated
  let quiet: string; // activated, channel not ready
  let capped: string; // testing plan near its allowance
  let business: string; // commercial plan
  let outsider: string; // exists, granted to no key
  const ghost = "ten_doesnotexist000000000"; // granted to keys.full, does not exist

  const ACCESS_TOKEN = "EAAG-secret-access-token-never-logged";
  const phone = () => `+4477009${String(10000 + n++).padStart(5, "0")}`;
  const uniqueKey = (label: string) => `${label}-${Date.now()}-${n++}`;

  const call = tenantApiCall({
    gatewayUrl: () => gatewayUrl,
    defaultKey: () => keys.full!,
    contract: () => contract,
  });

  const reminder = (to: string, extra: Record<string, unknown> = {}) => ({
    to,
    type: "reminder",
    clientName: "Ana\r\nMaria",
    businessName: "Paws\t& Co",
    serviceName: "grooming",
    when: "Mon 3 May\u2028 10:00 ",
    actor: { actorReference: "crm-user-7", delegationReference: null },
    ...extra,
  });

  const send = (
    body: unknown,
    opts: { idempotencyKey?: string; tenantId?: string; key?: string | null; headers?: Record<string, string> } = {},
  ) =>
    call("POST", `/api/v1/tenants/${opts.tenantId ?? tenant}/notifications`, {
      key: opts.key,
      headers: {
        "content-type": "application/json",
        "idempotency-key": opts.idempotencyKey ?? uniqueKey("send"),
        ...opts.headers,
      },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  const transcript = (to: string, query = "", tenantId = tenant) =>
    call("GET", `/api/v1/tenants/${tenantId}/conversations/${encodeURIComponent(to)}/messages${query}`);

  const expectProblem = (answer: Answer, status: number, code: string) =>
    expect({ status: answer.res.status, code: answer.body.code }).toEqual({ status, code });

  const providerCalls = () => stub.requests.length;

  async function commandState(notificationIdOrKey: string): Promise<string | undefined> {
    const { rows } = await db.query<{ state: string }>(
      "select state from notify.notification_commands where id = $1 or idempotency_key = $1 order by created_at desc limit 1",
      [notificationIdOrKey],
    );
    return rows[0]?.state;
  }

  async function monthlySends(tenantId: string): Promise<number> {
    const { rows } = await db.query<{ sends: number }>(
      "select sends from notify.monthly_sends where tenant_id = $1 and month = to_char(now() at time zone 'utc', 'YYYY-MM')",
      [tenantId],
    );
    return rows[0]?.sends ?? 0;
  }

  beforeAll(async () => {
    stub = await startCloudApiStub();
    stack = await startTestStack(
      { UPSTREAM_TIMEOUT: "8s" },
      {
        NOTIFY_CHANNEL_PROVIDER: "whatsapp",
        WHATSAPP_API_BASE_URL: stub.url,
        WHATSAPP_ACCESS_TOKEN: ACCESS_TOKEN,
        WHATSAPP_PHONE_NUMBER_ID: "106540352242922",
        WHATSAPP_TIMEOUT: "2s",
        NOTIFICATION_LEASE: "4s",
      },
    );
    gatewayUrl = stack.url;
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
    const create = async (name: string, plan = "testing") =>
      (await stack.admin("tenant", "create", "--name", name, "--plan", plan)).id as string;
    [tenant, pending, quiet, capped, business] = await Promise.all([
      create("Acme"),
      create("Pending"),
      create("Quiet"),
      create("Capped"),
      create("Business", "commercial"),
    ]);
    for (const id of [tenant, quiet, capped, business]) await stack.admin("tenant", "activate", "--id", id);
    await stack.admin("tenant", "channel", "--id", quiet, "--state", "not_ready");
    outsider = await create("Outsider");
    const all = [tenant, pending, quiet, capped, business].join(",");
    const full = await stack.admin("key", "create", "--scopes", "notification:send,tenant:read", "--tenants", all);
    keys.full = full.key as string;
    // The CLI refuses to grant a tenant that does not exist; a grant of one that is gone is written
    // straight into the table, as if the tenant had been deleted after the grant.
    await db.query("update gateway.api_keys set tenant_ids = array_append(tenant_ids, $1) where id = $2", [
      ghost,
      full.id,
    ]);
    keys.readOnly = (await stack.admin("key", "create", "--scopes", "tenant:read", "--tenants", all)).key as string;
    keys.sendOnly = (await stack.admin("key", "create", "--scopes", "notification:send", "--tenants", all))
      .key as string;
    keys.noScopes = (await stack.admin("key", "create", "--tenants", all)).key as string;
  });
  // A failed test prints the processes' last warnings and errors (and the gateway's view of its
  // downstreams), which CI's log otherwise lacks.
  afterEach((ctx) => {
    if (ctx.task.result?.state !== "fail") return;
    for (const p of [stack.gateway, stack.notify]) {
      const lines = p.logs.filter((l) => Number(l.level) >= 40 || /downstream/.test(String(l.msg)));
      console.error(
        `${p.name ?? ""} logs:\n${lines
          .slice(-20)
          .map((l) => JSON.stringify(l))
          .join("\n")}`,
      );
    }
  });
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await stub?.close();
  });

  describe("a send", () => {
    it("renders one-line fields, calls the Cloud API once with the template, answers sent and records the transcript", async () => {
      const to = phone();
      const before = providerCalls();
      const { res, body } = await send(reminder(to));
      expect(res.status).toBe(200);
      expect(res.headers.get("idempotent-replayed")).toBeNull();
      expect(body).toEqual({
        notificationId: expect.stringMatching(/^ntf_[0-9a-f]{24}$/) as string,
        state: "sent",
        type: "reminder",
        createdAt: expect.any(String) as string,
        idempotencyStatus: "applied",
      });
      expect(providerCalls()).toBe(before + 1);
      const received = stub.requests.at(-1)!;
      expect(received.path).toBe("/v21.0/106540352242922/messages");
      expect(received.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
      expect(received.body).toEqual({
        messaging_product: "whatsapp",
        recipient_type: "individual",
        to: to.slice(1),
        type: "template",
        template: {
          name: "appointment_reminder",
          language: { code: "en_US" },
          components: [
            {
              type: "body",
              parameters: ["Ana Maria", "grooming", "Paws & Co", "Mon 3 May 10:00"].map((text) => ({
                type: "text",
                text,
              })),
            },
          ],
        },
      });

      const page = await transcript(to);
      expect(page.res.status).toBe(200);
      expect(page.body).toEqual({
        messages: [
          {
            id: expect.stringMatching(/^msg_[0-9a-f]{24}$/) as string,
            notificationId: body.notificationId,
            type: "reminder",
            text: "Hi Ana Maria, this is a reminder of your grooming with Paws & Co on Mon 3 May 10:00.",
            state: "sent",
            deliveryStatus: "accepted",
            actor: { actorReference: "crm-user-7", delegationReference: null },
            createdAt: body.createdAt,
            updatedAt: expect.any(String) as string,
          },
        ],
        nextCursor: null,
      });
      // The provider's message id is stored, never shown.
      const { rows } = await db.query<{ provider_message_id: string }>(
        "select provider_message_id from notify.provider_messages where notification_id = $1",
        [body.notificationId],
      );
      expect(rows[0]!.provider_message_id).toMatch(/^wamid\./);
      expect(JSON.stringify([body, page.body])).not.toContain(rows[0]!.provider_message_id);
    });

    it("pages a transcript newest first with a cursor, and keeps recipients apart", async () => {
      const to = phone();
      const sent: string[] = [];
      for (const clientName of ["one", "two", "three"]) {
        const { body } = await send({
          to,
          type: "update",
          clientName,
          businessName: "Paws",
          message: "hello",
          actor: { actorReference: "a-1", delegationReference: "agent-9" },
        });
        sent.push(body.notificationId as string);
      }
      await send(reminder(phone()));
      const first = await transcript(to.slice(1), "?limit=2");
      const firstMessages = first.body.messages as Record<string, unknown>[];
      expect(firstMessages.map((m) => m.notificationId)).toEqual([sent[2], sent[1]]);
      expect(firstMessages[0]!.actor).toEqual({ actorReference: "a-1", delegationReference: "agent-9" });
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await transcript(to, `?limit=2&cursor=${first.body.nextCursor as string}`);
      expect((second.body.messages as Record<string, unknown>[]).map((m) => m.notificationId)).toEqual([sent[0]]);
      expect(second.body.nextCursor).toBeNull();
      expectProblem(await transcript(to, "?cursor=bm9wZQ"), 400, "request.invalid");
      expectProblem(await transcript(to, "?limit=0"), 400, "request.invalid");
      expectProblem(await transcript("12-34"), 400, "partner.notification_recipient_invalid");
      expect((await transcript(phone())).body).toEqual({ messages: [], nextCursor: null });
    });
  });

  describe("validation over HTTP (the table of every case is in notify's domain tests)", () => {
    it.each([
      ["no actor", { ...reminder("+447700900001"), actor: undefined }, "actor is required"],
      ["a null actor", { ...reminder("+447700900001"), actor: null }, "actor is required"],
      [
        "a retired type with a timing field",
        { ...reminder("+447700900001"), type: "no_show_fee", sendAt: "2030-01-01T00:00:00Z" },
        "sendAt is not supported",
      ],
      [
        "a retired message key",
        { ...reminder("+447700900001"), type: "vaccination_due", deliveryMode: "scheduled" },
        'type "vaccination_due" is not a supported',
      ],
      [
        "a retired field",
        { ...reminder("+447700900001"), paymentUrl: "https://pay.example/x" },
        "paymentUrl is a retired field",
      ],
      [
        "a missing required field",
        { ...reminder("+447700900001"), when: undefined },
        "when is required for type reminder",
      ],
      [
        "a 301-code-point field",
        { ...reminder("+447700900001"), clientName: "😀".repeat(301) },
        "clientName must be at most 300 characters",
      ],
      [
        "a number where a string belongs",
        { ...reminder("+447700900001"), clientName: 7 },
        "clientName must be a string",
      ],
      [
        "an unknown actor member",
        { ...reminder("+447700900001"), actor: { actorReference: "a", role: "x" } },
        "actor.role is not a field",
      ],
      ["an array body", [reminder("+447700900001")], "the request body must be a JSON object"],
    ])(
      "refuses %s with 400 partner.notification_invalid naming the field, without calling the provider",
      async (_label, body, detail) => {
        const before = providerCalls();
        const answer = await send(body);
        expectProblem(answer, 400, "partner.notification_invalid");
        expect(answer.body.detail).toContain(detail);
        expect(providerCalls()).toBe(before);
      },
    );

    it("refuses a malformed recipient with 400 partner.notification_recipient_invalid", async () => {
      expectProblem(await send(reminder("+44 7700 900123")), 400, "partner.notification_recipient_invalid");
      expectProblem(await send(reminder("1234567")), 400, "partner.notification_recipient_invalid");
    });
  });

  describe("the edge, driven by the route table", () => {
    it("documents both routes", () => {
      for (const route of notificationRoutes) {
        const template = route.path.replace(/^\/api\/v1/, "").replace(/:([A-Za-z]+)/g, "{$1}");
        expect(contract.template(`/api/v1${template}`), route.operationId).toBe(template);
      }
    });

    it.each(notificationRoutes.map((route) => [route.method, route.path, route] as const))(
      "%s %s refuses bad credentials like every tenant route, and an ungranted tenant like a missing one",
      async (_method, _path, route) => {
        const request = (tenantId: string, key: string | null) =>
          call(route.method, route.path.replace(":tenantId", tenantId).replace(":to", "447700900123"), {
            key,
            headers: { "content-type": "application/json", "idempotency-key": uniqueKey("cred") },
            body: route.method === "POST" ? JSON.stringify(reminder(phone())) : undefined,
          });
        expectProblem(await request(tenant, null), 401, "auth.key_missing");
        expectProblem(await request(tenant, "sk_live_nope"), 401, "auth.key_invalid");
        expectProblem(await request(tenant, keys.noScopes!), 403, "auth.scope_missing");
        const ungranted = await request(outsider, keys.full!);
        const missing = await request(ghost, keys.full!);
        expectProblem(ungranted, 404, "tenant.not_found");
        const strip = ({ correlationId: _, ...rest }: Record<string, unknown>) => rest;
        expect(strip(missing.body)).toEqual(strip(ungranted.body));
      },
    );

    it("asks for a key, the right scope, a granted tenant and an Idempotency-Key", async () => {
      const to = phone();
      expectProblem(await send(reminder(to), { key: null }), 401, "auth.key_missing");
      expectProblem(await send(reminder(to), { key: keys.readOnly }), 403, "auth.scope_missing");
      expectProblem(
        await call("GET", `/api/v1/tenants/${tenant}/conversations/${to}/messages`, { key: keys.sendOnly }),
        403,
        "auth.scope_missing",
      );
      expectProblem(await send(reminder(to), { tenantId: "ten_notgranted" }), 404, "tenant.not_found");
      const noKey = await call("POST", `/api/v1/tenants/${tenant}/notifications`, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify(reminder(to)),
      });
      expectProblem(noKey, 400, "request.idempotency_key_required");
    });
  });

  describe("preconditions", () => {
    it("refuses an unactivated tenant, a channel that is not ready and an opted-out recipient, sending nothing", async () => {
      const to = phone();
      const before = providerCalls();
      expectProblem(await send(reminder(to), { tenantId: pending }), 409, "account.tenant_not_activated");
      expectProblem(await send(reminder(to), { tenantId: quiet }), 409, "partner.channel_not_ready");
      const optOut = await stack.admin("tenant", "opt-out", "--id", tenant, "--to", to);
      expect(optOut).toEqual({ tenantId: tenant, recipient: to.slice(1), optedOut: true });
      const key = uniqueKey("optout");
      expectProblem(await send(reminder(to), { idempotencyKey: key }), 409, "partner.recipient_opted_out");
      // Opt-outs are per tenant: another tenant may still send to the number.
      expect((await send(reminder(to), { tenantId: business })).res.status).toBe(200);
      expect(providerCalls()).toBe(before + 1);
      await stack.admin("tenant", "opt-in", "--id", tenant, "--to", to);
      // A refusal releases the key: the same key sends once the condition is gone.
      const retried = await send(reminder(to), { idempotencyKey: key });
      expect(retried.res.status).toBe(200);
      expect(retried.body.idempotencyStatus).toBe("applied");
      expect(providerCalls()).toBe(before + 2);
    });

    it("counts the testing plan's 1000 sends a UTC month in Postgres: concurrent sends never overshoot, restarts do not reset it", async () => {
      // 995 of this month's sends already made (as if sent earlier); 5 remain.
      await db.query(
        "insert into notify.monthly_sends (tenant_id, month, sends) values ($1, to_char(now() at time zone 'utc', 'YYYY-MM'), 995)",
        [capped],
      );
      const before = providerCalls();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => send(reminder(phone()), { tenantId: capped })),
      );
      const statuses = answers.map((a) => a.res.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
      for (const a of answers.filter((x) => x.res.status !== 200))
        expectProblem(a, 409, "account.testing_allowance_exhausted");
      expect(providerCalls()).toBe(before + 5);

      await stack.notify.stop();
      await stack.restartNotify();
      await expect
        .poll(async () => (await send(reminder(phone()), { tenantId: capped })).body.code, { timeout: 15_000 })
        .toBe("account.testing_allowance_exhausted");
      const { rows } = await db.query<{ sends: number }>(
        "select sends from notify.monthly_sends where tenant_id = $1",
        [capped],
      );
      expect(rows[0]!.sends).toBe(1000);
      // The commercial plan is not counted.
      expect((await send(reminder(phone()), { tenantId: business })).res.status).toBe(200);
      expect(providerCalls()).toBe(before + 6);
    });
  });

  describe("provider answers", () => {
    it.each([
      [{ status: 400, code: 131026 }, 409, "partner.recipient_undeliverable"],
      [{ status: 404, code: 132001 }, 409, "partner.template_unavailable"],
      [{ status: 400, code: 132000 }, 409, "partner.template_unavailable"],
      [{ status: 401, code: 190 }, 409, "partner.channel_not_ready"],
      [{ status: 400, code: 131056 }, 429, "partner.channel_rate_limited"],
      [{ status: 429, code: 130429 }, 429, "partner.channel_rate_limited"],
    ])(
      "maps error object %o to %d %s with no provider text, marks the transcript failed and frees the key",
      async (error, status, code) => {
        const to = phone();
        const key = uniqueKey("refused");
        stub.respondWith({ kind: "error", ...error, message: "(#131026) Message Undeliverable fbtrace secret words" });
        try {
          const before = providerCalls();
          const counted = await monthlySends(tenant);
          const answer = await send(reminder(to), { idempotencyKey: key });
          expectProblem(answer, status, code);
          // Nothing was sent: the testing allowance is given back.
          expect(await monthlySends(tenant)).toBe(counted);
          if (status === 429) expect(Number(answer.res.headers.get("retry-after"))).toBeGreaterThan(0);
          expect(JSON.stringify(answer.body)).not.toMatch(/secret|fbtrace|131026|132001|130429|OAuth/);
          expect(providerCalls()).toBe(before + 1);
          const page = await transcript(to);
          expect((page.body.messages as { state: string }[]).map((m) => m.state)).toEqual(["failed"]);
          stub.respondWith({ kind: "success" });
          const retried = await send(reminder(to), { idempotencyKey: key });
          expect(retried.body).toMatchObject({ state: "sent", idempotencyStatus: "applied" });
          expect(providerCalls()).toBe(before + 2);
          expect(await monthlySends(tenant)).toBe(counted + 1);
        } finally {
          stub.respondWith({ kind: "success" });
        }
      },
    );

    it.each([
      ["no answer", { kind: "silent" } as const],
      ["an answer after the timeout", { kind: "slow", ms: 5_000 } as const],
      ["a connection reset", { kind: "reset" } as const],
    ])(
      "answers %s with 409 partner.action_outcome_unknown, transcript unknown, and never calls the provider again for the key",
      async (_label, behaviour) => {
        const to = phone();
        const key = uniqueKey("lost");
        stub.respondWith(behaviour);
        try {
          const before = providerCalls();
          expectProblem(await send(reminder(to), { idempotencyKey: key }), 409, "partner.action_outcome_unknown");
          expect(providerCalls()).toBe(before + 1);
          const page = await transcript(to);
          expect((page.body.messages as { state: string }[]).map((m) => m.state)).toEqual(["unknown"]);
          stub.respondWith({ kind: "success" });
          expectProblem(await send(reminder(to), { idempotencyKey: key }), 409, "partner.action_outcome_unknown");
          expect(providerCalls()).toBe(before + 1);
        } finally {
          stub.respondWith({ kind: "success" });
        }
      },
    );
  });

  describe("observability", () => {
    it("counts sends by type and outcome, times the provider, and logs one line per send with the request and command ids", async () => {
      const to = phone();
      const requestId = `trace-${uniqueKey("obs")}`;
      const { body } = await send(reminder(to), { headers: { "x-request-id": requestId } });
      await expect
        .poll(() => stack.notify.logs.some((l) => l.msg === "notification dispatched" && l.requestId === requestId))
        .toBe(true);
      const line = stack.notify.logs.find((l) => l.msg === "notification dispatched" && l.requestId === requestId)!;
      expect(line).toMatchObject({
        commandId: body.notificationId,
        type: "reminder",
        outcome: "sent",
        provider: "whatsapp",
      });
      expect(line.to).toMatch(/^\+44\*+\d{2}$/);
      const logs = JSON.stringify(stack.notify.logs);
      expect(logs).not.toContain(to.slice(1));
      expect(logs).not.toContain("this is a reminder of your");
      expect(logs).not.toContain(ACCESS_TOKEN);
      const metrics = await (
        await fetch(`http://127.0.0.1:${stack.notify.listening.metricsPort as number}/metrics`)
      ).text();
      expect(metrics).toMatch(/notify_notifications_total\{[^}]*type="reminder"[^}]*outcome="sent"[^}]*\} [1-9]/);
      expect(metrics).toMatch(/notify_notifications_total\{[^}]*outcome="refused"[^}]*\} [1-9]/);
      expect(metrics).toMatch(
        /notify_provider_request_duration_seconds_count\{[^}]*provider="whatsapp"[^}]*outcome="sent"[^}]*\} [1-9]/,
      );
    });
  });

  describe("exactly one send per Idempotency-Key", () => {
    it("calls the provider once for 20 concurrent repeats and replays the original result", async () => {
      const key = uniqueKey("burst");
      const to = phone();
      stub.respondWith({ kind: "slow", ms: 300 });
      const before = providerCalls();
      let answers: Answer[];
      try {
        answers = await Promise.all(Array.from({ length: 20 }, () => send(reminder(to), { idempotencyKey: key })));
      } finally {
        stub.respondWith({ kind: "success" });
      }
      expect(providerCalls()).toBe(before + 1);
      const applied = answers.filter((a) => a.res.status === 200 && a.body.idempotencyStatus === "applied");
      expect(applied).toHaveLength(1);
      for (const a of answers.filter((x) => x.res.status !== 200)) expectProblem(a, 409, "idempotency.in_progress");
      for (const a of answers.filter((x) => x.res.status === 200 && x !== applied[0])) {
        expect(a.body).toEqual({ ...applied[0]!.body, idempotencyStatus: "replayed" });
      }
      const again = await send(reminder(to), { idempotencyKey: key });
      expect(again.res.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual({ ...applied[0]!.body, idempotencyStatus: "replayed" });
      expectProblem(
        await send(reminder(to, { clientName: "Other" }), { idempotencyKey: key }),
        422,
        "idempotency.key_reused",
      );
      expect(providerCalls()).toBe(before + 1);
      expect((await transcript(to)).body.messages).toHaveLength(1);
    });

    it("replays across a gateway restart", async () => {
      const key = uniqueKey("gwrestart");
      const to = phone();
      const first = await send(reminder(to), { idempotencyKey: key });
      expect(first.res.status).toBe(200);
      const before = providerCalls();
      await stack.gateway.stop();
      const replacement = await stack.startGateway({ UPSTREAM_TIMEOUT: "8s" });
      gatewayUrl = `http://127.0.0.1:${replacement.listening.port as number}`;
      const again = await send(reminder(to), { idempotencyKey: key });
      expect(again.body).toEqual({ ...first.body, idempotencyStatus: "replayed" });
      expect(providerCalls()).toBe(before);
    });

    /** Holds a lock on what recording the provider's answer writes, so notify blocks right after the provider answered. */
    async function blockOutcomeRecording(): Promise<{ blocked(): Promise<boolean>; release(): Promise<void> }> {
      const locker = new pg.Client({ connectionString: stack.scratch.url });
      await locker.connect();
      await locker.query("begin");
      await locker.query("lock table notify.provider_messages in exclusive mode");
      return {
        async blocked() {
          const { rows } = await db.query<{ waiting: string }>(
            `select count(*) as waiting from pg_locks l join pg_class c on c.oid = l.relation
             where c.relname = 'provider_messages' and not l.granted`,
          );
          return Number(rows[0]!.waiting) > 0;
        },
        async release() {
          await locker.query("rollback");
          await locker.end();
        },
      };
    }

    /** A retry replays the recorded `sent`, the provider was called once, the transcript says sent. */
    async function expectReplayedAsSentOnce(to: string, key: string, providerCallsBefore: number): Promise<void> {
      const retry = await retryUntilSettled(reminder(to), key);
      expect(retry.res.status).toBe(200);
      expect(retry.body).toMatchObject({ state: "sent", idempotencyStatus: "replayed" });
      expect(providerCalls()).toBe(providerCallsBefore + 1);
      expect(((await transcript(to)).body.messages as { state: string }[]).map((m) => m.state)).toEqual(["sent"]);
    }

    /** Retries until the answer is neither "still in progress" nor "notify unreachable". */
    async function retryUntilSettled(body: unknown, key: string): Promise<Answer> {
      let answer: Answer | undefined;
      await expect
        .poll(
          async () => {
            answer = await send(body, { idempotencyKey: key });
            return answer.body.code !== "idempotency.in_progress" && answer.res.status !== 503;
          },
          { timeout: 30_000, interval: 500 },
        )
        .toBe(true);
      return answer!;
    }

    it("answers from the record after notify is killed once the outcome was recorded but the response was lost", async () => {
      const key = uniqueKey("lostresponse");
      const to = phone();
      const lock = await blockOutcomeRecording();
      const before = providerCalls();
      // A gateway that gives up quickly: the partner's response is lost while notify is blocked.
      const impatient = await stack.startGateway({ UPSTREAM_TIMEOUT: "1s" });
      const impatientUrl = `http://127.0.0.1:${impatient.listening.port as number}`;
      const first = await fetch(`${impatientUrl}/api/v1/tenants/${tenant}/notifications`, {
        method: "POST",
        headers: { authorization: `Bearer ${keys.full}`, "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(reminder(to)),
      });
      expect(first.status).toBe(503);
      await expect.poll(() => lock.blocked(), { timeout: 15_000 }).toBe(true);
      expect(providerCalls()).toBe(before + 1);
      await lock.release();
      await expect.poll(() => commandState(key), { timeout: 15_000 }).toBe("sent");
      await stack.notify.stop("SIGKILL");
      await stack.restartNotify();

      await expectReplayedAsSentOnce(to, key, before);
    });

    it("answers 409 partner.action_outcome_unknown, never a second send, when notify is killed before recording the outcome", async () => {
      const key = uniqueKey("killed");
      const to = phone();
      // Killed while the provider holds the call: the provider took the message, notify never sent
      // the outcome's statement.
      stub.respondWith({ kind: "slow", ms: 20_000 });
      const before = providerCalls();
      const pending = send(reminder(to), { idempotencyKey: key });
      try {
        await expect.poll(() => providerCalls(), { timeout: 15_000 }).toBe(before + 1);
        await stack.notify.stop("SIGKILL");
        expectProblem(await pending, 503, "service.unavailable");
      } finally {
        stub.respondWith({ kind: "success" });
      }
      await stack.restartNotify();
      expect(await commandState(key)).toBe("dispatching");

      const retry = await retryUntilSettled(reminder(to), key);
      expectProblem(retry, 409, "partner.action_outcome_unknown");
      expectProblem(await send(reminder(to), { idempotencyKey: key }), 409, "partner.action_outcome_unknown");
      expect(providerCalls()).toBe(before + 1);
      expect(await commandState(key)).toBe("unknown");
      expect(((await transcript(to)).body.messages as { state: string }[]).map((m) => m.state)).toEqual(["unknown"]);
    });

    it("records the provider's answer even when notify is killed while its one outcome statement waits, and replays it", async () => {
      const key = uniqueKey("killedwaiting");
      const to = phone();
      const lock = await blockOutcomeRecording();
      const before = providerCalls();
      const pending = send(reminder(to), { idempotencyKey: key });
      try {
        await expect.poll(() => lock.blocked(), { timeout: 15_000 }).toBe(true);
        expect(providerCalls()).toBe(before + 1);
        await stack.notify.stop("SIGKILL");
        expectProblem(await pending, 503, "service.unavailable");
      } finally {
        await lock.release();
      }
      // The statement was autocommitted: it commits once the lock goes, notify or not.
      await expect.poll(() => commandState(key), { timeout: 15_000 }).toBe("sent");
      await stack.restartNotify();

      await expectReplayedAsSentOnce(to, key, before);
    });
  });
});
