/**
 * bench:growth at a tiny size (sizes 0 and 2000, as GROWTH_SIZES=0,2000 would run it), so the
 * bench does not rot: the fill gives exact row counts through the product's current schema, and
 * every measurement returns a number.
 */
import { describe, expect, it } from "vitest";
import { runNotifySize, runWebhooksSize, type GrowthOptions } from "./growth-run.js";
import { TENANTS } from "./growth-fill.js";

const options: GrowthOptions = {
  sizes: [0, 2000],
  notifySizes: [0, 2000],
  seed: 600,
  reps: 3,
  pipelineEvents: 20,
  pipelineWarmup: 5,
  explainOver: 0, // every read explained: the EXPLAIN path runs too
  keep: false,
  log: () => undefined,
};

const isNumber = (n: unknown) => typeof n === "number" && Number.isFinite(n) && n >= 0;

describe("bench:growth at a tiny size", () => {
  it("fills exact row counts and measures every webhooks figure at sizes 0 and 2000", async () => {
    const empty = await runWebhooksSize(0, options, undefined);
    const filled = await runWebhooksSize(2000, options, empty.timings);
    for (const [result, deliveries] of [
      [empty, 600],
      [filled, 2000],
    ] as const) {
      expect(result.fill.rows.deliveries).toBe(deliveries);
      // An attempt row per attempt counted on its delivery; every event has its deliveries.
      expect(result.fill.rows.attempts).toBe(result.fill.expected.attempts);
      expect(result.fill.rows.attempts).toBeGreaterThan(deliveries);
      expect(result.fill.rows.events).toBe(result.fill.expected.events);
      expect(result.fill.rows.events).toBeGreaterThanOrEqual(deliveries / 2);
      expect(result.fill.rows.endpoints).toBeGreaterThanOrEqual(TENANTS);
      expect(result.fill.expected["status succeeded"]).toBeGreaterThan(deliveries * 0.9);
      expect(result.timings.map((t) => t.name)).toEqual([
        "ledger: first page (endpoint)",
        "ledger: deep page (endpoint, after a random seq)",
        "message log: first page (tenant)",
        "message log: by event id",
        "message log: by event type",
        "message log: one day (created range)",
        "delivery detail (GetDelivery with attempts)",
        "due sweep (bumpOverdueDeliveries, 500, rolled back)",
        "recovery dry run: count over a day",
        "backlog gauges (measureBacklog, every 15 s)",
      ]);
      for (const t of result.timings) {
        expect(isNumber(t.p50) && isNumber(t.p99), t.name).toBe(true);
        expect(t.statements.length, t.name).toBeGreaterThan(0);
      }
      expect(result.rowsFound).toBeGreaterThan(0);
      expect(isNumber(result.pipeline?.deliveriesPerSecond)).toBe(true);
      expect(result.pipeline?.deliveries).toBe(20 * 4);
      // The WAL's full-page images, from pg_walinspect: part of the WAL, split by relation.
      const pipeline = result.pipeline!;
      expect(isNumber(pipeline.fpiBytesPerDelivery)).toBe(true);
      expect(pipeline.fpiBytesPerDelivery).toBeLessThanOrEqual(pipeline.walBytesPerDelivery);
      const split = pipeline.fpiByRelation.reduce((sum, r) => sum + r.bytesPerDelivery, 0);
      expect(split).toBeCloseTo(pipeline.fpiBytesPerDelivery, 6);
      // The oldest of the 30 days: about a thirtieth of the deliveries.
      expect(result.retention!.deliveriesRemoved).toBeGreaterThan(deliveries / 60);
      expect(result.retention!.deliveriesRemoved).toBeLessThan(deliveries / 15);
      expect(isNumber(result.retention!.seconds)).toBe(true);
      // The day leaves whole: its three partitions dropped, not a row deleted.
      expect(result.retention).toMatchObject({ partitionsDropped: 3, rowsDeleted: 0 });
      const deliveriesTable = result.bytes.find((b) => b.table === "deliveries")!;
      expect(deliveriesTable.tableBytes).toBeGreaterThan(0);
      expect(deliveriesTable.indexBytes).toBeGreaterThan(0);
    }
    // explainOver 0: every statement of the larger size explained.
    expect(filled.plans.map((p) => p.name)).toEqual(filled.timings.map((t) => t.name));
    expect(filled.plans.every((p) => p.plan.includes("Execution Time"))).toBe(true);
  }, 60_000);

  it("fills exact row counts and measures notify's transcript page, activity poll and send", async () => {
    const empty = await runNotifySize(0, options, undefined);
    const filled = await runNotifySize(2000, options, empty.timings);
    for (const [result, notifications] of [
      [empty, 600],
      [filled, 2000],
    ] as const) {
      for (const table of [
        "notification_commands",
        "conversation_messages",
        "projection_work",
        "projection_activity",
      ]) {
        expect(result.fill.rows[table], table).toBe(notifications);
      }
      expect(result.fill.rows.provider_messages).toBe(result.fill.expected.provider_messages);
      expect(result.fill.rows.tenants).toBe(TENANTS);
      expect(result.timings.map((t) => t.name)).toEqual([
        "notify: transcript page",
        "notify: activity poll (first page)",
        "notify: send (record + outcome, 2 commits)",
      ]);
      for (const t of result.timings) expect(isNumber(t.p99) && t.statements.length > 0, t.name).toBe(true);
    }
    expect(filled.plans.map((p) => p.name)).toEqual(filled.timings.map((t) => t.name));
  }, 60_000);
});
