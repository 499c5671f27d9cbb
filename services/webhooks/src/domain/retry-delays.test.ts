import { describe, expect, it } from "vitest";
import { recordAttempt } from "./delivery-state.js";
import {
  defaultRetryDelays,
  InvalidRetryDelaysError,
  nextAttemptDue,
  parseRetryDelays,
  retryAfterCapMs,
  retryAfterMs,
} from "./retry-delays.js";

const minute = 60_000;
const delaysMs = parseRetryDelays(defaultRetryDelays);

describe("parseRetryDelays", () => {
  it("reads the default as 10, 20, 40, 80, 160, 320 and 640 minutes", () => {
    expect(delaysMs).toEqual([10, 20, 40, 80, 160, 320, 640].map((m) => m * minute));
  });

  it.each([
    ["1s,2s,3s,4s,5s,6s,7s", [1000, 2000, 3000, 4000, 5000, 6000, 7000]],
    [" 500ms , 1s,1m,1h,1d,2d,3d ", [500, 1000, 60_000, 3_600_000, 86_400_000, 172_800_000, 259_200_000]],
  ])("reads %j", (text, expected) => {
    expect(parseRetryDelays(text)).toEqual(expected);
  });

  it.each([
    ["six entries", "1s,2s,3s,4s,5s,6s", [/exactly 7 delays.*got 6/]],
    ["eight entries", "1s,1s,1s,1s,1s,1s,1s,1s", [/exactly 7 delays.*got 8/]],
    ["an empty string", "", [/got 1/, /entry 1 "" is not a duration/]],
    ["a zero", "0m,1s,1s,1s,1s,1s,1s", [/entry 1 "0m" must be positive/]],
    ["a negative", "1s,-5m,1s,1s,1s,1s,1s", [/entry 2 "-5m" is not a duration/]],
    ["a fraction", "1s,1s,1.5m,1s,1s,1s,1s", [/entry 3 "1.5m" is not a duration/]],
    ["no unit", "1s,1s,1s,10,1s,1s,1s", [/entry 4 "10" is not a duration/]],
    ["two bad entries", "1x,1s,1s,1s,1s,1s,0s", [/entry 1 "1x"/, /entry 7 "0s" must be positive/]],
  ])("refuses %s, naming every problem", (_label, text, expected) => {
    try {
      parseRetryDelays(text);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidRetryDelaysError);
      const problems = (error as InvalidRetryDelaysError).problems;
      expect(problems).toHaveLength(expected.length);
      expected.forEach((pattern, index) => expect(problems[index]).toMatch(pattern));
      expect((error as InvalidRetryDelaysError).message).toMatch(/^WEBHOOKS_RETRY_DELAYS: /);
    }
  });
});

describe("Retry-After (back-pressure)", () => {
  const answeredAt = new Date("2026-11-27T12:00:00.400Z");

  it("reads delta seconds and the three HTTP-date forms of a 429 or 503, from the moment of the answer", () => {
    expect(retryAfterMs(429, "120", answeredAt)).toBe(120_000);
    expect(retryAfterMs(503, " 0 ", answeredAt)).toBe(0);
    expect(retryAfterMs(503, "Fri, 27 Nov 2026 12:30:00 GMT", answeredAt)).toBe(30 * 60_000 - 400);
    expect(retryAfterMs(429, "Friday, 27-Nov-26 12:30:00 GMT", answeredAt)).toBe(30 * 60_000 - 400);
    expect(retryAfterMs(429, "Fri Nov 27 12:30:00 2026", answeredAt)).toBe(30 * 60_000 - 400);
    // A date already past asks for no wait.
    expect(retryAfterMs(429, "Fri, 27 Nov 2026 11:00:00 GMT", answeredAt)).toBe(0);
  });

  it("ignores it on any other status, and when absent or invalid", () => {
    for (const status of [500, 502, 504, 400, 408, 301, 200])
      expect(retryAfterMs(status, "120", answeredAt)).toBeNull();
    expect(retryAfterMs(429, undefined, answeredAt)).toBeNull();
    for (const bad of ["", "-5", "1.5", "12e3", "soon", "2026-11-27T12:30:00Z", "Fri, 27 Nov 2026 12:30:00", "120 s"]) {
      expect(retryAfterMs(429, bad, answeredAt), bad).toBeNull();
    }
  });

  it("makes the next attempt due at max(the schedule, the answer + Retry-After), at most 2 h past the schedule", () => {
    const failedAt = new Date("2026-11-27T12:00:00.400Z");
    const tenMinutes = 10 * 60_000;
    // No wait asked: the schedule.
    expect(nextAttemptDue(failedAt, tenMinutes, null)).toEqual(new Date("2026-11-27T12:10:00.400Z"));
    // A shorter wait than the schedule's changes nothing.
    expect(nextAttemptDue(failedAt, tenMinutes, 60_000)).toEqual(new Date("2026-11-27T12:10:00.400Z"));
    // A longer one is honoured exactly.
    expect(nextAttemptDue(failedAt, tenMinutes, 45 * 60_000)).toEqual(new Date("2026-11-27T12:45:00.400Z"));
    // Capped at the schedule's due time + 2 h.
    expect(retryAfterCapMs).toBe(2 * 3_600_000);
    expect(nextAttemptDue(failedAt, tenMinutes, 86_400_000)).toEqual(new Date("2026-11-27T14:10:00.400Z"));
  });

  it("moves an awaiting_retry delivery's due time; the attempt counts as failed and the 8th still dead-letters", () => {
    const now = new Date("2026-11-27T12:00:00Z");
    const created = { status: "pending" as const, attempts: 0, nextAttemptAt: now, createdAt: now };
    const first = recordAttempt(
      created,
      { ok: false },
      { now, delaysMs, endpointPaused: false, retryAfterMs: 3_600_000 },
    );
    expect(first.state).toEqual({
      ...created,
      status: "awaiting_retry",
      attempts: 1,
      nextAttemptAt: new Date("2026-11-27T13:00:00Z"),
    });
    const last = recordAttempt(
      { ...created, status: "awaiting_retry", attempts: 7 },
      { ok: false },
      { now, delaysMs, endpointPaused: false, retryAfterMs: 3_600_000 },
    );
    expect(last).toEqual({
      state: { ...created, status: "dead_lettered", attempts: 8, nextAttemptAt: null },
      pauseEndpoint: true,
    });
  });
});
