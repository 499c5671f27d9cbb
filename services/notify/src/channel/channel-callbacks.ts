/**
 * What the provider's callbacks do to a tenant's channel (issue 32, items 3 and 7). The callback
 * ingress (the gateway's public path, X-Hub-Signature-256, durable recording, dispatch) calls:
 *   - applyInboundMessages for a `messages` change (value.metadata.phone_number_id and
 *     value.messages[]): STOP / START keywords become opt-outs / opt-ins;
 *   - applyNumberUpdate for a `phone_number_quality_update` or `account_update` change: the
 *     messaging_channel capability report (suspends or restores the channel).
 * Both are idempotent: the provider retries and duplicates, and a repeat changes nothing.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "@platform/service-kit/logger";
import type { Knex } from "@platform/service-kit/postgres";
import type { ActivationRepository } from "../db/activation-repository.js";
import { createChannelRepository, type ChannelRepository, type StoredChannel } from "../db/channel-repository.js";
import type { EventOutbox } from "../db/event-outbox.js";
import type { TenantRepository } from "../db/tenant-repository.js";
import { CHANNEL_CAPABILITY } from "../domain/activation.js";
import { consentCommandOf, recipientReference, verdictOfUpdate, type NumberUpdate } from "../domain/channel.js";
import { applyCapabilityReport } from "../db/capability-reports.js";

/**
 * One entry of a `messages` change's `value.messages[]`, as the WhatsApp Cloud API documents it
 * (the fields read here; others are ignored).
 */
export interface CloudApiInboundMessage {
  /** The customer's WhatsApp id: their phone number, digits. */
  from: string;
  /** The provider's message id (wamid.…): the deduplication key. */
  id: string;
  /** Unix seconds, as a string. */
  timestamp: string;
  /** text, button, interactive, image, … (only text and button carry a keyword). */
  type: string;
  text?: { body: string };
  /** A quick-reply button's text (a template's "Stop promotions" button). */
  button?: { text: string; payload?: string };
}

/** What the callbacks need: notify's database and its repositories, the outbox, a logger. */
export interface ChannelCallbackDeps {
  db: Knex;
  channels?: ChannelRepository;
  tenants: TenantRepository;
  activation: ActivationRepository;
  events: EventOutbox;
  /** NOTIFY_REQUIRED_CAPABILITIES. */
  requiredCapabilities: readonly string[];
  logger: Logger;
}

/** The tenant whose connected channel owns this phone number id; undefined when none does. */
export async function tenantOfPhoneNumber(db: Knex, phoneNumberId: string): Promise<string | undefined> {
  const row = await db("tenant_channels")
    .first<{ tenant_id: string } | undefined>("tenant_id")
    .where({ phone_number_id: phoneNumberId });
  return row?.tenant_id;
}

const RECIPIENT = /^[0-9]{8,15}$/;

function keywordTextOf(message: CloudApiInboundMessage): string | undefined {
  if (message.type === "text") return message.text?.body;
  if (message.type === "button") return message.button?.text;
  return undefined;
}

function sentAtOf(message: CloudApiInboundMessage): Date {
  const seconds = Number(message.timestamp);
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : new Date();
}

/**
 * A customer's inbound messages to a tenant's number. A text (or quick-reply button) that is one
 * of the tenant's stop keywords (default STOP, UNSUBSCRIBE; case-insensitive, trimmed) records an
 * opt-out for that tenant and number, exactly as the operator's consent command does
 * (SetRecipientConsent: later sends answer 409 partner.recipient_opted_out); a start keyword
 * (START) lifts it. The keyword message is kept on the transcript (inbound, state `received`) and
 * announced as recipient.opted_out / recipient.opted_in (activity feed; the snapshot carries an
 * opaque recipient reference, never the number or the text). Each provider message id is applied
 * once; a keyword older than the customer's last one applied (callbacks arrive out of order) is
 * kept on the transcript but changes nothing. Other inbound messages are ignored (not recorded).
 * A number no tenant connected: nothing happens (logged).
 */
export async function applyInboundMessages(
  deps: ChannelCallbackDeps,
  phoneNumberId: string,
  messages: CloudApiInboundMessage[],
): Promise<void> {
  const channels = deps.channels ?? createChannelRepository(deps.db);
  const channel = await channels.byPhoneNumberId(phoneNumberId);
  if (!channel) {
    deps.logger.warn({ phoneNumberId, messages: messages.length }, "inbound messages for a number no tenant connected");
    return;
  }
  for (const message of messages) {
    const text = keywordTextOf(message);
    const action = text === undefined ? undefined : consentCommandOf(text, channel);
    const recipient = typeof message.from === "string" ? message.from.replace(/^\+/, "") : "";
    if (!action || !RECIPIENT.test(recipient) || typeof message.id !== "string" || message.id === "") continue;
    const announced = await deps.db.transaction((trx) =>
      applyKeyword(trx, deps, channel, { message, text: text!.trim(), action, recipient }),
    );
    if (announced) deps.events.kick();
  }
}

