import { describe, expect, it } from "vitest";
import {
  blockingReasonsOf,
  evaluate,
  forceLive,
  InvalidCapabilityReportError,
  parseRequiredCapabilities,
  reportCapabilityCheck,
  startActivation,
  validateCapabilityReport,
  type ActivationSnapshot,
  type ActivationState,
  type CapabilityRecord,
} from "./activation.js";

const t0 = new Date("2026-11-23T00:00:00.000Z");
const t1 = new Date("2026-11-23T00:01:00.000Z");

const on = (name: string, at = t0): CapabilityRecord => ({
  name,
  state: "on",
  lastResult: "pass",
  lastCheckedAt: at,
  reasonCode: null,
  changedAt: at,
});
const off = (name: string, code: string, at = t0): CapabilityRecord => ({
  name,
  state: "off",
  lastResult: "fail",
  lastCheckedAt: at,
  reasonCode: code,
  changedAt: at,
});

function snapshot(
  state: ActivationState,
  capabilities: CapabilityRecord[] = [],
  lastErrorCode: string | null = null,
): ActivationSnapshot {
  return { tenantId: "acme", state, lastErrorCode, capabilities, required: ["messaging_channel"] };
}

const pass = (capability = "messaging_channel") => ({ capability, passed: true, reasonCode: null });
const fail = (code: string, capability = "messaging_channel") => ({ capability, passed: false, reasonCode: code });
const types = (outcome: { events: { type: string }[] }) => outcome.events.map((e) => e.type);

describe("activation: evaluate", () => {
  it("stalls on anything off, is live when every required capability is on, else waits", () => {
    expect(evaluate([], ["a"])).toBe("validation");
    expect(evaluate([on("a")], ["a"])).toBe("live");
    expect(evaluate([on("a"), off("b", "capability.unreachable")], ["a"])).toBe("stalled");
    expect(evaluate([on("a")], ["a", "b"])).toBe("validation");
  });
});

describe("activation: POST /activation (startActivation)", () => {
  it("provisioning with nothing checked -> validation, no events", () => {
    const outcome = startActivation(snapshot("provisioning"), t1);
    expect(outcome).toMatchObject({ changed: true, state: "validation", events: [] });
  });

  it("provisioning with every required capability on -> live, tenant.activated, lastErrorCode cleared", () => {
    const outcome = startActivation(snapshot("provisioning", [on("messaging_channel")], "capability.unreachable"), t1);
    expect(outcome.state).toBe("live");
    expect(outcome.lastErrorCode).toBeNull();
    expect(outcome.events).toEqual([
      { type: "tenant.activated", object: { tenant_id: "acme", state: "live", activated_at: t1.toISOString() } },
    ]);
  });

  it("provisioning with a capability off -> stalled, tenant.validation_failed naming it, lastErrorCode its code", () => {
    const outcome = startActivation(
      snapshot("provisioning", [off("messaging_channel", "capability.credentials_revoked")]),
      t1,
    );
    expect(outcome.state).toBe("stalled");
    expect(outcome.lastErrorCode).toBe("capability.credentials_revoked");
    expect(outcome.events).toEqual([
      {
        type: "tenant.validation_failed",
        object: {
          tenant_id: "acme",
          state: "stalled",
          failing_step: "validation",
          blocking_reasons: [{ code: "capability.credentials_revoked", capability: "messaging_channel" }],
        },
      },
    ]);
  });

  it("stalled still failing: unchanged, no second tenant.validation_failed", () => {
    const outcome = startActivation(snapshot("stalled", [off("messaging_channel", "capability.unreachable")]), t1);
    expect(outcome).toMatchObject({ changed: false, state: "stalled", events: [] });
  });

  it("validation still waiting: unchanged", () => {
    expect(startActivation(snapshot("validation"), t1)).toMatchObject({ changed: false, state: "validation" });
  });

  it("validation whose checks all passed -> live", () => {
    expect(types(startActivation(snapshot("validation", [on("messaging_channel")]), t1))).toEqual(["tenant.activated"]);
  });

  it("live: nothing changes, even with a capability off", () => {
    const outcome = startActivation(snapshot("live", [off("messaging_channel", "capability.unreachable")]), t1);
    expect(outcome).toMatchObject({ changed: false, state: "live", events: [] });
  });
});

