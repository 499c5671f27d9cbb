import { describe, expect, it } from "vitest";
import { ChannelPacedError, defaultBurstFor, gcraParameters, paceFrom, retryAfterSeconds } from "./pacing.js";

describe("which number a send is paced on", () => {
  const settings = { phoneNumberId: "1065", perSecond: 50, burst: 50, enabled: true };

  it("paces every tenant on the process-wide WhatsApp number", () => {
    const paceOf = paceFrom({ ...settings, provider: "whatsapp" });
    expect(paceOf("acme")).toEqual({ key: "whatsapp:1065", perSecond: 50, burst: 50 });
    expect(paceOf("beta")).toEqual(paceOf("acme"));
  });

  it("gives each tenant a stand-in number of its own on the sandbox", () => {
    const paceOf = paceFrom({ ...settings, provider: "sandbox" });
    expect(paceOf("acme")).toEqual({ key: "sandbox:acme", perSecond: 50, burst: 50 });
    expect(paceOf("beta")?.key).toBe("sandbox:beta");
  });

  it("paces a tenant's connected number on its own row, at the channel's rate with one second's burst", () => {
    for (const provider of ["whatsapp", "sandbox"] as const) {
      const paceOf = paceFrom({ ...settings, provider });
      expect(paceOf("acme", { phoneNumberId: "2001", messagesPerSecond: 20 })).toEqual({
        key: "whatsapp:2001",
        perSecond: 20,
        burst: 20,
      });
      // A channel that names no rate: the settings' pace, on its own number still.
      expect(paceOf("acme", { phoneNumberId: "2002" })).toEqual({ key: "whatsapp:2002", perSecond: 50, burst: 50 });
    }
  });

  it("paces nothing when pacing is off", () => {
    expect(paceFrom({ ...settings, provider: "whatsapp", enabled: false })("acme")).toBeUndefined();
    expect(
      paceFrom({ ...settings, provider: "whatsapp", enabled: false })("acme", { phoneNumberId: "2001" }),
    ).toBeUndefined();
  });
});

describe("the GCRA's parameters and the partner's wait", () => {
  it("spaces sends 1/perSecond apart and tolerates burst − 1 of them early", () => {
    expect(gcraParameters({ key: "k", perSecond: 80, burst: 80 })).toEqual({
      intervalSeconds: 0.0125,
      toleranceSeconds: 79 * 0.0125,
    });
    expect(gcraParameters({ key: "k", perSecond: 50, burst: 1 }).toleranceSeconds).toBe(0);
    expect(() => gcraParameters({ key: "k", perSecond: 0, burst: 1 })).toThrow(RangeError);
    expect(() => gcraParameters({ key: "k", perSecond: 5, burst: 0 })).toThrow(RangeError);
  });

  it("defaults the burst to one second's worth", () => {
    expect([defaultBurstFor(80), defaultBurstFor(1)]).toEqual([80, 1]);
  });

  it("asks for whole seconds, at least one, the ceiling of the wait", () => {
    expect([0.0001, 0.5, 1, 1.000001, 2.4].map(retryAfterSeconds)).toEqual([1, 1, 1, 2, 3]);
    const error = new ChannelPacedError(0.0125);
    expect(error).toMatchObject({
      kind: "resource_exhausted",
      code: "partner.channel_rate_limited",
      retryAfterSeconds: 1,
    });
  });
});
