import { UsageServiceService, type UsageMonth as ProtoUsageMonth } from "@platform/proto/notify/v1/usage";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import type { UsageSnapshot, UsageStore } from "../db/usage-store.js";
import { isTenantId, TenantNotFoundError } from "../domain/tenant.js";
import { usageMonthOf, validateUsageRecord } from "../domain/usage-month.js";

export function toProtoUsageMonth({ usage, limits }: UsageSnapshot): ProtoUsageMonth {
  return {
    tenantId: usage.tenantId,
    month: usage.month,
    tokensUsed: String(usage.tokensUsed),
    limits:
      limits === undefined
        ? undefined
        : {
            tenantId: limits.tenantId,
            softCap: String(limits.softCap),
            hardCap: String(limits.hardCap),
            version: String(limits.version),
            updatedAt: limits.updatedAt.toISOString(),
          },
    crossed: usage.crossed.map((c) => ({
      threshold: c.threshold,
      cap: String(c.cap),
      tokensUsed: String(c.tokensUsed),
      crossedAt: c.crossedAt.toISOString(),
      eventId: c.eventId,
    })),
  };
}

function requireTenantId(id: string): string {
  if (!isTenantId(id)) throw new TenantNotFoundError();
  return id;
}

/**
 * notify.v1.UsageService: token usage per UTC month. `clock` decides which month a record counts
 * in and when a cap was crossed (tests inject one to cross a month boundary).
 */
export function createUsageService(deps: {
  usage: UsageStore;
  clock?: () => Date;
}): UnaryHandlers<typeof UsageServiceService> {
  const clock = deps.clock ?? (() => new Date());
  return {
    async recordUsage(request, { logger, traceparent }) {
      const tenantId = requireTenantId(request.tenantId);
      const { tokens, recordId } = validateUsageRecord({ tokens: Number(request.tokens), recordId: request.recordId });
      const at = clock();
      const result = await deps.usage.record({ tenantId, month: usageMonthOf(at), tokens, recordId, at, traceparent });
      if (result.announced > 0) {
        logger.info(
          { tenantId, month: result.usage.month, tokensUsed: result.usage.tokensUsed, announced: result.announced },
          "usage cap crossed",
        );
      }
      return { usage: toProtoUsageMonth(result), replayed: result.replayed };
    },
    async getUsage(request) {
      const tenantId = requireTenantId(request.tenantId);
      return { usage: toProtoUsageMonth(await deps.usage.get(tenantId, usageMonthOf(clock()))) };
    },
  };
}
