import { DomainError, InvalidArgumentError } from "@platform/service-kit/errors";

/** Monthly token caps a tenant sets for itself (spec 4.4, 2.8). */
export interface UsageLimits {
  tenantId: string;
  softCap: number;
  hardCap: number;
  version: number;
  updatedAt: Date;
}

export class InvalidUsageLimitsError extends InvalidArgumentError {
  override name = "InvalidUsageLimitsError";
  constructor(message: string) {
    super("usage.limits_invalid", message);
  }
}

/** SetUsageLimits with an expected version that is not the current one (a concurrent change won). */
export class UsageVersionMismatchError extends DomainError {
  override name = "UsageVersionMismatchError";
  constructor(
    readonly expectedVersion: number,
    readonly currentVersion: number,
  ) {
    super(
      "failed_precondition",
      "usage.version_mismatch",
      `the usage limits are at version ${currentVersion}, not ${expectedVersion}`,
    );
  }
}

/** expectedVersion: absent, or a whole number from 0 (never set) to 2^53-1. */
export function validateExpectedVersion(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidUsageLimitsError("expectedVersion must be a whole number from 0 to 9007199254740991");
  }
  return value;
}

/**
 * Caps are whole token counts, 0 to 2^53-1, with the soft cap not above the hard cap. Every
 * problem found is named in one message, separated by "; ".
 */
export function validateUsageLimits(softCap: number, hardCap: number): { softCap: number; hardCap: number } {
  const problems: string[] = [];
  for (const [name, value] of [
    ["softCap", softCap],
    ["hardCap", hardCap],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0) {
      problems.push(`${name} must be a whole number of tokens from 0 to 9007199254740991`);
    }
  }
  if (problems.length === 0 && softCap > hardCap) problems.push("softCap must not be greater than hardCap");
  if (problems.length > 0) throw new InvalidUsageLimitsError(problems.join("; "));
  return { softCap, hardCap };
}
