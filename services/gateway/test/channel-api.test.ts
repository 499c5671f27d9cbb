import { startCloudApiStub, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import { eventually } from "@platform/local-stack/https-receiver";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleBrowser, pathOf } from "./console-browser.js";
import { OpenApiContract } from "./openapi-contract.js";
import { startTestStack, type TestStack } from "./stack.js";
import { tenantApiCall, type Answer } from "./tenant-api-call.js";

const TOKEN_A = "EAAGtokenOfTenantA-0123456789-secret";
const TOKEN_A2 = "EAAGrotatedTokenOfTenantA-9876543210";
const TOKEN_B = "EAAGtokenOfTenantB-abcdefghij-secret";
const NUMBER_A = "106540352242922";
const NUMBER_B = "106540352242933";

/**
 * Each tenant's own WhatsApp number, end to end: catalog, notify (whatsapp provider, pointed at the
 * Cloud API stand-in, periodic check every second), webhooks and gateway as processes. Connecting,
 * the token sealed and never shown, sends from the tenant's own number with its own token, and the
 * number's status and quality deciding readiness. Every answer is checked against the served
 * OpenAPI document.
 */
describe("a tenant's own WhatsApp channel", () => {
  let stub: CloudApiStub;
  let stack: TestStack;
  let contract: OpenApiContract;
  let tenantA: string;
  let tenantB: string;
  const keys: Record<string, string> = {};
  /** Every body the gateway answered in this file (the token must be in none). */
  const answered: string[] = [];
  let n = 0;

  const rawCall = tenantApiCall({
    gatewayUrl: () => stack.url,
    defaultKey: () => keys.manageA!,
    contract: () => contract,
  });
  const call = async (...args: Parameters<typeof rawCall>): Promise<Answer> => {
    const answer = await rawCall(...args);
    answered.push(JSON.stringify(answer.body));
    return answer;
  };
  const connect = (tenantId: string, body: Record<string, unknown>, key?: string, idempotencyKey = `channel-${n++}`) =>
    call("PUT", `/api/v1/tenants/${tenantId}/channel`, {
      key,
      headers: { "idempotency-key": idempotencyKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const send = (tenantId: string, key: string) =>
    call("POST", `/api/v1/tenants/${tenantId}/notifications`, {
      key,
      headers: { "idempotency-key": `send-key-${n++}`, "content-type": "application/json" },
      body: JSON.stringify({
        to: "+447700900123",
        type: "no_show",
        clientName: "Ana",
        serviceName: "grooming",
        actor: { actorReference: "staff-1" },
      }),
    });
  const tenantVersion = async (tenantId: string) =>
    (await call("GET", `/api/v1/tenants/${tenantId}`, { key: keys.manageA })).body.version as number;
  const sendsTo = (number: string) =>
    stub.requests.filter((r) => r.method === "POST" && r.path.includes(`/${number}/`));
  const connectionA = (token = TOKEN_A) => ({
    wabaId: "102290129340398",
    phoneNumberId: NUMBER_A,
    accessToken: token,
    templates: { no_show: { name: "missed_you_v3", language: "en_GB" } },
    messagesPerSecond: 50,
  });

  beforeAll(async () => {
    stub = await startCloudApiStub();
    stub.setNumber(NUMBER_A, { token: TOKEN_A, displayPhoneNumber: "+44 7700 900001", verifiedName: "Paws A" });
    stub.setNumber(NUMBER_B, { token: TOKEN_B, displayPhoneNumber: "+44 7700 900002", verifiedName: "Paws B" });
    stack = await startTestStack(
      {},
      {
        NOTIFY_CHANNEL_PROVIDER: "whatsapp",
        WHATSAPP_API_BASE_URL: stub.url,
        WHATSAPP_TIMEOUT: "2s",
        NOTIFY_CHANNEL_CHECK_INTERVAL: "1s",
      },
    );
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    tenantA = (await stack.admin("tenant", "create", "--name", "Paws A", "--plan", "commercial")).id as string;
    tenantB = (await stack.admin("tenant", "create", "--name", "Paws B", "--plan", "commercial")).id as string;
    await stack.admin("tenant", "activate", "--id", tenantA);
    await stack.admin("tenant", "activate", "--id", tenantB);
    const scopes = "tenant:read,tenant:manage,notification:send";
    keys.manageA = (await stack.admin("key", "create", "--scopes", scopes, "--tenants", tenantA)).key as string;
    keys.manageB = (await stack.admin("key", "create", "--scopes", scopes, "--tenants", tenantB)).key as string;
    keys.readA = (await stack.admin("key", "create", "--scopes", "tenant:read", "--tenants", tenantA)).key as string;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await stub?.close();
  });

  it("connects: 403 without tenant:manage, 400 channel.invalid naming each problem, 201 then a replay, 412 on a stale version, 200 on rotation", async () => {
    const refused = await connect(tenantA, connectionA(), keys.readA);
    expect([refused.res.status, refused.body.code]).toEqual([403, "auth.scope_missing"]);

    const bad = await connect(tenantA, { ...connectionA(), wabaId: "waba!", messagesPerSecond: 0 });
    expect([bad.res.status, bad.body.code]).toEqual([400, "channel.invalid"]);
    expect(bad.body.detail).toMatch(/wabaId/);
    const badValues = await connect(tenantA, {
      ...connectionA(),
      templates: { receipt: { name: "r", language: "en" } },
    });
    expect([badValues.res.status, badValues.body.code]).toEqual([400, "channel.invalid"]);
    const notObject = await call("PUT", `/api/v1/tenants/${tenantA}/channel`, {
      headers: { "idempotency-key": "channel-array", "content-type": "application/json" },
      body: "[]",
    });
    expect([notObject.res.status, notObject.body.code]).toEqual([400, "request.invalid"]);
    const missing = await call("GET", `/api/v1/tenants/${tenantA}/channel`);
    expect([missing.res.status, missing.body.code]).toEqual([404, "channel.not_connected"]);

    const version = await tenantVersion(tenantA);
    const first = await connect(tenantA, { ...connectionA(), expectedVersion: version }, undefined, "channel-first");
    expect(first.res.status).toBe(201);
    expect(first.body).toMatchObject({
      wabaId: "102290129340398",
      phoneNumberId: NUMBER_A,
      displayPhoneNumber: "+44 7700 900001",
      verifiedName: "Paws A",
      qualityRating: "GREEN",
      status: "CONNECTED",
      checkResult: "pass",
      reasonCode: null,
      messagesPerSecond: 50,
      stopKeywords: ["STOP", "UNSUBSCRIBE"],
      startKeywords: ["START"],
    });
    expect((first.body.templates as Record<string, unknown>).no_show).toEqual({
      name: "missed_you_v3",
      language: "en_GB",
    });
    expect((first.body.templates as Record<string, unknown>).reminder).toEqual({
      name: "appointment_reminder",
      language: "en_US",
    });
    // The check read the number with the tenant's own token.
    expect(
      stub.requests.filter((r) => r.method === "GET" && r.path.startsWith(`/v21.0/${NUMBER_A}?fields=`))[0]
        ?.authorization,
    ).toBe(`Bearer ${TOKEN_A}`);

    const replay = await connect(tenantA, { ...connectionA(), expectedVersion: version }, undefined, "channel-first");
    expect(replay.res.status).toBe(201);
    expect(replay.res.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.phoneNumberId).toBe(NUMBER_A);

    const stale = await connect(tenantA, { ...connectionA(TOKEN_A2), expectedVersion: version });
    expect([stale.res.status, stale.body.code]).toEqual([412, "tenant.version_mismatch"]);

    // Rotation: the provider now takes the new token only; connecting again with it replaces the old.
    stub.setNumber(NUMBER_A, { token: TOKEN_A2 });
    const current = await tenantVersion(tenantA);
    expect(current).toBeGreaterThan(version);
    const rotated = await connect(tenantA, { ...connectionA(TOKEN_A2), expectedVersion: current });
    expect([rotated.res.status, rotated.body.checkResult]).toEqual([200, "pass"]);

    const taken = await connect(tenantB, { ...connectionA(TOKEN_B), phoneNumberId: NUMBER_A }, keys.manageB);
    expect([taken.res.status, taken.body.code]).toEqual([409, "channel.number_taken"]);
  });

  it("admin tenant channel connect does the same for tenant B, printing the channel and never the token", async () => {
    const printed = await stack.admin(
      "tenant",
      "channel",
      "connect",
      "--id",
      tenantB,
      "--waba",
      "102290129340399",
      "--phone-number-id",
      NUMBER_B,
      "--token",
      TOKEN_B,
      "--template",
      "no_show=b_missed:pt_BR",
      "--messages-per-second",
      "20",
    );
    expect(printed).toMatchObject({
      phoneNumberId: NUMBER_B,
      displayPhoneNumber: "+44 7700 900002",
      checkResult: "pass",
      messagesPerSecond: 20,
      created: true,
    });
    expect(JSON.stringify(printed)).not.toContain(TOKEN_B);
  });

  it("keeps each token sealed in the database: the column holds neither token's bytes", async () => {
    const client = new pg.Client({ connectionString: stack.scratch.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ tenant_id: string; access_token_sealed: string }>(
        "select tenant_id, access_token_sealed from notify.tenant_channels order by tenant_id",
      );
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(row.access_token_sealed).toMatch(/^v1\.k1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
        for (const token of [TOKEN_A, TOKEN_A2, TOKEN_B]) {
          expect(row.access_token_sealed).not.toContain(token);
          expect(Buffer.from(row.access_token_sealed, "utf8").includes(Buffer.from(token))).toBe(false);
        }
      }
      const dump = await client.query<{ text: string }>(
        "select string_agg(t::text, ' ') as text from notify.tenant_channels t",
      );
      expect(dump.rows[0]!.text).not.toContain("EAAG");
    } finally {
      await client.end();
    }
  });

  it("sends from each tenant's own number with its own bearer token and templates", async () => {
    stub.requests.length = 0;
    const a = await send(tenantA, keys.manageA!);
    expect(a.res.status).toBe(200);
    const b = await send(tenantB, keys.manageB!);
    expect(b.res.status).toBe(200);
    const [toA] = sendsTo(NUMBER_A);
    const [toB] = sendsTo(NUMBER_B);
    expect(sendsTo(NUMBER_A)).toHaveLength(1);
    expect(sendsTo(NUMBER_B)).toHaveLength(1);
    expect(toA).toMatchObject({ path: `/v21.0/${NUMBER_A}/messages`, authorization: `Bearer ${TOKEN_A2}` });
    expect(toB).toMatchObject({ path: `/v21.0/${NUMBER_B}/messages`, authorization: `Bearer ${TOKEN_B}` });
    expect((toA!.body as { template: unknown }).template).toMatchObject({
      name: "missed_you_v3",
      language: { code: "en_GB" },
    });
    expect((toB!.body as { template: unknown }).template).toMatchObject({
      name: "b_missed",
      language: { code: "pt_BR" },
    });
  });

  it("a change to the channel committed elsewhere (another replica, an operator's SQL) reaches the very next send", async () => {
    // notify caches each tenant's route; a trigger announces every change to it at commit, and
    // the announcement evicts it (the cache would otherwise keep the old route for a minute).
    const template = async () => {
      stub.requests.length = 0;
      expect((await send(tenantA, keys.manageA!)).res.status).toBe(200);
      return (sendsTo(NUMBER_A)[0]!.body as { template: { name: string } }).template.name;
    };
    expect(await template()).toBe("missed_you_v3");
    expect(await template()).toBe("missed_you_v3");
    const client = new pg.Client({ connectionString: stack.scratch.url });
    await client.connect();
    const rename = (name: string) =>
      client.query(
        `update notify.tenant_channels set templates = jsonb_set(templates, '{no_show,name}', to_jsonb($2::text))
         where tenant_id = $1`,
        [tenantA, name],
      );
    try {
      await rename("missed_you_v4");
      // The announcement travels to notify's listener as the commit returns: within moments, far
      // inside the cached route's minute.
      await expect.poll(template, { timeout: 5_000, interval: 50 }).toBe("missed_you_v4");
    } finally {
      await rename("missed_you_v3");
      await client.end();
    }
    await expect.poll(template, { timeout: 5_000, interval: 50 }).toBe("missed_you_v3");
  });

  it("the tenant record shows the channel (number, display name, quality rating, status) and never the token", async () => {
    const record = await call("GET", `/api/v1/tenants/${tenantA}`);
    expect(record.body.channel).toEqual({
      phoneNumberId: NUMBER_A,
      displayPhoneNumber: "+44 7700 900001",
      verifiedName: "Paws A",
      qualityRating: "GREEN",
      status: "CONNECTED",
      checkedAt: expect.any(String) as string,
    });
    const read = await call("GET", `/api/v1/tenants/${tenantA}/channel`, { key: keys.readA });
    expect(read.res.status).toBe(200);
    expect(read.body).not.toHaveProperty("accessToken");
  });

  it("the console's tenant page shows the channel and never the token", async () => {
    const created = await stack.admin(
      "user",
      "create",
      "--tenant",
      tenantA,
      "--email",
      "owner@example.com",
      "--role",
      "owner",
    );
    const browser = new ConsoleBrowser(() => stack.url);
    const password = "correct horse battery staple";
    const invitation = pathOf(created.invitationUrl as string);
    expect((await browser.get(invitation)).status).toBe(200);
    expect((await browser.post(invitation, { password, confirmation: password })).status).toBe(303);
    const page = await browser.get("/console/tenant");
    expect(page.status).toBe(200);
    expect(page.text).toContain("WhatsApp number");
    expect(page.text).toContain("+44 7700 900001");
    expect(page.text).toContain("Paws A");
    expect(page.text).toContain("GREEN");
    expect(page.text).toContain("CONNECTED");
    for (const token of [TOKEN_A, TOKEN_A2, TOKEN_B]) expect(page.text).not.toContain(token);
  });

  /** The capability's events in tenant A's activity feed, oldest first. */
  const capabilityEvents = async () => {
    const { body } = await call("GET", `/api/v1/tenants/${tenantA}/activity?limit=100`);
    return (body.data as { type: string; reasonCode: string }[])
      .filter((item) => item.type.startsWith("capability."))
      .map((item) => item.type)
      .reverse();
  };

  it.each([
    ["quality rating RED", { qualityRating: "RED" }, "capability.channel_quality_low"],
    ["status FLAGGED", { status: "FLAGGED" }, "capability.channel_quality_low"],
    ["status DISCONNECTED", { status: "DISCONNECTED" }, "capability.channel_disconnected"],
    [
      "a token the Cloud API refuses (401, code 190)",
      { token: "EAAGsomeoneElsesToken-000000000" },
      "capability.credentials_revoked",
    ],
  ])(
    "%s: connecting reports the check failed, sends answer 409 partner.channel_not_ready with the reason; a recovery sends again",
    async (_label, change, reason) => {
      stub.setNumber(NUMBER_A, change);
      const failed = await connect(tenantA, connectionA(TOKEN_A2));
      expect([failed.res.status, failed.body.checkResult, failed.body.reasonCode]).toEqual([200, "fail", reason]);
      const refused = await send(tenantA, keys.manageA!);
      expect([refused.res.status, refused.body.code]).toEqual([409, "partner.channel_not_ready"]);
      expect(refused.body.detail).toContain(reason);
      const capabilities = await call("GET", `/api/v1/tenants/${tenantA}/capabilities`);
      expect(capabilities.body.data).toContainEqual(
        expect.objectContaining({ name: "messaging_channel", state: "off", reasonCode: reason }),
      );
      // Tenant B's number is its own: unaffected.
      expect((await send(tenantB, keys.manageB!)).res.status).toBe(200);

      stub.setNumber(NUMBER_A, { token: TOKEN_A2, qualityRating: "GREEN", status: "CONNECTED" });
      const recovered = await connect(tenantA, connectionA(TOKEN_A2));
      expect([recovered.res.status, recovered.body.checkResult]).toEqual([200, "pass"]);
      expect((await send(tenantA, keys.manageA!)).res.status).toBe(200);
      await eventually("capability.restored in the activity feed", async () => {
        const events = await capabilityEvents();
        return events.at(-1) === "capability.restored" && events;
      });
    },
  );

  it("emitted capability.suspended and capability.restored exactly once per failure and recovery", async () => {
    await eventually("four of each in the feed", async () => (await capabilityEvents()).length >= 8);
    expect(await capabilityEvents()).toEqual(Array(4).fill(["capability.suspended", "capability.restored"]).flat());
  });

  it("the periodic check notices a flagged number by itself (no connect, no send), and its recovery", async () => {
    stub.setNumber(NUMBER_A, { status: "FLAGGED" });
    await eventually("the periodic check suspends the channel", async () => {
      const answer = await send(tenantA, keys.manageA!);
      return answer.res.status === 409 && answer;
    });
    stub.setNumber(NUMBER_A, { status: "CONNECTED" });
    await eventually("the periodic check restores the channel", async () => {
      const answer = await send(tenantA, keys.manageA!);
      return answer.res.status === 200 && answer;
    });
  });

  it("a wrong token at send time answers 409 partner.channel_not_ready, never a 500", async () => {
    // The provider revoked the token; the stored one is refused on the send itself (or by the check first).
    stub.setNumber(NUMBER_A, { token: "EAAGrevokedEverywhere-00000000000" });
    const refused = await send(tenantA, keys.manageA!);
    expect([refused.res.status, refused.body.code]).toEqual([409, "partner.channel_not_ready"]);
    stub.setNumber(NUMBER_A, { token: TOKEN_A2 });
  });

  it("no token appears in any answer, log line or error output of any process", () => {
    const outputs = [
      ...answered,
      ...[stack.gateway, stack.notify, stack.webhooks, stack.catalog].flatMap((p) => [
        ...p.logs.map((line) => JSON.stringify(line)),
        ...p.stderr,
      ]),
    ].join("\n");
    expect(outputs).toContain(NUMBER_A); // the logs do name the number
    for (const token of [TOKEN_A, TOKEN_A2, TOKEN_B]) expect(outputs).not.toContain(token);
  });
});
