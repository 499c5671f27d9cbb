import { createHash } from "node:crypto";
import { DomainError, InvalidArgumentError } from "@platform/service-kit/errors";
import type { TenantPlan } from "./tenant.js";

/**
 * The testing plan's allowance and the plan changes that lift or restore it (issue 22).
 *
 * - Every send of a UTC month counts (monthly_sends), on whichever plan it was made: the testing
 *   plan refuses a send once the month's count reached the allowance, the commercial plan never
 *   refuses. A downgrade mid-month recounts the month's sends (commercial ones included), so it
 *   never hands out a fresh allowance.
 * - A plan change and the sends of its tenant are serialized (record_send takes the tenant's plan
 *   lock shared, a change takes it exclusively): every send is decided wholly before or wholly
 *   after a change, on every notify process, and no process caches the plan.
 * - 80% and 100% of the allowance are each announced once per tenant and month
 *   (usage.testing_allowance_threshold_crossed, deterministic event ids); 100% also opens the
 *   `testing_allowance_exhausted` attention item, which a move to commercial closes.
 */

export const DEFAULT_TESTING_ALLOWANCE = 1000;

export const TESTING_ALLOWANCE_THRESHOLD_CROSSED = "usage.testing_allowance_threshold_crossed";
export const TENANT_PLAN_CHANGED = "tenant.plan_changed";

export const allowanceThresholds = ["80_percent", "100_percent"] as const;
export type AllowanceThreshold = (typeof allowanceThresholds)[number];

/** The sends at which a threshold is crossed: 80% rounded up, and the allowance itself. */
export function thresholdSends(allowance: number, threshold: AllowanceThreshold): number {
  return threshold === "100_percent" ? allowance : Math.ceil((allowance * 80) / 100);
}

/**
 * The allowance thresholds a month of `monthSends` stands at or past, in order: those a tenant
 * back on the testing plan has already reached (none on another plan, which has no allowance).
 */
export function thresholdsStoodAt(allowance: number, plan: string, monthSends: number): AllowanceThreshold[] {
  if (plan !== "testing") return [];
  return allowanceThresholds.filter((threshold) => monthSends >= thresholdSends(allowance, threshold));
}

/** The first instant of the UTC month after `month` ("YYYY-MM"). */
export function allowanceResetsAt(month: string): Date {
  const [year, mon] = month.split("-").map(Number) as [number, number];
  return new Date(Date.UTC(year, mon, 1));
}

export interface AllowanceView {
  limit: number;
  used: number;
  remaining: number;
  month: string;
  resetsAt: Date;
}

export function allowanceView(allowance: number, month: string, used: number): AllowanceView {
  return {
    limit: allowance,
    used,
    remaining: Math.max(0, allowance - used),
    month,
    resetsAt: allowanceResetsAt(month),
  };
}

/**
 * The SQLSTATE record_send raises when a send reaches an allowance threshold and was given the
 * event's id without its payload (migration 20261128140000): nothing was kept; send again with it.
 */
export const ALLOWANCE_EVENT_NEEDED_SQLSTATE = "PN428";

/** One event per tenant, month and threshold: a repeat is the same event (the outbox ignores it). */
export function allowanceThresholdEventId(tenantId: string, month: string, threshold: AllowanceThreshold): string {
  const digest = createHash("sha256")
    .update(`${TESTING_ALLOWANCE_THRESHOLD_CROSSED}|${tenantId}|${month}|${threshold}`)
    .digest("hex");
  return `evt_${digest.slice(0, 24)}`;
}

/** data.object of usage.testing_allowance_threshold_crossed. */
export function allowanceThresholdObject(
  tenantId: string,
  month: string,
  threshold: AllowanceThreshold,
  allowance: number,
) {
  const sendsUsed = thresholdSends(allowance, threshold);
  return {
    tenant_id: tenantId,
    month,
    threshold,
    reason_code:
      threshold === "100_percent" ? "account.testing_allowance_exhausted" : "account.testing_allowance_warning",
    allowance,
    sends_used: sendsUsed,
    remaining: Math.max(0, allowance - sendsUsed),
    resets_at: allowanceResetsAt(month).toISOString(),
  };
}

/** Why a plan changes; the event's reason_code is `plan.<reason>`. */
const reasonsTo: Record<TenantPlan, readonly string[]> = {
  commercial: ["agreement_signed", "card_saved", "operator_correction"],
  testing: ["agreement_ended", "card_removed", "operator_correction"],
};

export class PlanChangeInvalidError extends InvalidArgumentError {
  override name = "PlanChangeInvalidError";
  constructor(message: string) {
    super("tenant.plan_change_invalid", message);
  }
}

export class TenantVersionMismatchError extends DomainError {
  override name = "TenantVersionMismatchError";
  constructor(expected: number, current: number) {
    super(
      "failed_precondition",
      "tenant.version_mismatch",
      `the tenant's version is ${current}, not ${expected}: read it again and retry with its version`,
    );
  }
}

export interface PlanChange {
  plan: TenantPlan;
  reason: string;
  expectedVersion: number | undefined;
  actor: string;
}

const ACTOR = /^[A-Za-z0-9_.:+\-@/]{1,128}$/;

export function validatePlanChange(input: {
  plan: TenantPlan | undefined;
  reason: string;
  expectedVersion: number | undefined;
  actor: string;
}): PlanChange {
  if (!input.plan) throw new PlanChangeInvalidError("plan must be testing or commercial");
  if (!reasonsTo[input.plan].includes(input.reason)) {
    throw new PlanChangeInvalidError(
      `reason for a move to ${input.plan} must be one of ${reasonsTo[input.plan].join(", ")}`,
    );
  }
  if (
    input.expectedVersion !== undefined &&
    (!Number.isSafeInteger(input.expectedVersion) || input.expectedVersion < 1)
  ) {
    throw new PlanChangeInvalidError("expectedVersion must be a positive integer");
  }
  const actor = input.actor === "" ? "admin" : input.actor;
  if (!ACTOR.test(actor))
    throw new PlanChangeInvalidError("actor must be 1-128 characters of A-Z a-z 0-9 _ . : + - @ /");
  return { plan: input.plan, reason: input.reason, expectedVersion: input.expectedVersion, actor };
}

/**
 * What a change does to a tenant on `current` at `version`: nothing when it already is on the
 * plan (an idempotent repeat, whatever the version now is), else the version must match.
 */
export function decidePlanChange(
  current: { plan: TenantPlan; version: number },
  change: PlanChange,
): { kind: "unchanged" } | { kind: "change"; recount: boolean } {
  if (current.plan === change.plan) return { kind: "unchanged" };
  if (change.expectedVersion !== undefined && change.expectedVersion !== current.version) {
    throw new TenantVersionMismatchError(change.expectedVersion, current.version);
  }
  return { kind: "change", recount: change.plan === "testing" };
}

/** data.object of tenant.plan_changed. */
export function planChangedObject(input: {
  tenantId: string;
  plan: TenantPlan;
  previousPlan: TenantPlan;
  reason: string;
  version: number;
  changedAt: Date;
  actor: string;
  month: string;
}) {
  return {
    tenant_id: input.tenantId,
    plan: input.plan,
    previous_plan: input.previousPlan,
    state: input.plan,
    reason_code: `plan.${input.reason}`,
    version: input.version,
    changed_at: input.changedAt.toISOString(),
    month: input.month,
    actor: input.actor,
  };
}
