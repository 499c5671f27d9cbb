import { ChannelServiceService, type Channel as ProtoChannel } from "@platform/proto/notify/v1/channel";
import type { UnaryHandlers } from "@platform/service-kit/grpc-server";
import type { IdempotencyOptions } from "@platform/service-kit/idempotency";
import { sealSecret } from "@platform/service-kit/secret-box";
import type { StoredChannel } from "../db/channel-repository.js";
import { ChannelNotConnectedError, validateChannelConnection, verdictOf, type NumberCheck } from "../domain/channel.js";
import { notificationTypes } from "../domain/notification.js";
import { requireTenantId, TenantNotFoundError } from "../domain/tenant.js";
import { recordVerdict, tokenContext, type ChannelDeps } from "../channel/number-check.js";
import { notifyMutations } from "./notify-mutations.js";

const iso = (date: Date | null) => (date ? date.toISOString() : "");

/** The channel as answered: never the token; every type's template (the tenant's, else the default). */
export function toProtoChannel(channel: StoredChannel, deps: Pick<ChannelDeps, "defaultTemplates">): ProtoChannel {
  return {
    tenantId: channel.tenantId,
    wabaId: channel.wabaId,
    phoneNumberId: channel.phoneNumberId,
    displayPhoneNumber: channel.displayPhoneNumber ?? "",
    verifiedName: channel.verifiedName ?? "",
    qualityRating: channel.qualityRating ?? "",
    status: channel.numberStatus ?? "",
    checkedAt: iso(channel.checkedAt),
    checkResult: channel.checkResult ?? "",
    reasonCode: channel.checkReason ?? "",
    templates: notificationTypes.map((type) => ({
      type,
      ...(channel.templates[type] ?? deps.defaultTemplates[type]),
    })),
    messagesPerSecond: channel.messagesPerSecond,
    stopKeywords: channel.stopKeywords,
    startKeywords: channel.startKeywords,
    connectedAt: iso(channel.connectedAt),
    updatedAt: iso(channel.updatedAt),
  };
}

/** What a connect keeps for a replay (plain JSON, no token). */
interface KeptConnect {
  channel: ProtoChannel;
  created: boolean;
  tenantVersion: number;
}

/**
 * notify.v1.ChannelService: a tenant connects its own WhatsApp number. Connecting reads the number
 * with the new token first (before anything is claimed: a read of the provider, repeated on a
 * replay), then in one transaction stores the channel (token sealed), bumps the tenant's version
 * and reports the check as the messaging_channel capability (capability.suspended / .restored as
 * any report). The token is in no answer, no kept result and no log line.
 */
export function createChannelService(
  deps: ChannelDeps & { idempotency: IdempotencyOptions },
): UnaryHandlers<typeof ChannelServiceService> {
  const declare = notifyMutations(deps);
  return {
    connectChannel: declare(ChannelServiceService.connectChannel, {
      async prepare(request) {
        const connection = validateChannelConnection({
          wabaId: request.wabaId,
          phoneNumberId: request.phoneNumberId,
          accessToken: request.accessToken,
          templates: request.templates,
          messagesPerSecond: request.messagesPerSecond,
          stopKeywords: request.stopKeywords,
          startKeywords: request.startKeywords,
          expectedVersion: request.expectedVersion === undefined ? undefined : Number(request.expectedVersion),
        });
        const check: NumberCheck | undefined = deps.readNumber
          ? await deps.readNumber(connection.phoneNumberId, connection.accessToken)
          : undefined;
        return { connection, check };
      },
      async effect(trx, { tenantId, prepared: { connection, check } }) {
        const { created, tenantVersion } = await deps.channels.connect(
          trx,
          tenantId,
          {
            wabaId: connection.wabaId,
            phoneNumberId: connection.phoneNumberId,
            accessTokenSealed: sealSecret(deps.secrets, connection.accessToken, tokenContext(tenantId)),
            templates: connection.templates,
            messagesPerSecond: connection.messagesPerSecond,
            stopKeywords: connection.stopKeywords,
            startKeywords: connection.startKeywords,
          },
          connection.expectedVersion,
        );
        const events = check ? await recordVerdict(trx, deps, tenantId, check, verdictOf(check)) : 0;
        const stored = (await deps.channels.get(tenantId, trx))!;
        // The capability report may have bumped the tenant's version again: answer the current one.
        const version = await trx("tenants").first<{ version: string }>("version").where({ id: tenantId });
        return {
          kept: {
            channel: toProtoChannel(stored, deps),
            created,
            tenantVersion: version ? Number(version.version) : tenantVersion,
          } satisfies KeptConnect,
          events,
        };
      },
      record: (_trx, { events }) => Promise.resolve(events),
      keep: ({ kept }) => kept,
      log: ({ kept }, { tenantId }) => [
        {
          tenantId,
          phoneNumberId: kept.channel.phoneNumberId,
          created: kept.created,
          check: kept.channel.checkResult || "not_checked",
          reasonCode: kept.channel.reasonCode || null,
        },
        "channel connected",
      ],
      answer: (kept, replayed) => ({
        channel: kept.channel,
        created: kept.created,
        tenantVersion: String(kept.tenantVersion),
        replayed,
      }),
    }),
    async readChannel(request) {
      const tenantId = requireTenantId(request.tenantId);
      const channel = await deps.channels.get(tenantId);
      if (!channel) {
        // An unknown tenant is "tenant not found"; a known one without a channel, "not connected".
        const tenant = await deps.db("tenants").first<{ id: string } | undefined>("id").where({ id: tenantId });
        if (!tenant) throw new TenantNotFoundError();
        throw new ChannelNotConnectedError();
      }
      return { channel: toProtoChannel(channel, deps) };
    },
  };
}
