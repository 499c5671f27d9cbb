/** The claim stage without NATS or Postgres (fakes: attempt-fakes.testing.ts). */
import { describe, expect, it } from "vitest";
import { claimed, claimedDelivery, endpointId, jobMessage, stageDeps, traceparent } from "./attempt-fakes.testing.js";
import { claimJob } from "./claim-stage.js";

describe("claim", () => {
  it("terminates a message that is not a job, without a claim", async () => {
    const { deps: d, calls, lines } = stageDeps(claimed());
    const { msg, answers } = jobMessage("not json");
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(answers).toEqual([["term"]]);
    expect(calls).toEqual([]);
    expect(lines).toMatchObject([
      { level: "error", subject: msg.subject, seq: 42, msg: "a message on the delivery stream is not a job; dropped" },
    ]);
  });

  it("claims the job's delivery and generation for the lease, and hands on the delivery with its ids", async () => {
    const delivery = claimedDelivery();
    const { deps: d, calls } = stageDeps(claimed(delivery));
    const { msg, answers } = jobMessage();
    const attempt = await claimJob(msg, d);
    expect(calls).toEqual([["claim", { deliveryId: "dlv_1", generation: 3 }, 60_000]]);
    expect(answers).toEqual([]);
    expect(attempt?.delivery).toBe(delivery);
    expect(attempt?.ids).toEqual({ eventId: "evt_1", deliveryId: "dlv_1", endpointId });
  });

  it.each([
    ["stale", { kind: "stale" } as const, [["ack"]]],
    ["leased by another worker", { kind: "leased" } as const, [["nak", 5_000]]],
  ])("answers a %s job at once", async (_, claim, expected) => {
    const { deps: d } = stageDeps(claim);
    const { msg, answers } = jobMessage();
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(answers).toEqual(expected);
  });

  it("dead-letters the delivery of a deleted endpoint without an attempt, then acks", async () => {
    const { deps: d, calls, lines } = stageDeps(claimed(claimedDelivery({ deleted: true, paused: true, traceparent })));
    const { msg, answers } = jobMessage();
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(calls.slice(1)).toEqual([["abandonClaimed", "dlv_1"]]);
    expect(answers).toEqual([["ack"]]);
    expect(lines).toMatchObject([
      {
        level: "info",
        trace_id: "0af7651916cd43dd8448eb211c80319c",
        eventId: "evt_1",
        deliveryId: "dlv_1",
        endpointId,
        msg: "the endpoint was deleted; the delivery is dead-lettered without an attempt",
      },
    ]);
  });

  it("holds the delivery of a paused endpoint, then acks", async () => {
    const { deps: d, calls, lines } = stageDeps(claimed(claimedDelivery({ paused: true })));
    const { msg, answers } = jobMessage();
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(calls.slice(1)).toEqual([["holdClaimed", "dlv_1"]]);
    expect(answers).toEqual([["ack"]]);
    expect(lines).toMatchObject([{ level: "debug", msg: "the endpoint is paused; the delivery is held" }]);
  });

  it("gives back a delivery not due yet and naks its job until it is due (whole milliseconds, rounded up)", async () => {
    const { deps: d, calls } = stageDeps(claimed(claimedDelivery({ dueInMs: 1234.2 })));
    const { msg, answers } = jobMessage();
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(calls.slice(1)).toEqual([["release", "dlv_1"]]);
    expect(answers).toEqual([["nak", 1235]]);
  });

  it("reschedules a delivery over its endpoint's rate limit to its slot and naks until then: no attempt", async () => {
    const { deps: d, calls, lines } = stageDeps(claimed(claimedDelivery({ rateLimit: 5 })), { rateWaitMs: 180.4 });
    const { msg, answers } = jobMessage();
    expect(await claimJob(msg, d)).toBeUndefined();
    expect(calls.slice(1)).toEqual([["reserveRateSlot", "dlv_1", 5]]);
    expect(answers).toEqual([["nak", 181]]);
    expect(lines).toMatchObject([
      { level: "debug", waitMs: 180.4, msg: "over the endpoint's rate limit; the delivery waits for its slot" },
    ]);
  });

  it("hands on a limited delivery whose slot is now, and one that holds its slot already without asking again", async () => {
    const now = stageDeps(claimed(claimedDelivery({ rateLimit: 5 })), { rateWaitMs: 0 });
    expect((await claimJob(jobMessage().msg, now.deps))?.delivery.id).toBe("dlv_1");
    expect(now.calls.slice(1)).toEqual([["reserveRateSlot", "dlv_1", 5]]);
    const held = stageDeps(claimed(claimedDelivery({ rateLimit: 5, rateSlotHeld: true })), { rateWaitMs: 999 });
    expect((await claimJob(jobMessage().msg, held.deps))?.delivery.id).toBe("dlv_1");
    expect(held.calls.slice(1)).toEqual([]);
  });

  it("never asks the limiter for an unlimited endpoint", async () => {
    const { deps: d, calls } = stageDeps(claimed(claimedDelivery()), { rateWaitMs: 999 });
    expect(await claimJob(jobMessage().msg, d)).toBeDefined();
    expect(calls.slice(1)).toEqual([]);
  });
});
