import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import {
  startCloudApiStub,
  statusNotification,
  type CallbackTarget,
  type CloudApiStub,
} from "@platform/local-stack/cloud-api-stub";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WHATSAPP_CALLBACK_PATH } from "../src/routes/provider-callbacks/callbacks.js";
import { OpenApiContract } from "./openapi-contract.js";
import { startTestStack, type TestStack } from "./stack.js";
import { tenantApiCall, type Answer } from "./tenant-api-call.js";

/**
 * The WhatsApp Cloud API's signed callbacks end to end (issue 32 items 3-5): the stand-in POSTs
 * them to the gateway's callback path; notify records and applies them; partners read the
 * delivery status (GET .../notifications/{id}, the transcript) and receive notification.delivered,
 * .read and .failed as signed webhook deliveries at an HTTPS receiver.
 */
describe("provider callbacks", () => {
  let stack: TestStack;
  let stub: CloudApiStub;
  let certs: TestCertificates;
  let receiver: TestReceiver;
  let contract: OpenApiContract;
  let db: pg.Client;
  let tenant: string;
  let other: string;
  const keys: Record<string, string> = {};
  const APP_SECRET = "app-secret-never-logged-0123456789";
  const VERIFY_TOKEN = "verify-token-never-logged-42";
  const PHONE_NUMBER_ID = "106540352242922";
  const MAX_BYTES = 65_536;
  let target: CallbackTarget;
  let n = 0;

  const call = tenantApiCall({ gatewayUrl: () => stack.url, defaultKey: () => keys.full!, contract: () => contract });
  const expectProblem = (answer: Answer, status: number, code: string) =>
    expect({ status: answer.res.status, code: answer.body.code }).toEqual({ status, code });
  const phone = () => `+4477009${String(20000 + n++).padStart(5, "0")}`;

  /** Sends a notification through the stand-in; answers its id and the message id the stand-in gave it. */
  async function send(tenantId = tenant, to = phone()): Promise<{ id: string; wamid: string; to: string }> {
    const { res, body } = await call("POST", `/api/v1/tenants/${tenantId}/notifications`, {
      headers: { "content-type": "application/json", "idempotency-key": `cb-send-${Date.now()}-${n++}` },
      body: JSON.stringify({
        to,
        type: "no_show",
        clientName: "Ana",
        serviceName: "grooming",
        actor: { actorReference: "crm-user-7" },
      }),
    });
    expect(res.status).toBe(200);
    return { id: body.notificationId as string, wamid: stub.accepted.at(-1)!.id, to };
  }
  const notification = (id: string, tenantId = tenant, key?: string) =>
    call("GET", `/api/v1/tenants/${tenantId}/notifications/${id}`, { key });
  async function batches(): Promise<number> {
    const { rows } = await db.query<{ c: string }>("select count(*) as c from notify.provider_callback_batches");
    return Number(rows[0]!.c);
  }
  const at = (seconds: number) => new Date(seconds * 1000).toISOString();
  /** Deliveries at the receiver: [type, notification_id] of each. */
  const delivered = () =>
    receiver.requests.map((request) => {
      const envelope = JSON.parse(request.body.toString("utf8")) as {
        type: string;
        data: { object: { notification_id: string } };
      };
      return [envelope.type, envelope.data.object.notification_id] as const;
    });
  const deliveriesOf = (type: string, id: string) => delivered().filter(([t, i]) => t === type && i === id).length;

  beforeAll(async () => {
    certs = await createTestCertificates();
    receiver = await startReceiver(certs);
    stub = await startCloudApiStub();
    stack = await startTestStack(
      {
        WHATSAPP_APP_SECRET: APP_SECRET,
        WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
        WHATSAPP_CALLBACK_MAX_BYTES: String(MAX_BYTES),
      },
      {
        NOTIFY_CHANNEL_PROVIDER: "whatsapp",
        WHATSAPP_API_BASE_URL: stub.url,
        WHATSAPP_ACCESS_TOKEN: "EAAG-secret-access-token",
        WHATSAPP_PHONE_NUMBER_ID: PHONE_NUMBER_ID,
        PROVIDER_CALLBACK_PASS_INTERVAL: "200ms",
      },
      { NODE_EXTRA_CA_CERTS: certs.caPath, WEBHOOKS_RETRY_DELAYS: "50ms,50ms,50ms,50ms,50ms,50ms,50ms" },
    );
    target = { url: `${stack.url}${WHATSAPP_CALLBACK_PATH}`, appSecret: APP_SECRET };
    contract = new OpenApiContract(
      (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as ConstructorParameters<
        typeof OpenApiContract
      >[0],
    );
    db = new pg.Client({ connectionString: stack.scratch.url });
    await db.connect();
    tenant = (await stack.admin("tenant", "create", "--name", "Acme", "--plan", "commercial")).id as string;
    other = (await stack.admin("tenant", "create", "--name", "Other", "--plan", "commercial")).id as string;
    for (const id of [tenant, other]) await stack.admin("tenant", "activate", "--id", id);
    const key = async (scopes: string, tenants = tenant) =>
      (await stack.admin("key", "create", "--scopes", scopes, "--tenants", tenants)).key as string;
    keys.full = await key("notification:send,tenant:read,webhook:manage", `${tenant},${other}`);
    keys.read = await key("tenant:read");
    keys.send = await key("notification:send");
    keys.hooks = await key("webhook:manage");
    const created = await call("POST", `/api/v1/tenants/${tenant}/webhooks`, {
      headers: { "content-type": "application/json", "idempotency-key": "cb-endpoint-1" },
      body: JSON.stringify({ url: receiver.url, description: "notifications", eventTypes: ["notification.*"] }),
    });
    expect(created.res.status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
    await stub?.close();
    await receiver?.close();
  });

  describe("the subscription handshake", () => {
    const handshake = (query: Record<string, string>) =>
      fetch(`${target.url}?${new URLSearchParams(query).toString()}`);

    it("answers the challenge as text to hub.mode=subscribe with the verify token", async () => {
      const res = await handshake({
        "hub.mode": "subscribe",
        "hub.verify_token": VERIFY_TOKEN,
        "hub.challenge": "1158201444",
      });
      expect({ status: res.status, type: res.headers.get("content-type"), body: await res.text() }).toEqual({
        status: 200,
        type: "text/plain; charset=utf-8",
        body: "1158201444",
      });
    });

    it.each([
      ["a wrong verify token", { "hub.mode": "subscribe", "hub.verify_token": "guess", "hub.challenge": "1" }],
      ["another mode", { "hub.mode": "unsubscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1" }],
      ["no token", { "hub.mode": "subscribe", "hub.challenge": "1" }],
    ])("answers 403 provider.callback_verify_token_invalid to %s, without the challenge", async (_label, query) => {
      const res = await handshake(query);
      const body = (await res.json()) as Record<string, unknown>;
      expect({ status: res.status, type: res.headers.get("content-type"), code: body.code }).toEqual({
        status: 403,
        type: expect.stringMatching(/^application\/problem\+json/) as string,
        code: "provider.callback_verify_token_invalid",
      });
    });
  });

  describe("a POST", () => {
    it.each(["missing", "wrong_secret", "malformed"] as const)(
      "with a %s signature answers 401 provider.callback_signature_invalid and records nothing",
      async (signing) => {
        const sent = await send();
        const before = await batches();
        const answer = await stub.postCallback(
          target,
          {
            object: "whatsapp_business_account",
            entry: [
              {
                id: "1",
                changes: [
                  {
                    field: "messages",
                    value: { statuses: [{ id: sent.wamid, status: "read", timestamp: "1800000000" }] },
                  },
                ],
              },
            ],
          },
          signing,
        );
        expect({ status: answer.status, code: (JSON.parse(answer.text) as { code: string }).code }).toEqual({
          status: 401,
          code: "provider.callback_signature_invalid",
        });
        expect(await batches()).toBe(before);
        expect((await notification(sent.id)).body).toMatchObject({ deliveryStatus: "accepted", readAt: null });
      },
    );

    it("over the size limit answers 413 request.body_too_large and records nothing, signed or not", async () => {
      const before = await batches();
      const big = JSON.stringify({ object: "whatsapp_business_account", entry: [], padding: "x".repeat(MAX_BYTES) });
      const answer = await stub.postCallback(target, big);
      expect({ status: answer.status, code: (JSON.parse(answer.text) as { code: string }).code }).toEqual({
        status: 413,
        code: "request.body_too_large",
      });
      expect(await batches()).toBe(before);
    });

    it("signed but not a notification answers 400 provider.callback_invalid and records nothing", async () => {
      const before = await batches();
      const answer = await stub.postCallback(target, "[1, 2, 3]");
      expect({ status: answer.status, code: (JSON.parse(answer.text) as { code: string }).code }).toEqual({
        status: 400,
        code: "provider.callback_invalid",
      });
      expect(await batches()).toBe(before);
    });
  });

  describe("statuses", () => {
    it("answers 200 once recorded, applies them, and a provider retry of the same batch is recorded once", async () => {
      const sent = await send();
      const before = await batches();
      const body = JSON.stringify(
        statusNotification(PHONE_NUMBER_ID, [
          { id: sent.wamid, status: "sent", timestamp: 1_800_000_000 },
          { id: sent.wamid, status: "delivered", timestamp: 1_800_000_005 },
        ]),
      );
      expect((await stub.postCallback(target, body)).status).toBe(200);
      expect((await stub.postCallback(target, body)).status).toBe(200);
      expect(await batches()).toBe(before + 1);
      const read = await notification(sent.id);
      expect(read.res.status).toBe(200);
      expect(read.body).toEqual({
        notificationId: sent.id,
        type: "no_show",
        state: "sent",
        deliveryStatus: "delivered",
        reasonCode: null,
        createdAt: expect.any(String) as string,
        updatedAt: expect.any(String) as string,
        acceptedAt: expect.any(String) as string,
        sentAt: at(1_800_000_000),
        deliveredAt: at(1_800_000_005),
        readAt: null,
        failedAt: null,
      });
      // Never the text or the number.
      expect(JSON.stringify(read.body)).not.toContain(sent.to.slice(1));
      expect(JSON.stringify(read.body)).not.toContain("grooming");
      const transcript = await call(
        "GET",
        `/api/v1/tenants/${tenant}/conversations/${encodeURIComponent(sent.to)}/messages`,
      );
      expect((transcript.body.messages as Record<string, unknown>[]).map((m) => [m.state, m.deliveryStatus])).toEqual([
        ["sent", "delivered"],
      ]);
      await eventually("notification.delivered delivered", () => deliveriesOf("notification.delivered", sent.id) === 1);
    });

    it("never go backwards: read before delivered, delivered after read, repeats", async () => {
      const sent = await send();
      for (const statuses of [
        [{ id: sent.wamid, status: "read" as const, timestamp: 1_800_000_020 }],
        [{ id: sent.wamid, status: "delivered" as const, timestamp: 1_800_000_010 }],
        [
          { id: sent.wamid, status: "read" as const, timestamp: 1_800_000_030 },
          { id: sent.wamid, status: "sent" as const, timestamp: 1_800_000_001 },
        ],
      ]) {
        expect((await stub.postStatuses(target, PHONE_NUMBER_ID, statuses)).status).toBe(200);
      }
      expect((await notification(sent.id)).body).toMatchObject({
        deliveryStatus: "read",
        sentAt: at(1_800_000_020),
        deliveredAt: at(1_800_000_020),
        readAt: at(1_800_000_020),
      });
      await eventually("both steps delivered", () => deliveriesOf("notification.read", sent.id) === 1);
      expect(deliveriesOf("notification.delivered", sent.id)).toBe(1);
    });

    it("keeps a status for a message not yet recorded and applies it once the send records it", async () => {
      const wamid = `wamid.early${Date.now()}`;
      expect(
        (
          await stub.postStatuses(target, PHONE_NUMBER_ID, [
            { id: wamid, status: "delivered", timestamp: 1_800_000_100 },
          ])
        ).status,
      ).toBe(200);
      stub.respondWith({ kind: "success", messageId: wamid });
      const sent = await send();
      stub.respondWith({ kind: "success" });
      expect(sent.wamid).toBe(wamid);
      await eventually(
        "the early status applied",
        async () => (await notification(sent.id)).body.deliveryStatus === "delivered",
      );
      expect((await notification(sent.id)).body).toMatchObject({ deliveredAt: at(1_800_000_100) });
      await eventually("notification.delivered delivered", () => deliveriesOf("notification.delivered", sent.id) === 1);
    });

    it("maps a failure's provider code to a catalogue code and tells partners once", async () => {
      const sent = await send();
      for (let i = 0; i < 2; i++) {
        expect(
          (
            await stub.postStatuses(target, PHONE_NUMBER_ID, [
              { id: sent.wamid, status: "failed", timestamp: 1_800_000_200 + i, errorCode: 131026 },
            ])
          ).status,
        ).toBe(200);
      }
      expect((await notification(sent.id)).body).toMatchObject({
        deliveryStatus: "failed",
        reasonCode: "partner.recipient_undeliverable",
        failedAt: at(1_800_000_200),
      });
      await eventually("notification.failed delivered", () => deliveriesOf("notification.failed", sent.id) === 1);
      const request = receiver.requests.find((r) => r.body.toString("utf8").includes(`"notification.failed"`))!;
      const envelope = JSON.parse(request.body.toString("utf8")) as { data: { object: Record<string, unknown> } };
      expect(envelope.data.object).toEqual({
        notification_id: sent.id,
        type: "no_show",
        status: "failed",
        reason_code: "partner.recipient_undeliverable",
        created_at: expect.any(String) as string,
        accepted_at: expect.any(String) as string,
        failed_at: at(1_800_000_200),
      });
      expect(request.headers["service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    });
  });

  describe("GET .../notifications/{notificationId}", () => {
    it("answers keys with notification:send or tenant:read, and 403 auth.scope_missing to others", async () => {
      const sent = await send();
      expect((await notification(sent.id, tenant, keys.read)).res.status).toBe(200);
      expect((await notification(sent.id, tenant, keys.send)).res.status).toBe(200);
      expectProblem(await notification(sent.id, tenant, keys.hooks), 403, "auth.scope_missing");
    });

    it("answers 404 notification.not_found for an unknown id and for another tenant's notification", async () => {
      expectProblem(await notification("ntf_000000000000000000000000"), 404, "notification.not_found");
      const theirs = await send(other);
      expect((await notification(theirs.id, other)).res.status).toBe(200);
      expectProblem(await notification(theirs.id, tenant), 404, "notification.not_found");
    });
  });

  it("never logs the app secret, the verify token, a callback's body or a recipient's number", async () => {
    const sent = await send();
    expect((await stub.postStatuses(target, PHONE_NUMBER_ID, [{ id: sent.wamid, status: "delivered" }])).status).toBe(
      200,
    );
    const logs = JSON.stringify([stack.gateway.logs, stack.notify.logs]);
    expect(logs).toContain("provider callbacks recorded");
    for (const secret of [APP_SECRET, VERIFY_TOKEN, sent.wamid, sent.to.slice(1)]) expect(logs).not.toContain(secret);
  });

  it("answers 503 while notify is down (the provider retries), and the retry after a restart is applied", async () => {
    const sent = await send();
    const before = await batches();
    await stack.notify.stop();
    const down = await stub.postStatuses(target, PHONE_NUMBER_ID, [
      { id: sent.wamid, status: "read", timestamp: 1_800_000_300 },
    ]);
    expect({ status: down.status, code: (JSON.parse(down.text) as { code: string }).code }).toEqual({
      status: 503,
      code: "service.unavailable",
    });
    expect(await batches()).toBe(before);
    await stack.restartNotify();
    await eventually("the retry recorded", async () => {
      const retry = await stub.postStatuses(target, PHONE_NUMBER_ID, [
        { id: sent.wamid, status: "read", timestamp: 1_800_000_300 },
      ]);
      return retry.status === 200;
    });
    expect(await batches()).toBe(before + 1);
    expect((await notification(sent.id)).body).toMatchObject({ deliveryStatus: "read", readAt: at(1_800_000_300) });
  }, 60_000);
});
