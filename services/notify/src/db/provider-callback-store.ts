import { createHash } from "node:crypto";
import { randomBytes } from "node:crypto";
import type { Knex } from "@platform/service-kit/postgres";
import {
  applyProviderStatus,
  deliveryEventId,
  deliveryEventObject,
  deliveryEventType,
  type DeliveryProgress,
  type DeliveryStatus,
  type ProviderStatusKind,
} from "../domain/delivery-status.js";
import { TenantNotFoundError } from "../domain/tenant.js";
import type { EventOutbox } from "./event-outbox.js";

/**
 * Provider callbacks (issue 32 items 3 and 4; docs/notifications.md "Provider callbacks"):
 *   record   one insert of the signed body, deduplicated on its SHA-256 (a provider retry of the
 *            same batch is recorded once); committed before the gateway answers 200.
 *   apply    in one transaction holding the batch's row (FOR UPDATE SKIP LOCKED, so two replicas
 *            never apply one batch at once): each status to its notification (never backwards, its
 *            events in the outbox in the same transaction), then the batch marked applied. A
 *            failure rolls all of it back and the batch is tried again later.
 *   pending  a status for a provider message id no send has recorded yet is kept and applied by
 *            the pass once the send's outcome (provider_messages) holds the id.
 */

export interface RecordedBatch {
  id: string;
  provider: string;
  body: Buffer;
  receivedAt: Date;
}

/** A status as notify applies it: the provider's report plus the catalogue code of a failure. */
export interface StatusToApply {
  providerMessageId: string;
  status: ProviderStatusKind;
  at: Date;
  providerCode: string | null;
}

export interface NotificationStatusRow {
  notificationId: string;
  type: string;
  state: string;
  createdAt: Date;
  updatedAt: Date;
  /** delivery_failure_code, else the send's own failure_code. */
  reasonCode: string | null;
  progress: DeliveryProgress;
}

export interface ProviderCallbackStore {
  record(provider: string, body: Uint8Array): Promise<{ batchId: string; duplicate: boolean }>;
  /**
   * Runs `apply` in a transaction holding the batch's row, then marks the batch applied in it;
   * "skipped" when it is applied already or another process holds it. `apply` answers how many
   * events it wrote (the relay is kicked after the commit when any).
   */
  applyBatch(
    batchId: string,
    apply: (trx: Knex.Transaction, batch: RecordedBatch) => Promise<number>,
  ): Promise<"applied" | "skipped">;
  /** After a failed apply: counted, with the error, and due again after `retryDelayMs`. */
  recordFailure(batchId: string, error: string, retryDelayMs: number): Promise<void>;
  /** Unapplied batches that are due, oldest first. */
  dueBatches(limit: number): Promise<string[]>;
  /** One status, in the caller's transaction: applied to its notification, or kept as pending. Returns events written. */
  applyStatus(trx: Knex.Transaction, provider: string, status: StatusToApply, batchId: string): Promise<number>;
  /** Pending statuses whose message id a send has recorded since: applied and removed. Returns how many. */
  applyPending(limit: number): Promise<number>;
  getNotification(tenantId: string, notificationId: string): Promise<NotificationStatusRow | undefined>;
}

export const newBatchId = () => `pcb_${randomBytes(12).toString("hex")}`;

interface CommandRow {
  id: string;
  tenant_id: string;
  type: string;
  state: string;
  created_at: Date;
  updated_at: Date;
  failure_code: string | null;
  delivery_status: DeliveryStatus | null;
  delivery_failure_code: string | null;
  delivery_provider_code: string | null;
  accepted_at: Date | null;
  sent_at: Date | null;
  delivered_at: Date | null;
  read_at: Date | null;
  failed_at: Date | null;
}

const commandColumns =
  "c.id, c.tenant_id, c.type, c.state, c.created_at, c.updated_at, c.failure_code, c.delivery_status, " +
  "c.delivery_failure_code, c.delivery_provider_code, c.accepted_at, c.sent_at, c.delivered_at, c.read_at, c.failed_at";

const progressOf = (row: CommandRow): DeliveryProgress => ({
  status: row.delivery_status,
  acceptedAt: row.accepted_at,
  sentAt: row.sent_at,
  deliveredAt: row.delivered_at,
  readAt: row.read_at,
  failedAt: row.failed_at,
  failureCode: row.delivery_failure_code,
  providerCode: row.delivery_provider_code,
});

