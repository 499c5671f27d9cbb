import type { Channel } from "@platform/proto/notify/v1/channel";
import { ApiError } from "../../http/api-error.js";

const orNull = (value: string) => (value === "" ? null : value);

/** The channel as partners read it: never the token. */
export function channelToJson(channel: Channel | undefined): Record<string, unknown> {
  if (!channel) throw new ApiError(500, "notify answered without a channel");
  return {
    wabaId: channel.wabaId,
    phoneNumberId: channel.phoneNumberId,
    displayPhoneNumber: orNull(channel.displayPhoneNumber),
    verifiedName: orNull(channel.verifiedName),
    qualityRating: orNull(channel.qualityRating),
    status: orNull(channel.status),
    checkedAt: orNull(channel.checkedAt),
    checkResult: orNull(channel.checkResult),
    reasonCode: orNull(channel.reasonCode),
    templates: Object.fromEntries(channel.templates.map((t) => [t.type, { name: t.name, language: t.language }])),
    messagesPerSecond: channel.messagesPerSecond,
    stopKeywords: channel.stopKeywords,
    startKeywords: channel.startKeywords,
    connectedAt: channel.connectedAt,
    updatedAt: channel.updatedAt,
  };
}

/** The channel as the tenant record shows it: number, display name, quality rating, status. */
export function channelSummaryToJson(channel: Channel | undefined): Record<string, unknown> | null {
  if (!channel) return null;
  return {
    phoneNumberId: channel.phoneNumberId,
    displayPhoneNumber: orNull(channel.displayPhoneNumber),
    verifiedName: orNull(channel.verifiedName),
    qualityRating: orNull(channel.qualityRating),
    status: orNull(channel.status),
    checkedAt: orNull(channel.checkedAt),
  };
}
