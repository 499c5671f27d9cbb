import { describe, expect, it } from "vitest";
import { createEndpointScheduler, type Admission, type Running } from "./endpoint-scheduler.js";

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const runs = <T>(a: Admission<T>): Running<T> => {
  if (a.kind !== "run") throw new Error(`expected to run, got ${a.kind}`);
  return a.running;
};
const deferred = <T>(a: Admission<T>) => {
  if (a.kind !== "deferred") throw new Error(`expected a deferral, got ${a.kind}`);
  return a;
};

describe("the endpoint scheduler", () => {
  it("runs at most endpointConcurrency jobs per endpoint, independently of the others", () => {
    const c = clock();
    const s = createEndpointScheduler<string>({ endpointConcurrency: 2, now: c.now });
    const a1 = runs(s.admit("a", "a1"));
    runs(s.admit("a", "a2"));
    expect(s.admit("a", "a3").kind).toBe("queued");
    runs(s.admit("b", "b1"));
    runs(s.admit("b", "b2"));
    expect(s.inFlight("a")).toBe(2);
    expect(s.inFlight("b")).toBe(2);
    // The slot a1 frees goes to the job waiting in a's line.
    const a3 = a1.release();
    expect(a3?.item).toBe("a3");
    expect(a1.release()).toBeUndefined(); // twice is once
    expect(s.inFlight("a")).toBe(2);
    expect(a3!.release()).toBeUndefined();
    expect(s.inFlight("a")).toBe(1);
  });

  it("serves an endpoint's line first in, first out, and sends back what does not fit", () => {
    const c = clock();
    const s = createEndpointScheduler<number>({ endpointConcurrency: 2, maxQueued: 3, now: c.now });
    const first = runs(s.admit("a", 0));
    runs(s.admit("a", 1));
    expect(s.admit("a", 2).kind).toBe("queued");
    expect(s.admit("a", 3).kind).toBe("queued");
    deferred(s.admit("a", 4)); // a's line holds endpointConcurrency
    expect(s.admit("b", 5).kind).toBe("run");
    expect(s.admit("b", 6).kind).toBe("run");
    expect(s.admit("b", 7).kind).toBe("queued");
    deferred(s.admit("b", 8)); // all lines together hold maxQueued
    expect(s.waiting().sort()).toEqual([2, 3, 7]);
    expect(s.queued()).toBe(3);
    const second = first.release();
    expect(second?.item).toBe(2);
    expect(second!.release()?.item).toBe(3);
    expect(s.drain()).toEqual([7]);
    expect(s.waiting()).toEqual([]);
    expect(s.queued()).toBe(0);
  });

  it("spaces a fast endpoint's deferred jobs by its attempt time over its slots, at least minDeferMs", () => {
    const c = clock();
    const s = createEndpointScheduler<number>({ endpointConcurrency: 4, maxQueued: 0, minDeferMs: 50, now: c.now });
    // Four attempts of 20 ms each teach the estimate.
    for (let i = 0; i < 4; i++) {
      const job = runs(s.admit("fast", i));
      c.advance(20);
      job.release();
    }
    for (let i = 0; i < 4; i++) runs(s.admit("fast", i));
    const delays = Array.from({ length: 20 }, (_, i) => deferred(s.admit("fast", i)).delayMs);
    // 20 ms / 4 slots = 5 ms apart; the first ten are lifted to the 50 ms floor.
    expect(delays.slice(0, 10).every((d) => d === 50)).toBe(true);
    expect(delays[19]).toBe(100);
    expect(Math.max(...delays)).toBeLessThanOrEqual(100);
  });

  it("recognises a hanging endpoint by its oldest attempt in flight and spreads its backlog out", () => {
    const c = clock();
    const s = createEndpointScheduler<number>({
      endpointConcurrency: 8,
      now: c.now,
      maxDeferMs: 60_000,
      random: () => 0.5,
    });
    for (let i = 0; i < 8; i++) runs(s.admit("hang", i));
    for (let i = 0; i < 8; i++) expect(s.admit("hang", i).kind).toBe("queued");
    c.advance(2_000); // nothing has come back for 2 s
    const first = deferred(s.admit("hang", 16));
    expect(first.estimateMs).toBe(2_000);
    expect(first.delayMs).toBe(250);
    const delays = Array.from({ length: 99 }, (_, i) => deferred(s.admit("hang", 17 + i)).delayMs);
    // 100 jobs 250 ms apart: the last one comes back after 25 s, not all of them after a second.
    expect(delays[98]).toBe(25_000);
    expect([first.delayMs, ...delays].filter((d) => d <= 1_000)).toHaveLength(4);
    // Another endpoint is not affected.
    expect(s.admit("other", 0).kind).toBe("run");
  });

  it("caps the delay, with jitter over the cap's last fifth", () => {
    const c = clock();
    let r = 0;
    const s = createEndpointScheduler<number>({
      endpointConcurrency: 1,
      maxQueued: 0,
      now: c.now,
      maxDeferMs: 10_000,
      random: () => (r = (r + 0.37) % 1),
    });
    runs(s.admit("slow", 0));
    c.advance(5_000);
    const delays = Array.from({ length: 10 }, (_, i) => deferred(s.admit("slow", i)).delayMs);
    expect(delays[0]).toBe(5_000);
    for (const d of delays.slice(2)) {
      expect(d).toBeGreaterThanOrEqual(8_000);
      expect(d).toBeLessThanOrEqual(10_000);
    }
    expect(new Set(delays.slice(2)).size).toBeGreaterThan(1);
  });

  it("forgets idle endpoints", () => {
    const c = clock();
    const s = createEndpointScheduler<number>({ endpointConcurrency: 1, now: c.now });
    for (let i = 0; i < 100; i++) runs(s.admit(`ep${i}`, i)).release();
    expect(s.size()).toBe(100);
    c.advance(6 * 60_000);
    runs(s.admit("other", 0));
    expect(s.size()).toBe(1);
  });
});
