/**
 * The webhooks metrics after known traffic (issue 9, item 5), scraped from /metrics of the built
 * service (real Postgres and NATS): attempts by outcome, delivery latency, retries scheduled,
 * SSRF refusals by address class and path (attempt and creation), the backlog gauges per endpoint
 * class, and the ids on every attempt's log line.
 */
import { WebhookServiceService } from "@platform/proto/webhooks/v1";
import { createClient, GrpcCallError } from "@platform/service-kit/grpc-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { newDeliveryId, newEventId } from "../src/domain/ids.js";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";

/** Every sample of the Prometheus text format: `name{labels} value`, keyed by name and sorted labels. */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels = (match[2] ?? "")
      .split(/,(?=[a-zA-Z_]+=")/)
      .filter((l) => l !== "" && !l.startsWith("service="))
      .sort()
      .join(",");
    samples.set(labels ? `${match[1]}{${labels}}` : match[1]!, Number(match[3]));
  }
  return samples;
}

describe("webhooks metrics (webhooks process, real Postgres and NATS)", () => {
  let certs: TestCertificates;
  let service: WebhooksUnderTest;
  let ok: TestReceiver;
  let failing: TestReceiver;

  beforeAll(async () => {
    certs = await createTestCertificates();
    ok = await startReceiver(certs);
    failing = await startReceiver(certs, () => ({ status: 500, body: "boom" }));
    service = await startWebhooks({
      name: "whmetrics",
      caPath: certs.caPath,
      env: {
        WEBHOOKS_DELIVERY_TIMEOUT: "2s",
        // Two attempts a second apart, then a wait that outlasts the test.
        WEBHOOKS_RETRY_DELAYS: "1s,1h,1h,1h,1h,1h,1h",
        WEBHOOKS_BACKLOG_INTERVAL: "300ms",
        // The seeded overdue delivery must stay overdue (no sweep re-enqueues it).
        WEBHOOKS_SWEEP_INTERVAL: "1h",
      },
    });
  });
  afterAll(async () => {
    await ok?.close();
    await failing?.close();
    await service?.stop();
    await certs?.remove();
  });

  const scrape = async () =>
    parseMetrics(
      await fetch(`http://127.0.0.1:${service.process.listening.metricsPort as number}/metrics`).then((r) => r.text()),
    );

  it("counts attempts, latency, retries, refusals and the backlog per endpoint class after known traffic", async () => {
    const healthy = await service.seedEndpoint({ tenantId: "m", url: ok.url, eventTypes: ["booking.created"] });
    const broken = await service.seedEndpoint({ tenantId: "m", url: failing.url, eventTypes: ["booking.cancelled"] });
    // WEBHOOKS_ALLOW_PRIVATE_TARGETS=true in tests: a name that does not resolve is still refused.
    const nowhere = await service.seedEndpoint({
      tenantId: "m",
      url: "https://nowhere.invalid/hooks",
      eventTypes: ["escalation.raised"],
    });
    const parked = await service.seedEndpoint({
      tenantId: "m",
      url: ok.url,
      eventTypes: ["conversation.started"],
      paused: true,
    });

    // A delivery to the healthy endpoint due ten minutes ago whose job was lost: it waits.
    const overdueEvent = newEventId();
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
    await service.db("events").insert({
      id: overdueEvent,
      tenant_id: "m",
      type: "booking.created",
      occurred_at: tenMinutesAgo,
      data: "{}",
      livemode: true,
      received_at: tenMinutesAgo,
    });
    await service.db("deliveries").insert({
      id: newDeliveryId(tenMinutesAgo),
      tenant_id: "m",
      endpoint_id: healthy.id,
      event_id: overdueEvent,
      event_type: "booking.created",
      livemode: true,
      payload: "{}",
      status: "pending",
      next_attempt_at: tenMinutesAgo,
      generation: 1,
      created_at: tenMinutesAgo,
      updated_at: tenMinutesAgo,
    });

    const published = [];
    for (let i = 0; i < 3; i++) published.push(await service.publish({ tenantId: "m", type: "booking.created" }));
    for (let i = 0; i < 2; i++) published.push(await service.publish({ tenantId: "m", type: "booking.cancelled" }));
    published.push(await service.publish({ tenantId: "m", type: "escalation.raised" }));
    published.push(await service.publish({ tenantId: "m", type: "conversation.started" }));

    // Three successes; two deliveries failing twice (500); one refused twice; one held.
    await eventually("every attempt made", async () => {
      const rows = await service.db("attempts").count<{ count: string }[]>();
      return Number(rows[0]?.count) === 3 + 4 + 2;
    });
    // The creation path: a host that does not resolve is refused with 400 and counted.
    const client = createClient(WebhookServiceService, `127.0.0.1:${service.process.listening.grpcPort as number}`, {
      timeoutMs: 10_000,
    });
    try {
      const refused = await client
        .createEndpoint(
          {
            tenantId: "m",
            url: "https://also-nowhere.invalid/hooks",
            description: "x",
            eventTypes: ["booking.created"],
            idempotencyKey: "create-refused",
          },
          { requestId: "req-1" },
        )
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(GrpcCallError);
      expect((refused as GrpcCallError).metadata.get("error-code")[0]).toBe("webhook.target_not_allowed");
    } finally {
      client.close();
    }

    const metrics = await eventually("the backlog measured after the attempts", async () => {
      const m = await scrape();
      // A measurement after the last attempt: nothing failing is due any more (the next retry is an hour away).
      return m.get('webhooks_deliveries_pending{endpoint_class="failing"}') === 3 &&
        m.get('webhooks_deliveries_oldest_pending_age_seconds{endpoint_class="failing"}') === 0
        ? m
        : undefined;
    });
    const expected: Record<string, number> = {
      'webhooks_delivery_attempts_total{outcome="succeeded"}': 3,
      'webhooks_delivery_attempts_total{outcome="non_2xx_status"}': 4,
      'webhooks_delivery_attempts_total{outcome="target_not_allowed"}': 2,
      // Both failures of each of the three failing deliveries schedule a retry (the second an hour away).
      webhooks_retries_scheduled_total: 6,
      webhooks_delivery_latency_seconds_count: 3,
      'webhooks_target_refusals_total{address_class="unresolvable",path="attempt"}': 2,
      'webhooks_target_refusals_total{address_class="unresolvable",path="create"}': 1,
      webhooks_dead_letters_total: 0,
      webhooks_events_fanned_out_total: 7,
      'webhooks_deliveries_pending{endpoint_class="healthy"}': 1,
      'webhooks_deliveries_pending{endpoint_class="failing"}': 3,
      'webhooks_deliveries_pending{endpoint_class="paused"}': 1,
      'webhooks_endpoints_with_pending{endpoint_class="healthy"}': 1,
      'webhooks_endpoints_with_pending{endpoint_class="failing"}': 2,
      'webhooks_endpoints_with_pending{endpoint_class="paused"}': 1,
    };
    for (const [name, value] of Object.entries(expected)) expect([name, metrics.get(name)]).toEqual([name, value]);
    // The overdue delivery has waited about ten minutes; failing ones wait for a retry an hour away.
    const healthyAge = metrics.get('webhooks_deliveries_oldest_pending_age_seconds{endpoint_class="healthy"}')!;
    expect(healthyAge).toBeGreaterThan(590);
    expect(healthyAge).toBeLessThan(900);
    expect(metrics.get('webhooks_deliveries_oldest_pending_age_seconds{endpoint_class="failing"}')).toBe(0);
    const pausedAge = metrics.get('webhooks_deliveries_oldest_pending_age_seconds{endpoint_class="paused"}')!;
    expect(pausedAge).toBeGreaterThanOrEqual(0);
    expect(pausedAge).toBeLessThan(120);
    // Latency: all three within the histogram's 10 s bucket, none before 0.
    expect(metrics.get('webhooks_delivery_latency_seconds_bucket{le="10"}')).toBe(3);
    expect(metrics.get("webhooks_delivery_latency_seconds_sum")).toBeGreaterThan(0);
    expect(metrics.get("webhooks_outbox_lag_seconds")).toBeDefined();

    // Every attempt's log line carries the event, delivery and endpoint ids.
    const attemptLines = service.process.logs.filter((l) => l.msg === "delivery attempt");
    expect(attemptLines).toHaveLength(9);
    for (const line of attemptLines) {
      expect(line).toMatchObject({
        eventId: expect.stringMatching(/^evt_/) as string,
        deliveryId: expect.stringMatching(/^dlv_/) as string,
        endpointId: expect.stringMatching(/^ep_/) as string,
      });
    }
    const ids = new Set(attemptLines.map((l) => l.endpointId));
    expect(ids).toEqual(new Set([healthy.id, broken.id, nowhere.id]));
    expect(ids.has(parked.id)).toBe(false);
    const refusalLine = service.process.logs.find((l) => l.refusal === "unresolvable");
    expect(refusalLine).toMatchObject({
      eventId: expect.stringMatching(/^evt_/) as string,
      deliveryId: expect.stringMatching(/^dlv_/) as string,
      endpointId: nowhere.id,
    });
    expect(published.every((p) => p.duplicate === false)).toBe(true);
  }, 120_000);
});
