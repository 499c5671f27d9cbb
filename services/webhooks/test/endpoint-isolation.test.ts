/**
 * Isolation between endpoints (issue 9, item 2), across processes: the built webhooks service (real
 * Postgres, real nats-server), one HTTPS receiver that answers at once and one that never answers.
 *
 * Two webhooks processes run side by side in the same test, so that whatever else loads the
 * machine loads both alike, and get the same traffic at the same time. Each has a healthy endpoint
 * and a second endpoint that subscribes to the same events plus one more, whose events make a
 * backlog of 2000 deliveries for it first; in the control that second endpoint is paused (its
 * deliveries are recorded, held, never attempted: both processes fan out the same work, and the
 * control delivers to the healthy endpoint only), in the other it is on the hanging receiver. Then
 * both get the same paced bursts, every event to both endpoints: three rounds of 100 events at
 * 5/s to each process. The healthy receiver's latency from emit (the PublishEvent call) to
 * receipt beside the hanging endpoint must stay within 2x of the control's p99, plus an absolute
 * slack of 100 ms so that a baseline of a few milliseconds does not make the ratio flaky on a loaded
 * machine. The p99s compared are each process's best round: whatever else runs on the machine only
 * ever adds latency, to one process more than the other in some round, while an endpoint that
 * delays another does so in every round. Meanwhile the hanging endpoint's attempts time out
 * and are retried.
 *
 * The rate is gentle so that a 2-core machine under other load stays far from saturation. At this
 * rate the worker before the endpoint scheduler (a busy endpoint's job nak'ed for 1 s, so its whole
 * backlog came back every second) degraded but passed (best p99 68 ms alone, 113 ms beside); at 20
 * events/s it did not (2.1 s against 0.4 s), but at that rate a CPU-starved machine can fail
 * either worker.
 *
 * WEBHOOKS_DELIVERY_TIMEOUT is 2 s here (10 s in production) to keep the test short; the retry
 * delays are long enough that nothing is dead-lettered (which would pause the endpoint) during it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";
import { sampleSnapshot } from "./sample-snapshot.js";

const rounds = 3;
const burst = 100;
const paceMs = 200; // 5 events/s to each process
// The warm-up's events are waited for, never measured: 20/s for 50 events (2.5 s, not 10 s).
const warmUpPaceMs = 50;
const backlog = 2000;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe("isolation between endpoints (webhooks process, real Postgres and NATS)", () => {
  let certs: TestCertificates;
  let control: WebhooksUnderTest;
  let service: WebhooksUnderTest;
  let healthy: TestReceiver;
  let hanging: TestReceiver;
  let parked: TestReceiver;

  beforeAll(async () => {
    certs = await createTestCertificates();
    healthy = await startReceiver(certs);
    hanging = await startReceiver(certs, () => ({ status: 200, hang: true }));
    parked = await startReceiver(certs);
    const env = { WEBHOOKS_DELIVERY_TIMEOUT: "2s", WEBHOOKS_RETRY_DELAYS: "1s,2s,1m,1h,1h,1h,1h" };
    [control, service] = await Promise.all([
      startWebhooks({ name: "whisoc", caPath: certs.caPath, env }),
      startWebhooks({ name: "whiso", caPath: certs.caPath, env }),
    ]);
  });
  afterAll(async () => {
    await healthy?.close();
    await hanging?.close();
    await parked?.close();
    await Promise.allSettled([control?.stop(), service?.stop()]);
    await certs?.remove();
  });

  /** Publishes `count` events at a fixed pace (not waiting for one to start the next); their emit times. */
  async function pacedBurst(
    targets: { service: WebhooksUnderTest; tenantId: string }[],
    count: number,
    pace = paceMs,
  ): Promise<Map<string, number>[]> {
    const emitted = targets.map(() => new Map<string, number>());
    const start = performance.now();
    const calls: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const due = start + i * pace;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      targets.forEach((target, t) => {
        const at = Date.now();
        calls.push(
          target.service
            .publish({ tenantId: target.tenantId, type: "booking.created", dataJson: '{"booking_id":"bk"}' })
            .then((published) => void emitted[t]!.set(published.eventId, at)),
        );
      });
    }
    await Promise.all(calls);
    return emitted;
  }

  /** Waits until the healthy receiver has seen every event; each one's latency from emit to its first receipt. */
  async function latencies(emitted: Map<string, number>): Promise<number[]> {
    const firstReceipt = new Map<string, number>();
    await eventually(
      `all ${emitted.size} events at the healthy receiver`,
      () => {
        for (const request of healthy.requests) {
          const id = String(request.headers["service-event-id"]);
          if (emitted.has(id) && !firstReceipt.has(id)) firstReceipt.set(id, request.receivedAt);
        }
        return firstReceipt.size === emitted.size;
      },
      120_000,
    );
    return [...emitted].map(([id, at]) => firstReceipt.get(id)! - at);
  }

  it("a hanging endpoint with a backlog does not delay a healthy one", async () => {
    for (const s of [control, service]) {
      await s.seedEndpoint({ tenantId: "warm", url: healthy.url, eventTypes: ["booking.created"] });
      await s.seedEndpoint({ tenantId: "acme", url: healthy.url, eventTypes: ["booking.created"] });
    }
    const stuck = await service.seedEndpoint({ tenantId: "acme", url: hanging.url, eventTypes: ["booking.*"] });
    const paused = await control.seedEndpoint({
      tenantId: "acme",
      url: parked.url,
      eventTypes: ["booking.*"],
      paused: true,
    });

    // A warm-up of both processes.
    for (const emitted of await pacedBurst(
      [
        { service: control, tenantId: "warm" },
        { service, tenantId: "warm" },
      ],
      50,
      warmUpPaceMs,
    )) {
      await latencies(emitted);
    }

    // A backlog for the second endpoint alone (booking.cancelled goes to it only), fanned out first.
    for (let i = 0; i < backlog; i += 25) {
      await Promise.all(
        [control, service].flatMap((s) =>
          Array.from({ length: 25 }, (_, j) =>
            s.publish({
              tenantId: "acme",
              type: "booking.cancelled",
              dataJson: sampleSnapshot("booking.cancelled", i + j),
            }),
          ),
        ),
      );
    }
    const fannedOut = async (s: WebhooksUnderTest, endpointId: string) => {
      const [row] = await s.db("deliveries").where({ endpoint_id: endpointId }).count<{ count: string }[]>();
      return Number(row?.count) >= backlog;
    };
    await eventually(
      "the backlog fanned out and the hanging receiver busy",
      async () =>
        (await fannedOut(service, stuck.id)) && (await fannedOut(control, paused.id)) && hanging.requests.length >= 8,
    );

    const p = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99) });
    const results: { alone: { p50: number; p99: number }; beside: { p50: number; p99: number } }[] = [];
    for (let round = 0; round < rounds; round++) {
      const [alone, beside] = await pacedBurst(
        [
          { service: control, tenantId: "acme" },
          { service, tenantId: "acme" },
        ],
        burst,
      );
      results.push({ alone: p(await latencies(alone!)), beside: p(await latencies(beside!)) });
    }
    const metrics = await fetch(`http://127.0.0.1:${service.process.listening.metricsPort as number}/metrics`).then(
      (r) => r.text(),
    );
    const deferred = /^webhooks_delivery_jobs_deferred_total(?:\{[^}]*\})? (\d+)/m.exec(metrics)?.[1];
    const baselineP99 = Math.min(...results.map((r) => r.alone.p99));
    const mixedP99 = Math.min(...results.map((r) => r.beside.p99));
    console.log(
      `healthy receiver, emit -> receipt (ms), ${rounds} rounds of ${burst} events at ${1000 / paceMs}/s to each process ` +
        `(alone / beside a hanging endpoint with a backlog of ${backlog}): ` +
        results.map((r) => `${JSON.stringify(r.alone)} / ${JSON.stringify(r.beside)}`).join("; ") +
        `; best p99 ${baselineP99} / ${mixedP99}; requests to the hanging receiver so far ${hanging.requests.length}; ` +
        `jobs deferred ${deferred}`,
    );
    // 2x the baseline's p99, plus 100 ms of absolute slack for a baseline of a few milliseconds:
    // under the full suite's load two healthy processes' best p99s differed by up to 1.66x (591
    // against 355 ms on a fresh-clone run, 2026-11-27), over the 1.5x this allowed before; an
    // endpoint that delays another costs seconds (2.1 s against 0.4 s, see above).
    expect(mixedP99).toBeLessThanOrEqual(2 * baselineP99 + 100);

    // Meanwhile the hanging endpoint's attempts time out and are retried.
    await eventually(
      "hanging deliveries retried after timeouts",
      async () => {
        const rows = await service
          .db("attempts")
          .where({ endpoint_id: stuck.id })
          .select<{ delivery_id: string; number: number; error: string | null }[]>("delivery_id", "number", "error");
        const retried = rows.filter((r) => r.number >= 2).length;
        return rows.length >= 16 && retried >= 8 && rows.every((r) => r.error === "timeout") ? rows : undefined;
      },
      60_000,
    );
    const [waiting] = await service
      .db("deliveries")
      .where({ endpoint_id: stuck.id })
      .whereIn("status", ["pending", "awaiting_retry"])
      .count<{ count: string }[]>();
    expect(Number(waiting?.count)).toBeGreaterThan(backlog);
  }, 240_000);
});
