/**
 * The stages of a delivery attempt without NATS or Postgres: a job message that records its
 * answers, a store, a resolver and a sender that record their calls, metrics in a registry of
 * their own, log lines captured.
 */
import { randomBytes } from "node:crypto";
import { createLogger } from "@platform/service-kit/logger";
import { noTracing, SpanStatusCode, type Span } from "@platform/service-kit/tracing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { AttemptStore, ClaimedDelivery, ClaimResult, RecordedAttempt } from "../db/attempt-store.js";
import type { AttemptOutcome } from "../domain/attempt-outcome.js";
import { generateSigningSecret, parseSecretsKey, sealSecret } from "../domain/secret-box.js";
import { rotationGraceMs, signatureHeaderName, signDelivery } from "../domain/signature.js";
import {
  answerJob,
  attemptJob,
  claimJob,
  classify,
  endpointSecretsOf,
  openSecrets,
  recordAttempt,
  reportAttempt,
  sendDelivery,
  signedHeaders,
  userAgent,
  type AttemptDeps,
  type ClaimedAttempt,
  type JobMessage,
} from "./attempt-stages.js";
import type { DeliveryRequest, DeliveryResponse } from "./https-sender.js";
import { createPipelineMetrics } from "./pipeline-metrics.js";
import { TargetNotAllowedError } from "./target-resolver.js";

const ring = parseSecretsKey(randomBytes(32).toString("base64"));
/** A ring without the key the secret was sealed with (a SECRETS_KEY entry missing). */
const otherRing = parseSecretsKey(`k9:${randomBytes(32).toString("base64")}`);
const endpointId = "ep_0123456789abcdef01234567";
const secret = generateSigningSecret();
const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

type Answer = ["ack"] | ["nak", number | undefined] | ["term"];

/** A job message that records how it was answered and how often it was kept alive. */
function jobMessage(data: unknown = { deliveryId: "dlv_1", generation: 3 }) {
  const answers: Answer[] = [];
  const seen = { heartbeats: 0 };
  const msg: JobMessage = {
    data: Buffer.from(typeof data === "string" ? data : JSON.stringify(data)),
    subject: `webhooks.deliveries.${endpointId}`,
    seq: 42,
    ack: () => answers.push(["ack"]),
    nak: (delay?: number) => answers.push(["nak", delay]),
    term: () => answers.push(["term"]),
    working: () => (seen.heartbeats += 1),
  };
  return { msg, answers, seen };
}

function claimedDelivery(fields: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    id: "dlv_1",
    eventId: "evt_1",
    endpointId,
    payload: '{"id":"evt_1","type":"booking.created"}',
    generation: 3,
    traceparent: null,
    dueInMs: -5,
    url: "https://hooks.example.com/in",
    paused: false,
    deleted: false,
    secretSealed: sealSecret(ring, secret, endpointId),
    previousSecretSealed: null,
    previousSecretExpiresAt: null,
    now: new Date("2026-03-01T12:00:00Z"),
    ...fields,
  };
}

const createdAt = new Date(Date.now() - 1_500);

/** A store that records its calls and answers what it is told to. */
function fakeStore(claim: ClaimResult, recorded: Partial<RecordedAttempt> | Promise<RecordedAttempt> = {}) {
  const calls: unknown[][] = [];
  const store: AttemptStore = {
    claim(job, leaseMs) {
      calls.push(["claim", job, leaseMs]);
      return Promise.resolve(claim);
    },
    release(id) {
      calls.push(["release", id]);
      return Promise.resolve();
    },
    holdClaimed(id) {
      calls.push(["holdClaimed", id]);
      return Promise.resolve();
    },
    abandonClaimed(id) {
      calls.push(["abandonClaimed", id]);
      return Promise.resolve();
    },
    recordAttempt(id, attempt, delaysMs) {
      calls.push(["recordAttempt", id, attempt, delaysMs]);
      if (recorded instanceof Promise) return recorded;
      return Promise.resolve({
        number: 1,
        status: "succeeded",
        nextAttemptAt: null,
        deadLettered: false,
        createdAt,
        ...recorded,
      });
    },
  };
  return { store, calls };
}

