/**
 * Token usage per tenant and UTC month (usage_months) and the crossings of its caps. Every write
 * locks the month's row first (the upsert of a record, or `select ... for update` when the limits
 * change), so concurrent writers of one tenant serialize on it; the caps are then checked in the
 * same transaction and a newly reached cap is marked crossed. Every write runs in the caller's
 * transaction (the declared mutation's), and its usage.threshold_crossed events come back for the
 * caller to append to the outbox in that transaction (they are the mutation's `record`).
 */
import type { Knex } from "@platform/service-kit/postgres";
import { TenantNotFoundError } from "../domain/tenant.js";
import { toUsageLimits, type UsageLimitsRow } from "./tenant-repository.js";
import type { UsageLimits } from "../domain/usage-limits.js";
import {
  newlyCrossedThresholds,
  thresholdCrossedObject,
  thresholdEventId,
  USAGE_THRESHOLD_CROSSED,
  type ThresholdCrossing,
  type UsageMonth,
  type UsageThreshold,
} from "../domain/usage-month.js";
import type { NotifyEvent } from "./event-outbox.js";

interface UsageMonthRow {
  tenant_id: string;
  month: string;
  tokens_used: string;
  soft_crossed_at: Date | null;
  soft_crossed_cap: string | null;
  soft_crossed_tokens: string | null;
  soft_event_id: string | null;
  hard_crossed_at: Date | null;
  hard_crossed_cap: string | null;
  hard_crossed_tokens: string | null;
  hard_event_id: string | null;
}

const prefix: Record<UsageThreshold, "soft" | "hard"> = { soft_cap: "soft", hard_cap: "hard" };

function crossingsOf(row: UsageMonthRow): ThresholdCrossing[] {
  const result: ThresholdCrossing[] = [];
  for (const threshold of ["soft_cap", "hard_cap"] as const) {
    const p = prefix[threshold];
    const at = row[`${p}_crossed_at`];
    if (at === null) continue;
    result.push({
      threshold,
      cap: Number(row[`${p}_crossed_cap`]),
      tokensUsed: Number(row[`${p}_crossed_tokens`]),
      crossedAt: at,
      eventId: row[`${p}_event_id`]!,
    });
  }
  return result;
}

function toUsageMonth(tenantId: string, month: string, row: UsageMonthRow | undefined): UsageMonth {
  if (!row) return { tenantId, month, tokensUsed: 0, crossed: [] };
  return { tenantId, month, tokensUsed: Number(row.tokens_used), crossed: crossingsOf(row) };
}

/** A month's usage with the tenant's current limits (undefined when never set). */
export interface UsageSnapshot {
  usage: UsageMonth;
  limits: UsageLimits | undefined;
}

export interface UsageStore {
  /**
   * Adds `tokens` to the tenant's usage of `month` (a repeated `recordId` adds nothing: replayed),
   * crossing any cap the new total newly reaches; `events` announce those crossings, in order.
   * Throws TenantNotFoundError.
   */
  record(
    trx: Knex.Transaction,
    input: {
      tenantId: string;
      month: string;
      tokens: number;
      recordId?: string;
      at: Date;
      /** The trace context of the call: carried by the threshold events it announces. */
      traceparent?: string | undefined;
    },
  ): Promise<UsageSnapshot & { replayed: boolean; events: NotifyEvent[] }>;
  /** The tenant's usage of `month`. Throws TenantNotFoundError. */
  get(tenantId: string, month: string): Promise<UsageSnapshot>;
  /**
   * In the caller's transaction (limits just changed): crosses the caps the month's current usage
   * reaches that were not crossed yet this month. Returns the events that announce them.
   */
  crossAfterLimitsChange(
    trx: Knex.Transaction,
    tenantId: string,
    month: string,
    caps: { softCap: number; hardCap: number },
    at: Date,
    traceparent?: string,
  ): Promise<NotifyEvent[]>;
}

