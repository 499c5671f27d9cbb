import { startCloudApiStub, type CloudApiStub } from "@platform/local-stack/cloud-api-stub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { defaultWhatsAppTemplates } from "../config.js";
import type { OutboundTemplateMessage } from "../domain/channel-provider.js";
import { createWhatsAppChannel } from "./whatsapp-channel.js";

describe("WhatsApp Cloud API channel (against a local server that answers as the Cloud API does)", () => {
  let stub: CloudApiStub;
  let channel: ReturnType<typeof createWhatsAppChannel>;
  const message: OutboundTemplateMessage = {
    notificationId: "ntf_000000000000000000000001",
    recipient: "447700900123",
    type: "rescheduled",
    parameters: ["Ana", "grooming", "Mon 10:00", "Tue 11:00"],
    text: "Hi Ana, your grooming has moved from Mon 10:00 to Tue 11:00.",
  };

  beforeAll(async () => {
    stub = await startCloudApiStub();
    channel = createWhatsAppChannel({
      baseUrl: stub.url,
      phoneNumberId: "106540352242922",
      accessToken: "EAAtest-token",
      templates: { ...defaultWhatsAppTemplates, rescheduled: { name: "moved_v2", language: "en_GB" } },
      timeoutMs: 1_500,
    });
  });
  afterAll(async () => stub?.close());
  beforeEach(() => {
    stub.requests.length = 0;
    stub.respondWith({ kind: "success" });
  });

  it("sends the template message the Cloud API documents, with the bearer token, and keeps its message id", async () => {
    const outcome = await channel.send(message);
    expect(outcome).toEqual({ kind: "sent", providerMessageId: expect.stringMatching(/^wamid\./) as string });
    expect(stub.requests).toEqual([
      {
        method: "POST",
        path: "/v21.0/106540352242922/messages",
        authorization: "Bearer EAAtest-token",
        contentType: "application/json",
        body: {
          messaging_product: "whatsapp",
          recipient_type: "individual",
          to: "447700900123",
          type: "template",
          template: {
            name: "moved_v2",
            language: { code: "en_GB" },
            components: [
              {
                type: "body",
                parameters: [
                  { type: "text", text: "Ana" },
                  { type: "text", text: "grooming" },
                  { type: "text", text: "Mon 10:00" },
                  { type: "text", text: "Tue 11:00" },
                ],
              },
            ],
          },
        },
      },
    ]);
  });

  it.each([
    [429, 130429, "partner.channel_rate_limited"],
    [400, 131056, "partner.channel_rate_limited"],
    [400, 131026, "partner.recipient_undeliverable"],
    [400, 132000, "partner.template_unavailable"],
    [404, 132001, "partner.template_unavailable"],
    [401, 190, "partner.channel_not_ready"],
    [500, 131016, "service.unavailable"],
    [400, 100, "partner.channel_send_failed"],
    [400, 987654, "partner.channel_send_failed"],
  ])("maps an HTTP %d error object with code %d to %s", async (status, code, partnerCode) => {
    stub.respondWith({ kind: "error", status, code, message: "secret provider words" });
    const outcome = await channel.send(message);
    expect(outcome).toEqual({ kind: "failed", code: partnerCode, providerCode: String(code) });
    expect(JSON.stringify(outcome)).not.toContain("secret provider words");
    expect(stub.requests).toHaveLength(1);
  });

  it.each([
    ["slow (past the timeout)", { kind: "slow", ms: 4_000 } as const, "timeout"],
    ["silent", { kind: "silent" } as const, "timeout"],
    ["a connection reset", { kind: "reset" } as const, "transport:"],
    [
      "a 502 page without an error object",
      { kind: "raw", status: 502, body: "<html>bad gateway</html>" } as const,
      "unreadable",
    ],
    ["a 200 that is not JSON", { kind: "raw", status: 200, body: "ok" } as const, "unreadable"],
  ])("answers unknown, never sent, to %s", async (_label, behaviour, reason) => {
    stub.respondWith(behaviour);
    const outcome = await channel.send(message);
    expect(outcome.kind).toBe("unknown");
    expect((outcome as { reason: string }).reason).toContain(reason);
    expect(stub.requests).toHaveLength(1);
  });

  it("answers a refused connection as unavailable: the request never left", async () => {
    const closed = await startCloudApiStub();
    await closed.close();
    const unreachable = createWhatsAppChannel({
      baseUrl: closed.url,
      phoneNumberId: "1",
      accessToken: "t",
      templates: defaultWhatsAppTemplates,
      timeoutMs: 1_000,
    });
    expect(await unreachable.send(message)).toEqual({
      kind: "failed",
      code: "service.unavailable",
      providerCode: "connect:ECONNREFUSED",
    });
  });
});
