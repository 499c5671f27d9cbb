/**
 * The delivery pipeline end to end, across processes: the built webhooks service (real Postgres,
 * real nats-server, its own database and NATS namespace) receives events through EventService,
 * fans them out, and delivers them to local HTTPS receivers whose CA it trusts through
 * NODE_EXTRA_CA_CERTS. Signatures are checked with the stripe SDK (a verifier this project did not
 * write) and with @platform/webhook-verifier.
 */
import { status, type ServiceError } from "@grpc/grpc-js";
import { verifyWebhook } from "@platform/webhook-verifier";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BusEvent } from "@platform/proto/webhooks/v1";
import { signDelivery } from "../src/domain/signature.js";
import { generateSigningSecret } from "../src/domain/secret-box.js";
import { createJetStreamDeliveryQueue } from "../src/events/delivery-queue.js";
import { eventSubject } from "../src/events/streams.js";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";
import { sampleSnapshot } from "./sample-snapshot.js";

const stripe = new Stripe("sk_test_unused");

interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  attempts_total: number;
  generation: number;
  last_status_code: number | null;
  last_error: string | null;
  payload: string;
}

interface AttemptRow {
  number: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  response_body: Buffer | null;
  response_body_truncated: boolean;
  duration_ms: number;
}

function v1Entries(header: string): string[] {
  return header.split(",").filter((part) => part.startsWith("v1="));
}

