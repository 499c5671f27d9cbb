import { createHash } from "node:crypto";
import { InvalidArgumentError } from "@platform/service-kit/errors";

/** A cap of the monthly token usage (spec 2.8). */
export type UsageThreshold = "soft_cap" | "hard_cap";

export const USAGE_THRESHOLDS: readonly UsageThreshold[] = ["soft_cap", "hard_cap"];

export const USAGE_THRESHOLD_CROSSED = "usage.threshold_crossed";

/** One crossing of a cap in a month: recorded once, announced once. */
export interface ThresholdCrossing {
  threshold: UsageThreshold;
  cap: number;
  tokensUsed: number;
  crossedAt: Date;
  eventId: string;
}

/** A tenant's usage in one UTC calendar month. */
export interface UsageMonth {
  tenantId: string;
  /** YYYY-MM, UTC. */
  month: string;
  tokensUsed: number;
  crossed: ThresholdCrossing[];
}

/** The UTC calendar month of an instant: "YYYY-MM". */
export function usageMonthOf(at: Date): string {
  if (Number.isNaN(at.getTime())) throw new RangeError("usageMonthOf needs a valid date");
  return at.toISOString().slice(0, 7);
}

/**
 * Which caps a month's total newly reaches: a cap is reached when tokens_used >= cap and
 * tokens_used > 0 (a zero cap is reached by the first token, not by nothing), and it is newly
 * reached only when it was not crossed yet this month. Soft before hard.
 */
export function newlyCrossedThresholds(
  tokensUsed: number,
  caps: { softCap: number; hardCap: number } | undefined,
  alreadyCrossed: Iterable<UsageThreshold>,
): { threshold: UsageThreshold; cap: number }[] {
  if (caps === undefined || tokensUsed <= 0) return [];
  const done = new Set(alreadyCrossed);
  const result: { threshold: UsageThreshold; cap: number }[] = [];
  for (const [threshold, cap] of [
    ["soft_cap", caps.softCap],
    ["hard_cap", caps.hardCap],
  ] as const) {
    if (!done.has(threshold) && tokensUsed >= cap) result.push({ threshold, cap });
  }
  return result;
}

/** The deterministic id of a month's crossing event (events contract): one per tenant, cap and month. */
export function thresholdEventId(tenantId: string, month: string, threshold: UsageThreshold): string {
  const digest = createHash("sha256")
    .update(`${USAGE_THRESHOLD_CROSSED}|${tenantId}|${month}|${threshold}`)
    .digest("hex");
  return `evt_${digest.slice(0, 24)}`;
}

/** data.object of usage.threshold_crossed: exactly spec 2.8. */
export function thresholdCrossedObject(month: string, crossing: Omit<ThresholdCrossing, "eventId">) {
  return {
    threshold: crossing.threshold,
    unit: "tokens",
    month,
    tokens_used: crossing.tokensUsed,
    cap: crossing.cap,
    crossed_at: crossing.crossedAt.toISOString(),
  };
}

export class InvalidUsageRecordError extends InvalidArgumentError {
  override name = "InvalidUsageRecordError";
  constructor(message: string) {
    super("usage.record_invalid", message);
  }
}

const RECORD_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** A usage record: 1 to 2^53-1 tokens; an optional producer id (1-128 of A-Z a-z 0-9 _ . : -). */
export function validateUsageRecord(input: { tokens: number; recordId?: string }): {
  tokens: number;
  recordId?: string;
} {
  const problems: string[] = [];
  if (!Number.isSafeInteger(input.tokens) || input.tokens < 1) {
    problems.push("tokens must be a whole number from 1 to 9007199254740991");
  }
  const recordId = input.recordId === "" ? undefined : input.recordId;
  if (recordId !== undefined && !RECORD_ID.test(recordId)) {
    problems.push("recordId must be 1-128 characters of A-Z a-z 0-9 _ . : -");
  }
  if (problems.length > 0) throw new InvalidUsageRecordError(problems.join("; "));
  return recordId === undefined ? { tokens: input.tokens } : { tokens: input.tokens, recordId };
}
