import { afterEach, describe, expect, it, vi } from "vitest";
import { DownstreamView } from "./downstream-view.js";
import type { ServingStatus } from "./grpc-health.js";

/** A check the test answers by hand: each call waits until `answer` resolves it. */
function scriptedCheck() {
  const pending: ((status: ServingStatus) => void)[] = [];
  let started = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  const check = () =>
    new Promise<ServingStatus>((resolve) => {
      started += 1;
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      pending.push((status) => {
        inFlight -= 1;
        resolve(status);
      });
    });
  return {
    check,
    get started() {
      return started;
    },
    get mostInFlight() {
      return mostInFlight;
    },
    /** Waits for the next check to start, answers it, and lets the view record the answer. */
    async answer(status: ServingStatus) {
      await vi.waitFor(() => expect(pending.length).toBeGreaterThan(0), { timeout: 2_000, interval: 1 });
      pending.shift()!(status);
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe("DownstreamView", () => {
  let view: DownstreamView | undefined;
  afterEach(() => view?.stop());

  it("is UNREACHABLE only after two unanswered checks in a row, and reachable again at the first answer", async () => {
    const script = scriptedCheck();
    const changes: string[] = [];
    view = new DownstreamView("notify", script.check, {
      intervalMs: 1,
      probeSpacingMs: 0,
      onChange: (status, previous) => changes.push(`${previous}->${status}`),
    });
    void view.start();
    expect(view.status).toBe("UNKNOWN");
    expect(view.reachable).toBe(true);
    await script.answer("SERVING");
    expect(view.status).toBe("SERVING");
    // One hung process among answering ones (checks go round robin): never two in a row.
    for (let i = 0; i < 3; i++) {
      await script.answer("UNREACHABLE");
      expect(view.reachable).toBe(true);
      expect(view.status).toBe("SERVING");
      await script.answer("SERVING");
    }
    await script.answer("UNREACHABLE");
    await script.answer("UNREACHABLE");
    expect(view.status).toBe("UNREACHABLE");
    expect(view.reachable).toBe(false);
    await script.answer("UNREACHABLE");
    expect(view.reachable).toBe(false);
    // A draining process answers NOT_SERVING: reachable, its calls still go through.
    await script.answer("NOT_SERVING");
    expect(view.status).toBe("NOT_SERVING");
    expect(view.reachable).toBe(true);
    expect(changes).toEqual(["UNKNOWN->SERVING", "SERVING->UNREACHABLE", "UNREACHABLE->NOT_SERVING"]);
    expect(script.mostInFlight).toBe(1);
  });

  it("waits the interval after an answer, but probes again at once after an unanswered check: recovery is seen on the next answer, not after a fixed wait", async () => {
    const script = scriptedCheck();
    view = new DownstreamView("catalog", script.check, { intervalMs: 60_000, probeSpacingMs: 0 });
    await view.start(1);
    await script.answer("SERVING");
    // The next check is a minute away.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(script.started).toBe(1);
    view.stop();

    const failing = scriptedCheck();
    view = new DownstreamView("catalog", failing.check, { intervalMs: 60_000, probeSpacingMs: 0 });
    void view.start();
    // Each unanswered check is followed by the next at once (well inside the minute), one at a time.
    await failing.answer("UNREACHABLE");
    await failing.answer("UNREACHABLE");
    expect(view.reachable).toBe(false);
    await failing.answer("UNREACHABLE");
    await failing.answer("SERVING");
    expect(view.reachable).toBe(true);
    expect(failing.started).toBe(4);
    expect(failing.mostInFlight).toBe(1);
  });

  it("spaces probes of a downstream that refuses at once, and counts a check that throws as unanswered", async () => {
    let checks = 0;
    view = new DownstreamView(
      "webhooks",
      () => {
        checks += 1;
        return Promise.reject(new Error("connection refused"));
      },
      { intervalMs: 60_000, probeSpacingMs: 100 },
    );
    await view.start(1_000);
    await vi.waitFor(() => expect(view!.reachable).toBe(false), { timeout: 2_000, interval: 5 });
    const before = checks;
    await new Promise((resolve) => setTimeout(resolve, 350));
    // About 3 in 350 ms at one per 100 ms, not thousands; and well fewer than one a millisecond.
    expect(checks - before).toBeGreaterThanOrEqual(1);
    expect(checks - before).toBeLessThanOrEqual(5);
  });

  it("starts without waiting for a check that does not answer beyond the given wait", async () => {
    const script = scriptedCheck();
    view = new DownstreamView("notify", script.check, { intervalMs: 1_000 });
    const started = performance.now();
    await view.start(50);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(view.status).toBe("UNKNOWN");
  });
});
