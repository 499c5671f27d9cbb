import { describe, expect, it } from "vitest";
import {
  consentCommandOf,
  validateChannelConnection,
  verdictOf,
  verdictOfUpdate,
  type NumberCheck,
} from "./channel.js";

const read = (status: string, qualityRating: string): NumberCheck => ({
  kind: "read",
  reading: { displayPhoneNumber: "+1 555-0100", verifiedName: "Paws", qualityRating, status },
});

describe("the readiness rule of a number", () => {
  it.each([
    [read("CONNECTED", "GREEN"), { passed: true, reasonCode: null }],
    [read("CONNECTED", "YELLOW"), { passed: true, reasonCode: null }],
    [read("CONNECTED", "RED"), { passed: false, reasonCode: "capability.channel_quality_low" }],
    [read("FLAGGED", "GREEN"), { passed: false, reasonCode: "capability.channel_quality_low" }],
    [read("BANNED", "GREEN"), { passed: false, reasonCode: "capability.channel_restricted" }],
    [read("DISCONNECTED", "GREEN"), { passed: false, reasonCode: "capability.channel_disconnected" }],
    [
      { kind: "refused", httpStatus: 401, providerCode: 190 } as const,
      { passed: false, reasonCode: "capability.credentials_revoked" },
    ],
    [
      { kind: "refused", httpStatus: 403, providerCode: 200 } as const,
      { passed: false, reasonCode: "capability.permission_missing" },
    ],
    [
      { kind: "refused", httpStatus: 400, providerCode: 100 } as const,
      { passed: false, reasonCode: "capability.check_failed" },
    ],
    [{ kind: "unreachable", reason: "timeout" } as const, undefined],
  ])("%o -> %o", (check, verdict) => {
    expect(verdictOf(check)).toEqual(verdict);
  });

  it("a lifted flag restores only a quality failure", () => {
    const unflagged = { field: "phone_number_quality_update" as const, value: { event: "UNFLAGGED" } };
    expect(verdictOfUpdate(unflagged, "capability.channel_quality_low")).toEqual({ passed: true, reasonCode: null });
    expect(verdictOfUpdate(unflagged, "capability.credentials_revoked")).toBeUndefined();
    expect(
      verdictOfUpdate({ field: "phone_number_quality_update", value: { event: "UPGRADE" } }, null),
    ).toBeUndefined();
  });
});

describe("a channel connection", () => {
  const valid = {
    wabaId: "1022",
    phoneNumberId: "1065",
    accessToken: "EAAG-0123456789abcdef",
    templates: [],
    messagesPerSecond: undefined,
    stopKeywords: undefined,
    startKeywords: undefined,
    expectedVersion: undefined,
  };
  it("takes the defaults and normalises keywords", () => {
    expect(validateChannelConnection(valid)).toMatchObject({
      messagesPerSecond: 80,
      stopKeywords: ["STOP", "UNSUBSCRIBE"],
      startKeywords: ["START"],
    });
    expect(validateChannelConnection({ ...valid, stopKeywords: [" parar ", "Parar"] }).stopKeywords).toEqual(["PARAR"]);
  });
  it("names every problem, never the token", () => {
    const attempt = () =>
      validateChannelConnection({ ...valid, wabaId: "x", accessToken: "short token", messagesPerSecond: 0 });
    expect(attempt).toThrow(/wabaId.*accessToken.*messagesPerSecond/);
    expect(attempt).not.toThrow(/short token/);
  });
  it("reads STOP and START case-insensitively, trimmed, and nothing else", () => {
    const keywords = { stopKeywords: ["STOP", "UNSUBSCRIBE"], startKeywords: ["START"] };
    expect(consentCommandOf("  sToP\n", keywords)).toBe("opt_out");
    expect(consentCommandOf("start", keywords)).toBe("opt_in");
    expect(consentCommandOf("please stop", keywords)).toBeUndefined();
  });
});
