import { DomainError, UnavailableError } from "@platform/service-kit/errors";
import type { NotificationType } from "./notification.js";

/**
 * The port every messaging channel implements (src/channel/*): send one pre-approved template
 * message and say what happened, in three words the rest of the service understands.
 */
export interface OutboundTemplateMessage {
  /** The notification id; adapters may use it for their own correlation, never for retries. */
  notificationId: string;
  /** Recipient digits, no leading +. */
  recipient: string;
  type: NotificationType;
  /** Body parameters in template order, already collapsed to one line. */
  parameters: string[];
  /** The rendered text (what the sandbox records). */
  text: string;
}

/**
 * Stable, partner-safe reasons a provider refused a message. No provider text or code ever
 * reaches a partner; docs/interface-decisions.md has the table from provider codes to these.
 */
export const channelFailureCodes = [
  "partner.channel_not_ready",
  "partner.channel_rate_limited",
  "partner.recipient_undeliverable",
  "partner.template_unavailable",
  "partner.channel_send_failed",
  "service.unavailable",
] as const;
export type ChannelFailureCode = (typeof channelFailureCodes)[number];

export type ChannelOutcome =
  /** The provider accepted the message; its id is kept, never shown to partners. */
  | { kind: "sent"; providerMessageId: string }
  /** The provider answered that it did not send: nothing reached the customer. */
  | { kind: "failed"; code: ChannelFailureCode; providerCode: string }
  /** No usable answer (timeout, reset, garbled reply): the message may or may not have gone out. */
  | { kind: "unknown"; reason: string };

/**
 * The tenant's own number to send from (its connected channel, the token opened): its phone number
 * id, bearer token and the templates it set (types it did not set use the configured defaults).
 */
export interface ChannelRoute {
  phoneNumberId: string;
  accessToken: string;
  /** The number's throughput, which pacing holds every replica's sends to (domain/pacing.ts). */
  messagesPerSecond?: number;
  templates: Partial<Record<NotificationType, { name: string; language: string }>>;
}

export interface ChannelProvider {
  /** "sandbox" or "whatsapp": a metric label and a log field. */
  readonly name: string;
  /**
   * Never throws: every failure is one of the outcomes. Called at most once per notification.
   * `route`: the tenant's connected number; without one the provider's process-wide fallback
   * (WHATSAPP_PHONE_NUMBER_ID / WHATSAPP_ACCESS_TOKEN), or a channel_not_ready refusal when it has none.
   */
  send(message: OutboundTemplateMessage, route?: ChannelRoute): Promise<ChannelOutcome>;
}

export class ChannelRefusedError extends DomainError {
  override name = "ChannelRefusedError";
  constructor(code: Exclude<ChannelFailureCode, "service.unavailable">) {
    super(
      code === "partner.channel_rate_limited" ? "resource_exhausted" : "failed_precondition",
      code,
      refusalMessages[code],
    );
  }
}

const refusalMessages: Record<Exclude<ChannelFailureCode, "service.unavailable">, string> = {
  "partner.channel_not_ready": "the tenant's messaging channel cannot send right now; nothing was sent",
  "partner.channel_rate_limited":
    "the messaging channel is rate limited; nothing was sent; retry later with the same Idempotency-Key",
  "partner.recipient_undeliverable": "the recipient cannot receive this message on the channel; nothing was sent",
  "partner.template_unavailable":
    "the template for this notification type is not available on the channel; nothing was sent",
  "partner.channel_send_failed": "the messaging channel refused the message; nothing was sent",
};

/** The error a partner gets for a refusal: nothing was sent, the key is free for a retry. */
export function refusalError(code: ChannelFailureCode): DomainError {
  if (code === "service.unavailable") {
    return new UnavailableError("the messaging channel is temporarily unavailable; nothing was sent");
  }
  return new ChannelRefusedError(code);
}