describe("activation: capability check reports", () => {
  it("the messaging channel's check is its readiness; other checks leave readiness alone", () => {
    expect(reportCapabilityCheck(snapshot("live"), fail("capability.unreachable"), t1).channelReady).toBe(false);
    expect(reportCapabilityCheck(snapshot("live"), pass(), t1).channelReady).toBe(true);
    expect(reportCapabilityCheck(snapshot("live"), pass("calendar"), t1).channelReady).toBeUndefined();
  });

  it("a first-ever pass or fail emits no capability event", () => {
    expect(types(reportCapabilityCheck(snapshot("provisioning"), pass(), t1))).toEqual([]);
    expect(types(reportCapabilityCheck(snapshot("provisioning"), fail("capability.unreachable"), t1))).toEqual([]);
  });

  it("a first-ever fail in provisioning sets lastErrorCode but does not move the tenant", () => {
    const outcome = reportCapabilityCheck(snapshot("provisioning"), fail("capability.unreachable"), t1);
    expect(outcome).toMatchObject({ state: "provisioning", lastErrorCode: "capability.unreachable" });
  });

  it("validation + pass of the last required capability -> live, tenant.activated", () => {
    const outcome = reportCapabilityCheck(snapshot("validation"), pass(), t1);
    expect(outcome.state).toBe("live");
    expect(types(outcome)).toEqual(["tenant.activated"]);
    expect(outcome.capability).toMatchObject({ state: "on", lastResult: "pass", changedAt: t1, reasonCode: null });
  });

  it("validation + pass of one of two required capabilities stays in validation", () => {
    const s = { ...snapshot("validation"), required: ["messaging_channel", "calendar"] };
    expect(reportCapabilityCheck(s, pass(), t1)).toMatchObject({ state: "validation", events: [] });
  });

  it("validation + first fail -> stalled, tenant.validation_failed, lastErrorCode the reason", () => {
    const outcome = reportCapabilityCheck(snapshot("validation"), fail("capability.permission_missing"), t1);
    expect(outcome).toMatchObject({ state: "stalled", lastErrorCode: "capability.permission_missing" });
    expect(types(outcome)).toEqual(["tenant.validation_failed"]);
  });

  it("validation + on -> off: capability.suspended then tenant.validation_failed", () => {
    const s = { ...snapshot("validation", [on("calendar")]), required: ["messaging_channel", "calendar"] };
    const outcome = reportCapabilityCheck(s, fail("capability.unreachable", "calendar"), t1);
    expect(types(outcome)).toEqual(["capability.suspended", "tenant.validation_failed"]);
    expect(outcome.events[0]!.object).toEqual({
      tenant_id: "acme",
      capability: "calendar",
      state: "off",
      reason_code: "capability.unreachable",
      checked_at: t1.toISOString(),
    });
  });

  it("stalled + the failing capability passes with all required on -> restored, activated, lastErrorCode cleared", () => {
    const s = snapshot("stalled", [off("messaging_channel", "capability.unreachable")], "capability.unreachable");
    const outcome = reportCapabilityCheck(s, pass(), t1);
    expect(outcome).toMatchObject({ state: "live", lastErrorCode: null });
    expect(types(outcome)).toEqual(["capability.restored", "tenant.activated"]);
    expect(outcome.events[0]!.object).toEqual({
      tenant_id: "acme",
      capability: "messaging_channel",
      state: "on",
      checked_at: t1.toISOString(),
    });
  });

  it("stalled + restored but a required one unchecked -> validation", () => {
    const s = {
      ...snapshot("stalled", [off("messaging_channel", "capability.unreachable")], "capability.unreachable"),
      required: ["messaging_channel", "calendar"],
    };
    const outcome = reportCapabilityCheck(s, pass(), t1);
    expect(outcome).toMatchObject({ state: "validation", lastErrorCode: null });
    expect(types(outcome)).toEqual(["capability.restored"]);
  });

  it("stalled + one of two failing restored: stays stalled, lastErrorCode the other's code", () => {
    const s = snapshot(
      "stalled",
      [off("messaging_channel", "capability.unreachable", t0), off("calendar", "capability.permission_missing", t0)],
      "capability.unreachable",
    );
    const outcome = reportCapabilityCheck(s, pass(), t1);
    expect(outcome).toMatchObject({ state: "stalled", lastErrorCode: "capability.permission_missing" });
    expect(types(outcome)).toEqual(["capability.restored"]);
  });

  it("stalled + another failure: stays stalled without a second tenant.validation_failed", () => {
    const s = snapshot("stalled", [off("messaging_channel", "capability.unreachable", t0)], "capability.unreachable");
    const outcome = reportCapabilityCheck(s, fail("capability.check_failed", "calendar"), t1);
    expect(outcome).toMatchObject({ state: "stalled", lastErrorCode: "capability.check_failed", events: [] });
  });

  it("live + on -> off: capability.suspended, stays live, lastErrorCode the reason", () => {
    const outcome = reportCapabilityCheck(
      snapshot("live", [on("messaging_channel")]),
      fail("capability.credentials_revoked"),
      t1,
    );
    expect(outcome).toMatchObject({ state: "live", lastErrorCode: "capability.credentials_revoked" });
    expect(types(outcome)).toEqual(["capability.suspended"]);
  });

  it("live + off -> on: capability.restored, lastErrorCode cleared", () => {
    const s = snapshot(
      "live",
      [off("messaging_channel", "capability.credentials_revoked")],
      "capability.credentials_revoked",
    );
    const outcome = reportCapabilityCheck(s, pass(), t1);
    expect(outcome).toMatchObject({ state: "live", lastErrorCode: null });
    expect(types(outcome)).toEqual(["capability.restored"]);
  });

  it("a repeated identical report changes nothing and emits nothing (pass or fail)", () => {
    const passing = reportCapabilityCheck(snapshot("live", [on("messaging_channel")]), pass(), t1);
    expect(passing).toMatchObject({ changed: false, events: [] });
    expect(passing.capability.changedAt).toEqual(t0);
    const s = snapshot("stalled", [off("messaging_channel", "capability.unreachable")], "capability.unreachable");
    expect(reportCapabilityCheck(s, fail("capability.unreachable"), t1)).toMatchObject({
      changed: false,
      state: "stalled",
      lastErrorCode: "capability.unreachable",
      events: [],
    });
  });

  it("a failing capability failing with another code changes its code (no event)", () => {
    const s = snapshot("live", [off("messaging_channel", "capability.unreachable")], "capability.unreachable");
    const outcome = reportCapabilityCheck(s, fail("capability.credentials_revoked"), t1);
    expect(outcome).toMatchObject({ changed: true, events: [], lastErrorCode: "capability.credentials_revoked" });
    expect(outcome.capability.changedAt).toEqual(t0);
  });
});

