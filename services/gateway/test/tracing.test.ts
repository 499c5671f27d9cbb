import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { testNatsUrl } from "@platform/local-stack/nats-namespace";
import { startOtlpReceiver, type OtlpReceiver } from "@platform/local-stack/otlp-receiver";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestStack, type TestStack } from "./stack.js";

async function until<T>(probe: () => T | undefined, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Traces end to end with every process exporting to a local OTLP/HTTP receiver: the partner's
 * traceparent is continued (or replaced when unsafe) by the gateway, carried over gRPC to notify and
 * around the provider call, then with the send's outcome event through notify's outbox to its NATS
 * traceparent header, and to notify's projector applying it; and the log lines carry trace_id,
 * outside the call too. No exported attribute and no log line holds the phone number or the
 * message text.
 */
describe("tracing", () => {
  let otlp: OtlpReceiver;
  let stack: TestStack;
  let tenant: string;
  let key: string;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    const tracingEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url };
    stack = await startTestStack(tracingEnv, tracingEnv, tracingEnv);
    tenant = (await stack.admin("tenant", "create", "--name", "Traced")).id as string;
    await stack.admin("tenant", "activate", "--id", tenant);
    key = (await stack.admin("key", "create", "--scopes", "notification:send", "--tenants", tenant)).key as string;
  });

  afterAll(async () => {
    await stack?.stop();
    await otlp?.close();
  });

  const phone = "+447700912345";
  const send = (traceparent: string) =>
    fetch(`${stack.url}/api/v1/tenants/${tenant}/notifications`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        "idempotency-key": `trace-${Date.now()}-${Math.random()}`,
        traceparent,
      },
      body: JSON.stringify({
        to: phone,
        type: "reminder",
        clientName: "Tracey Secretname",
        businessName: "Paws and Co",
        serviceName: "grooming",
        when: "Mon 3 May 10:00",
        actor: { actorReference: "crm-user-7", delegationReference: null },
      }),
    });

  it("continues a partner's traceparent: gateway span -> notify span -> provider span, one trace id", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const partnerSpanId = "00f067aa0ba902b7";
    const res = await send(`00-${traceId}-${partnerSpanId}-01`);
    expect(res.status).toBe(200);
    const inTrace = () => otlp.spans.filter((s) => s.traceId === traceId);
    const provider = await until(() => inTrace().find((s) => s.name === "notify.provider.send"));
    const gateway = await until(() => inTrace().find((s) => s.service === "gateway"));
    const notify = inTrace().find((s) => s.service === "notify" && s.name.endsWith("/SendNotification"))!;
    expect(gateway).toMatchObject({
      name: "POST /api/v1/tenants/:tenantId/notifications",
      parentSpanId: partnerSpanId,
      kind: 2, // SERVER
      attributes: { "http.request.method": "POST", "http.response.status_code": 200 },
    });
    expect(notify).toMatchObject({
      name: "/notify.v1.NotificationService/SendNotification",
      parentSpanId: gateway.spanId,
      kind: 2,
      attributes: { "rpc.system": "grpc", "rpc.grpc.status_code": 0 },
    });
    expect(provider).toMatchObject({
      service: "notify",
      parentSpanId: notify.spanId,
      kind: 3, // CLIENT
      attributes: {
        "notify.provider.name": "sandbox",
        "notify.send.outcome": "sent",
        "notify.notification.type": "reminder",
      },
    });
    expect(provider.attributes["notify.notification.id"]).toMatch(/^ntf_/);

    // The outcome's event (notification.sent) went through notify's outbox to the stream with the
    // send's trace context as its NATS traceparent header.
    const config = stack.notify.logs.find((l) => l.msg === "configuration")!.config as Record<string, string>;
    const nc = await connect({ servers: testNatsUrl() });
    try {
      const jsm = await nc.jetstreamManager();
      const subject = `${config.NATS_NAMESPACE}events.${tenant}.notification.sent`;
      let message;
      for (let tries = 0; !message; tries++) {
        message = await jsm.streams
          .getMessage(`${config.NATS_NAMESPACE}EVENTS`, { last_by_subj: subject })
          .catch((error: unknown) => {
            if (tries > 100) throw error;
            return new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50));
          });
      }
      expect(message.header.get("traceparent")).toBe(`00-${traceId}-${notify.spanId}-01`);
    } finally {
      await nc.close();
    }

    // notify's projector applies that event in a consumer span, the child of the send's span.
    const projected = await until(() =>
      inTrace().find((s) => s.name === "notify.projection.apply" && s.parentSpanId === notify.spanId),
    );
    expect(projected).toMatchObject({
      service: "notify",
      kind: 5, // CONSUMER
      attributes: { "notify.projection.event_type": "notification.sent", "notify.projection.applied": true },
    });
    const eventId = projected.attributes["notify.projection.event_id"] as string;
    expect(eventId).toMatch(/^evt_/);

    // The log lines carry the trace id: the gateway's request line, notify's call lines, and the
    // lines outside the call (the relay publishing the outcome event, the projector applying it).
    await until(() => stack.gateway.logs.find((l) => l.trace_id === traceId && l.msg === "request"));
    expect(stack.notify.logs.some((l) => l.trace_id === traceId && l.msg === "notification dispatched")).toBe(true);
    const aboutEvent = (msg: string) =>
      stack.notify.logs.filter((l) => l.msg === msg && l.eventId === eventId).map((l) => l.trace_id);
    expect(aboutEvent("event published")).toEqual([traceId]);
    expect(
      await until(() => (aboutEvent("event projected").length > 0 ? aboutEvent("event projected") : undefined)),
    ).toEqual([traceId]);

    // Nothing exported or logged by any process holds the phone number, the customer's name, the
    // message text or the API key.
    const logged = [stack.gateway, stack.notify, stack.webhooks, stack.catalog]
      .flatMap((p) => p.logs.map((l) => JSON.stringify(l)))
      .join("\n");
    for (const [what, text] of [
      ["exported spans", otlp.raw.join("\n")],
      ["log lines", logged],
    ] as const) {
      expect(text, what).not.toContain(phone);
      expect(text, what).not.toContain(phone.slice(1));
      expect(text, what).not.toContain("Secretname");
      expect(text, what).not.toContain("grooming");
      expect(text, what).not.toContain(key);
    }
  });

  it("traces an `event emit` from the admin CLI: its span -> EventService call -> fan-out and notify's projector", async () => {
    const cli = join(import.meta.dirname, "..", "dist", "src", "cli", "admin.js");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [cli, "event", "emit", "--tenant", tenant, "--type", "booking.created", "--data", '{"booking_id":"bk_1"}'],
      {
        env: {
          PATH: process.env.PATH ?? "",
          DATABASE_URL: stack.scratch.url,
          NOTIFY_ADDR: `127.0.0.1:${stack.notify.listening.grpcPort as number}`,
          WEBHOOKS_ADDR: `127.0.0.1:${stack.webhooks.listening.grpcPort as number}`,
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        },
      },
    );
    const emitted = JSON.parse(stdout) as { id: string; traceId: string };
    expect(emitted.traceId).toMatch(/^[0-9a-f]{32}$/);
    const inTrace = () => otlp.spans.filter((s) => s.traceId === emitted.traceId);
    const fanout = await until(() => inTrace().find((s) => s.name === "webhooks.fanout"));
    const projected = await until(() => inTrace().find((s) => s.name === "notify.projection.apply"));
    const admin = inTrace().find((s) => s.name === "admin event emit")!;
    const call = inTrace().find((s) => s.name === "/webhooks.v1.EventService/PublishEvent")!;
    expect(admin).toMatchObject({ service: "admin", kind: 3 });
    expect(admin.parentSpanId).toBeUndefined();
    expect(call).toMatchObject({ service: "webhooks", parentSpanId: admin.spanId });
    expect(fanout).toMatchObject({ parentSpanId: call.spanId, attributes: { "webhooks.event_id": emitted.id } });
    expect(projected).toMatchObject({
      service: "notify",
      parentSpanId: call.spanId,
      attributes: { "notify.projection.event_id": emitted.id, "notify.projection.event_type": "booking.created" },
    });
  });

  it("carries the trace of a limits change to the usage.threshold_crossed event it announces", async () => {
    const manager = (await stack.admin("key", "create", "--scopes", "usage:manage", "--tenants", tenant)).key as string;
    await stack.admin("usage", "record", "--tenant", tenant, "--tokens", "500");
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4739";
    const res = await fetch(`${stack.url}/api/v1/tenants/${tenant}/usage/limits`, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${manager}`,
        "content-type": "application/json",
        "idempotency-key": `limits-${Date.now()}`,
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({ softCap: 100, hardCap: 1000 }),
    });
    expect(res.status).toBe(200);
    const inTrace = () => otlp.spans.filter((s) => s.traceId === traceId);
    const projected = await until(() =>
      inTrace().find(
        (s) =>
          s.name === "notify.projection.apply" &&
          s.attributes["notify.projection.event_type"] === "usage.threshold_crossed",
      ),
    );
    const call = inTrace().find((s) => s.name === "/notify.v1.TenantService/SetUsageLimits")!;
    expect(projected.parentSpanId).toBe(call.spanId);
  });

  it.each([
    ["all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"],
    ["all-zero span id", "00-4bf92f3577b34da6a3ce929d0e0e4737-0000000000000000-01"],
    ["bad syntax", "00-4BF92F3577B34DA6A3CE929D0E0E4737-00f067aa0ba902b7-01"],
    ["version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4738-00f067aa0ba902b7-01"],
  ])("replaces an unsafe traceparent (%s) with a new trace started at the gateway", async (_label, header) => {
    const before = otlp.spans.length;
    const res = await send(header);
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id")!;
    const line = await until(() => stack.gateway.logs.find((l) => l.requestId === requestId && l.msg === "request"));
    const traceId = line.trace_id as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(header).not.toContain(traceId);
    const gateway = await until(() =>
      otlp.spans.slice(before).find((s) => s.traceId === traceId && s.service === "gateway"),
    );
    expect(gateway.parentSpanId).toBeUndefined();
    await until(() => otlp.spans.find((s) => s.traceId === traceId && s.name === "notify.provider.send"));
    // notify's lines for the call carry the new trace id, never anything of the refused header.
    const notifyLines = stack.notify.logs.filter((l) => l.requestId === requestId);
    expect(notifyLines.length).toBeGreaterThan(0);
    expect(notifyLines.map((l) => l.trace_id)).toEqual(notifyLines.map(() => traceId));
  });
});
