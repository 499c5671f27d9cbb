import { describe, expect, it } from "vitest";
import { InvalidUsageLimitsError, validateUsageLimits } from "./usage-limits.js";

describe("validateUsageLimits", () => {
  it("accepts caps from 0 to 2^53-1 with soft not above hard", () => {
    expect(validateUsageLimits(0, 0)).toEqual({ softCap: 0, hardCap: 0 });
    expect(validateUsageLimits(5, Number.MAX_SAFE_INTEGER)).toEqual({ softCap: 5, hardCap: Number.MAX_SAFE_INTEGER });
  });

  it("names every problem at once", () => {
    expect(() => validateUsageLimits(-1, 1.5)).toThrow(
      new InvalidUsageLimitsError(
        "softCap must be a whole number of tokens from 0 to 9007199254740991; " +
          "hardCap must be a whole number of tokens from 0 to 9007199254740991",
      ),
    );
  });

  it("refuses a soft cap above the hard cap with a stable code", () => {
    expect(() => validateUsageLimits(3, 2)).toThrow(
      expect.objectContaining({ code: "usage.limits_invalid", message: "softCap must not be greater than hardCap" }),
    );
  });
});
