import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DeliveryNotRedrivableError,
  DeliveryTransitionError,
  hold,
  newDelivery,
  recordAttempt,
  recordClaimedAttempt,
  redrive,
  redriveWindowMs,
  RedriveWindowClosedError,
  release,
  type DeliveryState,
  type DeliveryStatus,
} from "./delivery-state.js";
import { defaultRetryDelays, maxAttempts, parseRetryDelays } from "./retry-delays.js";

const minute = 60_000;
const delaysMs = parseRetryDelays(defaultRetryDelays);
const t0 = new Date("2026-07-01T00:00:00.000Z");
const at = (ms: number) => new Date(t0.getTime() + ms);
const fail = { ok: false } as const;
const succeed = { ok: true } as const;

function state(status: DeliveryStatus, attempts: number): DeliveryState {
  return {
    status,
    attempts,
    nextAttemptAt: status === "pending" || status === "awaiting_retry" ? t0 : null,
    createdAt: t0,
  };
}

describe("the delivery life cycle (spec 3.3)", () => {
  it("retries after 10, 20, 40, 80, 160, 320, 640 minutes, then dead-letters the 8th failure and pauses the endpoint", () => {
    let delivery = newDelivery({ now: t0, endpointPaused: false });
    expect(delivery).toEqual({ status: "pending", attempts: 0, nextAttemptAt: t0, createdAt: t0 });
    const waits: number[] = [];
    for (let attempt = 1; attempt < maxAttempts; attempt += 1) {
      const now = delivery.nextAttemptAt!;
      const next = recordAttempt(delivery, fail, { now, delaysMs, endpointPaused: false });
      expect(next.pauseEndpoint).toBe(false);
      expect(next.state).toMatchObject({ status: "awaiting_retry", attempts: attempt });
      waits.push((next.state.nextAttemptAt!.getTime() - now.getTime()) / minute);
      delivery = next.state;
    }
    expect(waits).toEqual([10, 20, 40, 80, 160, 320, 640]);
    // 8 attempts over roughly 21 hours
    expect((delivery.nextAttemptAt!.getTime() - t0.getTime()) / 3_600_000).toBeCloseTo(21.17, 1);

    const last = recordAttempt(delivery, fail, { now: delivery.nextAttemptAt!, delaysMs, endpointPaused: false });
    expect(last).toEqual({
      state: { status: "dead_lettered", attempts: 8, nextAttemptAt: null, createdAt: t0 },
      pauseEndpoint: true,
    });
  });

  it.each([1, 4, 8])("succeeds on a 2xx at attempt %i", (attempt) => {
    const before = state(attempt === 1 ? "pending" : "awaiting_retry", attempt - 1);
    expect(recordAttempt(before, succeed, { now: at(1), delaysMs, endpointPaused: false })).toEqual({
      state: { status: "succeeded", attempts: attempt, nextAttemptAt: null, createdAt: t0 },
      pauseEndpoint: false,
    });
  });

  it.each(["succeeded", "dead_lettered", "held"] as const)(
    "refuses to record an attempt on a %s delivery",
    (status) => {
      expect(() => recordAttempt(state(status, 1), succeed, { now: t0, delaysMs, endpointPaused: false })).toThrow(
        DeliveryTransitionError,
      );
    },
  );

  it("refuses a schedule that is not exactly 7 delays", () => {
    expect(() =>
      recordAttempt(state("pending", 0), fail, { now: t0, delaysMs: [1000], endpointPaused: false }),
    ).toThrow(TypeError);
  });

  it("uses the configured delays (tests use seconds)", () => {
    const seconds = parseRetryDelays("1s,2s,3s,4s,5s,6s,7s");
    const next = recordAttempt(state("awaiting_retry", 2), fail, { now: t0, delaysMs: seconds, endpointPaused: false });
    expect(next.state.nextAttemptAt).toEqual(at(3000));
  });
});

describe("paused endpoints hold deliveries and resume releases them", () => {
  it("holds a new delivery while paused and releases it as pending", () => {
    const held = newDelivery({ now: t0, endpointPaused: true });
    expect(held).toMatchObject({ status: "held", attempts: 0, nextAttemptAt: null });
    expect(release(held, at(5 * minute))).toMatchObject({ status: "pending", nextAttemptAt: at(5 * minute) });
  });

  it("holds a failed delivery when the endpoint was paused meanwhile, keeping its attempts toward the 8", () => {
    const failed = recordAttempt(state("awaiting_retry", 3), fail, { now: t0, delaysMs, endpointPaused: true });
    expect(failed).toEqual({
      state: { status: "held", attempts: 4, nextAttemptAt: null, createdAt: t0 },
      pauseEndpoint: false,
    });
    const released = release(failed.state, at(minute));
    expect(released).toMatchObject({ status: "awaiting_retry", attempts: 4, nextAttemptAt: at(minute) });
  });

  it("still dead-letters the 8th failure while paused", () => {
    const last = recordAttempt(state("awaiting_retry", 7), fail, { now: t0, delaysMs, endpointPaused: true });
    expect(last.state.status).toBe("dead_lettered");
    expect(last.pauseEndpoint).toBe(true);
  });

  it.each([
    ["pending", 0, "held"],
    ["awaiting_retry", 2, "held"],
    ["held", 2, "held"],
  ] as const)("pausing holds a %s delivery", (status, attempts, expected) => {
    expect(hold(state(status, attempts))).toMatchObject({ status: expected, attempts, nextAttemptAt: null });
  });

  it.each(["succeeded", "dead_lettered"] as const)("pausing leaves no way to hold a %s delivery", (status) => {
    expect(() => hold(state(status, 8))).toThrow(DeliveryTransitionError);
  });

  it.each(["pending", "awaiting_retry", "succeeded", "dead_lettered"] as const)(
    "only held deliveries are released, not %s",
    (status) => {
      expect(() => release(state(status, 1), t0)).toThrow(DeliveryTransitionError);
    },
  );
});

