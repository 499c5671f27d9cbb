import { UsageServiceService, type UsageMonth as ProtoUsageMonth } from "@platform/proto/notify/v1/usage";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import type { Knex } from "@platform/service-kit/postgres";
import { appendEvents, type EventOutbox } from "../db/event-outbox.js";
import type { UsageSnapshot, UsageStore } from "../db/usage-store.js";
import { requireTenantId } from "../domain/tenant.js";
import { usageMonthOf, validateUsageRecord } from "../domain/usage-month.js";
import { notifyMutations } from "./notify-mutations.js";

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

/**
 * notify.v1.UsageService: token usage per UTC month. `clock` decides which month a record counts
 * in and when a cap was crossed (tests inject one to cross a month boundary).
 */
export function createUsageService(deps: {
  db: Knex;
  usage: UsageStore;
  /** Where the caps' crossings are announced (in the transaction of the record). */
  events: EventOutbox;
  clock?: () => Date;
}): UnaryHandlers<typeof UsageServiceService> {
  const clock = deps.clock ?? (() => new Date());
  const declare = notifyMutations(deps);
  return {
    // No Idempotency-Key: a repeated record id is what counts once (the store's dedupe, `replayed`).
    recordUsage: declare(UsageServiceService.recordUsage, {
      once: false,
      prepare(request) {
        const record = validateUsageRecord({ tokens: Number(request.tokens), recordId: request.recordId });
        return { ...record, at: clock() };
      },
      effect: (trx, { tenantId, prepared: { tokens, recordId, at }, call }) =>
        deps.usage.record(trx, {
          tenantId,
          month: usageMonthOf(at),
          tokens,
          recordId,
          at,
          traceparent: call.traceparent,
        }),
      record: (trx, result) => appendEvents(trx, deps.events, result.events),
      log: (result, { tenantId }) =>
        result.events.length > 0
          ? [
              {
                tenantId,
                month: result.usage.month,
                tokensUsed: result.usage.tokensUsed,
                announced: result.events.length,
              },
              "usage cap crossed",
            ]
          : undefined,
      answer: (result) => ({ usage: toProtoUsageMonth(result), replayed: result.replayed }),
    }),
    async getUsage(request) {
      const tenantId = requireTenantId(request.tenantId);
      return { usage: toProtoUsageMonth(await deps.usage.get(tenantId, usageMonthOf(clock()))) };
    },
  };
}
