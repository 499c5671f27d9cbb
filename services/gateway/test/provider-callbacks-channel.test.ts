import { startCloudApiStub, type CallbackTarget, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import { SAMPLE_REMINDER } from "@platform/local-stack/sample-requests";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WHATSAPP_CALLBACK_PATH } from "../src/routes/provider-callbacks/callbacks.js";
import { startTestStack, type TestStack } from "./stack.js";

/**
 * The provider's callbacks reaching the tenant's own number end to end (issue 32 items 2, 3 and 7):
 * the stand-in POSTs signed callbacks to the gateway's callback path, notify records them and hands
 * a customer's STOP / START and the number's quality updates to the channel, and the next sends
 * through the gateway answer accordingly.
 */
describe("provider callbacks for a tenant's own number", () => {
  let stack: TestStack;
  let stub: CloudApiStub;
  let target: CallbackTarget;
  let tenant: string;
  let key: string;
  const APP_SECRET = "app-secret-of-the-channel-walk-0001";
  const NUMBER = "106540352243001";
  const TOKEN = "EAAchannelWalkTokenNumber0001";
  const CUSTOMER = "447700900123"; // SAMPLE_REMINDER.to without its +
  let sent = 0;

  const send = async () => {
    const res = await fetch(`${stack.url}/api/v1/tenants/${tenant}/notifications`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": `channel-callbacks-${sent++}`,
      },
      body: JSON.stringify(SAMPLE_REMINDER),
    });
    return { status: res.status, body: (await res.json()) as { code?: string; state?: string } };
  };
  /** A `messages` change from the tenant's number, as the Cloud API's webhook sends it. */
  const inbound = (id: string, text: string) => ({
    object: "whatsapp_business_account",
    entry: [
      {
        id: "102290129340500",
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "447700900500", phone_number_id: NUMBER },
              contacts: [{ profile: { name: "Ana" }, wa_id: CUSTOMER }],
              messages: [
                {
                  from: CUSTOMER,
                  id,
                  timestamp: String(Math.floor(Date.now() / 1000)),
                  type: "text",
                  text: { body: text },
                },
              ],
            },
          },
        ],
      },
    ],
  });
  const qualityUpdate = (event: string) => ({
    object: "whatsapp_business_account",
    entry: [
      {
        id: "102290129340500",
        changes: [
          {
            field: "phone_number_quality_update",
            value: { display_phone_number: "447700900500", phone_number_id: NUMBER, event, current_limit: "TIER_1K" },
          },
        ],
      },
    ],
  });

  beforeAll(async () => {
    stub = await startCloudApiStub();
    stub.setNumber(NUMBER, { token: TOKEN, displayPhoneNumber: "+44 7700 900500", verifiedName: "Paws & Co" });
    stack = await startTestStack(
      { WHATSAPP_APP_SECRET: APP_SECRET, WHATSAPP_VERIFY_TOKEN: "verify-token-of-the-channel-walk" },
      {
        NOTIFY_CHANNEL_PROVIDER: "whatsapp",
        WHATSAPP_API_BASE_URL: stub.url,
        PROVIDER_CALLBACK_PASS_INTERVAL: "200ms",
      },
    );
    target = { url: `${stack.url}${WHATSAPP_CALLBACK_PATH}`, appSecret: APP_SECRET };
    tenant = (await stack.admin("tenant", "create", "--name", "Acme", "--plan", "commercial")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    const connected = await stack.admin(
      "tenant",
      "channel",
      "connect",
      "--id",
      tenant,
      "--waba",
      "102290129340500",
      "--phone-number-id",
      NUMBER,
      "--token",
      TOKEN,
    );
    expect(connected).toMatchObject({ phoneNumberId: NUMBER, checkResult: "pass" });
    key = (await stack.admin("key", "create", "--scopes", "notification:send", "--tenants", tenant)).key as string;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await stub?.close();
  });

  it("sends from the tenant's own number before any callback", async () => {
    expect(await send()).toMatchObject({ status: 200, body: { state: "sent" } });
    const request = stub.requests.at(-1)!;
    expect(request.path).toBe(`/v21.0/${NUMBER}/messages`);
    expect(request.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("a customer's STOP, signed and posted by the provider, makes the next send a 409 opt-out; START lifts it", async () => {
    expect((await stub.postCallback(target, inbound("wamid.stop-1", " stop "))).status).toBe(200);
    // Applied after the commit of the gateway's call (or by the pass within 200 ms): never later than a few passes.
    let answer = await send();
    for (let i = 0; i < 20 && answer.status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await send();
    }
    expect(answer).toMatchObject({ status: 409, body: { code: "partner.recipient_opted_out" } });
    const requestsWhileOptedOut = stub.requests.length;
    expect(await send()).toMatchObject({ status: 409, body: { code: "partner.recipient_opted_out" } });
    expect(stub.requests.length).toBe(requestsWhileOptedOut); // nothing reached the provider

    // The same STOP again (the provider retries) changes nothing; START lifts the opt-out.
    expect((await stub.postCallback(target, inbound("wamid.stop-1", " stop "))).status).toBe(200);
    expect((await stub.postCallback(target, inbound("wamid.start-1", "START"))).status).toBe(200);
    answer = await send();
    for (let i = 0; i < 20 && answer.status === 409; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await send();
    }
    expect(answer).toMatchObject({ status: 200, body: { state: "sent" } });
  });

  it("a FLAGGED quality update makes sends 409 partner.channel_not_ready; UNFLAGGED restores them", async () => {
    expect((await stub.postCallback(target, qualityUpdate("FLAGGED"))).status).toBe(200);
    let answer = await send();
    for (let i = 0; i < 20 && answer.status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await send();
    }
    expect(answer).toMatchObject({ status: 409, body: { code: "partner.channel_not_ready" } });

    expect((await stub.postCallback(target, qualityUpdate("UNFLAGGED"))).status).toBe(200);
    answer = await send();
    for (let i = 0; i < 20 && answer.status === 409; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await send();
    }
    expect(answer).toMatchObject({ status: 200, body: { state: "sent" } });
  });

  it("a badly signed STOP is refused with 401 and opts nobody out", async () => {
    expect((await stub.postCallback(target, inbound("wamid.stop-2", "STOP"), "wrong_secret")).status).toBe(401);
    expect(await send()).toMatchObject({ status: 200, body: { state: "sent" } });
  });
});
