import { DomainError } from "@platform/service-kit/errors";
import type { Knex } from "@platform/service-kit/postgres";
import type { NotificationType } from "../domain/notification.js";
import { TenantVersionMismatchError } from "../domain/testing-allowance.js";
import { TenantNotFoundError } from "../domain/tenant.js";
import type { ChannelTemplate, NumberCheck, NumberReading } from "../domain/channel.js";
import { CHANNEL_CAPABILITY } from "../domain/activation.js";

/**
 * The LISTEN channel on which every change to what a send goes through (number, token, templates,
 * pace; a channel connected or removed) is announced by a trigger, with the tenant id as payload
 * (migration 20261127130000).
 */
export const TENANT_CHANNELS_CHANNEL = "notify_tenant_channels";

/** A tenant's connected channel as stored (the token only in its sealed form). */
export interface StoredChannel {
  tenantId: string;
  wabaId: string;
  phoneNumberId: string;
  accessTokenSealed: string;
  templates: Partial<Record<NotificationType, ChannelTemplate>>;
  messagesPerSecond: number;
  stopKeywords: string[];
  startKeywords: string[];
  displayPhoneNumber: string | null;
  verifiedName: string | null;
  qualityRating: string | null;
  numberStatus: string | null;
  checkResult: "pass" | "fail" | "unreachable" | null;
  checkReason: string | null;
  checkedAt: Date | null;
  connectedAt: Date;
  updatedAt: Date;
}

interface ChannelRow {
  tenant_id: string;
  waba_id: string;
  phone_number_id: string;
  access_token_sealed: string;
  templates: Partial<Record<NotificationType, ChannelTemplate>>;
  messages_per_second: number;
  stop_keywords: string[];
  start_keywords: string[];
  display_phone_number: string | null;
  verified_name: string | null;
  quality_rating: string | null;
  number_status: string | null;
  check_result: StoredChannel["checkResult"];
  check_reason: string | null;
  checked_at: Date | null;
  connected_at: Date;
  updated_at: Date;
}

const toChannel = (row: ChannelRow): StoredChannel => ({
  tenantId: row.tenant_id,
  wabaId: row.waba_id,
  phoneNumberId: row.phone_number_id,
  accessTokenSealed: row.access_token_sealed,
  templates: row.templates,
  messagesPerSecond: row.messages_per_second,
  stopKeywords: row.stop_keywords,
  startKeywords: row.start_keywords,
  displayPhoneNumber: row.display_phone_number,
  verifiedName: row.verified_name,
  qualityRating: row.quality_rating,
  numberStatus: row.number_status,
  checkResult: row.check_result,
  checkReason: row.check_reason,
  checkedAt: row.checked_at,
  connectedAt: row.connected_at,
  updatedAt: row.updated_at,
});

export class ChannelNumberTakenError extends DomainError {
  override name = "ChannelNumberTakenError";
  constructor() {
    super("already_exists", "channel.number_taken", "this phone number is connected to another tenant");
  }
}

/** What a connect writes (the token already sealed). */
export interface ChannelWrite {
  wabaId: string;
  phoneNumberId: string;
  accessTokenSealed: string;
  templates: Partial<Record<NotificationType, ChannelTemplate>>;
  messagesPerSecond: number;
  stopKeywords: string[];
  startKeywords: string[];
}

/** The check's outcome as stored: the reading (if any), pass / fail / unreachable and the reason. */
export interface CheckRecord {
  check: NumberCheck;
  result: "pass" | "fail" | "unreachable";
  reasonCode: string | null;
}

const UNIQUE_VIOLATION = "23505";

