import { describe, expect, it } from "vitest";
import {
  allowanceResetsAt,
  allowanceThresholdEventId,
  allowanceThresholdObject,
  allowanceView,
  decidePlanChange,
  PlanChangeInvalidError,
  TenantVersionMismatchError,
  thresholdSends,
  thresholdsStoodAt,
  validatePlanChange,
} from "./testing-allowance.js";

describe("the testing allowance", () => {
  it("resets at the first instant of the next UTC month, also across a year", () => {
    expect(allowanceResetsAt("2026-11").toISOString()).toBe("2026-12-01T00:00:00.000Z");
    expect(allowanceResetsAt("2026-12").toISOString()).toBe("2027-01-01T00:00:00.000Z");
  });

  it("shows what is left, never below zero (a downgrade may stand past the allowance)", () => {
    expect(allowanceView(20, "2026-11", 8)).toMatchObject({ limit: 20, used: 8, remaining: 12 });
    expect(allowanceView(20, "2026-11", 25)).toMatchObject({ used: 25, remaining: 0 });
  });

  it("crosses 80% rounded up and 100% at the allowance", () => {
    expect(thresholdSends(1000, "80_percent")).toBe(800);
    expect(thresholdSends(1000, "100_percent")).toBe(1000);
    expect(thresholdSends(21, "80_percent")).toBe(17);
    expect(thresholdSends(1, "80_percent")).toBe(1);
  });

  it("stands at the thresholds a month's sends have reached, on the testing plan only", () => {
    expect(thresholdsStoodAt(20, "testing", 15)).toEqual([]);
    expect(thresholdsStoodAt(20, "testing", 16)).toEqual(["80_percent"]);
    expect(thresholdsStoodAt(20, "testing", 20)).toEqual(["80_percent", "100_percent"]);
    expect(thresholdsStoodAt(20, "commercial", 25)).toEqual([]);
  });

  it("names one event per tenant, month and threshold", () => {
    const id = allowanceThresholdEventId("acme", "2026-11", "80_percent");
    expect(id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(allowanceThresholdEventId("acme", "2026-11", "80_percent")).toBe(id);
    expect(allowanceThresholdEventId("acme", "2026-12", "80_percent")).not.toBe(id);
    expect(allowanceThresholdEventId("acme", "2026-11", "100_percent")).not.toBe(id);
    expect(allowanceThresholdObject("acme", "2026-11", "100_percent", 20)).toEqual({
      tenant_id: "acme",
      month: "2026-11",
      threshold: "100_percent",
      reason_code: "account.testing_allowance_exhausted",
      allowance: 20,
      sends_used: 20,
      remaining: 0,
      resets_at: "2026-12-01T00:00:00.000Z",
    });
  });
});

describe("plan changes", () => {
  const change = (plan: "testing" | "commercial", reason: string, expectedVersion?: number) =>
    validatePlanChange({ plan, reason, expectedVersion, actor: "" });

  it("take a reason that fits the direction", () => {
    expect(change("commercial", "agreement_signed")).toMatchObject({ plan: "commercial", actor: "admin" });
    expect(change("commercial", "card_saved").reason).toBe("card_saved");
    expect(change("testing", "card_removed").reason).toBe("card_removed");
    expect(() => change("testing", "card_saved")).toThrow(PlanChangeInvalidError);
    expect(() => change("commercial", "agreement_ended")).toThrow(PlanChangeInvalidError);
    expect(() =>
      validatePlanChange({ plan: undefined, reason: "card_saved", expectedVersion: undefined, actor: "" }),
    ).toThrow(PlanChangeInvalidError);
    expect(() => change("commercial", "card_saved", 0)).toThrow(PlanChangeInvalidError);
  });

  it("are no-ops on the same plan whatever the version, else need the current version", () => {
    const tenant = { plan: "testing" as const, version: 4 };
    expect(decidePlanChange({ plan: "commercial", version: 9 }, change("commercial", "card_saved", 4))).toEqual({
      kind: "unchanged",
    });
    expect(decidePlanChange(tenant, change("commercial", "card_saved", 4))).toEqual({ kind: "change", recount: false });
    expect(decidePlanChange(tenant, change("commercial", "card_saved"))).toEqual({ kind: "change", recount: false });
    expect(() => decidePlanChange(tenant, change("commercial", "card_saved", 3))).toThrow(TenantVersionMismatchError);
    expect(decidePlanChange({ plan: "commercial", version: 5 }, change("testing", "agreement_ended"))).toEqual({
      kind: "change",
      recount: true,
    });
  });
});
