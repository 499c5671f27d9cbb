/**
 * bench:day-lookups at a tiny size, so the bench does not rot: each lookup with and without the
 * day claims every delivery of its batch and finds the delivery (the bench throws otherwise), and
 * every figure is a time.
 */
import { describe, expect, it } from "vitest";
import { measureDayLookups } from "./day-lookups.js";

describe("bench:day-lookups at a tiny size", () => {
  it("measures the claim and GetDelivery with and without the day", async () => {
    const figures = await measureDayLookups({ rows: 3000, batches: [1, 4], reps: 5 });
    expect(figures.map((f) => f.lookup)).toEqual([
      "claim, batch of 1",
      "claim, batch of 4",
      "GetDelivery (with its attempts)",
    ]);
    for (const f of figures) {
      for (const n of [f.everyDay.p50, f.everyDay.p90, f.idsDay.p50, f.idsDay.p90]) {
        expect(n).toBeGreaterThan(0);
        expect(Number.isFinite(n)).toBe(true);
      }
    }
  }, 120_000);
});