export function createUsageStore(db: Knex): UsageStore {
  /** The month row is locked by the caller; marks what the total newly reaches, with the events announcing it. */
  async function cross(
    trx: Knex.Transaction,
    row: UsageMonthRow,
    caps: { softCap: number; hardCap: number } | undefined,
    at: Date,
    traceparent: string | undefined,
  ): Promise<{ row: UsageMonthRow; events: NotifyEvent[] }> {
    const tokensUsed = Number(row.tokens_used);
    const due = newlyCrossedThresholds(
      tokensUsed,
      caps,
      crossingsOf(row).map((c) => c.threshold),
    );
    if (due.length === 0) return { row, events: [] };
    const update: Record<string, unknown> = {};
    const events: NotifyEvent[] = [];
    for (const { threshold, cap } of due) {
      const p = prefix[threshold];
      const eventId = thresholdEventId(row.tenant_id, row.month, threshold);
      update[`${p}_crossed_at`] = at;
      update[`${p}_crossed_cap`] = cap;
      update[`${p}_crossed_tokens`] = tokensUsed;
      update[`${p}_event_id`] = eventId;
      events.push({
        id: eventId,
        type: USAGE_THRESHOLD_CROSSED,
        tenantId: row.tenant_id,
        occurredAt: at,
        object: thresholdCrossedObject(row.month, { threshold, cap, tokensUsed, crossedAt: at }),
        traceparent,
      });
    }
    const [updated] = await trx("usage_months")
      .update(update)
      .where({ tenant_id: row.tenant_id, month: row.month })
      .returning<UsageMonthRow[]>("*");
    return { row: updated!, events };
  }

  async function limitsOf(trx: Knex | Knex.Transaction, tenantId: string): Promise<UsageLimits | undefined> {
    const row = await trx("usage_limits").first<UsageLimitsRow | undefined>("*").where({ tenant_id: tenantId });
    return row && toUsageLimits(row);
  }

  async function requireTenant(trx: Knex | Knex.Transaction, tenantId: string): Promise<void> {
    const tenant = await trx("tenants").first<{ id: string } | undefined>("id").where({ id: tenantId });
    if (!tenant) throw new TenantNotFoundError();
  }

  return {
    async record(trx, { tenantId, month, tokens, recordId, at, traceparent }) {
      await requireTenant(trx, tenantId);
      if (recordId !== undefined) {
        const inserted = await trx("usage_records")
          .insert({ tenant_id: tenantId, record_id: recordId, month, tokens, recorded_at: at })
          .onConflict(["tenant_id", "record_id"])
          .ignore()
          .returning<{ month: string }[]>("month");
        if (inserted.length === 0) {
          const first = await trx("usage_records")
            .first<{ month: string }>("month")
            .where({ tenant_id: tenantId, record_id: recordId });
          const row = await trx("usage_months")
            .first<UsageMonthRow | undefined>("*")
            .where({ tenant_id: tenantId, month: first.month });
          return {
            usage: toUsageMonth(tenantId, first.month, row),
            limits: await limitsOf(trx, tenantId),
            replayed: true,
            events: [],
          };
        }
      }
      // The upsert takes the month row's lock: concurrent records of the tenant queue here.
      const [locked] = await trx("usage_months")
        .insert({ tenant_id: tenantId, month, tokens_used: tokens })
        .onConflict(["tenant_id", "month"])
        .merge({ tokens_used: trx.raw("usage_months.tokens_used + ?", [tokens]) })
        .returning<UsageMonthRow[]>("*");
      const limits = await limitsOf(trx, tenantId);
      const { row, events } = await cross(trx, locked!, limits, at, traceparent);
      return { usage: toUsageMonth(tenantId, month, row), limits, replayed: false, events };
    },
    async get(tenantId, month) {
      await requireTenant(db, tenantId);
      const row = await db("usage_months").first<UsageMonthRow | undefined>("*").where({ tenant_id: tenantId, month });
      return { usage: toUsageMonth(tenantId, month, row), limits: await limitsOf(db, tenantId) };
    },
    async crossAfterLimitsChange(trx, tenantId, month, caps, at, traceparent) {
      const row = await trx("usage_months")
        .first<UsageMonthRow | undefined>("*")
        .where({ tenant_id: tenantId, month })
        .forUpdate();
      if (!row) return [];
      return (await cross(trx, row, caps, at, traceparent)).events;
    },
  };
}
