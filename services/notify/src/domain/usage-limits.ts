import { InvalidArgumentError } from "@platform/service-kit/errors";

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

/** Caps are whole token counts, 0 to 2^53-1, with the soft cap not above the hard cap. */
export function validateUsageLimits(softCap: number, hardCap: number): { softCap: number; hardCap: number } {
  for (const [name, value] of [
    ["softCap", softCap],
    ["hardCap", hardCap],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new InvalidUsageLimitsError(`${name} must be a whole number of tokens from 0 to 9007199254740991`);
    }
  }
  if (softCap > hardCap) throw new InvalidUsageLimitsError("softCap must not be greater than hardCap");
  return { softCap, hardCap };
}