async function applyKeyword(
  trx: Knex.Transaction,
  deps: ChannelCallbackDeps,
  channel: StoredChannel,
  input: { message: CloudApiInboundMessage; text: string; action: "opt_out" | "opt_in"; recipient: string },
): Promise<boolean> {
  const { tenantId } = channel;
  const { message, action, recipient } = input;
  // One customer's keywords are applied one at a time, in the order they were sent.
  await trx.raw("select pg_advisory_xact_lock(hashtextextended(?, 0))", [`notify.consent|${tenantId}|${recipient}`]);
  const sentAt = sentAtOf(message);
  const newer = await trx("inbound_messages")
    .first<{ id: string } | undefined>("id")
    .where({ tenant_id: tenantId, recipient, applied: true })
    .andWhere("sent_at", ">", sentAt);
  const applied = !newer;
  const inserted = await trx("inbound_messages")
    .insert({
      id: `msg_${randomBytes(12).toString("hex")}`,
      provider_message_id: message.id,
      tenant_id: tenantId,
      recipient,
      text: input.text.slice(0, 64),
      action,
      applied,
      sent_at: sentAt,
    })
    .onConflict("provider_message_id")
    .ignore()
    .returning("id");
  if (inserted.length === 0 || !applied) return false; // a repeat of the callback, or overtaken
  await deps.tenants.setOptOut(trx, tenantId, recipient, action === "opt_out");
  await deps.events.append(trx, {
    type: action === "opt_out" ? "recipient.opted_out" : "recipient.opted_in",
    tenantId,
    occurredAt: sentAt,
    object: {
      tenant_id: tenantId,
      recipient_ref: recipientReference(tenantId, recipient),
      state: action === "opt_out" ? "opted_out" : "opted_in",
      reason_code: action === "opt_out" ? "consent.stop_keyword" : "consent.start_keyword",
      actor: "customer",
      occurred_at: sentAt.toISOString(),
    },
  });
  deps.logger.info(
    { tenantId, recipientRef: recipientReference(tenantId, recipient), action },
    action === "opt_out" ? "a customer opted out by keyword" : "a customer opted back in by keyword",
  );
  return true;
}

function digitsOf(value: unknown): string {
  return typeof value === "string" ? value.replace(/[^0-9]/g, "") : "";
}

/**
 * A number-level callback (`phone_number_quality_update`, `account_update`): the channels it names
 * (by `value.phone_number_id` when present, else by the number's digits, `display_phone_number` or
 * `phone_number`, against what the last check read; an account_update naming no number applies to
 * every channel of `wabaId`, the entry's id, when the dispatcher passes it) get a
 * messaging_channel capability report through the activation machinery (domain/channel.ts
 * verdictOfUpdate): a flag, ban or restriction suspends the channel (capability.suspended; sends
 * answer 409 partner.channel_not_ready), its lifting restores it (capability.restored). A repeat
 * reports the same result again, which changes nothing and emits nothing.
 */
export async function applyNumberUpdate(
  deps: ChannelCallbackDeps,
  change: NumberUpdate & { wabaId?: string },
): Promise<void> {
  const channels = deps.channels ?? createChannelRepository(deps.db);
  const value = (change.value ?? {}) as Record<string, unknown>;
  const named =
    typeof value.phone_number_id === "string" ? await channels.byPhoneNumberId(value.phone_number_id) : undefined;
  const targets = named
    ? [named]
    : await channels.byDisplayDigitsOrWaba(digitsOf(value.display_phone_number ?? value.phone_number), change.wabaId);
  if (targets.length === 0) {
    deps.logger.warn({ field: change.field }, "a number update for no connected channel");
    return;
  }
  for (const channel of targets) {
    const events = await deps.db.transaction(async (trx) => {
      const current = await deps.activation.lock(trx, channel.tenantId);
      const capability = current.capabilities.find((c) => c.name === CHANNEL_CAPABILITY);
      const failingWith = capability?.state === "off" ? capability.reasonCode : null;
      const verdict = verdictOfUpdate(change, failingWith);
      const event = typeof value.event === "string" ? value.event.toUpperCase() : "";
      if (change.field === "phone_number_quality_update" && (event === "FLAGGED" || event === "UNFLAGGED")) {
        await channels.recordUpdate(trx, channel.tenantId, {
          numberStatus: event === "FLAGGED" ? "FLAGGED" : "CONNECTED",
        });
      }
      if (!verdict) return 0;
      await trx("tenant_channels")
        .update({
          check_result: verdict.passed ? "pass" : "fail",
          check_reason: verdict.reasonCode,
          checked_at: trx.fn.now(),
        })
        .where({ tenant_id: channel.tenantId });
      const applied = await applyCapabilityReport(trx, deps, channel.tenantId, {
        capability: CHANNEL_CAPABILITY,
        passed: verdict.passed,
        reasonCode: verdict.reasonCode,
      });
      return applied.events;
    });
    if (events > 0) deps.events.kick();
    deps.logger.info({ tenantId: channel.tenantId, field: change.field, events }, "number update applied");
  }
}
