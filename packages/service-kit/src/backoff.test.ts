import { describe, expect, it } from "vitest";
import { failureBackoffMs } from "./backoff.js";

describe("the pause after a run of failures", () => {
  it("doubles from 500 ms after the first failure and stays at 10 s from the sixth on", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20, 1_000].map(failureBackoffMs)).toEqual([
      500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000, 10_000,
    ]);
  });

  it("is 250 ms before any failure", () => {
    expect(failureBackoffMs(0)).toBe(250);
  });
});
