/** The record stage without NATS or Postgres (fakes: attempt-fakes.testing.ts). */
import type { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { RecordedAttempt } from "../db/attempt-store.js";
import type { AttemptOutcome } from "../domain/attempt-outcome.js";
import {
  answered,
  attemptOf,
  capturedLogger,
  claimed,
  claimedDelivery,
  createdAt,
  endpointId,
  jobMessage,
  recordedAttempt,
  stageDeps,
} from "./attempt-fakes.testing.js";
import { answerJob, recordAttempt, reportAttempt } from "./record-stage.js";

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

describe("record", () => {
  const attemptedAt = new Date();
  const failed: AttemptOutcome = { ok: false, reason: "non_2xx_status", statusCode: 503 };
  const succeeded: AttemptOutcome = { ok: true, statusCode: 200 };

  it("passes on the wait a 429 or 503 asked for with Retry-After, from the end of the attempt; not a 500's", async () => {
    const { deps: d, calls } = stageDeps(claimed());
    const at = new Date("2026-11-27T12:00:00.000Z");
    const asking = (status: number, retryAfter: string) => ({
      ...answered(status, 400),
      result: { kind: "response" as const, status, retryAfter },
    });
    const outcome = (status: number): AttemptOutcome => ({ ok: false, reason: "non_2xx_status", statusCode: status });
    await recordAttempt(d, claimedDelivery(), at, asking(429, "120"), outcome(429));
    await recordAttempt(d, claimedDelivery(), at, asking(503, "Fri, 27 Nov 2026 12:05:00 GMT"), outcome(503));
    await recordAttempt(d, claimedDelivery(), at, asking(500, "120"), outcome(500));
    await recordAttempt(d, claimedDelivery(), at, asking(429, "later"), outcome(429));
    expect(calls.map((call) => (call[2] as { retryAfterMs?: number }).retryAfterMs)).toEqual([
      120_000,
      5 * 60_000 - 400,
      undefined,
      undefined,
    ]);
  });

  it("writes the attempt as it went, with the retry delays", async () => {
    const { deps: d, calls } = stageDeps(claimed());
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
    const { deps: d, registry } = stageDeps(claimed());
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
    const { deps: d, registry } = stageDeps(claimed());
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
      answerJob(msg, recordedAttempt(recorded));
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
