/**
 * Tenant activation and capability checks (issue 10), as plain functions: the state machine
 * decides the next state, the tenant's lastErrorCode and the events to emit; the gRPC service
 * applies the outcome in one transaction. See docs/tenant-state.md ("Activation and capabilities").
 */
import { codeEntry } from "@platform/codes";
import { InvalidArgumentError } from "@platform/service-kit/errors";

export const activationStates = ["provisioning", "validation", "live", "stalled"] as const;
export type ActivationState = (typeof activationStates)[number];

export type CapabilityState = "on" | "off";
export type CheckResult = "pass" | "fail";

/** A capability's last check (a capability never checked has no record: it is "unchecked"). */
export interface CapabilityRecord {
  name: string;
  state: CapabilityState;
  lastResult: CheckResult;
  lastCheckedAt: Date;
  /** The failing check's code; null when the last check passed. */
  reasonCode: string | null;
  /** When `state` last changed (the first check counts as a change). */
  changedAt: Date;
}

/** What the state machine reads of a tenant. */
export interface ActivationSnapshot {
  tenantId: string;
  state: ActivationState;
  lastErrorCode: string | null;
  capabilities: readonly CapabilityRecord[];
  required: readonly string[];
}

export interface ActivationEvent {
  type: "tenant.activated" | "tenant.validation_failed" | "capability.suspended" | "capability.restored";
  /** data.object: snake_case keys, ids, states, timestamps and catalogue codes only. */
  object: Record<string, unknown>;
}

/** What a command changes; `changed` false means nothing at all is written but the check time. */
export interface ActivationOutcome {
  changed: boolean;
  state: ActivationState;
  lastErrorCode: string | null;
  capabilities: CapabilityRecord[];
  events: ActivationEvent[];
}

export const CAPABILITY_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** The capability whose check decides whether the tenant's messaging channel is ready. */
export const CHANNEL_CAPABILITY = "messaging_channel";

export class InvalidCapabilityReportError extends InvalidArgumentError {
  override name = "InvalidCapabilityReportError";
  constructor(message: string) {
    super("capability.report_invalid", message);
  }
}

/** Reason codes a failed check may carry: catalogue codes of the capability area used as reason codes. */
export function isCapabilityReasonCode(code: string): boolean {
  return code.startsWith("capability.") && (codeEntry(code)?.usedAs.includes("reasonCode") ?? false);
}

export interface CapabilityReport {
  capability: string;
  passed: boolean;
  reasonCode: string | null;
}

/** Checks a report; names every problem in one message. */
export function validateCapabilityReport(input: {
  capability: string;
  passed: boolean;
  reasonCode: string;
}): CapabilityReport {
  const problems: string[] = [];
  if (!CAPABILITY_NAME.test(input.capability)) {
    problems.push("capability must be 1-64 characters of a-z 0-9 _ starting with a letter");
  }
  const reason = input.reasonCode.trim();
  if (input.passed && reason !== "") problems.push("a passing check carries no reason code");
  if (!input.passed && reason === "") problems.push("a failing check needs a reason code");
  if (!input.passed && reason !== "" && !isCapabilityReasonCode(reason)) {
    problems.push(
      `reason ${JSON.stringify(reason.slice(0, 80))} is not a capability reason code of the code catalogue`,
    );
  }
  if (problems.length > 0) throw new InvalidCapabilityReportError(problems.join("; "));
  return { capability: input.capability, passed: input.passed, reasonCode: input.passed ? null : reason };
}

/** Parses NOTIFY_REQUIRED_CAPABILITIES: a comma list of capability names (duplicates dropped). */
export function parseRequiredCapabilities(value: string): string[] {
  const names = value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  for (const name of names) {
    if (!CAPABILITY_NAME.test(name)) throw new Error(`${name} is not a capability name (a-z 0-9 _, 1-64)`);
  }
  return [...new Set(names)];
}

const offCapabilities = (capabilities: readonly CapabilityRecord[]) =>
  capabilities.filter((c) => c.state === "off").sort((a, b) => b.changedAt.getTime() - a.changedAt.getTime());

/** Where activation stands given the checks: anything off stalls; every required one on is live. */
export function evaluate(capabilities: readonly CapabilityRecord[], required: readonly string[]): ActivationState {
  if (capabilities.some((c) => c.state === "off")) return "stalled";
  const on = new Set(capabilities.filter((c) => c.state === "on").map((c) => c.name));
  return required.every((name) => on.has(name)) ? "live" : "validation";
}

/** The code lastErrorCode carries: the most recently failed capability still off, else none. */
function errorCodeOf(capabilities: readonly CapabilityRecord[]): string | null {
  return offCapabilities(capabilities)[0]?.reasonCode ?? null;
}

function activatedEvent(tenantId: string, now: Date): ActivationEvent {
  return { type: "tenant.activated", object: { tenant_id: tenantId, state: "live", activated_at: now.toISOString() } };
}

function validationFailedEvent(tenantId: string, capabilities: readonly CapabilityRecord[]): ActivationEvent {
  return {
    type: "tenant.validation_failed",
    object: {
      tenant_id: tenantId,
      state: "stalled",
      failing_step: "validation",
      blocking_reasons: offCapabilities(capabilities).map((c) => ({ code: c.reasonCode, capability: c.name })),
    },
  };
}

