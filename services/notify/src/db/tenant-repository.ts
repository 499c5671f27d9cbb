import type { Knex } from "@platform/service-kit/postgres";
import { TenantExistsError, TenantNotFoundError, type NewTenant, type Tenant } from "../domain/tenant.js";
import { UsageVersionMismatchError, type UsageLimits } from "../domain/usage-limits.js";

interface TenantRow {
  id: string;
  name: string;
  status: Tenant["status"];
  activated: boolean;
  channel_ready: boolean;
  version: string;
  last_error_code: string | null;
  plan: Tenant["plan"];
  created_at: Date;
  activation_state: Tenant["activationState"];
  plan_reason: string | null;
  plan_changed_at: Date | null;
  /** Present when read with the month's sends (tenantWithMonth). */
  current_month?: string;
  month_sends?: number | string | null;
}

function toTenant(row: TenantRow): Tenant {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    activated: row.activated,
    channelReady: row.channel_ready,
    version: Number(row.version),
    lastErrorCode: row.last_error_code,
    plan: row.plan,
    createdAt: row.created_at,
    activationState: row.activation_state,
    planReason: row.plan_reason,
    planChangedAt: row.plan_changed_at,
    month: row.current_month ?? new Date().toISOString().slice(0, 7),
    monthSends: Number(row.month_sends ?? 0),
  };
}

const CURRENT_MONTH = "to_char(now() at time zone 'utc', 'YYYY-MM')";

/** The tenant with the current UTC month's sends (the testing allowance's count). */
function tenantWithMonth(db: Knex | Knex.Transaction, id: string) {
  return db("tenants")
    .leftJoin("monthly_sends", (join) => {
      join.on("monthly_sends.tenant_id", "tenants.id").andOn("monthly_sends.month", db.raw(CURRENT_MONTH));
    })
    .first<TenantRow | undefined>(
      "tenants.*",
      db.raw(`${CURRENT_MONTH} as current_month`),
      "monthly_sends.sends as month_sends",
    )
    .where("tenants.id", id);
}

export interface PlanChangeRecord {
  tenant: Tenant;
  previous: Tenant;
  changed: boolean;
}

/**
 * The tenants. Every write takes the transaction of the mutation it belongs to (the gRPC services
 * declare the mutation, which opens it: grpc/notify-mutations.ts); reads run on their own.
 */
export interface TenantRepository {
  /** Inserts the tenant; TenantExistsError when the id is taken. */
  create(trx: Knex.Transaction, tenant: NewTenant): Promise<Tenant>;
  get(id: string): Promise<Tenant>;
  /** Applies `change` to the current record under a row lock and bumps the version. */
  update(trx: Knex.Transaction, id: string, change: (tenant: Tenant) => Tenant): Promise<Tenant>;
  /**
   * Sets the limits; with `expectedVersion` (0: never set) only when it is the current version
   * (UsageVersionMismatchError otherwise).
   */
  setUsageLimits(
    trx: Knex.Transaction,
    tenantId: string,
    softCap: number,
    hardCap: number,
    expectedVersion?: number,
  ): Promise<UsageLimits>;
  /** The tenant's limits; undefined when it never set any. Throws TenantNotFoundError. */
  getUsageLimits(tenantId: string): Promise<UsageLimits | undefined>;
  /**
   * Changes the plan under the tenant's plan lock (exclusive: it waits for the sends in flight,
   * and sends after it read the new plan, until `trx` ends) and the row lock. `decide` sees the
   * current record; `recount`: the month's sends are counted again from the commands (every
   * plan's, refused ones excepted) before a move to testing. The caller announces the change in
   * `trx`.
   */
  changePlan(
    trx: Knex.Transaction,
    id: string,
    decide: (tenant: Tenant) => { plan: Tenant["plan"]; reason: string; recount: boolean } | undefined,
  ): Promise<PlanChangeRecord>;
  /** Marks a threshold of the month reached; true the first time (the caller announces it then). */
  markThreshold(
    trx: Knex.Transaction,
    tenantId: string,
    month: string,
    threshold: "80_percent" | "100_percent",
  ): Promise<boolean>;
  /** Records (or withdraws) a recipient's opt-out of this tenant's messages; `recipient` is digits. */
  setOptOut(trx: Knex.Transaction, tenantId: string, recipient: string, optedOut: boolean): Promise<void>;
}

export interface UsageLimitsRow {
  tenant_id: string;
  soft_cap: string;
  hard_cap: string;
  version: string;
  updated_at: Date;
}

export function toUsageLimits(row: UsageLimitsRow): UsageLimits {
  return {
    tenantId: row.tenant_id,
    softCap: Number(row.soft_cap),
    hardCap: Number(row.hard_cap),
    version: Number(row.version),
    updatedAt: row.updated_at,
  };
}

