import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  newlyCrossedThresholds,
  thresholdCrossedObject,
  thresholdEventId,
  usageMonthOf,
  validateUsageRecord,
} from "./usage-month.js";

describe("usageMonthOf", () => {
  it("is the UTC calendar month, whatever the local offset of the instant's writer", () => {
    expect(usageMonthOf(new Date("2026-11-30T23:59:59.999Z"))).toBe("2026-11");
    expect(usageMonthOf(new Date("2026-12-01T00:00:00.000Z"))).toBe("2026-12");
    // 00:30 on 1 December in UTC+01:00 is still November in UTC.
    expect(usageMonthOf(new Date("2026-12-01T00:30:00+01:00"))).toBe("2026-11");
    expect(usageMonthOf(new Date("2026-12-31T23:59:59Z"))).toBe("2026-12");
    expect(usageMonthOf(new Date("2027-01-01T00:00:00Z"))).toBe("2027-01");
  });
  it("refuses an invalid date", () => {
    expect(() => usageMonthOf(new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe("newlyCrossedThresholds", () => {
  const caps = { softCap: 1000, hardCap: 2000 };
  it("crosses nothing below the soft cap or without caps", () => {
    expect(newlyCrossedThresholds(999, caps, [])).toEqual([]);
    expect(newlyCrossedThresholds(5_000, undefined, [])).toEqual([]);
  });
  it("crosses a cap when the total reaches it exactly", () => {
    expect(newlyCrossedThresholds(1000, caps, [])).toEqual([{ threshold: "soft_cap", cap: 1000 }]);
  });
  it("crosses both caps at once when one record jumps past both, soft first", () => {
    expect(newlyCrossedThresholds(2500, caps, [])).toEqual([
      { threshold: "soft_cap", cap: 1000 },
      { threshold: "hard_cap", cap: 2000 },
    ]);
  });
  it("never crosses a cap already crossed this month", () => {
    expect(newlyCrossedThresholds(2500, caps, ["soft_cap"])).toEqual([{ threshold: "hard_cap", cap: 2000 }]);
    expect(newlyCrossedThresholds(9999, caps, ["soft_cap", "hard_cap"])).toEqual([]);
  });
  it("a zero cap is reached by the first token, never by no usage", () => {
    expect(newlyCrossedThresholds(0, { softCap: 0, hardCap: 0 }, [])).toEqual([]);
    expect(newlyCrossedThresholds(1, { softCap: 0, hardCap: 10 }, [])).toEqual([{ threshold: "soft_cap", cap: 0 }]);
  });
  it("a lowered cap below the current total is crossed (once)", () => {
    expect(newlyCrossedThresholds(1500, { softCap: 1000, hardCap: 1200 }, ["soft_cap"])).toEqual([
      { threshold: "hard_cap", cap: 1200 },
    ]);
  });
});

describe("the event of a crossing", () => {
  it("has the contract's deterministic id: evt_ + sha256 of type|tenant|month|threshold, 24 hex", () => {
    const expected =
      "evt_" + createHash("sha256").update("usage.threshold_crossed|acme|2026-11|soft_cap").digest("hex").slice(0, 24);
    expect(thresholdEventId("acme", "2026-11", "soft_cap")).toBe(expected);
    expect(thresholdEventId("acme", "2026-11", "hard_cap")).not.toBe(expected);
    expect(thresholdEventId("acme", "2026-12", "soft_cap")).not.toBe(expected);
    expect(expected).toMatch(/^evt_[0-9a-f]{24}$/);
  });
  it("carries exactly the spec 2.8 snapshot", () => {
    const at = new Date("2026-11-20T10:00:00Z");
    expect(
      thresholdCrossedObject("2026-11", { threshold: "hard_cap", cap: 2000, tokensUsed: 2010, crossedAt: at }),
    ).toEqual({
      threshold: "hard_cap",
      unit: "tokens",
      month: "2026-11",
      tokens_used: 2010,
      cap: 2000,
      crossed_at: "2026-11-20T10:00:00.000Z",
    });
  });
});

describe("validateUsageRecord", () => {
  it("accepts 1 to 2^53-1 tokens and an optional record id", () => {
    expect(validateUsageRecord({ tokens: 1 })).toEqual({ tokens: 1 });
    expect(validateUsageRecord({ tokens: 5, recordId: "" })).toEqual({ tokens: 5 });
    expect(validateUsageRecord({ tokens: 5, recordId: "run:1.a-b_c" })).toEqual({ tokens: 5, recordId: "run:1.a-b_c" });
  });
  it.each([0, -1, 1.5, Number.NaN, 2 ** 53])("refuses %s tokens with usage.record_invalid", (tokens) => {
    expect(() => validateUsageRecord({ tokens })).toThrow(expect.objectContaining({ code: "usage.record_invalid" }));
  });
  it("refuses a malformed record id", () => {
    expect(() => validateUsageRecord({ tokens: 1, recordId: "a b" })).toThrow(
      expect.objectContaining({ code: "usage.record_invalid" }),
    );
    expect(() => validateUsageRecord({ tokens: 1, recordId: "x".repeat(129) })).toThrow(/recordId/);
  });
});