describe("redrive", () => {
  it.each([
    ["dead_lettered", 8],
    ["awaiting_retry", 3],
    ["succeeded", 1],
  ] as const)("sends a %s delivery again as a fresh run of 8, due now", (status, attempts) => {
    const now = at(redriveWindowMs - 1);
    expect(redrive(state(status, attempts), { now, endpointPaused: false })).toEqual({
      status: "pending",
      attempts: 0,
      nextAttemptAt: now,
      createdAt: t0,
    });
  });

  it("holds the redriven delivery while the endpoint is still paused", () => {
    expect(redrive(state("dead_lettered", 8), { now: at(minute), endpointPaused: true })).toMatchObject({
      status: "held",
      attempts: 0,
      nextAttemptAt: null,
    });
  });

  it.each([redriveWindowMs, redriveWindowMs + 1])("refuses once the event is %i ms old (30 days)", (age) => {
    const attempt = () => redrive(state("dead_lettered", 8), { now: at(age), endpointPaused: false });
    expect(attempt).toThrow(RedriveWindowClosedError);
    expect(attempt).toThrow(expect.objectContaining({ code: "webhook.redrive_window_closed" }) as Error);
  });

  it.each(["pending", "held"] as const)("refuses a %s delivery", (status) => {
    const attempt = () => redrive(state(status, 1), { now: t0, endpointPaused: false });
    expect(attempt).toThrow(DeliveryNotRedrivableError);
    expect(attempt).toThrow(expect.objectContaining({ code: "webhook.delivery_not_redrivable" }) as Error);
  });

  it("refuses a succeeded delivery when the caller's statuses leave it out (a recovery)", () => {
    const attempt = () =>
      redrive(state("succeeded", 1), { now: t0, endpointPaused: false, statuses: ["awaiting_retry", "dead_lettered"] });
    expect(attempt).toThrow(DeliveryNotRedrivableError);
  });
});

describe("any sequence of outcomes (property)", () => {
  it("ends succeeded or dead-lettered within 8 attempts, pausing the endpoint only on a dead-letter", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (outcomes) => {
        let delivery = newDelivery({ now: t0, endpointPaused: false });
        let paused = false;
        for (const ok of outcomes) {
          if (delivery.status === "succeeded" || delivery.status === "dead_lettered") break;
          const next = recordAttempt(
            delivery,
            { ok },
            { now: delivery.nextAttemptAt!, delaysMs, endpointPaused: false },
          );
          paused ||= next.pauseEndpoint;
          delivery = next.state;
          expect(delivery.attempts).toBeLessThanOrEqual(maxAttempts);
        }
        const firstSuccess = outcomes.indexOf(true);
        if (firstSuccess >= 0) {
          expect(delivery).toMatchObject({ status: "succeeded", attempts: firstSuccess + 1 });
          expect(paused).toBe(false);
        } else {
          expect(delivery).toMatchObject({ status: "dead_lettered", attempts: 8 });
          expect(paused).toBe(true);
        }
      }),
    );
  });
});

describe("recordClaimedAttempt", () => {
  const options = { now: t0, delaysMs, endpointPaused: false };
  it("is recordAttempt for a pending or awaiting_retry delivery", () => {
    for (const status of ["pending", "awaiting_retry"] as const) {
      expect(recordClaimedAttempt(state(status, 2), fail, options)).toEqual(
        recordAttempt(state(status, 2), fail, options),
      );
    }
  });
  it("counts an attempt on a delivery held meanwhile: success ends it, failure keeps it held, the 8th dead-letters", () => {
    expect(recordClaimedAttempt(state("held", 2), succeed, options)?.state.status).toBe("succeeded");
    expect(recordClaimedAttempt(state("held", 2), fail, options)).toEqual({
      state: { ...state("held", 3), nextAttemptAt: null },
      pauseEndpoint: false,
    });
    expect(recordClaimedAttempt(state("held", maxAttempts - 1), fail, options)).toMatchObject({
      state: { status: "dead_lettered", attempts: maxAttempts },
      pauseEndpoint: true,
    });
  });
  it("changes nothing on a delivery that reached a final status", () => {
    for (const status of ["succeeded", "dead_lettered"] as const) {
      expect(recordClaimedAttempt(state(status, 1), succeed, options)).toBeUndefined();
    }
  });
});
