import { describe, expect, it } from "vitest";
import { TokenBuckets, type RateLimitPolicy } from "../../domain/token-buckets.js";
import { rateLimitPolicyHeader } from "./rate-limit.js";

function clock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("TokenBuckets", () => {
  it("admits a burst, then refuses until tokens refill at the rate", () => {
    const time = clock();
    const buckets = new TokenBuckets({ ratePerSecond: 50, burst: 100 }, time.now);
    for (let i = 0; i < 100; i++) expect(buckets.take("k").allowed).toBe(true);
    const refused = buckets.take("k");
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.resetSeconds).toBe(2); // 100 tokens at 50/s
    time.advance(20); // one token
    expect(buckets.take("k").allowed).toBe(true);
    expect(buckets.take("k").allowed).toBe(false);
  });

  it("keeps callers apart", () => {
    const buckets = new TokenBuckets({ ratePerSecond: 1, burst: 1 }, clock().now);
    expect(buckets.take("a").allowed).toBe(true);
    expect(buckets.take("a").allowed).toBe(false);
    expect(buckets.take("b").allowed).toBe(true);
  });

  it("gives each of a fleet of N gateways 1/N of the rate and burst", () => {
    const time = clock();
    const buckets = new TokenBuckets({ ratePerSecond: 50, burst: 100 }, time.now);
    buckets.setFleetSize(4);
    expect({ capacity: buckets.shareCapacity, rate: buckets.shareRate }).toEqual({ capacity: 25, rate: 12.5 });
    let admitted = 0;
    while (buckets.take("k").allowed) admitted++;
    expect(admitted).toBe(25);
    time.advance(1000);
    admitted = 0;
    while (buckets.take("k").allowed) admitted++;
    expect(admitted).toBe(12); // 12.5 tokens/s per gateway
  });

  it.each([1, 2, 3, 4, 5, 7, 10])("lets a fleet of %i, each gateway taking its share, admit the burst of 100", (n) => {
    const time = clock();
    const fleet = Array.from({ length: n }, () => new TokenBuckets({ ratePerSecond: 0.001, burst: 100 }, time.now));
    for (const gateway of fleet) gateway.setFleetSize(n);
    let admitted = 0;
    // Round robin over the fleet, as an ingress spreading a key's requests does.
    for (let i = 0; i < 300; i++) if (fleet[i % n]!.take("k").allowed) admitted++;
    // Each admits floor(100/n): the fleet admits 100 less at most n-1, never more.
    expect(admitted).toBe(n * Math.floor(100 / n));
    expect(admitted).toBeGreaterThan(100 - n);
  });

  it("keeps a bucket's fill level when the fleet size changes, so the fleet keeps its state", () => {
    const time = clock();
    const buckets = new TokenBuckets({ ratePerSecond: 10, burst: 120 }, time.now);
    buckets.setFleetSize(3); // share: 40 tokens, 10/3 per s
    for (let i = 0; i < 20; i++) expect(buckets.take("k").allowed).toBe(true); // half full
    buckets.setFleetSize(2); // share: 60 tokens, still half full: 30 left
    let admitted = 0;
    while (buckets.take("k").allowed) admitted++;
    expect(admitted).toBe(30);
    // Empty stays empty: the new share refills at 5/s.
    time.advance(1000);
    expect(buckets.take("k")).toMatchObject({ allowed: true, remaining: 8 }); // 4 tokens of 60 left, × 2
    buckets.setFleetSize(4); // 4 of 60 is 2 of 30
    expect(buckets.take("k")).toMatchObject({ allowed: true, remaining: 4 });
    expect(buckets.take("k")).toMatchObject({ allowed: true, remaining: 0 });
    expect(buckets.take("k").allowed).toBe(false);
  });

  it("tells the truth in fleet terms: r is what the fleet admits now, t when it is full again", () => {
    const time = clock();
    const fleet = [0, 1, 2].map(() => new TokenBuckets({ ratePerSecond: 50, burst: 100 }, time.now));
    for (const gateway of fleet) gateway.setFleetSize(3);
    // The policy header is the fleet's, whatever N: what the documents promise.
    expect(fleet.map((gateway) => rateLimitPolicyHeader(gateway))).toEqual(Array(3).fill('"default";q=100;w=2'));
    const answers = fleet.map((gateway) => gateway.take("k"));
    // Each share holds 33 1/3 - 1 tokens: 32 whole ones, so the fleet admits 3 × 32 more.
    expect(answers.map((a) => a.remaining)).toEqual([96, 96, 96]);
    let admitted = 0;
    for (let i = 0; i < 200; i++) if (fleet[i % 3]!.take("k").allowed) admitted++;
    expect(admitted).toBe(96);
    const refused = fleet[0]!.take("k");
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    // Empty, the fleet's bucket of 100 refills at 50/s: full again in 2 s, and so is each share.
    expect(refused.resetSeconds).toBe(2);
    time.advance(1000);
    expect(fleet[1]!.take("k")).toMatchObject({ allowed: true, remaining: 48, resetSeconds: 2 }); // 1/3 + 16 2/3 - 1 = 16 tokens, × 3
  });

  it("admits at least one request per gateway when the gateways outnumber the burst", () => {
    const buckets = new TokenBuckets({ ratePerSecond: 1, burst: 2 }, clock().now);
    buckets.setFleetSize(3);
    expect(buckets.shareCapacity).toBe(1);
    expect(buckets.take("k").allowed).toBe(true);
    expect(buckets.take("k").allowed).toBe(false);
  });

  it("refuses a fleet size that is not a positive integer", () => {
    const buckets = new TokenBuckets({ ratePerSecond: 1, burst: 2 });
    expect(() => buckets.setFleetSize(0)).toThrow(RangeError);
    expect(() => buckets.setFleetSize(1.5)).toThrow(RangeError);
  });

  it("reports what is left and when the bucket is full again", () => {
    const buckets = new TokenBuckets({ ratePerSecond: 10, burst: 20 }, clock().now);
    expect(buckets.take("k")).toEqual({ allowed: true, remaining: 19, resetSeconds: 1 });
  });

  it("forgets buckets that have refilled", () => {
    const time = clock();
    const buckets = new TokenBuckets({ ratePerSecond: 10, burst: 10 }, time.now);
    buckets.take("a");
    buckets.take("b");
    expect(buckets.size).toBe(2);
    time.advance(2000);
    buckets.evictIdle();
    expect(buckets.size).toBe(0);
  });

  it.each([
    [{ ratePerSecond: 50, burst: 100 }, 100, 2],
    [{ ratePerSecond: 0.1, burst: 6 }, 6, 60],
    [{ ratePerSecond: 0.1, burst: 6, fleet: 2 }, 6, 60],
    [{ ratePerSecond: 50, burst: 100, fleet: 7 }, 100, 2],
    [{ ratePerSecond: 1000, burst: 1000 }, 1000, 1],
    [{ ratePerSecond: 50, burst: 10 }, 10, 1],
    [{ ratePerSecond: 2, burst: 7 }, 7, 4],
  ])(
    "describes %j as q=%i per w=%i s, whatever the fleet size",
    (policy: RateLimitPolicy & { fleet?: number }, quota, window) => {
      const buckets = new TokenBuckets(policy, clock().now);
      buckets.setFleetSize(policy.fleet ?? 1);
      expect({ q: buckets.capacity, w: buckets.windowSeconds }).toEqual({ q: quota, w: window });
    },
  );

  it.each([
    { ratePerSecond: 50, burst: 100 },
    { ratePerSecond: 2, burst: 7 },
    { ratePerSecond: 50, burst: 10 },
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