export function createProviderCallbackStore(
  db: Knex,
  events: EventOutbox,
  options: {
    /** The catalogue code of a `failed` status's provider error code (channel/whatsapp-errors.ts). */
    failureCodeFor(providerCode: string | null): string;
  },
): ProviderCallbackStore {
  async function applyStatus(
    trx: Knex.Transaction,
    provider: string,
    status: StatusToApply,
    batchId: string,
  ): Promise<number> {
    const { rows } = await trx.raw<{ rows: CommandRow[] }>(
      `select ${commandColumns} from provider_messages p join notification_commands c on c.id = p.notification_id
       where p.provider = ? and p.provider_message_id = ? for update of c`,
      [provider, status.providerMessageId],
    );
    const row = rows[0];
    if (!row) {
      await trx("pending_provider_statuses")
        .insert({
          provider,
          provider_message_id: status.providerMessageId,
          status: status.status,
          occurred_at: status.at,
          provider_code: status.providerCode,
          batch_id: batchId,
        })
        .onConflict(["provider", "provider_message_id", "status"])
        .ignore();
      return 0;
    }
    const current = progressOf(row);
    const { next, steps } = applyProviderStatus(current, {
      status: status.status,
      at: status.at,
      failureCode: status.status === "failed" ? options.failureCodeFor(status.providerCode) : null,
      providerCode: status.providerCode,
    });
    if (next === current) return 0;
    const changed =
      next.status !== current.status ||
      next.sentAt !== current.sentAt ||
      next.deliveredAt !== current.deliveredAt ||
      next.readAt !== current.readAt ||
      next.failedAt !== current.failedAt;
    if (!changed) return 0;
    await trx("notification_commands")
      .update({
        delivery_status: next.status,
        sent_at: next.sentAt,
        delivered_at: next.deliveredAt,
        read_at: next.readAt,
        failed_at: next.failedAt,
        delivery_failure_code: next.failureCode,
        delivery_provider_code: next.providerCode,
        updated_at: trx.fn.now(),
      })
      .where({ id: row.id });
    const view = { notificationId: row.id, type: row.type, createdAt: row.created_at, progress: next };
    for (const step of steps) {
      const at = step === "delivered" ? next.deliveredAt : step === "read" ? next.readAt : next.failedAt;
      await events.append(trx, {
        id: deliveryEventId(row.id, step),
        type: deliveryEventType(step),
        tenantId: row.tenant_id,
        occurredAt: at ?? new Date(),
        object: deliveryEventObject(view),
      });
    }
    return steps.length;
  }

  return {
    async record(provider, body) {
      const dedupeKey = createHash("sha256").update(body).digest("hex");
      const inserted = await db("provider_callback_batches")
        .insert({ id: newBatchId(), provider, dedupe_key: dedupeKey, body: Buffer.from(body) })
        .onConflict(["provider", "dedupe_key"])
        .ignore()
        .returning<{ id: string }[]>("id");
      if (inserted[0]) return { batchId: inserted[0].id, duplicate: false };
      const existing = await db("provider_callback_batches")
        .first<{ id: string }>("id")
        .where({ provider, dedupe_key: dedupeKey });
      return { batchId: existing.id, duplicate: true };
    },

    async applyBatch(batchId, apply) {
      let written = 0;
      const outcome = await db.transaction(async (trx) => {
        const { rows } = await trx.raw<{ rows: { id: string; provider: string; body: Buffer; received_at: Date }[] }>(
          `select id, provider, body, received_at from provider_callback_batches
           where id = ? and applied_at is null for update skip locked`,
          [batchId],
        );
        const row = rows[0];
        if (!row) return "skipped" as const;
        written = await apply(trx, { id: row.id, provider: row.provider, body: row.body, receivedAt: row.received_at });
        await trx("provider_callback_batches")
          .update({ applied_at: trx.fn.now(), attempts: trx.raw("attempts + 1"), last_error: null })
          .where({ id: batchId });
        return "applied" as const;
      });
      if (written > 0) events.kick();
      return outcome;
    },

    async recordFailure(batchId, error, retryDelayMs) {
      await db("provider_callback_batches")
        .update({
          attempts: db.raw("attempts + 1"),
          last_error: error.slice(0, 500),
          next_attempt_at: db.raw("now() + make_interval(secs => ?)", [retryDelayMs / 1000]),
        })
        .where({ id: batchId })
        .whereNull("applied_at");
    },

    async dueBatches(limit) {
      const rows = await db("provider_callback_batches")
        .select<{ id: string }[]>("id")
        .whereNull("applied_at")
        .andWhere("next_attempt_at", "<=", db.fn.now())
        .orderBy("next_attempt_at")
        .limit(limit);
      return rows.map((row) => row.id);
    },

    applyStatus,

    async applyPending(limit) {
      let written = 0;
      const applied = await db.transaction(async (trx) => {
        const { rows } = await trx.raw<{
          rows: {
            provider: string;
            provider_message_id: string;
            status: ProviderStatusKind;
            occurred_at: Date;
            provider_code: string | null;
            batch_id: string;
          }[];
        }>(
          `select pp.provider, pp.provider_message_id, pp.status, pp.occurred_at, pp.provider_code, pp.batch_id
           from pending_provider_statuses pp
           where exists (select 1 from provider_messages p
                         where p.provider = pp.provider and p.provider_message_id = pp.provider_message_id)
           order by pp.occurred_at, pp.received_at
           limit ? for update of pp skip locked`,
          [limit],
        );
        for (const row of rows) {
          written += await applyStatus(
            trx,
            row.provider,
            {
              providerMessageId: row.provider_message_id,
              status: row.status,
              at: row.occurred_at,
              providerCode: row.provider_code,
            },
            row.batch_id,
          );
          await trx("pending_provider_statuses")
            .where({ provider: row.provider, provider_message_id: row.provider_message_id, status: row.status })
            .delete();
        }
        return rows.length;
      });
      if (written > 0) events.kick();
      return applied;
    },

    async getNotification(tenantId, notificationId) {
      const { rows } = await db.raw<{ rows: CommandRow[] }>(
        `select ${commandColumns} from notification_commands c where c.id = ? and c.tenant_id = ?`,
        [notificationId, tenantId],
      );
      const row = rows[0];
      if (!row) {
        const tenant = await db("tenants").first<{ id: string } | undefined>("id").where({ id: tenantId });
        if (!tenant) throw new TenantNotFoundError();
        return undefined;
      }
      return {
        notificationId: row.id,
        type: row.type,
        state: row.state,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        reasonCode: row.delivery_failure_code ?? row.failure_code,
        progress: progressOf(row),
      };
    },
  };
}