/** Moves a tenant in validation (or resuming) to where its checks put it, with the tenant events. */
function settle(
  snapshot: ActivationSnapshot,
  capabilities: CapabilityRecord[],
  now: Date,
): { state: ActivationState; events: ActivationEvent[] } {
  const next = evaluate(capabilities, snapshot.required);
  const events: ActivationEvent[] = [];
  if (next === "live") events.push(activatedEvent(snapshot.tenantId, now));
  if (next === "stalled" && snapshot.state !== "stalled") {
    events.push(validationFailedEvent(snapshot.tenantId, capabilities));
  }
  return { state: next, events };
}

/**
 * POST /activation: from provisioning, validation or stalled, evaluate now (live, stalled or
 * validation); a live tenant stays live and nothing changes.
 */
export function startActivation(snapshot: ActivationSnapshot, now: Date): ActivationOutcome {
  const capabilities = [...snapshot.capabilities];
  const unchanged = {
    changed: false,
    state: snapshot.state,
    lastErrorCode: snapshot.lastErrorCode,
    capabilities,
    events: [],
  };
  if (snapshot.state === "live") return unchanged;
  const { state, events } = settle(snapshot, capabilities, now);
  if (state === snapshot.state) return unchanged;
  const lastErrorCode = state === "validation" ? snapshot.lastErrorCode : errorCodeOf(capabilities);
  return { changed: true, state, lastErrorCode, capabilities, events };
}

/**
 * A capability check result. A state change of the capability (on -> off: capability.suspended;
 * off -> on: capability.restored; a first-ever check emits neither) may move the tenant:
 * validation re-evaluates; stalled re-evaluates once nothing is off; live stays live;
 * provisioning waits for POST /activation. A repeated identical report changes nothing.
 */
export function reportCapabilityCheck(
  snapshot: ActivationSnapshot,
  report: CapabilityReport,
  now: Date,
): ActivationOutcome & { capability: CapabilityRecord; channelReady?: boolean } {
  const previous = snapshot.capabilities.find((c) => c.name === report.capability);
  // The messaging channel's check is also its readiness (sends need it); other checks leave it be.
  const channelReady = report.capability === CHANNEL_CAPABILITY ? report.passed : undefined;
  const state: CapabilityState = report.passed ? "on" : "off";
  const capability: CapabilityRecord = {
    name: report.capability,
    state,
    lastResult: report.passed ? "pass" : "fail",
    lastCheckedAt: now,
    reasonCode: report.reasonCode,
    changedAt: previous && previous.state === state ? previous.changedAt : now,
  };
  const capabilities = [...snapshot.capabilities.filter((c) => c.name !== report.capability), capability];
  if (previous && previous.state === state && previous.reasonCode === report.reasonCode) {
    return {
      changed: false,
      capability,
      state: snapshot.state,
      lastErrorCode: snapshot.lastErrorCode,
      capabilities,
      events: [],
    };
  }
  const events: ActivationEvent[] = [];
  const checkedAt = now.toISOString();
  if (previous?.state === "on" && state === "off") {
    events.push({
      type: "capability.suspended",
      object: {
        tenant_id: snapshot.tenantId,
        capability: capability.name,
        state: "off",
        reason_code: capability.reasonCode,
        checked_at: checkedAt,
      },
    });
  }
  if (previous?.state === "off" && state === "on") {
    events.push({
      type: "capability.restored",
      object: { tenant_id: snapshot.tenantId, capability: capability.name, state: "on", checked_at: checkedAt },
    });
  }
  let next = snapshot.state;
  const anyOff = capabilities.some((c) => c.state === "off");
  if (snapshot.state === "validation" || (snapshot.state === "stalled" && !anyOff)) {
    const settled = settle(snapshot, capabilities, now);
    next = settled.state;
    events.push(...settled.events);
  }
  // lastErrorCode follows the failing capabilities whenever they changed: the most recent still
  // off, or none once nothing is off. A first-ever pass in provisioning leaves it alone.
  const lastErrorCode =
    anyOff || snapshot.lastErrorCode === null || previous?.state === "off" || next !== snapshot.state
      ? errorCodeOf(capabilities)
      : snapshot.lastErrorCode;
  return { changed: true, capability, channelReady, state: next, lastErrorCode, capabilities, events };
}

/** The admin override (`tenant activate`): live now; tenant.activated unless it already was. */
export function forceLive(snapshot: ActivationSnapshot, now: Date): ActivationOutcome {
  const capabilities = [...snapshot.capabilities];
  if (snapshot.state === "live") {
    return { changed: false, state: "live", lastErrorCode: null, capabilities, events: [] };
  }
  return {
    changed: true,
    state: "live",
    lastErrorCode: null,
    capabilities,
    events: [activatedEvent(snapshot.tenantId, now)],
  };
}

/** The blocking reasons of the manifest: every capability off, then required ones never checked. */
export function blockingReasonsOf(
  state: ActivationState,
  capabilities: readonly CapabilityRecord[],
  required: readonly string[],
  since: Date,
): { code: string; capability: string; since: Date }[] {
  if (state !== "validation" && state !== "stalled") return [];
  const off = offCapabilities(capabilities).map((c) => ({
    code: c.reasonCode ?? "capability.check_failed",
    capability: c.name,
    since: c.changedAt,
  }));
  const checked = new Set(capabilities.map((c) => c.name));
  const unchecked = required
    .filter((name) => !checked.has(name))
    .map((name) => ({ code: "activation.capability_unchecked", capability: name, since }));
  return [...off, ...unchecked];
}
