import { describe, expect, it } from "vitest";
import { nextRedriveAt, recoveryWindow } from "./recovery.js";

const now = new Date("2026-07-31T12:00:00.000Z");
const retentionMs = 30 * 86_400_000;
const window = (since: string, until?: string) => recoveryWindow({ since, until }, { now, retentionMs });
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return { code: (error as { code: string }).code, message: (error as Error).message };
  }
  throw new Error("no refusal");
};

describe("recoveryWindow", () => {
  it("takes since up to now and until after since", () => {
    expect(window("2026-07-31T11:00:00Z")).toEqual({
      since: new Date("2026-07-31T11:00:00Z"),
      until: now,
      untilGiven: false,
    });
    expect(window("2026-07-31T12:00:00Z").since).toEqual(now);
    expect(window("2026-07-01T12:00:00.000Z").since).toEqual(new Date("2026-07-01T12:00:00Z")); // exactly 30 days
    expect(window("2026-07-30T00:00:00+02:00", "2026-07-31T00:00:00Z").until).toEqual(new Date("2026-07-31T00:00:00Z"));
  });

  it("refuses since in the future, older than the retention, until not after since, and non-RFC 3339", () => {
    expect(refusal(() => window("2026-07-31T12:00:00.001Z"))).toEqual({
      code: "webhook.recovery_window_invalid",
      message: "since is in the future",
    });
    const old = refusal(() => window("2026-07-01T11:59:59.999Z"));
    expect(old.code).toBe("webhook.recovery_window_invalid");
    expect(old.message).toContain("older than the 30-day retention");
    expect(old.message).toContain("2026-07-01T12:00:00.000Z");
    expect(refusal(() => window("2026-07-31T11:00:00Z", "2026-07-31T11:00:00Z")).message).toBe(
      "until must be after since",
    );
    expect(refusal(() => window("2026-07-31")).code).toBe("webhook.recovery_window_invalid");
    expect(refusal(() => window("yesterday")).code).toBe("webhook.recovery_window_invalid");
    expect(refusal(() => window("2026-07-31T11:00:00")).code).toBe("webhook.recovery_window_invalid");
  });
});

describe("nextRedriveAt", () => {
  it("the first at once, each next 1/rate after the previous one began", () => {
    expect(nextRedriveAt(undefined, 5)).toBe(0);
    expect(nextRedriveAt(1000, 5)).toBe(1200);
    expect(nextRedriveAt(1000, 0.5)).toBe(3000);
  });
});
