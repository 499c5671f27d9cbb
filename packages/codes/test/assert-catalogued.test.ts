import { describe, expect, it } from "vitest";
import { assertCatalogued, codesUsedAs, isCataloguedAs, UncataloguedCodeError } from "../src/index.js";

describe("assertCatalogued", () => {
  it("returns a catalogued code used as asked", () => {
    expect(assertCatalogued("account.tenant_unavailable", "lastErrorCode")).toBe("account.tenant_unavailable");
    expect(assertCatalogued("escalation.ai_uncertain", "reasonCode")).toBe("escalation.ai_uncertain");
  });

  it("throws on a code the catalogue does not hold", () => {
    expect(() => assertCatalogued("tenant.made_up", "lastErrorCode")).toThrow(UncataloguedCodeError);
    expect(() => assertCatalogued("tenant.made_up", "lastErrorCode")).toThrow(/not in the code catalogue/);
  });

  it("throws on a catalogued code used as something it is not", () => {
    expect(isCataloguedAs("usage.limits_invalid", "problem")).toBe(true);
    expect(() => assertCatalogued("usage.limits_invalid", "lastErrorCode")).toThrow(
      /catalogued but not as lastErrorCode/,
    );
  });

  it("codesUsedAs lists the escalation reason codes", () => {
    expect(codesUsedAs("reasonCode")).toEqual(
      expect.arrayContaining(["escalation.customer_requested_human", "escalation.booking_failed"]),
    );
    expect(codesUsedAs("lastErrorCode")).toContain("account.tenant_unavailable");
  });
});
