import type { UsageLimits } from "@platform/proto/notify/v1";
import type { UsageMonth } from "@platform/proto/notify/v1/usage";
import { ApiError } from "../../http/api-error.js";

export function limitsToJson(limits: UsageLimits | undefined): Record<string, unknown> {
  if (!limits) throw new ApiError(500, "notify answered without limits");
  return {
    tenantId: limits.tenantId,
    softCap: Number(limits.softCap),
    hardCap: Number(limits.hardCap),
    version: Number(limits.version),
    updatedAt: limits.updatedAt,
  };
}

/** A tenant that never set limits: no caps apply, and nothing has been written (version 0). */
export const unsetLimits = (tenantId: string) => ({
  tenantId,
  softCap: null,
  hardCap: null,
  version: 0,
  updatedAt: null,
});

/** GET /usage: the current UTC month (caps null and limitsVersion 0 when limits were never set). */
export function usageToJson(usage: UsageMonth | undefined): Record<string, unknown> {
  if (!usage) throw new ApiError(500, "notify answered without usage");
  return {
    tenantId: usage.tenantId,
    month: usage.month,
    unit: "tokens",
    tokensUsed: Number(usage.tokensUsed),
    softCap: usage.limits ? Number(usage.limits.softCap) : null,
    hardCap: usage.limits ? Number(usage.limits.hardCap) : null,
    limitsVersion: usage.limits ? Number(usage.limits.version) : 0,
    thresholds: usage.crossed.map((c) => ({
      threshold: c.threshold,
      cap: Number(c.cap),
      tokensUsed: Number(c.tokensUsed),
      crossedAt: c.crossedAt,
      eventId: c.eventId,
    })),
  };
}
