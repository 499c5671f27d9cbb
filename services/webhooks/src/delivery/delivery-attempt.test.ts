/** One attempt, its stages in order, without NATS or Postgres (fakes: attempt-fakes.testing.ts). */
import { describe, expect, it } from "vitest";
import type { RecordedAttempt } from "../db/attempt-store.js";
import { sealSecret } from "../domain/secret-box.js";
import {
  answered,
  claimed,
  claimedDelivery,
  createdAt,
  endpointId,
  jobMessage,
  otherRing,
  secret,
  stageDeps,
} from "./attempt-fakes.testing.js";
import { attemptJob } from "./delivery-attempt.js";

describe("one attempt, the stages in order", () => {
  it("claims, sends, records, and acks only after the record is written", async () => {
    let commit!: (recorded: RecordedAttempt) => void;
    const written = new Promise<RecordedAttempt>((resolve) => (commit = resolve));
    const { deps: d, calls } = stageDeps(claimed(), { recorded: written });
    const { msg, answers } = jobMessage();
    const attempt = attemptJob(msg, d);
    await expect.poll(() => calls.length).toBe(3);
    expect(calls.map(([step]) => step)).toEqual(["claim", "send", "recordAttempt"]);
    expect(answers).toEqual([]);
    commit({ number: 1, status: "succeeded", nextAttemptAt: null, deadLettered: false, createdAt });
    await attempt;
    expect(answers).toEqual([["ack"]]);
  });

  it("naks a failed attempt until its retry", async () => {
    const nextAttemptAt = new Date(Date.now() + 30_000);
    const { deps: d, respondWith } = stageDeps(claimed(), {
      recorded: { status: "awaiting_retry", nextAttemptAt },
    });
    respondWith(() => Promise.resolve(answered(500)));
    const { msg, answers } = jobMessage();
    await attemptJob(msg, d);
    expect(answers).toHaveLength(1);
    expect(answers[0]![0]).toBe("nak");
    expect(answers[0]![1]).toBeGreaterThan(29_000);
  });

  it("makes no attempt for a job answered by its claim or its secret", async () => {
    const stale = stageDeps({ kind: "stale" });
    await attemptJob(jobMessage().msg, stale.deps);
    expect(stale.calls.map(([step]) => step)).toEqual(["claim"]);

    const sealedElsewhere = claimedDelivery({ secretSealed: sealSecret(otherRing, secret, endpointId) });
    const locked = stageDeps(claimed(sealedElsewhere));
    const { msg, answers } = jobMessage();
    await attemptJob(msg, locked.deps);
    expect(locked.calls.map(([step]) => step)).toEqual(["claim", "release"]);
    expect(answers).toEqual([["nak", 30_000]]);
  });

  it("leaves the job unanswered when the record fails (the worker gives it back)", async () => {
    const { deps: d } = stageDeps(claimed(), { recorded: Promise.reject(new Error("Postgres away")) });
    const { msg, answers } = jobMessage();
    await expect(attemptJob(msg, d)).rejects.toThrow("Postgres away");
    expect(answers).toEqual([]);
  });
});
