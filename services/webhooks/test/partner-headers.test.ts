/**
 * What a partner's receiver sees on the wire and how it can push back, through the built webhooks
 * process (real Postgres and NATS) and local HTTPS receivers:
 *
 * - the one secret the API showed (CreateEndpoint, RotateSecret) verifies `Service-Signature` with
 *   the stripe SDK and @platform/webhook-verifier, and the Standard Webhooks headers with the
 *   `standardwebhooks` package, for a new endpoint, a rotated one (both secrets during the grace)
 *   and a test delivery;
 * - a 429 or 503 with Retry-After sets the stored next_attempt_at exactly (a 500's is ignored).
 */
import { credentials } from "@grpc/grpc-js";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type ReceivedRequest,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import {
  WebhookServiceClient,
  type CreateEndpointResponse,
  type RotateSecretResponse,
  type SendTestDeliveryResponse,
} from "@platform/proto/webhooks/v1";
import { verifyWebhook } from "@platform/webhook-verifier";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { retryAfterCapMs } from "../src/domain/retry-delays.js";
import { generateSigningSecret } from "../src/domain/secret-box.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";

const stripe = new Stripe("sk_test_unused");

/** The retry schedule of the process under test: 1 s after every failure. */
const scheduleMs = 1_000;

describe("partner-facing headers and back-pressure (webhooks process, real Postgres and NATS, HTTPS receivers)", () => {
  let certs: TestCertificates;
  let service: WebhooksUnderTest;
  let hooks: WebhookServiceClient;
  const receivers: TestReceiver[] = [];
  let n = 0;
  const receiver = async (respond?: Parameters<typeof startReceiver>[1]) => {
    const started = await startReceiver(certs, respond);
    receivers.push(started);
    return started;
  };
  const call = <T>(invoke: (done: (error: Error | null, answer: T) => void) => void) =>
    new Promise<T>((resolve, reject) => invoke((error, answer) => (error ? reject(error) : resolve(answer))));

  beforeAll(async () => {
    certs = await createTestCertificates();
    service = await startWebhooks({
      name: "whpartner",
      caPath: certs.caPath,
      env: { WEBHOOKS_DELIVERY_TIMEOUT: "3s", WEBHOOKS_RETRY_DELAYS: "1s,1s,1s,1s,1s,1s,1s" },
    });
    hooks = new WebhookServiceClient(
      `127.0.0.1:${service.process.listening.grpcPort as number}`,
      credentials.createInsecure(),
    );
  });
  afterAll(async () => {
    hooks?.close();
    await Promise.allSettled(receivers.map((r) => r.close()));
    await service?.stop();
    await certs?.remove();
  });

  const create = (tenantId: string, url: string, eventTypes: string[]) =>
    call<CreateEndpointResponse>((done) =>
      hooks.createEndpoint(
        { tenantId, url, description: "partner receiver", eventTypes, idempotencyKey: `create-${n++}` },
        done,
      ),
    );

  /** Every check a partner could make with the secrets they were shown. */
  function expectVerifiedByEach(request: ReceivedRequest, secrets: readonly string[], eventId: string) {
    const header = String(request.headers["service-signature"]);
    const t = /^t=(\d+),/.exec(header)?.[1];
    expect(request.headers["webhook-id"]).toBe(eventId);
    expect(request.headers["webhook-timestamp"]).toBe(t);
    const signatures = String(request.headers["webhook-signature"]).split(" ");
    expect(signatures).toHaveLength(secrets.length);
    for (const signature of signatures) expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(header.split(",").filter((entry) => entry.startsWith("v1="))).toHaveLength(secrets.length);
    for (const secret of secrets) {
      expect(stripe.webhooks.constructEvent(request.body, header, secret)).toMatchObject({ id: eventId });
      expect(verifyWebhook({ payload: request.body, header, secrets: [secret] }).id).toBe(eventId);
      expect(
        new Webhook(secret).verify(request.body.toString("utf8"), request.headers as Record<string, string>),
      ).toMatchObject({
        id: eventId,
      });
    }
    // A secret the partner was not shown verifies nothing.
    const stranger = generateSigningSecret();
    expect(() => stripe.webhooks.constructEvent(request.body, header, stranger)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    expect(() =>
      new Webhook(stranger).verify(request.body.toString("utf8"), request.headers as Record<string, string>),
    ).toThrow(WebhookVerificationError);
  }

  it("a new endpoint: the secret CreateEndpoint showed verifies both schemes on a real delivery", async () => {
    const inbox = await receiver();
    const created = await create("std-new", inbox.url, ["booking.*"]);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
    const published = await service.publish({
      tenantId: "std-new",
      type: "booking.created",
      dataJson: JSON.stringify({ booking_id: "bk_1", starts_at: "2026-12-01T09:00:00Z", status: "confirmed" }),
    });
    const request = await eventually("the delivery", () => inbox.requests[0]);
    expectVerifiedByEach(request, [created.secret], published.eventId);
  });

  it("a rotated endpoint: during the 24 hours both the old and the new secret verify both schemes, test deliveries too", async () => {
    const inbox = await receiver();
    const created = await create("std-rot", inbox.url, ["booking.*"]);
    const rotated = await call<RotateSecretResponse>((done) =>
      hooks.rotateSecret(
        { tenantId: "std-rot", endpointId: created.endpoint!.id, idempotencyKey: `rotate-${n++}` },
        done,
      ),
    );
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
    expect(rotated.secret).not.toBe(created.secret);
    const published = await service.publish({ tenantId: "std-rot", type: "booking.created" });
    const request = await eventually("the delivery", () => inbox.requests[0]);
    expectVerifiedByEach(request, [rotated.secret, created.secret], published.eventId);

    const test = await call<SendTestDeliveryResponse>((done) =>
      hooks.sendTestDelivery(
        {
          tenantId: "std-rot",
          endpointId: created.endpoint!.id,
          eventType: "booking.created",
          idempotencyKey: `test-${n++}`,
        },
        done,
      ),
    );
    const testRequest = await eventually("the test delivery", () => inbox.requests[1]);
    const testEventId = (JSON.parse(testRequest.body.toString("utf8")) as { id: string }).id;
    expect(test.delivery!.eventId).toBe(testEventId);
    expectVerifiedByEach(testRequest, [rotated.secret, created.secret], testEventId);
  });

  describe("Retry-After", () => {
    interface AttemptRow {
      attempted_at: Date;
      duration_ms: number;
      status_code: number;
    }

    /** One delivery to a receiver answering `status` with these headers; its first attempt and the stored due time. */
    async function firstFailure(tenantId: string, status: number, headers: Record<string, string>) {
      const inbox = await receiver(() => ({ status, headers: { "content-type": "text/plain", ...headers } }));
      const endpoint = await service.seedEndpoint({ tenantId, url: inbox.url, eventTypes: ["booking.*"] });
      await service.publish({ tenantId, type: "booking.created" });
      const delivery = await eventually("the first attempt recorded", async () => {
        const row = await service
          .db("deliveries")
          .where({ endpoint_id: endpoint.id })
          .first<{ id: string; status: string; attempts: number; next_attempt_at: Date | null } | undefined>(
            "id",
            "status",
            "attempts",
            "next_attempt_at",
          );
        return row && row.attempts >= 1 ? row : undefined;
      });
      const attempt = await service.db("attempts").where({ delivery_id: delivery.id, number: 1 }).first<AttemptRow>();
      const end = attempt.attempted_at.getTime() + attempt.duration_ms;
      return { inbox, delivery, attempt, end };
    }

    it("a 429 with Retry-After: 120 makes the next attempt due exactly 120 s after the answer; still a failed attempt", async () => {
      const { inbox, delivery, attempt, end } = await firstFailure("ra-seconds", 429, { "retry-after": "120" });
      expect(attempt.status_code).toBe(429);
      expect(delivery).toMatchObject({ status: "awaiting_retry", attempts: 1 });
      expect(delivery.next_attempt_at!.getTime()).toBe(end + 120_000);
      // The schedule alone would have tried again after 1 s: nothing came.
      await new Promise((resolve) => setTimeout(resolve, 3 * scheduleMs));
      expect(inbox.requests).toHaveLength(1);
    });

    it("a 503 with an HTTP date makes it due at that date", async () => {
      const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 15 * 60_000);
      const { delivery } = await firstFailure("ra-date", 503, { "retry-after": at.toUTCString() });
      expect(delivery.status).toBe("awaiting_retry");
      expect(delivery.next_attempt_at!.getTime()).toBe(at.getTime());
    });

    it("a wait longer than the cap is cut to the schedule's due time + 2 h", async () => {
      const { delivery, end } = await firstFailure("ra-cap", 429, { "retry-after": "86400" });
      expect(delivery.next_attempt_at!.getTime()).toBe(end + scheduleMs + retryAfterCapMs);
    });

    it("a 500's Retry-After and an invalid one are ignored: the next attempt comes on the 1 s schedule", async () => {
      const ignored = await firstFailure("ra-500", 500, { "retry-after": "120" });
      const invalid = await firstFailure("ra-bad", 429, { "retry-after": "in a while" });
      expect([ignored.attempt.status_code, invalid.attempt.status_code]).toEqual([500, 429]);
      // Honoured, either would wait 120 s or not be read at all; on the schedule, the second attempt
      // starts at least 1 s after the first answer.
      for (const { delivery, end } of [ignored, invalid]) {
        const second = await eventually(
          "the second attempt",
          () => service.db("attempts").where({ delivery_id: delivery.id, number: 2 }).first<AttemptRow | undefined>(),
          60_000,
        );
        expect(second.attempted_at.getTime()).toBeGreaterThanOrEqual(end + scheduleMs);
        expect(second.attempted_at.getTime()).toBeLessThan(end + 60_000);
      }
    });
  });
});