export function createTenantRepository(db: Knex): TenantRepository {
  return {
    async create(trx, tenant) {
      const rows = await trx("tenants")
        .insert({ id: tenant.id, name: tenant.name, plan: tenant.plan })
        .onConflict("id")
        .ignore()
        .returning<TenantRow[]>("*");
      if (rows.length === 0) throw new TenantExistsError(tenant.id);
      return toTenant(rows[0]!);
    },
    async get(id) {
      const row = await tenantWithMonth(db, id);
      if (!row) throw new TenantNotFoundError();
      return toTenant(row);
    },
    async changePlan(trx, id, decide) {
      await trx.raw("select pg_advisory_xact_lock(hashtextextended(?, 0))", [`notify.tenant_plan|${id}`]);
      const locked = await trx("tenants").first<{ id: string } | undefined>("id").where({ id }).forUpdate();
      if (!locked) throw new TenantNotFoundError();
      const previous = toTenant((await tenantWithMonth(trx, id))!);
      const next = decide(previous);
      if (!next) return { tenant: previous, previous, changed: false };
      await trx("tenants")
        .update({
          plan: next.plan,
          plan_reason: next.reason,
          plan_changed_at: trx.fn.now(),
          version: trx.raw("version + 1"),
          updated_at: trx.fn.now(),
        })
        .where({ id });
      if (next.recount) {
        await trx.raw(
          `insert into monthly_sends (tenant_id, month, sends)
           select ?, ${CURRENT_MONTH}, count(*) from notification_commands
           where tenant_id = ? and month = ${CURRENT_MONTH} and state <> 'failed'
           on conflict (tenant_id, month) do update set sends = excluded.sends`,
          [id, id],
        );
      }
      return { tenant: toTenant((await tenantWithMonth(trx, id))!), previous, changed: true };
    },
    async markThreshold(trx, tenantId, month, threshold) {
      const column = threshold === "80_percent" ? "warned_at" : "exhausted_at";
      const marked = await trx("monthly_sends")
        .update({ [column]: trx.fn.now() })
        .where({ tenant_id: tenantId, month })
        .whereNull(column);
      return marked === 1;
    },
    async update(trx, id, change) {
      const row = await trx("tenants").first<TenantRow | undefined>("*").where({ id }).forUpdate();
      if (!row) throw new TenantNotFoundError();
      const next = change(toTenant(row));
      await trx("tenants")
        .update({
          status: next.status,
          activated: next.activated,
          channel_ready: next.channelReady,
          last_error_code: next.lastErrorCode,
          activation_state: next.activationState,
          activated_at:
            next.activationState === "live" ? trx.raw("coalesce(activated_at, now())") : trx.ref("activated_at"),
          validation_started_at:
            next.activationState === "provisioning"
              ? trx.ref("validation_started_at")
              : trx.raw("coalesce(validation_started_at, now())"),
          version: trx.raw("version + 1"),
          updated_at: trx.fn.now(),
        })
        .where({ id });
      return toTenant((await tenantWithMonth(trx, id))!);
    },
    async setUsageLimits(trx, tenantId, softCap, hardCap, expectedVersion) {
      const tenant = await trx("tenants").first<{ id: string } | undefined>("id").where({ id: tenantId });
      if (!tenant) throw new TenantNotFoundError();
      if (expectedVersion !== undefined) {
        // Conditional writes: a concurrent change makes the condition fail, never a lost update.
        const rows =
          expectedVersion === 0
            ? await trx("usage_limits")
                .insert({ tenant_id: tenantId, soft_cap: softCap, hard_cap: hardCap })
                .onConflict("tenant_id")
                .ignore()
                .returning<UsageLimitsRow[]>("*")
            : await trx("usage_limits")
                .update({
                  soft_cap: softCap,
                  hard_cap: hardCap,
                  version: trx.raw("version + 1"),
                  updated_at: trx.fn.now(),
                })
                .where({ tenant_id: tenantId, version: expectedVersion })
                .returning<UsageLimitsRow[]>("*");
        if (rows.length === 0) {
          const current = await trx("usage_limits").first<{ version: string } | undefined>("version").where({
            tenant_id: tenantId,
          });
          throw new UsageVersionMismatchError(expectedVersion, current ? Number(current.version) : 0);
        }
        return toUsageLimits(rows[0]!);
      }
      const [row] = await trx("usage_limits")
        .insert({ tenant_id: tenantId, soft_cap: softCap, hard_cap: hardCap })
        .onConflict("tenant_id")
        .merge({
          soft_cap: softCap,
          hard_cap: hardCap,
          version: trx.raw("usage_limits.version + 1"),
          updated_at: trx.fn.now(),
        })
        .returning<UsageLimitsRow[]>("*");
      return toUsageLimits(row!);
    },
    async getUsageLimits(tenantId) {
      const row = await db("tenants")
        .leftJoin("usage_limits", "usage_limits.tenant_id", "tenants.id")
        .first<{ id: string } & Partial<UsageLimitsRow>>(
          "tenants.id",
          "usage_limits.tenant_id",
          "usage_limits.soft_cap",
          "usage_limits.hard_cap",
          "usage_limits.version",
          "usage_limits.updated_at",
        )
        .where("tenants.id", tenantId);
      if (!row) throw new TenantNotFoundError();
      return row.tenant_id === null || row.tenant_id === undefined ? undefined : toUsageLimits(row as UsageLimitsRow);
    },
    async setOptOut(trx, tenantId, recipient, optedOut) {
      const tenant = await trx("tenants").first<{ id: string } | undefined>("id").where({ id: tenantId });
      if (!tenant) throw new TenantNotFoundError();
      if (optedOut) {
        await trx("recipient_opt_outs")
          .insert({ tenant_id: tenantId, recipient })
          .onConflict(["tenant_id", "recipient"])
          .ignore();
      } else {
        await trx("recipient_opt_outs").delete().where({ tenant_id: tenantId, recipient });
      }
    },
  };
}
