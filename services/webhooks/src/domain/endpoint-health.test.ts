import { describe, expect, it } from "vitest";
import { endpointHealth, successRateOf } from "./endpoint-health.js";

describe("endpointHealth", () => {
  it.each([
    // [succeeded, attempts, health]
    [0, 0, "healthy"],
    [20, 20, "healthy"],
    [19, 20, "healthy"], // exactly 95 %
    [95, 100, "healthy"],
    [949, 1000, "degraded"], // 94.9 %
    [94, 100, "degraded"],
    [1, 2, "degraded"], // exactly 50 %
    [50, 100, "degraded"],
    [499, 1000, "failing"], // 49.9 %
    [49, 100, "failing"],
    [0, 1, "failing"],
  ] as const)("%i of %i attempts succeeded: %s", (succeeded, attempts, health) => {
    expect(endpointHealth(false, { attempts, succeeded })).toBe(health);
  });

  it("a paused endpoint is paused whatever its attempts", () => {
    expect(endpointHealth(true, { attempts: 0, succeeded: 0 })).toBe("paused");
    expect(endpointHealth(true, { attempts: 10, succeeded: 10 })).toBe("paused");
    expect(endpointHealth(true, { attempts: 10, succeeded: 0 })).toBe("paused");
  });

  it("the success rate is succeeded / attempts, null without attempts", () => {
    expect(successRateOf({ attempts: 0, succeeded: 0 })).toBeNull();
    expect(successRateOf({ attempts: 4, succeeded: 3 })).toBe(0.75);
  });
});
