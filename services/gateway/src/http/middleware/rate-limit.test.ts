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

  it.each([
    [{ ratePerSecond: 50, burst: 100, replicas: 1 }, 100, 2],
    [{ ratePerSecond: 0.1, burst: 6, replicas: 1 }, 6, 60],
    [{ ratePerSecond: 0.1, burst: 6, replicas: 2 }, 3, 60],
    [{ ratePerSecond: 1000, burst: 1000, replicas: 1 }, 1000, 1],
    [{ ratePerSecond: 50, burst: 10, replicas: 1 }, 10, 1],
    [{ ratePerSecond: 2, burst: 7, replicas: 1 }, 7, 4],
  ])("describes %j as q=%i per w=%i s", (policy, quota, window) => {
    const buckets = new TokenBuckets(policy, clock().now);
    expect({ q: buckets.capacity, w: buckets.windowSeconds }).toEqual({ q: quota, w: window });
  });

  it.each([
    { ratePerSecond: 50, burst: 100, replicas: 1 },
    { ratePerSecond: 2, burst: 7, replicas: 1 },
    { ratePerSecond: 50, burst: 10, replicas: 1 },
  ])("never refuses a client that keeps to q per w (%j)", (policy) => {
    const time = clock();
    const buckets = new TokenBuckets(policy, time.now);
    const q = buckets.capacity;
    const windowMs = buckets.windowSeconds * 1000;
    const sent: number[] = [];
    // Greedy: send whenever fewer than q requests fall in the last w seconds, for 10 windows.
    for (let step = 0; step < 10 * windowMs; step += 5) {
      while (sent.filter((at) => at > time.now() - windowMs).length < q) {
        expect(buckets.take("k").allowed, `refused at ${time.now()} ms`).toBe(true);
        sent.push(time.now());
      }
      time.advance(5);
    }
  });
});
