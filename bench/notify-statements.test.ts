/**
 * bench:notify-statements at a tiny size, so the bench does not rot: every path's sends are
 * recorded (the bench throws otherwise) and every figure is a positive number.
 */
import { describe, expect, it } from "vitest";
import { measureSendStatements } from "./notify-statements.js";

describe("bench:notify-statements at a tiny size", () => {
  it("measures notify's two statements of a send, before and after pacing in one update, and floor (c)'s", async () => {
    const figures = await measureSendStatements({ sends: 20, rounds: 1 });
    expect(figures.map((f) => f.path)).toEqual([
      "notify (record_send, outcome)",
      "notify, pacing by lock then update (before 20261128130000)",
      "floor (c) (claim, outcome)",
    ]);
    for (const f of figures) {
      expect(f.wallUs).toBeGreaterThan(0);
      expect(f.walBytes).toBeGreaterThan(0);
      expect(f.backendCpuUs).toBeGreaterThanOrEqual(0);
    }
  }, 60_000);
});
