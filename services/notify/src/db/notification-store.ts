import { IDEMPOTENCY_TABLE } from "@platform/service-kit/idempotency";
import type { Knex } from "@platform/service-kit/postgres";
import type { ChannelOutcome } from "../domain/channel-provider.js";
import {
  ChannelNotReadyError,
  RecipientOptedOutError,
  TenantNotActivatedError,
  TestingAllowanceExhaustedError,
  type DeliveryState,
  type NotificationType,
} from "../domain/notification.js";
import { TenantNotFoundError, type TenantPlan } from "../domain/tenant.js";

/**
 * Notification commands in two transactions around the provider call (the call itself cannot
 * be inside a database transaction):
 *   record   (tx1) claim the Idempotency-Key, check the tenant, the opt-outs and the testing
 *                  allowance, insert the command (dispatching) and its transcript entry (unknown).
 *   complete (tx2) record the provider's answer: command and transcript state, the provider's
 *                  message id, and the key's result (sent, unknown) or its release (refused).
 * A claim whose holder died between the two is settled as unknown by the next retry; the
 * provider is never called twice for one claim.
 */

/** What the key remembers and a replay answers. */
export interface StoredSend {
  notificationId: string;
  state: "sent" | "unknown";
  type: NotificationType;
  createdAt: string;
}

export interface NewSend {
  tenantId: string;
  idempotencyKey: string;
  fingerprint: string;
  owner: string;
  notificationId: string;
  transcriptEntryId: string;
  recipient: string;
  type: NotificationType;
  text: string;
  actorReference: string;
  delegationReference: string | null;
  requestId: string;
  leaseMs: number;
  ttlMs: number;
  testingAllowance: number;
}

export type RecordResult =
  | { recorded: true; createdAt: Date }
  /** The key is already claimed: the caller reads it with findClaim. */
  | { recorded: false };

export interface ExistingClaim {
  fingerprint: string;
  state: "in_progress" | "completed";
  result: StoredSend | null;
  leaseExpired: boolean;
}

export interface TranscriptEntry {
  seq: string;
  id: string;
  notificationId: string;
  type: string;
  text: string;
  state: DeliveryState;
  actorReference: string;
  delegationReference: string | null;
  createdAt: Date;
  updatedAt: Date;
}

interface TenantRow {
  activated: boolean;
  channel_ready: boolean;
  plan: TenantPlan;
}

export interface NotificationStore {
  record(send: NewSend): Promise<RecordResult>;
  findClaim(tenantId: string, idempotencyKey: string): Promise<ExistingClaim | undefined>;
  complete(
    send: { tenantId: string; idempotencyKey: string; owner: string; notificationId: string },
    outcome: ChannelOutcome,
    provider: string,
    result: StoredSend,
  ): Promise<void>;
  /**
   * Settles a claim whose lease expired while its command was still dispatching: command and key
   * become unknown (the transcript entry already says unknown). Returns the settled result, or
   * undefined when someone else settled or completed it first.
   */
  settleAbandoned(tenantId: string, idempotencyKey: string, fingerprint: string): Promise<StoredSend | undefined>;
  listTranscript(
    tenantId: string,
    recipient: string,
    limit: number,
    beforeSeq: string | undefined,
  ): Promise<TranscriptEntry[]>;
}

interface TranscriptRow {
  seq: string;
  id: string;
  notification_id: string;
  type: string;
  text: string;
  state: DeliveryState;
  actor_reference: string;
  delegation_reference: string | null;
  created_at: Date;
  updated_at: Date;
}

