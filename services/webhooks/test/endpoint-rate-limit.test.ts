/**
 * A rate limit per endpoint (issue 34, item 3), across processes: two webhooks processes on one
 * database and namespace, one tenant, endpoint A limited to 5 deliveries per second and endpoint B
 * unlimited, both subscribed to the same 30 events.
 *
 * What the limiter guarantees is checked exactly, from the database: every attempt of A took a slot
 * of A's GCRA row (deliveries.rate_slot_at, the database's clock), whichever process claimed it, and
 * the slots never hold more than burst (1) + 5·t in any t seconds. The receiver's arrival times are
 * those slots shifted by each attempt's own latency (never earlier than its slot), so that is what
 * is asserted of them, with a loose lower bound on how long A took. Waiting for a slot is not an
 * attempt: one attempt row per delivery, attempts_total 1. B takes no slot and is done before A's
 * last slot comes. Nothing here depends on how fast the machine is, only on the clock of the
 * database and the receiver, which are the same machine's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestCertificates,
  eventually,
  startReceiver,
  type TestCertificates,
  type TestReceiver,
} from "@platform/local-stack/https-receiver";
import type { ServiceProcess } from "@platform/local-stack/service-process";
import { startWebhooks, type WebhooksUnderTest } from "./webhooks-process.js";

const EVENTS = 30;
const RATE = 5;
const TENANT = "ratelimit";

describe("a rate limit per endpoint holds across two webhooks processes", () => {
  let certs: TestCertificates;
  let service: WebhooksUnderTest;
  let other: ServiceProcess;
  let limited: TestReceiver;
  let unlimited: TestReceiver;

  beforeAll(async () => {
    certs = await createTestCertificates();
    service = await startWebhooks({ name: "whrate", caPath: certs.caPath });
    other = await service.startAnother();
    limited = await startReceiver(certs);
    unlimited = await startReceiver(certs);
  });
  afterAll(async () => {
    await service?.stop();
    await limited?.close();
    await unlimited?.close();
    await certs?.remove();
  });

  it("A's slots never exceed 1 + 5·t in any t seconds, each arrival after its slot, one attempt each; B is not held up", async () => {
    const a = await service.seedEndpoint({ tenantId: TENANT, url: limited.url, eventTypes: ["booking.created"] });
    const b = await service.seedEndpoint({ tenantId: TENANT, url: unlimited.url, eventTypes: ["booking.created"] });
    await service.db("endpoints").where({ id: a.id }).update({ rate_limit: RATE });

    const startedAt = Date.now();
    const eventIds = Array.from({ length: EVENTS }, (_, i) => `evt_rate_${i}`);
    await Promise.all(
      eventIds.map((eventId) => service.publish({ tenantId: TENANT, type: "booking.created", eventId })),
    );
    await eventually(
      "every delivery to both endpoints succeeded",
      async () => {
        const [row] = await service.db("deliveries").where({ status: "succeeded" }).count<{ count: string }[]>();
        return Number(row!.count) === 2 * EVENTS;
      },
      60_000,
    );

    const rows = await service
      .db("deliveries")
      .select<{ endpoint_id: string; event_id: string; attempts_total: number; rate_slot_at: Date | null }[]>(
        "endpoint_id",
        "event_id",
        "attempts_total",
        "rate_slot_at",
      );
    const attempts = await service
      .db("attempts")
      .select("endpoint_id")
      .count<{ endpoint_id: string; count: string }[]>("* as count")
      .groupBy("endpoint_id");
    const ofA = rows.filter((row) => row.endpoint_id === a.id);
    const ofB = rows.filter((row) => row.endpoint_id === b.id);

    // Waiting is not an attempt.
    expect(rows.map((row) => row.attempts_total)).toEqual(rows.map(() => 1));
    expect(Object.fromEntries(attempts.map((row) => [row.endpoint_id, Number(row.count)]))).toEqual({
      [a.id]: EVENTS,
      [b.id]: EVENTS,
    });

    // The limiter's guarantee, by the database's clock: j − i + 1 slots in [s_i, s_j] ≤ 1 + 5·(s_j − s_i).
    const slots = ofA.map((row) => row.rate_slot_at!.getTime()).sort((x, y) => x - y);
    expect(slots).toHaveLength(EVENTS);
    for (let i = 0; i < slots.length; i++) {
      for (let j = i + 1; j < slots.length; j++) {
        // Milliseconds: the rows keep microseconds, so allow the rounding of two of them.
        expect(j - i + 1, `slots ${i}..${j}`).toBeLessThanOrEqual(1 + (RATE * (slots[j]! - slots[i]! + 1)) / 1000);
      }
    }
    expect(ofB.map((row) => row.rate_slot_at)).toEqual(ofB.map(() => null));

    // Each arrival at A's receiver comes after its slot; A took at least (30 − 1) / 5 s in all.
    const slotOf = new Map(ofA.map((row) => [row.event_id, row.rate_slot_at!.getTime()]));
    const arrivals = limited.requests.map((request) => ({
      eventId: (JSON.parse(request.body.toString("utf8")) as { id: string }).id,
      at: request.receivedAt,
    }));
    expect(arrivals.map((arrival) => arrival.eventId).sort()).toEqual([...eventIds].sort());
    for (const arrival of arrivals) expect(arrival.at).toBeGreaterThanOrEqual(slotOf.get(arrival.eventId)!);
    expect(Math.max(...arrivals.map((arrival) => arrival.at)) - startedAt).toBeGreaterThanOrEqual(
      ((EVENTS - 1) / RATE) * 1000,
    );

    // B has every event before A's last slot (A needs 5.8 s of slots at least).
    expect(unlimited.requests).toHaveLength(EVENTS);
    expect(Math.max(...unlimited.requests.map((request) => request.receivedAt))).toBeLessThan(slots.at(-1)!);

    // Both processes attempted deliveries to A: the slots were shared, not per process.
    const attemptsToA = (logs: Record<string, unknown>[]) =>
      logs.filter((line) => line.msg === "delivery attempt" && line.endpointId === a.id).length;
    const byProcess = [attemptsToA(service.process.logs), attemptsToA(other.logs)];
    expect(byProcess[0]! + byProcess[1]!).toBe(EVENTS);
    expect(Math.min(...byProcess)).toBeGreaterThan(0);
  }, 90_000);
});