/** The tenants' channels (tenant_channels); writes take the transaction of their mutation. */
export function createChannelRepository(db: Knex) {
  return {
    /**
     * Connects or replaces the tenant's channel under the tenant's row lock, checking
     * `expectedVersion` against the tenant record's version, and bumps that version. A number
     * another tenant connected: ChannelNumberTakenError. Answers whether it was new, and the
     * tenant's version after the change.
     */
    async connect(
      trx: Knex.Transaction,
      tenantId: string,
      write: ChannelWrite,
      expectedVersion: number | undefined,
    ): Promise<{ created: boolean; tenantVersion: number }> {
      const tenant = await trx("tenants")
        .first<{ version: string } | undefined>("version")
        .where({ id: tenantId })
        .forUpdate();
      if (!tenant) throw new TenantNotFoundError();
      if (expectedVersion !== undefined && Number(tenant.version) !== expectedVersion) {
        throw new TenantVersionMismatchError(expectedVersion, Number(tenant.version));
      }
      const existed = await trx("tenant_channels")
        .first<{ tenant_id: string } | undefined>("tenant_id")
        .where({ tenant_id: tenantId });
      const columns = {
        waba_id: write.wabaId,
        phone_number_id: write.phoneNumberId,
        access_token_sealed: write.accessTokenSealed,
        templates: JSON.stringify(write.templates),
        messages_per_second: write.messagesPerSecond,
        stop_keywords: write.stopKeywords,
        start_keywords: write.startKeywords,
        updated_at: trx.fn.now(),
      };
      try {
        await trx.raw("savepoint channel_connect");
        await trx("tenant_channels")
          .insert({ tenant_id: tenantId, ...columns })
          .onConflict("tenant_id")
          .merge({
            ...columns,
            // A new number forgets what was read of the old one.
            ...(existed
              ? {
                  display_phone_number: trx.raw(
                    "case when tenant_channels.phone_number_id = excluded.phone_number_id then tenant_channels.display_phone_number end",
                  ),
                  verified_name: trx.raw(
                    "case when tenant_channels.phone_number_id = excluded.phone_number_id then tenant_channels.verified_name end",
                  ),
                }
              : {}),
          });
        await trx.raw("release savepoint channel_connect");
      } catch (error) {
        if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) {
          await trx.raw("rollback to savepoint channel_connect");
          throw new ChannelNumberTakenError();
        }
        throw error;
      }
      const [bumped] = await trx("tenants")
        .update({ version: trx.raw("version + 1"), updated_at: trx.fn.now() })
        .where({ id: tenantId })
        .returning<{ version: string }[]>("version");
      return { created: !existed, tenantVersion: Number(bumped!.version) };
    },

    async get(tenantId: string, on: Knex | Knex.Transaction = db): Promise<StoredChannel | undefined> {
      const row = await on("tenant_channels").first<ChannelRow | undefined>("*").where({ tenant_id: tenantId });
      return row && toChannel(row);
    },

    /** The connected channel that owns a phone number id. */
    async byPhoneNumberId(phoneNumberId: string, on: Knex | Knex.Transaction = db): Promise<StoredChannel | undefined> {
      const row = await on("tenant_channels")
        .first<ChannelRow | undefined>("*")
        .where({ phone_number_id: phoneNumberId });
      return row && toChannel(row);
    },

    /** Channels whose number's displayed digits, or whose WhatsApp Business Account, match. */
    async byDisplayDigitsOrWaba(digits: string, wabaId: string | undefined): Promise<StoredChannel[]> {
      const query = db("tenant_channels").select<ChannelRow[]>("*");
      const rows = await query.where((where) => {
        if (digits !== "") where.orWhereRaw("regexp_replace(display_phone_number, '[^0-9]', '', 'g') = ?", [digits]);
        if (wabaId) where.orWhere({ waba_id: wabaId });
        if (digits === "" && !wabaId) where.whereRaw("false");
      });
      return rows.map(toChannel);
    },

    /** The reason code the messaging_channel capability is off with; null when it is not off. */
    async failingReason(tenantId: string): Promise<string | null> {
      const row = await db("tenant_capabilities")
        .first<{ reason_code: string | null } | undefined>("reason_code")
        .where({ tenant_id: tenantId, name: CHANNEL_CAPABILITY, state: "off" });
      return row?.reason_code ?? null;
    },

    /** Stores what a check read (the reading's fields only when it read them). */
    async recordCheck(trx: Knex | Knex.Transaction, tenantId: string, record: CheckRecord): Promise<void> {
      const reading: Partial<NumberReading> = record.check.kind === "read" ? record.check.reading : {};
      await trx("tenant_channels")
        .update({
          ...(record.check.kind === "read"
            ? {
                display_phone_number: reading.displayPhoneNumber,
                verified_name: reading.verifiedName,
                quality_rating: reading.qualityRating,
                number_status: reading.status,
              }
            : {}),
          check_result: record.result,
          check_reason: record.reasonCode,
          checked_at: trx.fn.now(),
          check_lease_until: null,
        })
        .where({ tenant_id: tenantId });
    },

    /** Stores what a callback said of the number (a quality event, an account event). */
    async recordUpdate(
      trx: Knex.Transaction,
      tenantId: string,
      fields: { qualityRating?: string; numberStatus?: string },
    ): Promise<void> {
      const update: Record<string, unknown> = {};
      if (fields.qualityRating !== undefined) update.quality_rating = fields.qualityRating;
      if (fields.numberStatus !== undefined) update.number_status = fields.numberStatus;
      if (Object.keys(update).length > 0) await trx("tenant_channels").update(update).where({ tenant_id: tenantId });
    },

    /**
     * The periodic check's lease: up to `limit` channels not checked for `intervalMs` and not leased
     * by another replica, each leased for `leaseMs` (FOR UPDATE SKIP LOCKED: two replicas never take
     * the same number). A replica that dies holding a lease frees it when the lease runs out.
     */
    async leaseDue(intervalMs: number, leaseMs: number, limit: number): Promise<StoredChannel[]> {
      return db.transaction(async (trx) => {
        const due = await trx("tenant_channels")
          .select<{ tenant_id: string }[]>("tenant_id")
          .where((where) =>
            where
              .whereNull("checked_at")
              .orWhere("checked_at", "<", trx.raw("now() - make_interval(secs => ?)", [intervalMs / 1000])),
          )
          .andWhere((where) => where.whereNull("check_lease_until").orWhere("check_lease_until", "<", trx.fn.now()))
          .orderByRaw("checked_at nulls first")
          .limit(limit)
          .forUpdate()
          .skipLocked();
        if (due.length === 0) return [];
        const rows = await trx("tenant_channels")
          .update({ check_lease_until: trx.raw("now() + make_interval(secs => ?)", [leaseMs / 1000]) })
          .whereIn(
            "tenant_id",
            due.map((row) => row.tenant_id),
          )
          .returning<ChannelRow[]>("*");
        return rows.map(toChannel);
      });
    },
  };
}

export type ChannelRepository = ReturnType<typeof createChannelRepository>;
