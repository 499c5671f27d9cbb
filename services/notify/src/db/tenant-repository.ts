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
  };
}

export interface TenantRepository {
  create(tenant: NewTenant): Promise<Tenant>;
  get(id: string): Promise<Tenant>;
  /** Applies `change` to the current record under a row lock and bumps the version. */
  update(id: string, change: (tenant: Tenant) => Tenant): Promise<Tenant>;
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
  /** Records (or withdraws) a recipient's opt-out of this tenant's messages; `recipient` is digits. */
  setOptOut(tenantId: string, recipient: string, optedOut: boolean): Promise<void>;
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
    async create(tenant) {
      const rows = await db("tenants")
        .insert({ id: tenant.id, name: tenant.name, plan: tenant.plan })
        .onConflict("id")
        .ignore()
        .returning<TenantRow[]>("*");
      if (rows.length === 0) throw new TenantExistsError(tenant.id);
      return toTenant(rows[0]!);
    },
    async get(id) {
      const row = await db("tenants").first<TenantRow | undefined>("*").where({ id });
      if (!row) throw new TenantNotFoundError();
      return toTenant(row);
    },
    async update(id, change) {
      return db.transaction(async (trx) => {
        const row = await trx("tenants").first<TenantRow | undefined>("*").where({ id }).forUpdate();
        if (!row) throw new TenantNotFoundError();
        const next = change(toTenant(row));
        const [updated] = await trx("tenants")
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
          .where({ id })
          .returning<TenantRow[]>("*");
        return toTenant(updated!);
      });
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
    async setOptOut(tenantId, recipient, optedOut) {
      const tenant = await db("tenants").first<{ id: string } | undefined>("id").where({ id: tenantId });
      if (!tenant) throw new TenantNotFoundError();
      if (optedOut) {
        await db("recipient_opt_outs")
          .insert({ tenant_id: tenantId, recipient })
          .onConflict(["tenant_id", "recipient"])
          .ignore();
      } else {
        await db("recipient_opt_outs").delete().where({ tenant_id: tenantId, recipient });
      }
    },
  };
}