/** Log lines as objects, at debug level. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("webhooks", "debug", {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { logger, lines };
}

function answered(status: number, durationMs = 30): DeliveryResponse {
  return { result: { kind: "response", status }, responseBody: Buffer.from("ok"), truncated: false, durationMs };
}

/** Every dependency of the stages, each a fake that records what it was asked. */
function deps(claim: ClaimResult, options: { recorded?: Partial<RecordedAttempt> | Promise<RecordedAttempt> } = {}) {
  const { store, calls } = fakeStore(claim, options.recorded);
  const { logger, lines } = capturedLogger();
  const registry = new Registry();
  const requests: DeliveryRequest[] = [];
  let respond: (request: DeliveryRequest) => Promise<DeliveryResponse> = () => Promise.resolve(answered(200));
  const all: AttemptDeps = {
    store,
    keyRing: ring,
    targets: { resolve: () => Promise.resolve({ address: "93.184.216.34", family: 4 }) },
    sender: {
      send(request) {
        requests.push(request);
        calls.push(["send"]);
        return respond(request);
      },
    },
    metrics: createPipelineMetrics(registry),
    logger,
    tracer: noTracing.tracer,
    retryDelaysMs: [1_000, 2_000],
    timeoutMs: 2_000,
    leaseMs: 60_000,
    heartbeatEveryMs: 5_000,
  };
  return {
    deps: all,
    calls,
    lines,
    requests,
    registry,
    respondWith: (fn: (request: DeliveryRequest) => Promise<DeliveryResponse>) => {
      respond = fn;
    },
  };
}

const claimed = (delivery = claimedDelivery()) => ({ kind: "claimed", delivery }) as const;

function attemptOf(delivery: ClaimedDelivery, logger = capturedLogger().logger): ClaimedAttempt {
  return {
    delivery,
    ids: { eventId: delivery.eventId, deliveryId: delivery.id, endpointId: delivery.endpointId },
    log: logger,
  };
}

/** A counter's values by their labels (JSON). */
async function counted(registry: Registry, name: string): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric(name)!.get();
  return Object.fromEntries(metric.values.map((value) => [JSON.stringify(value.labels), value.value]));
}

/** A histogram's count and sum. */
async function observed(registry: Registry, name: string): Promise<{ count: number; sum: number }> {
  const metric = await registry.getSingleMetric(name)!.get();
  const valueOf = (suffix: string) =>
    metric.values.find((value) => (value as { metricName?: string }).metricName === `${name}${suffix}`)?.value ?? 0;
  return { count: valueOf("_count"), sum: valueOf("_sum") };
}

describe("claim", () => {
  it("terminates a message that is not a job, without a claim", async () => {
    const { deps: d, calls, lines } = deps(claimed());
    const { msg, answers } = jobMessage("not json");
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(answers).toEqual([["term"]]);
    expect(calls).toEqual([]);
    expect(lines).toMatchObject([
      { level: "error", subject: msg.subject, seq: 42, msg: "a message on the delivery stream is not a job; dropped" },
    ]);
  });

  it("claims the job's delivery and generation for the lease, and hands on the delivery with its ids", async () => {
    const delivery = claimedDelivery();
    const { deps: d, calls } = deps(claimed(delivery));
    const { msg, answers } = jobMessage();
    const attempt = await claimJob(msg, d);
    expect(calls).toEqual([["claim", { deliveryId: "dlv_1", generation: 3 }, 60_000]]);
    expect(answers).toEqual([]);
    expect(attempt?.delivery).toBe(delivery);
    expect(attempt?.ids).toEqual({ eventId: "evt_1", deliveryId: "dlv_1", endpointId });
  });

  it.each([
    ["stale", { kind: "stale" } as const, [["ack"]]],
    ["leased by another worker", { kind: "leased" } as const, [["nak", 5_000]]],
  ])("answers a %s job at once", async (_, claim, expected) => {
    const { deps: d } = deps(claim);
    const { msg, answers } = jobMessage();
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(answers).toEqual(expected);
  });

  it("dead-letters the delivery of a deleted endpoint without an attempt, then acks", async () => {
    const { deps: d, calls, lines } = deps(claimed(claimedDelivery({ deleted: true, paused: true, traceparent })));
    const { msg, answers } = jobMessage();
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(calls.slice(1)).toEqual([["abandonClaimed", "dlv_1"]]);
    expect(answers).toEqual([["ack"]]);
    expect(lines).toMatchObject([
      {
        level: "info",
        trace_id: "0af7651916cd43dd8448eb211c80319c",
        eventId: "evt_1",
        deliveryId: "dlv_1",
        endpointId,
        msg: "the endpoint was deleted; the delivery is dead-lettered without an attempt",
      },
    ]);
  });

  it("holds the delivery of a paused endpoint, then acks", async () => {
    const { deps: d, calls, lines } = deps(claimed(claimedDelivery({ paused: true })));
    const { msg, answers } = jobMessage();
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(calls.slice(1)).toEqual([["holdClaimed", "dlv_1"]]);
    expect(answers).toEqual([["ack"]]);
    expect(lines).toMatchObject([{ level: "debug", msg: "the endpoint is paused; the delivery is held" }]);
  });

  it("gives back a delivery not due yet and naks its job until it is due (whole milliseconds, rounded up)", async () => {
    const { deps: d, calls } = deps(claimed(claimedDelivery({ dueInMs: 1234.2 })));
    const { msg, answers } = jobMessage();
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(calls.slice(1)).toEqual([["release", "dlv_1"]]);
    expect(answers).toEqual([["nak", 1235]]);
  });
});