describe("the delivery pipeline (webhooks process, real Postgres and NATS, HTTPS receivers)", () => {
  let certs: TestCertificates;
  let service: WebhooksUnderTest;
  const receivers: TestReceiver[] = [];
  const receiver = async (respond?: Parameters<typeof startReceiver>[1]) => {
    const started = await startReceiver(certs, respond);
    receivers.push(started);
    return started;
  };
  const deliveriesOf = (endpointId: string) =>
    service.db("deliveries").where({ endpoint_id: endpointId }).orderBy("seq").select<DeliveryRow[]>("*");
  const attemptsOf = (deliveryId: string) =>
    service.db("attempts").where({ delivery_id: deliveryId }).orderBy("number").select<AttemptRow[]>("*");

  beforeAll(async () => {
    certs = await createTestCertificates();
    service = await startWebhooks({
      name: "whpipe",
      caPath: certs.caPath,
      env: { WEBHOOKS_DELIVERY_TIMEOUT: "3s" },
    });
  });
  afterAll(async () => {
    await Promise.allSettled(receivers.map((r) => r.close()));
    await service?.stop();
    await certs?.remove();
  });

  it("delivers a published event, signed so that the stripe SDK and our verifier accept it", async () => {
    const hooks = await receiver();
    const other = await receiver();
    const endpoint = await service.seedEndpoint({ tenantId: "acme", url: hooks.url, eventTypes: ["booking.*"] });
    // Another tenant's endpoint and a non-matching filter receive nothing.
    await service.seedEndpoint({ tenantId: "globex", url: other.url, eventTypes: ["booking.*"] });
    await service.seedEndpoint({ tenantId: "acme", url: other.url, eventTypes: ["conversation.started"] });

    const published = await service.publish({
      tenantId: "acme",
      type: "booking.created",
      dataJson: JSON.stringify({ booking_id: "bk_1", starts_at: "2026-12-01T09:00:00Z", status: "confirmed" }),
      occurredAt: "2026-11-22T10:00:00Z",
    });
    expect(published.duplicate).toBe(false);
    expect(published.eventId).toMatch(/^evt_[0-9a-f]{24}$/);

    const request = await eventually("the delivery", () => hooks.requests[0]);
    expect(request.method).toBe("POST");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["service-event-id"]).toBe(published.eventId);
    const header = String(request.headers["service-signature"]);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    const event = stripe.webhooks.constructEvent(request.body, header, endpoint.secret) as unknown as Record<
      string,
      unknown
    >;
    expect(event).toEqual({
      id: published.eventId,
      type: "booking.created",
      api_version: "2026-07-01",
      occurred_at: "2026-11-22T10:00:00.000Z",
      tenant: "acme",
      livemode: true,
      data: { object: { booking_id: "bk_1", starts_at: "2026-12-01T09:00:00Z", status: "confirmed" } },
    });
    expect(verifyWebhook({ payload: request.body, header, secrets: endpoint.secret }).id).toBe(published.eventId);
    // The Standard Webhooks headers beside it, with the same t, verified by the spec's own package.
    expect(request.headers["webhook-id"]).toBe(published.eventId);
    expect(`t=${String(request.headers["webhook-timestamp"])}`).toBe(header.split(",")[0]);
    const standard = request.headers as Record<string, string>;
    expect(new Webhook(endpoint.secret).verify(request.body.toString(), standard)).toMatchObject({
      id: published.eventId,
    });

    // The stripe SDK refuses a tampered body, a wrong secret and a signature older than 5 minutes.
    const tampered = Buffer.from(request.body.toString("utf8").replace('"bk_1"', '"bk_2"'));
    expect(() => stripe.webhooks.constructEvent(tampered, header, endpoint.secret)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    expect(() => stripe.webhooks.constructEvent(request.body, header, generateSigningSecret())).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    const stale = signDelivery(
      { current: endpoint.secret, previous: null },
      request.body,
      new Date(Date.now() - 6 * 60_000),
    );
    expect(() => stripe.webhooks.constructEvent(request.body, stale, endpoint.secret)).toThrow(/timestamp/i);

    const [delivery] = await eventually("the delivery recorded as succeeded", async () => {
      const rows = await deliveriesOf(endpoint.id);
      return rows[0]?.status === "succeeded" ? rows : undefined;
    });
    expect(delivery).toMatchObject({
      event_id: published.eventId,
      attempts: 1,
      attempts_total: 1,
      last_status_code: 200,
    });
    // The stored payload is exactly the bytes that were sent and signed.
    expect(delivery!.payload).toBe(request.body.toString("utf8"));
    const attempts = await attemptsOf(delivery!.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ number: 1, succeeded: true, status_code: 200, error: null });
    expect(attempts[0]!.response_body?.toString()).toBe("ok");

    // Nothing went to the other tenant or the endpoint with another filter.
    expect(other.requests).toHaveLength(0);
    expect(await service.db("deliveries").where({ event_id: published.eventId }).count<{ count: string }[]>()).toEqual([
      { count: "1" },
    ]);
  });

  it("retries every failure on the schedule, dead-letters after exactly 8 attempts and pauses the endpoint", async () => {
    const failing = await receiver(() => ({ status: 500, body: "boom" }));
    const endpoint = await service.seedEndpoint({ tenantId: "dl", url: failing.url, eventTypes: ["booking.created"] });
    const published = await service.publish({
      tenantId: "dl",
      type: "booking.created",
      dataJson: '{"booking_id":"bk_dl"}',
    });

    const [delivery] = await eventually(
      "the dead-letter",
      async () => {
        const rows = await deliveriesOf(endpoint.id);
        return rows[0]?.status === "dead_lettered" ? rows : undefined;
      },
      90_000,
    );
    expect(delivery).toMatchObject({
      attempts: 8,
      attempts_total: 8,
      last_status_code: 500,
      last_error: "non_2xx_status",
    });
    const endpointRow = await service.db("endpoints").where({ id: endpoint.id }).first<{
      paused: boolean;
      attention_reason: string | null;
      version: string;
    }>("paused", "attention_reason", "version");
    expect(endpointRow).toEqual({ paused: true, attention_reason: "webhook.endpoint_dead_lettered", version: "2" });

    const attempts = await attemptsOf(delivery!.id);
    expect(attempts.map((a) => [a.number, a.succeeded, a.status_code])).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, false, 500]),
    );
    expect(attempts[0]!.response_body?.toString()).toBe("boom");

    // Every attempt carried the same event and body, each with a fresh t, at least a second apart.
    await eventually("the receiver saw 8 requests", () => failing.requests.length >= 8);
    const ts = failing.requests.map((r) => Number(/^t=(\d+)/.exec(String(r.headers["service-signature"]))![1]));
    for (let i = 1; i < ts.length; i++) expect(ts[i]!).toBeGreaterThan(ts[i - 1]!);
    expect(new Set(failing.requests.map((r) => r.body.toString())).size).toBe(1);
    expect(new Set(failing.requests.map((r) => r.headers["service-event-id"]))).toEqual(new Set([published.eventId]));

    // And no ninth attempt follows.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(failing.requests).toHaveLength(8);
    expect(await attemptsOf(delivery!.id)).toHaveLength(8);

    // While the endpoint is paused, new events are held, not sent.
    await service.publish({ tenantId: "dl", type: "booking.created", dataJson: '{"booking_id":"bk_dl2"}' });
    await eventually("a held delivery", async () => (await deliveriesOf(endpoint.id))[1]?.status === "held");
  }, 120_000);

  it("holds deliveries while the endpoint is paused and sends them when it is resumed", async () => {
    const hooks = await receiver();
    const endpoint = await service.seedEndpoint({
      tenantId: "held",
      url: hooks.url,
      eventTypes: ["conversation.started"],
      paused: true,
    });
    const first = await service.publish({
      tenantId: "held",
      type: "conversation.started",
      dataJson: sampleSnapshot("conversation.started", 1),
    });
    const second = await service.publish({
      tenantId: "held",
      type: "conversation.started",
      dataJson: sampleSnapshot("conversation.started", 2),
    });
    await eventually("two held deliveries", async () => {
      const rows = await deliveriesOf(endpoint.id);
      return rows.length === 2 && rows.every((row) => row.status === "held");
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(hooks.requests).toHaveLength(0);

    // What resume does (helper A's RPC): the endpoint unpaused, held deliveries due with a new
    // generation, in one transaction; then their jobs.
    const jobs = await service.db.transaction(async (trx) => {
      await trx("endpoints").where({ id: endpoint.id }).update({ paused: false, attention_reason: null });
      return trx("deliveries")
        .where({ endpoint_id: endpoint.id, status: "held" })
        .update({
          status: trx.raw("case when attempts = 0 then 'pending' else 'awaiting_retry' end"),
          next_attempt_at: trx.fn.now(),
          generation: trx.raw("generation + 1"),
        })
        .returning<{ id: string; generation: number }[]>(["id", "generation"]);
    });
    const queue = createJetStreamDeliveryQueue({
      js: service.nc.jetstream(),
      db: service.db,
      namespace: service.names.namespace,
    });
    // Jobs without an endpoint id: the queue looks it up.
    await queue.enqueue(jobs.map((job) => ({ deliveryId: job.id, generation: job.generation })));

    await eventually("both delivered", () => hooks.requests.length === 2);
    const ids = hooks.requests.map((r) => r.headers["service-event-id"]).sort();
    expect(ids).toEqual([first.eventId, second.eventId].sort());
    await eventually("both recorded as succeeded", async () =>
      (await deliveriesOf(endpoint.id)).every((row) => row.status === "succeeded" && row.generation === 2),
    );
  });

  it("signs with both secrets during the 24 hours after a rotation, and with one after", async () => {
    const rotated = await receiver();
    const expired = await receiver();
    const previousSecret = generateSigningSecret();
    const during = await service.seedEndpoint({
      tenantId: "rot",
      url: rotated.url,
      eventTypes: ["escalation.raised"],
      previous: { secret: previousSecret, expiresAt: new Date(Date.now() + 23 * 3_600_000) },
    });
    const after = await service.seedEndpoint({
      tenantId: "rot",
      url: expired.url,
      eventTypes: ["escalation.raised"],
      previous: { secret: previousSecret, expiresAt: new Date(Date.now() - 60_000) },
    });
    await service.publish({
      tenantId: "rot",
      type: "escalation.raised",
      dataJson: sampleSnapshot("escalation.raised"),
    });

    const request = await eventually("the delivery during the grace", () => rotated.requests[0]);
    const header = String(request.headers["service-signature"]);
    expect(v1Entries(header)).toHaveLength(2);
    for (const secret of [during.secret, previousSecret]) {
      expect(stripe.webhooks.constructEvent(request.body, header, secret)).toMatchObject({ type: "escalation.raised" });
      expect(verifyWebhook({ payload: request.body, header, secrets: [secret] }).type).toBe("escalation.raised");
      expect(
        new Webhook(secret).verify(request.body.toString(), request.headers as Record<string, string>),
      ).toMatchObject({ type: "escalation.raised" });
    }

    const late = await eventually("the delivery after the grace", () => expired.requests[0]);
    const lateHeader = String(late.headers["service-signature"]);
    expect(v1Entries(lateHeader)).toHaveLength(1);
    expect(stripe.webhooks.constructEvent(late.body, lateHeader, after.secret)).toMatchObject({ tenant: "rot" });
    expect(() => stripe.webhooks.constructEvent(late.body, lateHeader, previousSecret)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
    expect(String(late.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(() =>
      new Webhook(previousSecret).verify(late.body.toString(), late.headers as Record<string, string>),
    ).toThrow(WebhookVerificationError);
  });

  it("never creates a second delivery for an event that arrives again", async () => {
    const hooks = await receiver();
    const endpoint = await service.seedEndpoint({
      tenantId: "again",
      url: hooks.url,
      eventTypes: ["booking.cancelled"],
    });
    const first = await service.publish({
      tenantId: "again",
      type: "booking.cancelled",
      eventId: "booking-77:cancelled",
      dataJson: '{"booking_id":"bk_77"}',
    });
    expect(first).toEqual({ eventId: "booking-77:cancelled", duplicate: false });
    await eventually("the first delivery", () => hooks.requests.length === 1);
    await eventually("it is recorded", async () => (await deliveriesOf(endpoint.id))[0]?.status === "succeeded");

    // The same event id through EventService again: a duplicate, nothing new.
    const again = await service.publish({
      tenantId: "again",
      type: "booking.cancelled",
      eventId: "booking-77:cancelled",
      dataJson: '{"booking_id":"bk_77"}',
    });
    expect(again).toEqual({ eventId: "booking-77:cancelled", duplicate: true });

    // The same BusEvent on the stream twice more, with message ids the duplicate window does not
    // know: the fan-out sees it again and must not add a delivery.
    const js = service.nc.jetstream();
    const bus = BusEvent.encode({
      id: "booking-77:cancelled",
      type: "booking.cancelled",
      tenantId: "again",
      occurredAt: new Date().toISOString(),
      dataJson: '{"booking_id":"bk_77"}',
    }).finish();
    const subject = eventSubject(service.names.namespace, "again", "booking.cancelled");
    await js.publish(subject, bus, { msgID: "redelivery-1" });
    await js.publish(subject, bus, { msgID: "redelivery-2" });
    // A marker event published after them: once it is delivered, the copies have been consumed.
    const marker = await service.publish({
      tenantId: "again",
      type: "booking.cancelled",
      dataJson: '{"booking_id":"m"}',
    });
    await eventually("the marker delivered", () =>
      hooks.requests.some((r) => r.headers["service-event-id"] === marker.eventId),
    );
    await eventually("the fan-out consumer has nothing pending", async () => {
      const info = await (await service.nc.jetstreamManager()).consumers.info(service.names.events, "webhooks-fanout");
      return info.num_pending === 0 && info.num_ack_pending === 0;
    });
    const rows = await deliveriesOf(endpoint.id);
    expect(rows.filter((row) => row.event_id === "booking-77:cancelled")).toHaveLength(1);
    expect(hooks.requests.filter((r) => r.headers["service-event-id"] === "booking-77:cancelled")).toHaveLength(1);
  });

  it("records timeouts, redirects and long answers as the receiver gave them", async () => {
    const slow = await receiver(() => ({ status: 200, body: "late", delayMs: 5_000 }));
    const redirect = await receiver(() => ({ status: 302, headers: { location: "https://127.0.0.1:1/elsewhere" } }));
    const long = await receiver(() => ({ status: 201, body: "é".repeat(3_000) }));
    const endpoints = await Promise.all(
      [slow, redirect, long].map((r) =>
        service.seedEndpoint({ tenantId: "kinds", url: r.url, eventTypes: ["escalation.*"] }),
      ),
    );
    await service.publish({
      tenantId: "kinds",
      type: "escalation.raised",
      dataJson: sampleSnapshot("escalation.raised"),
    });

    const firstAttempt = async (endpointId: string) =>
      eventually(`the first attempt to ${endpointId}`, async () => {
        const [delivery] = await deliveriesOf(endpointId);
        if (!delivery) return undefined;
        return (await attemptsOf(delivery.id))[0];
      });
    const [timedOut, redirected, answered] = await Promise.all(endpoints.map((e) => firstAttempt(e.id)));
    expect(timedOut).toMatchObject({ succeeded: false, status_code: null, error: "timeout" });
    expect(timedOut!.duration_ms).toBeGreaterThanOrEqual(2_900);
    expect(redirected).toMatchObject({ succeeded: false, status_code: 302, error: "redirect_not_followed" });
    expect(answered).toMatchObject({ succeeded: true, status_code: 201, response_body_truncated: true });
    // 4096 bytes cut back to a whole two-byte character.
    expect(answered!.response_body!.length).toBe(4_096);
    expect(answered!.response_body!.toString("utf8")).toBe("é".repeat(2_048));
    expect(redirect.requests.length).toBeGreaterThanOrEqual(1);

    // Stop the failing ones from retrying for the rest of the run.
    await service
      .db("endpoints")
      .whereIn("id", [endpoints[0]!.id, endpoints[1]!.id])
      .update({ deleted_at: service.db.fn.now() });
  }, 60_000);

  it("refuses events it cannot publish, naming the problem with a stable code", async () => {
    const refusal = (request: Parameters<WebhooksUnderTest["publish"]>[0]) =>
      service.publish(request).then(
        () => {
          throw new Error("expected a refusal");
        },
        (error: ServiceError) => ({
          code: error.code,
          errorCode: error.metadata.get("error-code")[0],
          details: error.details,
        }),
      );
    expect(await refusal({ tenantId: "acme", type: "booking.exploded" })).toMatchObject({
      code: status.INVALID_ARGUMENT,
      errorCode: "event.type_unknown",
    });
    expect(await refusal({ tenantId: "acme", type: "channel.disconnected" })).toMatchObject({
      errorCode: "event.type_unknown",
    });
    expect(await refusal({ tenantId: "acme", type: "usage.threshold_crossed" })).toMatchObject({
      code: status.INVALID_ARGUMENT,
      errorCode: "event.type_not_publishable",
    });
    expect(await refusal({ tenantId: "acme", type: "capability.suspended" })).toMatchObject({
      errorCode: "event.type_not_publishable",
      details: expect.stringContaining("capability report") as unknown,
    });
    expect(await refusal({ tenantId: "acme", type: "tenant.activated" })).toMatchObject({
      errorCode: "event.type_not_publishable",
      details: expect.stringContaining("activation") as unknown,
    });
    const text = JSON.stringify({ escalation_id: "es_1", reason_code: "the customer is angry about the price" });
    expect(await refusal({ tenantId: "acme", type: "escalation.raised", dataJson: text })).toMatchObject({
      errorCode: "event.invalid",
      details: expect.stringContaining("data.object.reason_code: must be a catalogue reason code") as unknown,
    });
    const invalid = await refusal({ tenantId: "ac me", type: "booking.created", dataJson: '{"bookingId":1}' });
    expect(invalid).toMatchObject({ code: status.INVALID_ARGUMENT, errorCode: "event.invalid" });
    expect(invalid.details).toContain("tenant_id");
    expect(await refusal({ tenantId: "acme", type: "booking.created", dataJson: '{"bookingId":1}' })).toMatchObject({
      errorCode: "event.invalid",
      details: expect.stringContaining("data.object.bookingId") as unknown,
    });
    expect(await service.db("outbox").count<{ count: string }[]>()).toEqual([{ count: "0" }]);
  });

  it("serves the pipeline's metrics", async () => {
    const res = await fetch(`http://127.0.0.1:${service.process.listening.metricsPort as number}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/webhooks_delivery_attempts_total\{outcome="succeeded",service="webhooks"\} \d+/);
    expect(text).toMatch(/webhooks_dead_letters_total\{service="webhooks"\} [1-9]/);
    expect(text).toContain("webhooks_outbox_lag_seconds");
    expect(text).toMatch(/webhooks_outbox_published_total\{service="webhooks"\} [1-9]/);
    expect(text).toMatch(/webhooks_events_fanned_out_total\{service="webhooks"\} [1-9]/);
    expect(text).toContain("webhooks_delivery_attempt_duration_seconds_bucket");
  });
});

describe("a receiver whose certificate the webhooks process does not trust", () => {
  let certs: TestCertificates;
  let service: WebhooksUnderTest;
  let hooks: TestReceiver;
  beforeAll(async () => {
    certs = await createTestCertificates();
    hooks = await startReceiver(certs);
    service = await startWebhooks({ name: "whtls" }); // no NODE_EXTRA_CA_CERTS
  });
  afterAll(async () => {
    await hooks?.close();
    await service?.stop();
    await certs?.remove();
  });

  it("gets attempts recorded as tls_error and no request", async () => {
    const endpoint = await service.seedEndpoint({ tenantId: "tls", url: hooks.url, eventTypes: ["booking.created"] });
    await service.publish({ tenantId: "tls", type: "booking.created", dataJson: '{"booking_id":"b"}' });
    const attempts = await eventually("two failed attempts", async () => {
      const [delivery] = await service.db("deliveries").where({ endpoint_id: endpoint.id }).select<DeliveryRow[]>("*");
      if (!delivery) return undefined;
      const rows = await service.db("attempts").where({ delivery_id: delivery.id }).select<AttemptRow[]>("*");
      return rows.length >= 2 ? rows : undefined;
    });
    for (const attempt of attempts)
      expect(attempt).toMatchObject({ succeeded: false, status_code: null, error: "tls_error" });
    expect(hooks.requests).toHaveLength(0);
  });
});

describe("a webhooks process without WEBHOOKS_ALLOW_PRIVATE_TARGETS", () => {
  let certs: TestCertificates;
  let service: WebhooksUnderTest;
  let hooks: TestReceiver;
  beforeAll(async () => {
    certs = await createTestCertificates();
    hooks = await startReceiver(certs);
    service = await startWebhooks({
      name: "whprivate",
      caPath: certs.caPath,
      env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: "false" },
    });
  });
  afterAll(async () => {
    await hooks?.close();
    await service?.stop();
    await certs?.remove();
  });

  it("refuses to connect to a loopback receiver: the attempt fails as target_not_allowed", async () => {
    const endpoint = await service.seedEndpoint({ tenantId: "priv", url: hooks.url, eventTypes: ["booking.created"] });
    await service.publish({ tenantId: "priv", type: "booking.created", dataJson: '{"booking_id":"b"}' });
    const [attempt] = await eventually("the first attempt", async () => {
      const [delivery] = await service.db("deliveries").where({ endpoint_id: endpoint.id }).select<DeliveryRow[]>("*");
      if (!delivery) return undefined;
      const rows = await service.db("attempts").where({ delivery_id: delivery.id }).select<AttemptRow[]>("*");
      return rows.length > 0 ? rows : undefined;
    });
    expect(attempt).toMatchObject({ succeeded: false, status_code: null, error: "target_not_allowed" });
    expect(hooks.requests).toHaveLength(0);
  });
});
