import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { startOtlpReceiver, type OtlpReceiver } from "@platform/local-stack/otlp-receiver";
import { EventServiceService, WebhookServiceService } from "@platform/proto/webhooks/v1";
import { busEventOutboxEntry, newEventId } from "@platform/service-kit/event-bus";
import { createClient, type ServiceClient } from "@platform/service-kit/grpc-client";
import { headers as natsHeaders } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleSnapshot } from "./sample-snapshot.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";

/**
 * One event's trace through the real webhooks process, exporting to a local OTLP/HTTP receiver:
 * the caller's traceparent on the EventService call -> the call's server span -> (outbox row,
 * NATS header) the fan-out's consumer span -> one span per delivery attempt, each with its event,
 * delivery and endpoint ids and outcome, and never the signing secret, the URL or the payload.
 */
describe("tracing: an event through fan-out to its delivery attempts", () => {
  let otlp: OtlpReceiver;
  let certs: TestCertificates;
  let hooks: TestReceiver;
  let service: WebhooksUnderTest;
  let events: ServiceClient<typeof EventServiceService>;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    certs = await createTestCertificates();
    // The first attempt fails (503), the retry a second later succeeds: two attempt spans.
    hooks = await startReceiver(certs, (_request, index) =>
      index === 0 ? { status: 503, body: "busy" } : { status: 200, body: "ok" },
    );
    service = await startWebhooks({
      name: "whtrace",
      caPath: certs.caPath,
      // debug: the fan-out's and the relay's per-event lines are debug lines.
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, LOG_LEVEL: "debug" },
    });
    events = createClient(EventServiceService, `127.0.0.1:${service.process.listening.grpcPort as number}`, {
      timeoutMs: 5_000,
    });
  });

  afterAll(async () => {
    events?.close();
    await service?.stop();
    await hooks?.close();
    await certs?.remove();
    await otlp?.close();
  });

  it("is one trace: call -> fan-out -> every attempt, parents linked, ids and outcomes, no secret", async () => {
    const tenantId = "acme";
    const endpoint = await service.seedEndpoint({
      tenantId,
      url: hooks.url,
      eventTypes: ["booking.created"],
    });
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const callerSpanId = "b7ad6b7169203331";
    const published = await events.publishEvent(
      {
        tenantId,
        type: "booking.created",
        eventId: "",
        occurredAt: "",
        dataJson: sampleSnapshot("booking.created"),
      },
      { requestId: "req_tracing", traceparent: `00-${traceId}-${callerSpanId}-01` },
    );
    const inTrace = () => otlp.spans.filter((s) => s.traceId === traceId);
    const attempts = await eventually("two attempt spans", () => {
      const found = inTrace().filter((s) => s.name === "webhooks.delivery.attempt");
      return found.length === 2 ? found : undefined;
    });
    const call = inTrace().find((s) => s.name === "/webhooks.v1.EventService/PublishEvent")!;
    const fanout = inTrace().find((s) => s.name === "webhooks.fanout")!;
    expect(call).toMatchObject({ service: "webhooks", parentSpanId: callerSpanId, kind: 2 });
    expect(fanout).toMatchObject({
      parentSpanId: call.spanId,
      kind: 5, // CONSUMER
      attributes: {
        "webhooks.event_id": published.eventId,
        "webhooks.event_type": "booking.created",
        "webhooks.deliveries_created": 1,
      },
    });
    const [deliveryId] = (await service
      .db("deliveries")
      .where({ event_id: published.eventId })
      .pluck("id")) as string[];
    const byAttempt = attempts.sort(
      (a, b) => (a.attributes["webhooks.attempt"] as number) - (b.attributes["webhooks.attempt"] as number),
    );
    const common = {
      "webhooks.event_id": published.eventId,
      "webhooks.delivery_id": deliveryId,
      "webhooks.endpoint_id": endpoint.id,
    };
    expect(byAttempt.map((s) => ({ parent: s.parentSpanId, kind: s.kind, attributes: s.attributes }))).toEqual([
      {
        parent: fanout.spanId,
        kind: 3,
        attributes: {
          ...common,
          "webhooks.attempt": 1,
          "webhooks.outcome": "non_2xx_status",
          "http.response.status_code": 503,
        },
      },
      {
        parent: fanout.spanId,
        kind: 3,
        attributes: {
          ...common,
          "webhooks.attempt": 2,
          "webhooks.outcome": "succeeded",
          "http.response.status_code": 200,
        },
      },
    ]);
    // Every line written about this event outside the call carries its trace id: the call's
    // (request-scoped) line, the relay publishing its outbox row, the fan-out, each attempt.
    const lines = service.process.logs;
    const aboutEvent = (msg: string) => lines.filter((l) => l.msg === msg && l.eventId === published.eventId);
    expect(aboutEvent("event published").map((l) => l.trace_id)).toEqual([traceId]);
    expect(aboutEvent("event fanned out").map((l) => l.trace_id)).toEqual([traceId]);
    expect(
      aboutEvent("delivery attempt").map((l) => ({ trace: l.trace_id, delivery: l.deliveryId, attempt: l.attempt })),
    ).toEqual([
      { trace: traceId, delivery: deliveryId, attempt: 1 },
      { trace: traceId, delivery: deliveryId, attempt: 2 },
    ]);
    const callLines = lines.filter((l) => l.requestId === "req_tracing");
    expect(callLines.length).toBeGreaterThan(0);
    expect(callLines.map((l) => l.trace_id)).toEqual(callLines.map(() => traceId));
    // Nothing exported or logged holds the signing secret or the delivered body; no span holds the
    // receiver's URL.
    const body = hooks.requests[0]!.body.toString("utf8");
    const everything = otlp.raw.join("\n");
    const logged = lines.map((l) => JSON.stringify(l)).join("\n");
    expect(everything).not.toContain(endpoint.secret);
    expect(everything).not.toContain(hooks.url);
    expect(everything).not.toContain(body.slice(0, 40));
    expect(logged).not.toContain(endpoint.secret);
    expect(logged).not.toContain(body.slice(0, 40));
  });

  it("puts a test delivery's attempt in the trace of the call that asked for it", async () => {
    const endpoint = await service.seedEndpoint({
      tenantId: "acme",
      url: hooks.url,
      eventTypes: ["booking.created"],
    });
    const webhooks = createClient(WebhookServiceService, `127.0.0.1:${service.process.listening.grpcPort as number}`, {
      timeoutMs: 5_000,
    });
    try {
      const traceId = "0af7651916cd43dd8448eb211c8031bb";
      const { delivery } = await webhooks.sendTestDelivery(
        { tenantId: "acme", endpointId: endpoint.id, eventType: "booking.created", idempotencyKey: "trace-test-1" },
        { requestId: "req_test_delivery", traceparent: `00-${traceId}-b7ad6b7169203332-01` },
      );
      const attempt = await eventually("the test delivery's attempt span", () =>
        otlp.spans.find((s) => s.traceId === traceId && s.name === "webhooks.delivery.attempt"),
      );
      const call = otlp.spans.find((s) => s.traceId === traceId && s.name.endsWith("/SendTestDelivery"))!;
      expect(attempt).toMatchObject({
        parentSpanId: call.spanId,
        attributes: { "webhooks.delivery_id": delivery!.id, "webhooks.endpoint_id": endpoint.id },
      });
      expect(
        service.process.logs.some(
          (l) => l.msg === "delivery attempt" && l.deliveryId === delivery!.id && l.trace_id === traceId,
        ),
      ).toBe(true);
    } finally {
      webhooks.close();
    }
  });

  it("starts a new trace instead of continuing an unsafe traceparent, on the gRPC call and on the NATS header", async () => {
    const tenantId = "acme";
    const unsafeTraceId = "0af7651916cd43dd8448eb211c8031aa";
    const fanoutOf = (eventId: string) =>
      eventually(`the fan-out span of ${eventId}`, () =>
        otlp.spans.find((s) => s.name === "webhooks.fanout" && s.attributes["webhooks.event_id"] === eventId),
      );

    // gRPC metadata: an all-zero parent span id is refused; the call's span is a root.
    const called = await events.publishEvent(
      { tenantId, type: "booking.created", eventId: "", occurredAt: "", dataJson: sampleSnapshot("booking.created") },
      { requestId: "req_unsafe", traceparent: `00-${unsafeTraceId}-0000000000000000-01` },
    );
    const fanout = await fanoutOf(called.eventId);
    const call = otlp.spans.find((s) => s.spanId === fanout.parentSpanId)!;
    expect(call).toMatchObject({ name: "/webhooks.v1.EventService/PublishEvent", traceId: fanout.traceId });
    expect(call.parentSpanId).toBeUndefined();
    expect(call.traceId).not.toBe(unsafeTraceId);

    // NATS header: a traceparent in upper case is refused; the fan-out's span is a root.
    const event = {
      id: newEventId(),
      type: "booking.created",
      tenantId,
      occurredAt: new Date(),
      object: JSON.parse(sampleSnapshot("booking.created")) as Record<string, unknown>,
    };
    const entry = busEventOutboxEntry(service.names.namespace, event);
    const headers = natsHeaders();
    headers.set("traceparent", `00-${unsafeTraceId.toUpperCase()}-B7AD6B7169203331-01`);
    await service.nc.jetstream().publish(entry.subject, entry.payload, { msgID: event.id, headers });
    const consumed = await fanoutOf(event.id);
    expect(consumed.parentSpanId).toBeUndefined();
    expect(consumed.traceId).not.toBe(unsafeTraceId);
    expect(otlp.spans.some((s) => s.traceId === unsafeTraceId)).toBe(false);
  });
});