describe("sign", () => {
  const previous = generateSigningSecret();
  const rotated = (expiresAt: Date) =>
    claimedDelivery({
      previousSecretSealed: sealSecret(ring, previous, endpointId),
      previousSecretExpiresAt: expiresAt,
    });

  it("opens the current secret only, when there was no rotation", () => {
    expect(endpointSecretsOf(claimedDelivery(), ring)).toEqual({ current: secret, previous: null });
  });

  it("opens the previous secret too while its grace lasts (by the database's clock), rotated 24 h before it ends", () => {
    const expiresAt = new Date("2026-03-01T12:00:01Z");
    expect(endpointSecretsOf(rotated(expiresAt), ring)).toEqual({
      current: secret,
      previous: { secret: previous, rotatedAt: new Date(expiresAt.getTime() - rotationGraceMs) },
    });
    expect(endpointSecretsOf(rotated(new Date("2026-03-01T12:00:00Z")), ring).previous).toBeNull();
  });

  it("gives back the claim of a delivery whose secret cannot be opened and naks its job for 30 s; the log names only the error", async () => {
    const delivery = claimedDelivery({ secretSealed: sealSecret(otherRing, secret, endpointId) });
    const { deps: d, calls } = deps(claimed(delivery));
    const { logger, lines } = capturedLogger();
    const { msg, answers } = jobMessage();
    expect(await openSecrets(msg, attemptOf(delivery, logger), d)).toBeUndefined();
    expect(calls).toEqual([["release", "dlv_1"]]);
    expect(answers).toEqual([["nak", 30_000]]);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "error",
        deliveryId: "dlv_1",
        error: "SecretKeyUnknownError",
        msg: "the endpoint's signing secret cannot be opened",
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it("signs the body at the given moment, with the delivery's ids beside the signature", () => {
    const delivery = claimedDelivery();
    const body = Buffer.from(delivery.payload);
    const now = new Date("2026-03-01T12:00:00.750Z");
    const secrets = { current: secret, previous: null };
    expect(signedHeaders(delivery, secrets, body, now)).toEqual({
      "content-type": "application/json",
      "user-agent": userAgent,
      [signatureHeaderName]: signDelivery(secrets, body, now),
      "service-event-id": "evt_1",
      "service-delivery-id": "dlv_1",
    });
  });
});

describe("send", () => {
  const secrets = { current: secret, previous: null };

  it("POSTs the payload, signed, to the address the resolver approved, within what is left of the deadline", async () => {
    const delivery = claimedDelivery();
    const { deps: d, requests } = deps(claimed(delivery));
    const { msg } = jobMessage();
    const before = Math.floor(Date.now() / 1000);
    const response = await sendDelivery(msg, attemptOf(delivery), secrets, d);
    expect(response.result).toEqual({ kind: "response", status: 200 });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request!.url.href).toBe("https://hooks.example.com/in");
    expect(request!.target).toEqual({ address: "93.184.216.34", family: 4 });
    expect(request!.body.toString()).toBe(delivery.payload);
    expect(request!.timeoutMs).toBeGreaterThan(0);
    expect(request!.timeoutMs).toBeLessThanOrEqual(2_000);
    const t = Number(/^t=(\d+),/.exec(request!.headers[signatureHeaderName]!)![1]);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(request!.headers[signatureHeaderName]).toBe(signDelivery(secrets, request!.body, new Date(t * 1000)));
    expect(request!.headers).toMatchObject({ "service-delivery-id": "dlv_1", "user-agent": userAgent });
  });

  it("fails a refused target without a connection, and says why", async () => {
    const delivery = claimedDelivery();
    const { deps: d, requests } = deps(claimed(delivery));
    d.targets = {
      resolve: () => Promise.reject(new TargetNotAllowedError("hooks.example.com", "private", "10.0.0.5")),
    };
    const { logger, lines } = capturedLogger();
    const response = await sendDelivery(jobMessage().msg, attemptOf(delivery, logger), secrets, d);
    expect(response).toMatchObject({ result: { kind: "target_not_allowed" }, truncated: false });
    expect(response.responseBody).toHaveLength(0);
    expect(requests).toEqual([]);
    expect(lines).toMatchObject([
      {
        level: "warn",
        deliveryId: "dlv_1",
        refusal: "private",
        address: "10.0.0.5",
        msg: "the endpoint's URL is not a target deliveries may reach; no connection made",
      },
    ]);
  });

  it("times out when resolving the host takes the whole deadline, without a connection", async () => {
    const delivery = claimedDelivery();
    const { deps: d, requests } = deps(claimed(delivery));
    d.targets = { resolve: () => new Promise(() => undefined) };
    d.timeoutMs = 20;
    const response = await sendDelivery(jobMessage().msg, attemptOf(delivery), secrets, d);
    expect(response.result).toEqual({ kind: "timeout" });
    expect(response.durationMs).toBeGreaterThanOrEqual(15);
    expect(requests).toEqual([]);
  });

  it("lets any other resolver failure through (the job comes back)", async () => {
    const delivery = claimedDelivery();
    const { deps: d } = deps(claimed(delivery));
    d.targets = { resolve: () => Promise.reject(new Error("resolver broke")) };
    await expect(sendDelivery(jobMessage().msg, attemptOf(delivery), secrets, d)).rejects.toThrow("resolver broke");
  });

  it("keeps the job alive while the POST runs, and stops when it ends; the duration is the stage's own", async () => {
    const delivery = claimedDelivery();
    const { deps: d, respondWith } = deps(claimed(delivery));
    d.heartbeatEveryMs = 10;
    const { msg, seen } = jobMessage();
    // The receiver answers once the job has been kept alive twice.
    respondWith(
      () =>
        new Promise((resolve) => {
          const check = setInterval(() => {
            if (seen.heartbeats < 2) return;
            clearInterval(check);
            resolve(answered(200, 1));
          }, 5);
        }),
    );
    const response = await sendDelivery(msg, attemptOf(delivery), secrets, d);
    expect(seen.heartbeats).toBeGreaterThanOrEqual(2);
    expect(response.durationMs).toBeGreaterThanOrEqual(15);
    const after = seen.heartbeats;
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(seen.heartbeats).toBe(after);
  });
});

describe("classify", () => {
  function recordingSpan() {
    const attributes: Record<string, unknown> = {};
    const statuses: unknown[] = [];
    const span = {
      setAttribute: (key: string, value: unknown) => void (attributes[key] = value),
      setStatus: (status: unknown) => void statuses.push(status),
    } as unknown as Span;
    return { span, attributes, statuses };
  }

  it("a 2xx succeeded: outcome and status code on the span, no error status", () => {
    const { span, attributes, statuses } = recordingSpan();
    expect(classify(answered(204), span)).toEqual({ ok: true, statusCode: 204 });
    expect(attributes).toEqual({ "webhooks.outcome": "succeeded", "http.response.status_code": 204 });
    expect(statuses).toEqual([]);
  });

  it("a 503 failed: the reason on the span, with an error status", () => {
    const { span, attributes, statuses } = recordingSpan();
    expect(classify(answered(503), span)).toEqual({ ok: false, reason: "non_2xx_status", statusCode: 503 });
    expect(attributes).toEqual({ "webhooks.outcome": "non_2xx_status", "http.response.status_code": 503 });
    expect(statuses).toEqual([{ code: SpanStatusCode.ERROR, message: "non_2xx_status" }]);
  });

  it("a timeout has no status code", () => {
    const { span, attributes } = recordingSpan();
    const response: DeliveryResponse = { ...answered(200), result: { kind: "timeout" } };
    expect(classify(response, span)).toEqual({ ok: false, reason: "timeout", statusCode: null });
    expect(attributes).toEqual({ "webhooks.outcome": "timeout" });
  });
});

describe("record", () => {
  const attemptedAt = new Date();
  const failed: AttemptOutcome = { ok: false, reason: "non_2xx_status", statusCode: 503 };
  const succeeded: AttemptOutcome = { ok: true, statusCode: 200 };

  it("writes the attempt as it went, with the retry delays", async () => {
    const { deps: d, calls } = deps(claimed());
    const response = { ...answered(503, 12), responseBody: Buffer.from("down"), truncated: true };
    await recordAttempt(d, claimedDelivery(), attemptedAt, response, failed);
    expect(calls).toEqual([
      [
        "recordAttempt",
        "dlv_1",
        {
          attemptedAt,
          durationMs: 12,
          succeeded: false,
          statusCode: 503,
          error: "non_2xx_status",
          responseBody: Buffer.from("down"),
          responseBodyTruncated: true,
        },
        [1_000, 2_000],
      ],
    ]);
    await recordAttempt(d, claimedDelivery(), attemptedAt, answered(200, 12), succeeded);
    expect(calls[1]![2]).toMatchObject({ succeeded: true, statusCode: 200, error: null });
  });

  it("counts a success with its delivery latency, and logs it", async () => {
    const { deps: d, registry } = deps(claimed());
    const { logger, lines } = capturedLogger();
    const recorded: RecordedAttempt = {
      number: 2,
      status: "succeeded",
      nextAttemptAt: null,
      deadLettered: false,
      createdAt: new Date(attemptedAt.getTime() - 2_000),
    };
    reportAttempt(
      attemptOf(claimedDelivery(), logger),
      d.metrics,
      attemptedAt,
      answered(200, 500),
      succeeded,
      recorded,
    );
    expect(await counted(registry, "webhooks_delivery_attempts_total")).toEqual({ '{"outcome":"succeeded"}': 1 });
    const latency = await observed(registry, "webhooks_delivery_latency_seconds");
    expect(latency.count).toBe(1);
    expect(latency.sum).toBeCloseTo(2.5);
    expect(await observed(registry, "webhooks_delivery_attempt_duration_seconds")).toEqual({ count: 1, sum: 0.5 });
    expect(await counted(registry, "webhooks_retries_scheduled_total")).toEqual({ "{}": 0 });
    expect(lines).toEqual([
      expect.objectContaining({
        level: "info",
        eventId: "evt_1",
        deliveryId: "dlv_1",
        endpointId,
        attempt: 2,
        outcome: "succeeded",
        statusCode: 200,
        durationMs: 500,
        status: "succeeded",
        msg: "delivery attempt",
      }),
    ]);
  });

  it("counts a failure with a retry scheduled, and a dead letter", async () => {
    const { deps: d, registry } = deps(claimed());
    const { logger, lines } = capturedLogger();
    const next = new Date(attemptedAt.getTime() + 1_000);
    const retry: RecordedAttempt = {
      number: 1,
      status: "awaiting_retry",
      nextAttemptAt: next,
      deadLettered: false,
      createdAt,
    };
    const dead: RecordedAttempt = {
      number: 8,
      status: "dead_lettered",
      nextAttemptAt: null,
      deadLettered: true,
      createdAt,
    };
    reportAttempt(attemptOf(claimedDelivery(), logger), d.metrics, attemptedAt, answered(503), failed, retry);
    reportAttempt(attemptOf(claimedDelivery(), logger), d.metrics, attemptedAt, answered(503), failed, dead);
    expect(await counted(registry, "webhooks_delivery_attempts_total")).toEqual({ '{"outcome":"non_2xx_status"}': 2 });
    expect(await counted(registry, "webhooks_retries_scheduled_total")).toEqual({ "{}": 1 });
    expect(await counted(registry, "webhooks_dead_letters_total")).toEqual({ "{}": 1 });
    expect((await observed(registry, "webhooks_delivery_latency_seconds")).count).toBe(0);
    expect(lines.map((line) => [line.msg, line.status, line.nextAttemptAt])).toEqual([
      ["delivery attempt", "awaiting_retry", next.toISOString()],
      ["delivery dead-lettered; the endpoint is paused", "dead_lettered", undefined],
    ]);
  });

  it("acks a job whose delivery needs no other attempt, and naks one with a retry until it is due", () => {
    const answers = (recorded: Partial<RecordedAttempt>) => {
      const { msg, answers: given } = jobMessage();
      answerJob(msg, {
        number: 1,
        status: "succeeded",
        nextAttemptAt: null,
        deadLettered: false,
        createdAt,
        ...recorded,
      });
      return given;
    };
    expect(answers({})).toEqual([["ack"]]);
    expect(answers({ status: "dead_lettered", deadLettered: true })).toEqual([["ack"]]);
    expect(answers({ status: "held" })).toEqual([["ack"]]);
    const [[kind, delay]] = answers({ status: "awaiting_retry", nextAttemptAt: new Date(Date.now() + 60_000) }) as [
      ["nak", number],
    ];
    expect(kind).toBe("nak");
    expect(delay).toBeGreaterThan(59_000);
    expect(delay).toBeLessThanOrEqual(60_000);
    expect(answers({ status: "awaiting_retry", nextAttemptAt: new Date(Date.now() - 5_000) })).toEqual([["nak", 1]]);
  });
});

describe("one attempt, the stages in order", () => {
  it("claims, sends, records, and acks only after the record is written", async () => {
    let commit!: (recorded: RecordedAttempt) => void;
    const written = new Promise<RecordedAttempt>((resolve) => (commit = resolve));
    const { deps: d, calls } = deps(claimed(), { recorded: written });
    const { msg, answers } = jobMessage();
    const attempt = attemptJob(msg, d);
    await expect.poll(() => calls.length).toBe(3);
    expect(calls.map(([step]) => step)).toEqual(["claim", "send", "recordAttempt"]);
    expect(answers).toEqual([]);
    commit({ number: 1, status: "succeeded", nextAttemptAt: null, deadLettered: false, createdAt });
    await attempt;
    expect(answers).toEqual([["ack"]]);
  });

  it("naks a failed attempt until its retry", async () => {
    const nextAttemptAt = new Date(Date.now() + 30_000);
    const { deps: d, respondWith } = deps(claimed(), {
      recorded: { status: "awaiting_retry", nextAttemptAt },
    });
    respondWith(() => Promise.resolve(answered(500)));
    const { msg, answers } = jobMessage();
    await attemptJob(msg, d);
    expect(answers).toHaveLength(1);
    expect(answers[0]![0]).toBe("nak");
    expect(answers[0]![1]).toBeGreaterThan(29_000);
  });

  it("makes no attempt for a job answered by its claim or its secret", async () => {
    const stale = deps({ kind: "stale" });
    await attemptJob(jobMessage().msg, stale.deps);
    expect(stale.calls.map(([step]) => step)).toEqual(["claim"]);

    const sealedElsewhere = claimedDelivery({ secretSealed: sealSecret(otherRing, secret, endpointId) });
    const locked = deps(claimed(sealedElsewhere));
    const { msg, answers } = jobMessage();
    await attemptJob(msg, locked.deps);
    expect(locked.calls.map(([step]) => step)).toEqual(["claim", "release"]);
    expect(answers).toEqual([["nak", 30_000]]);
  });

  it("leaves the job unanswered when the record fails (the worker gives it back)", async () => {
    const { deps: d } = deps(claimed(), { recorded: Promise.reject(new Error("Postgres away")) });
    const { msg, answers } = jobMessage();
    await expect(attemptJob(msg, d)).rejects.toThrow("Postgres away");
    expect(answers).toEqual([]);
  });
});