export function createNotificationStore(db: Knex): NotificationStore {
  return {
    async record(send) {
      return db.transaction(async (trx) => {
        // Claim first: a concurrent repeat waits here on the key's row until this commits.
        const claimed = await trx.raw<{ rowCount: number }>(
          `insert into ${IDEMPOTENCY_TABLE} (scope, key, fingerprint, state, owner, locked_until, expires_at)
           values (?, ?, ?, 'in_progress', ?, now() + make_interval(secs => ?), now() + make_interval(secs => ?))
           on conflict (scope, key) do update
             set fingerprint = excluded.fingerprint, state = 'in_progress', owner = excluded.owner, result = null,
                 created_at = now(), locked_until = excluded.locked_until, expires_at = excluded.expires_at
             where ${IDEMPOTENCY_TABLE}.expires_at < now()`,
          [send.tenantId, send.idempotencyKey, send.fingerprint, send.owner, send.leaseMs / 1000, send.ttlMs / 1000],
        );
        if (claimed.rowCount !== 1) return { recorded: false } as const;

        const tenant = await trx("tenants")
          .first<TenantRow | undefined>("activated", "channel_ready", "plan")
          .where({ id: send.tenantId });
        if (!tenant) throw new TenantNotFoundError();
        if (!tenant.activated) throw new TenantNotActivatedError();
        if (!tenant.channel_ready) throw new ChannelNotReadyError();
        const optedOut = await trx("recipient_opt_outs")
          .first<{ recipient: string } | undefined>("recipient")
          .where({ tenant_id: send.tenantId, recipient: send.recipient });
        if (optedOut) throw new RecipientOptedOutError();

        const { rows } = await trx.raw<{ rows: { month: string; now: Date }[] }>(
          "select to_char(now() at time zone 'utc', 'YYYY-MM') as month, now() as now",
        );
        const { month, now } = rows[0]!;
        const counted = tenant.plan === "testing";
        if (counted) {
          // One row per tenant and month; the conditional increment serializes concurrent sends
          // on the row, so the allowance is never overshot.
          const counter = await trx.raw<{ rowCount: number }>(
            `insert into monthly_sends (tenant_id, month, sends) values (?, ?, 1)
             on conflict (tenant_id, month) do update set sends = monthly_sends.sends + 1
               where monthly_sends.sends < ?`,
            [send.tenantId, month, send.testingAllowance],
          );
          if (counter.rowCount !== 1 || send.testingAllowance < 1) {
            throw new TestingAllowanceExhaustedError(send.testingAllowance);
          }
        }
        await trx("notification_commands").insert({
          id: send.notificationId,
          tenant_id: send.tenantId,
          idempotency_key: send.idempotencyKey,
          type: send.type,
          recipient: send.recipient,
          state: "dispatching",
          counted,
          month,
          request_id: send.requestId,
          created_at: now,
          updated_at: now,
        });
        await trx("conversation_messages").insert({
          id: send.transcriptEntryId,
          tenant_id: send.tenantId,
          recipient: send.recipient,
          notification_id: send.notificationId,
          type: send.type,
          text: send.text,
          state: "unknown",
          actor_reference: send.actorReference,
          delegation_reference: send.delegationReference,
          created_at: now,
          updated_at: now,
        });
        return { recorded: true, createdAt: now } as const;
      });
    },

    async findClaim(tenantId, idempotencyKey) {
      const row = await db(IDEMPOTENCY_TABLE)
        .first<
          | { fingerprint: string; state: ExistingClaim["state"]; result: StoredSend | null; lease_expired: boolean }
          | undefined
        >("fingerprint", "state", "result", db.raw("locked_until < now() as lease_expired"))
        .where({ scope: tenantId, key: idempotencyKey });
      return (
        row && { fingerprint: row.fingerprint, state: row.state, result: row.result, leaseExpired: row.lease_expired }
      );
    },

    async complete(send, outcome, provider, result) {
      const state: DeliveryState = outcome.kind;
      await db.transaction(async (trx) => {
        const [command] = await trx("notification_commands")
          .update({
            state,
            failure_code: outcome.kind === "failed" ? outcome.code : null,
            provider_code: outcome.kind === "failed" ? outcome.providerCode : null,
            updated_at: trx.fn.now(),
          })
          .where({ id: send.notificationId })
          .whereIn("state", ["dispatching", "unknown"])
          .returning<{ counted: boolean; month: string }[]>(["counted", "month"]);
        if (outcome.kind === "sent") {
          await trx("provider_messages").insert({
            notification_id: send.notificationId,
            provider,
            provider_message_id: outcome.providerMessageId,
          });
        }
        await trx("conversation_messages")
          .update({ state, updated_at: trx.fn.now() })
          .where({ notification_id: send.notificationId });
        const mine = { scope: send.tenantId, key: send.idempotencyKey, owner: send.owner, state: "in_progress" };
        if (outcome.kind === "failed") {
          // Nothing was sent: the allowance is given back and the key released, so the partner
          // may retry with the same key once the cause is fixed.
          if (command?.counted) {
            await trx("monthly_sends")
              .where({ tenant_id: send.tenantId, month: command.month })
              .andWhere("sends", ">", 0)
              .decrement("sends", 1);
          }
          await trx(IDEMPOTENCY_TABLE).delete().where(mine);
        } else {
          await trx(IDEMPOTENCY_TABLE)
            .update({ state: "completed", result: JSON.stringify(result) })
            .where(mine);
        }
      });
    },

    async settleAbandoned(tenantId, idempotencyKey, fingerprint) {
      return db.transaction(async (trx) => {
        const command = await trx("notification_commands")
          .first<{ id: string; type: NotificationType; created_at: Date } | undefined>("id", "type", "created_at")
          .where({ tenant_id: tenantId, idempotency_key: idempotencyKey })
          .orderBy("created_at", "desc");
        if (!command) return undefined;
        const result: StoredSend = {
          notificationId: command.id,
          state: "unknown",
          type: command.type,
          createdAt: command.created_at.toISOString(),
        };
        const settled = await trx(IDEMPOTENCY_TABLE)
          .update({ state: "completed", result: JSON.stringify(result) })
          .where({ scope: tenantId, key: idempotencyKey, state: "in_progress", fingerprint })
          .andWhere("locked_until", "<", trx.fn.now());
        if (settled !== 1) return undefined;
        await trx("notification_commands")
          .update({ state: "unknown", updated_at: trx.fn.now() })
          .where({ id: command.id, state: "dispatching" });
        return result;
      });
    },

    async listTranscript(tenantId, recipient, limit, beforeSeq) {
      const tenant = await db("tenants").first<{ id: string } | undefined>("id").where({ id: tenantId });
      if (!tenant) throw new TenantNotFoundError();
      const query = db("conversation_messages")
        .where({ tenant_id: tenantId, recipient })
        .orderBy("seq", "desc")
        .limit(limit);
      const rows = await (beforeSeq === undefined ? query : query.andWhere("seq", "<", beforeSeq)).select<
        TranscriptRow[]
      >("*");
      return rows.map((row) => ({
        seq: String(row.seq),
        id: row.id,
        notificationId: row.notification_id,
        type: row.type,
        text: row.text,
        state: row.state,
        actorReference: row.actor_reference,
        delegationReference: row.delegation_reference,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      }));
    },
  };
}
