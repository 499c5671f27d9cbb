import type { Logger } from "@platform/service-kit/logger";
import type { Knex } from "@platform/service-kit/postgres";
import { openSecret, type SecretKeyRing } from "@platform/service-kit/secret-box";
import type { ActivationRepository } from "../db/activation-repository.js";
import type { ChannelRepository, StoredChannel } from "../db/channel-repository.js";
import type { EventOutbox } from "../db/event-outbox.js";
import { CHANNEL_CAPABILITY } from "../domain/activation.js";
import { verdictOf, type ChannelTemplate, type ChannelVerdict, type NumberCheck } from "../domain/channel.js";
import type { ChannelRoute } from "../domain/channel-provider.js";
import type { NotificationType } from "../domain/notification.js";
import { applyCapabilityReport } from "../db/capability-reports.js";
import type { NumberReader } from "./cloud-api-number.js";

/** What the channel's pieces (connect, checks, callbacks, sends) share. */
export interface ChannelDeps {
  db: Knex;
  channels: ChannelRepository;
  activation: ActivationRepository;
  events: EventOutbox;
  /** NOTIFY_REQUIRED_CAPABILITIES. */
  requiredCapabilities: readonly string[];
  /** SECRETS_KEY: seals and opens the tenants' access tokens. */
  secrets: SecretKeyRing;
  /**
   * Reads a number from the Cloud API (NOTIFY_CHANNEL_PROVIDER=whatsapp); absent with the sandbox
   * provider, where a connected number is stored but never read (readiness stays as it was set).
   */
  readNumber?: NumberReader | undefined;
  /** WHATSAPP_TEMPLATES: every type's template unless the tenant set its own. */
  defaultTemplates: Record<NotificationType, ChannelTemplate>;
  logger: Logger;
}

/** The associated data a tenant's token is sealed with: it opens for that tenant only. */
export const tokenContext = (tenantId: string) => `tenant_channels:${tenantId}`;

export function openToken(secrets: SecretKeyRing, channel: Pick<StoredChannel, "tenantId" | "accessTokenSealed">) {
  return openSecret(secrets, channel.accessTokenSealed, tokenContext(channel.tenantId));
}

/** The tenant's connected number to send from (its token opened); undefined when it has none. */
export async function channelRouteOf(
  deps: Pick<ChannelDeps, "channels" | "secrets">,
  tenantId: string,
): Promise<ChannelRoute | undefined> {
  const channel = await deps.channels.get(tenantId);
  if (!channel) return undefined;
  return {
    phoneNumberId: channel.phoneNumberId,
    accessToken: openToken(deps.secrets, channel),
    templates: channel.templates,
    messagesPerSecond: channel.messagesPerSecond,
  };
}

/**
 * Applies a check's verdict in `trx`: the channel's check columns, and (when there is a verdict)
 * the messaging_channel capability report through the activation machinery. Returns how many
 * events it appended.
 */
export async function recordVerdict(
  trx: Knex.Transaction,
  deps: Pick<ChannelDeps, "channels" | "activation" | "events" | "requiredCapabilities">,
  tenantId: string,
  check: NumberCheck,
  verdict: ChannelVerdict,
): Promise<number> {
  await deps.channels.recordCheck(trx, tenantId, {
    check,
    result: verdict === undefined ? "unreachable" : verdict.passed ? "pass" : "fail",
    reasonCode: verdict?.reasonCode ?? null,
  });
  if (verdict === undefined) return 0;
  const applied = await applyCapabilityReport(trx, deps, tenantId, {
    capability: CHANNEL_CAPABILITY,
    passed: verdict.passed,
    reasonCode: verdict.reasonCode,
  });
  return applied.events;
}

/** Reads one connected number and applies the verdict (its own transaction); never throws for the provider. */
export async function checkChannel(deps: ChannelDeps, channel: StoredChannel): Promise<NumberCheck | undefined> {
  if (!deps.readNumber) return undefined;
  const check = await deps.readNumber(channel.phoneNumberId, openToken(deps.secrets, channel));
  const verdict = verdictOf(check);
  const events = await deps.db.transaction((trx) => recordVerdict(trx, deps, channel.tenantId, check, verdict));
  if (events > 0) deps.events.kick();
  deps.logger.info(
    {
      tenantId: channel.tenantId,
      phoneNumberId: channel.phoneNumberId,
      check: check.kind,
      result: verdict === undefined ? "unreachable" : verdict.passed ? "pass" : "fail",
      reasonCode: verdict?.reasonCode ?? null,
      ...(check.kind === "unreachable" ? { reason: check.reason } : {}),
    },
    "channel number checked",
  );
  return check;
}

/**
 * The periodic check (NOTIFY_CHANNEL_CHECK_INTERVAL; 0: off): every tick, lease the numbers not
 * checked for an interval (one replica per number: channel-repository leaseDue) and check them.
 */
export function startChannelChecks(deps: ChannelDeps, options: { intervalMs: number; leaseMs: number }) {
  if (options.intervalMs <= 0 || !deps.readNumber) return { stop: () => Promise.resolve() };
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = async () => {
    const due = await deps.channels.leaseDue(options.intervalMs, options.leaseMs, 20);
    for (const channel of due) {
      if (stopped) return;
      await checkChannel(deps, channel).catch((error: unknown) =>
        deps.logger.warn(
          { err: error, tenantId: channel.tenantId },
          "a channel check failed; the next tick retries it",
        ),
      );
    }
  };
  const timer = setInterval(
    () => {
      running = running.then(tick).catch((error: unknown) => deps.logger.warn({ err: error }, "channel checks failed"));
    },
    Math.min(options.intervalMs, 60_000),
  );
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
