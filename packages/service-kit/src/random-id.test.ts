import { describe, expect, it } from "vitest";
import { randomHex, randomId, timeOrderedId } from "./random-id.js";

describe("random ids from a pool of random bytes", () => {
  it("hands out each byte once: 10 000 ids across many refills of the pool are all distinct and well formed", () => {
    const ids = Array.from({ length: 10_000 }, () => randomId("evt_"));
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("takes sizes that do not divide the pool and sizes larger than it", () => {
    const draws = Array.from({ length: 2_000 }, (_, i) => randomHex(1 + (i % 37)));
    draws.forEach((hex, i) => expect(hex).toHaveLength(2 * (1 + (i % 37))));
    expect(randomHex(10_000)).toMatch(/^[0-9a-f]{20000}$/);
    // Every hex digit appears: the bytes are random, not a zeroed pool.
    expect(new Set(draws.join(""))).toEqual(new Set("0123456789abcdef"));
  });

  it("makes time-ordered ids in the same format: in creation order across milliseconds, distinct within one", () => {
    const at = Date.UTC(2026, 10, 29, 1, 30);
    const ids = [at, at + 1, at + 2, at + 1_000, at + 86_400_000].map((ms) => timeOrderedId("ntf_", ms));
    for (const id of ids) expect(id).toMatch(/^ntf_[0-9a-f]{24}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]!.slice(4, 16)).toBe(at.toString(16).padStart(12, "0"));
    const sameMillisecond = Array.from({ length: 10_000 }, () => timeOrderedId("msg_", at));
    expect(new Set(sameMillisecond).size).toBe(sameMillisecond.length);
    expect(sameMillisecond.every((id) => id.startsWith(`msg_${at.toString(16).padStart(12, "0")}`))).toBe(true);
  });
});
