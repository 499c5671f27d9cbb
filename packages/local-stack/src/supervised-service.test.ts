import { describe, expect, it } from "vitest";
import { DEFAULT_RESTART_POLICY, restartDelay } from "./supervised-service.js";

describe("restart backoff", () => {
  it("waits 1s, then doubles with each failure in a row, up to 30s", () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 20].map((n) => restartDelay(DEFAULT_RESTART_POLICY, n));
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });
});
