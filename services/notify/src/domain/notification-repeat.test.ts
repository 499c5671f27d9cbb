import { describe, expect, it } from "vitest";
import { decideRepeat, type RememberedClaim } from "./notification-repeat.js";

interface Send {
  notificationId: string;
  state: "sent" | "unknown";
}
const sent: Send = { notificationId: "ntf_1", state: "sent" };
const claim = (overrides: Partial<RememberedClaim<Send>>): RememberedClaim<Send> => ({
  fingerprint: "f1",
  state: "in_progress",
  result: null,
  leaseExpired: false,
  ...overrides,
});

describe("decideRepeat", () => {
  it.each([
    ["no claim any more", undefined, "f1", { kind: "claim_afresh" }],
    ["another request under the key", claim({}), "f2", { kind: "key_reused" }],
    ["another request, even once completed", claim({ state: "completed", result: sent }), "f2", { kind: "key_reused" }],
    ["a recorded send", claim({ state: "completed", result: sent }), "f1", { kind: "replay", result: sent }],
    [
      "a recorded unknown outcome",
      claim({ state: "completed", result: { ...sent, state: "unknown" } }),
      "f1",
      { kind: "outcome_unknown" },
    ],
    ["a completed key without a result", claim({ state: "completed" }), "f1", { kind: "outcome_unknown" }],
    ["a first attempt still within its lease", claim({}), "f1", { kind: "in_progress" }],
    ["a first attempt whose lease ran out", claim({ leaseExpired: true }), "f1", { kind: "settle_abandoned" }],
  ] as const)("%s", (_case, remembered, fingerprint, expected) => {
    expect(decideRepeat(remembered, fingerprint)).toEqual(expected);
  });

  it("never replays anything but a recorded sent", () => {
    for (const state of ["in_progress", "completed"] as const) {
      for (const leaseExpired of [false, true]) {
        const decision = decideRepeat(claim({ state, leaseExpired, result: { ...sent, state: "unknown" } }), "f1");
        expect(decision.kind).not.toBe("replay");
      }
    }
  });
});