describe("activation: the operator's override", () => {
  it("makes any tenant live with tenant.activated, once", () => {
    for (const state of ["provisioning", "validation", "stalled"] as const) {
      const outcome = forceLive(snapshot(state, [], "capability.unreachable"), t1);
      expect(outcome).toMatchObject({ state: "live", lastErrorCode: null });
      expect(types(outcome)).toEqual(["tenant.activated"]);
    }
    expect(forceLive(snapshot("live"), t1).events).toEqual([]);
  });
});

describe("activation: blocking reasons", () => {
  it("name each failing capability with its code, then each required one never checked", () => {
    const reasons = blockingReasonsOf(
      "stalled",
      [off("calendar", "capability.permission_missing", t0)],
      ["messaging_channel", "calendar"],
      t1,
    );
    expect(reasons).toEqual([
      { code: "capability.permission_missing", capability: "calendar", since: t0 },
      { code: "activation.capability_unchecked", capability: "messaging_channel", since: t1 },
    ]);
    expect(blockingReasonsOf("live", [off("calendar", "capability.unreachable")], [], t1)).toEqual([]);
    expect(blockingReasonsOf("provisioning", [], ["messaging_channel"], t1)).toEqual([]);
  });
});

describe("activation: reports and configuration", () => {
  it("accepts a pass without a code and a fail with a capability reason code", () => {
    expect(validateCapabilityReport({ capability: "messaging_channel", passed: true, reasonCode: "" })).toEqual({
      capability: "messaging_channel",
      passed: true,
      reasonCode: null,
    });
    expect(
      validateCapabilityReport({ capability: "calendar", passed: false, reasonCode: "capability.unreachable" }),
    ).toMatchObject({ reasonCode: "capability.unreachable" });
  });

  it.each([
    [{ capability: "Bad-Name", passed: true, reasonCode: "" }, /capability must be/],
    [{ capability: "a".repeat(65), passed: true, reasonCode: "" }, /capability must be/],
    [{ capability: "calendar", passed: false, reasonCode: "" }, /needs a reason code/],
    [{ capability: "calendar", passed: false, reasonCode: "capability.nope" }, /not a capability reason code/],
    [{ capability: "calendar", passed: false, reasonCode: "tenant.not_found" }, /not a capability reason code/],
    [{ capability: "calendar", passed: false, reasonCode: "capability.report_invalid" }, /not a capability reason/],
    [{ capability: "calendar", passed: true, reasonCode: "capability.unreachable" }, /carries no reason code/],
  ])("rejects %j as capability.report_invalid", (input, message) => {
    let caught: unknown;
    try {
      validateCapabilityReport(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidCapabilityReportError);
    expect((caught as InvalidCapabilityReportError).code).toBe("capability.report_invalid");
    expect((caught as Error).message).toMatch(message);
  });

  it("parses NOTIFY_REQUIRED_CAPABILITIES", () => {
    expect(parseRequiredCapabilities(" messaging_channel, calendar ,messaging_channel")).toEqual([
      "messaging_channel",
      "calendar",
    ]);
    expect(() => parseRequiredCapabilities("Calendar")).toThrow(/not a capability name/);
  });
});
