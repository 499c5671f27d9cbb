import type { Knex } from "@platform/service-kit/postgres";
import type { ActivationOutcome, ActivationSnapshot, ActivationState, CapabilityRecord } from "../domain/activation.js";
import { TenantNotFoundError } from "../domain/tenant.js";

interface ActivationRow {
  id: string;
  activation_state: ActivationState;
  last_error_code: string | null;
  version: string;
  created_at: Date;
  updated_at: Date;
  validation_started_at: Date | null;
  stalled_at: Date | null;
  activated_at: Date | null;
}

interface CapabilityRow {
  name: string;
  state: CapabilityRecord["state"];
  last_result: CapabilityRecord["lastResult"];
  last_checked_at: Date;
  reason_code: string | null;
  changed_at: Date;
}

/** The tenant's activation as stored: its state, the time of each step and its capabilities. */
export interface StoredActivation {
  tenantId: string;
  state: ActivationState;
  lastErrorCode: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  validationStartedAt: Date | null;
  stalledAt: Date | null;
  activatedAt: Date | null;
  capabilities: CapabilityRecord[];
}

const toCapability = (row: CapabilityRow): CapabilityRecord => ({
  name: row.name,
  state: row.state,
  lastResult: row.last_result,
  lastCheckedAt: row.last_checked_at,
  reasonCode: row.reason_code,
  changedAt: row.changed_at,
});

const COLUMNS = [
  "id",
  "activation_state",
  "last_error_code",
  "version",
  "created_at",
  "updated_at",
  "validation_started_at",
  "stalled_at",
  "activated_at",
];

async function load(db: Knex | Knex.Transaction, tenantId: string, lock: boolean): Promise<StoredActivation> {
  const query = db("tenants").first<ActivationRow | undefined>(COLUMNS).where({ id: tenantId });
  const row = await (lock ? query.forUpdate() : query);
  if (!row) throw new TenantNotFoundError();
  const capabilities = await db("tenant_capabilities")
    .select<CapabilityRow[]>("name", "state", "last_result", "last_checked_at", "reason_code", "changed_at")
    .where({ tenant_id: tenantId })
    .orderBy("name");
  return {
    tenantId: row.id,
    state: row.activation_state,
    lastErrorCode: row.last_error_code,
    version: Number(row.version),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    validationStartedAt: row.validation_started_at,
    stalledAt: row.stalled_at,
    activatedAt: row.activated_at,
    capabilities: capabilities.map(toCapability),
  };
}

export function snapshotOf(stored: StoredActivation, required: readonly string[]): ActivationSnapshot {
  return {
    tenantId: stored.tenantId,
    state: stored.state,
    lastErrorCode: stored.lastErrorCode,
    capabilities: stored.capabilities,
    required,
  };
}

export interface ActivationRepository {
  get(tenantId: string): Promise<StoredActivation>;
  /** Reads and row-locks the tenant (in `trx`); throws TenantNotFoundError. */
  lock(trx: Knex.Transaction, tenantId: string): Promise<StoredActivation>;
  /** Records a capability's check (its record as the state machine left it). */
  saveCapability(trx: Knex.Transaction, tenantId: string, capability: CapabilityRecord): Promise<void>;
  /**
   * Writes a changed outcome to the tenant and bumps its version: the activation state and the
   * time of the step entered, lastErrorCode, and the columns that must agree (live: status
   * "active", activated; `channelReady` when given).
   */
  saveTenant(
    trx: Knex.Transaction,
    before: StoredActivation,
    outcome: ActivationOutcome,
    now: Date,
    channelReady?: boolean,
  ): Promise<void>;
}

export function createActivationRepository(db: Knex): ActivationRepository {
  return {
    get: (tenantId) => load(db, tenantId, false),
    lock: (trx, tenantId) => load(trx, tenantId, true),
    async saveCapability(trx, tenantId, capability) {
      await trx("tenant_capabilities")
        .insert({
          tenant_id: tenantId,
          name: capability.name,
          state: capability.state,
          last_result: capability.lastResult,
          last_checked_at: capability.lastCheckedAt,
          reason_code: capability.reasonCode,
          changed_at: capability.changedAt,
        })
        .onConflict(["tenant_id", "name"])
        .merge(["state", "last_result", "last_checked_at", "reason_code", "changed_at"]);
    },
    async saveTenant(trx, before, outcome, now, channelReady) {
      const entered = outcome.state !== before.state;
      const update: Record<string, unknown> = {
        activation_state: outcome.state,
        last_error_code: outcome.lastErrorCode,
        version: trx.raw("version + 1"),
        updated_at: now,
      };
      if (outcome.state !== "provisioning" && before.validationStartedAt === null) update.validation_started_at = now;
      if (entered && outcome.state === "stalled") update.stalled_at = now;
      if (entered && outcome.state === "live") {
        update.activated_at = now;
        update.status = "active";
        update.activated = true;
      }
      if (channelReady !== undefined) update.channel_ready = channelReady;
      await trx("tenants").update(update).where({ id: before.tenantId });
    },
  };
}
