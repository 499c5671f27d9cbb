import { describe, expect, it } from "vitest";
import { TokenBuckets } from "./rate-limit.js";

function clock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("TokenBuckets", () => {
  it("admits a burst, then refuses until tokens refill at the rate", () => {
    const time = clock();
    const buckets = new TokenBuckets({ ratePerSecond: 50, burst: 100, replicas: 1 }, time.now);
    for (let i = 0; i < 100; i++) expect(buckets.take("k").allowed).toBe(true);
    const refused = buckets.take("k");
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.resetSeconds).toBe(2); // 100 tokens at 50/s
    time.advance(20); // one token
    expect(buckets.take("k").allowed).toBe(true);
    expect(buckets.take("k").allowed).toBe(false);
  });

  it("keeps callers apart", () => {
    const buckets = new TokenBuckets({ ratePerSecond: 1, burst: 1, replicas: 1 }, clock().now);
    expect(buckets.take("a").allowed).toBe(true);
    expect(buckets.take("a").allowed).toBe(false);
    expect(buckets.take("b").allowed).toBe(true);
  });

  it("gives each of N replicas 1/N of the rate and burst", () => {
    const time = clock();
    const buckets = new TokenBuckets({ ratePerSecond: 50, burst: 100, replicas: 4 }, time.now);
    expect(buckets.capacity).toBe(25);
    let admitted = 0;
    while (buckets.take("k").allowed) admitted++;
    expect(admitted).toBe(25);
    time.advance(1000);
    admitted = 0;
    while (buckets.take("k").allowed) admitted++;
    expect(admitted).toBe(12); // 12.5 tokens/s per replica
  });

  it("reports what is left and when the bucket is full again", () => {
    const buckets = new TokenBuckets({ ratePerSecond: 10, burst: 20, replicas: 1 }, clock().now);
    expect(buckets.take("k")).toEqual({ allowed: true, remaining: 19, resetSeconds: 1 });
  });

  it("forgets buckets that have refilled", () => {
    const time = clock();
    const buckets = new TokenBuckets({ ratePerSecond: 10, burst: 10, replicas: 1 }, time.now);
    buckets.take("a");
    buckets.take("b");
    expect(buckets.size).toBe(2);
    time.advance(2000);
    buckets.evictIdle();
    expect(buckets.size).toBe(0);
  });
});
