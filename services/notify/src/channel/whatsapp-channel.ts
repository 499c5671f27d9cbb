import type {
  ChannelOutcome,
  ChannelProvider,
  ChannelRoute,
  OutboundTemplateMessage,
} from "../domain/channel-provider.js";
import type { NotificationType } from "../domain/notification.js";
import { channelFailureFor } from "./whatsapp-errors.js";

export interface WhatsAppTemplate {
  name: string;
  /** A WhatsApp language code such as en_US. */
  language: string;
}

export interface WhatsAppOptions {
  /** e.g. https://graph.facebook.com/v21.0 (no trailing slash needed). */
  baseUrl: string;
  /**
   * The process-wide fallback number and token (WHATSAPP_PHONE_NUMBER_ID / WHATSAPP_ACCESS_TOKEN),
   * for tenants without a connected channel; absent: such a tenant's send is refused as
   * partner.channel_not_ready (nothing is sent).
   */
  phoneNumberId?: string | undefined;
  /** A system-user access token; sent as a bearer token, never logged. */
  accessToken?: string | undefined;
  templates: Record<NotificationType, WhatsAppTemplate>;
  timeoutMs: number;
}

interface CloudApiSuccess {
  messages?: { id?: unknown }[];
}

interface CloudApiError {
  error?: { code?: unknown };
}

/** The request body of a template message, as the Cloud API's POST /{phone-number-id}/messages takes it. */
export function templateMessageBody(message: OutboundTemplateMessage, template: WhatsAppTemplate): object {
  return {
    messaging_product: "whatsapp",
    recipient_type: "individual",
    to: message.recipient,
    type: "template",
    template: {
      name: template.name,
      language: { code: template.language },
      components: [{ type: "body", parameters: message.parameters.map((text) => ({ type: "text", text })) }],
    },
  };
}

/** Connection failures that happen before a byte of the request left: the provider never saw it. */
const neverSent = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === "string" ? cause.code : undefined;
}

/**
 * NOTIFY_CHANNEL_PROVIDER=whatsapp: the WhatsApp Business Cloud API's template-message send.
 * A 2xx with a message id is sent; a documented error object is a refusal mapped to a
 * partner-safe code (whatsapp-errors.ts); anything else after the request may have left
 * (timeout, reset, 5xx without an error object, a reply we cannot read) is unknown.
 */
export function createWhatsAppChannel(options: WhatsAppOptions): ChannelProvider {
  const base = options.baseUrl.replace(/\/+$/, "");
  const fallback: ChannelRoute | undefined =
    options.phoneNumberId && options.accessToken
      ? { phoneNumberId: options.phoneNumberId, accessToken: options.accessToken, templates: {} }
      : undefined;
  return {
    name: "whatsapp",
    async send(message, route): Promise<ChannelOutcome> {
      // The tenant's own number and token; else the process-wide fallback; else nothing to send from.
      const from = route ?? fallback;
      if (!from) return { kind: "failed", code: "partner.channel_not_ready", providerCode: "no_channel" };
      const template = from.templates[message.type] ?? options.templates[message.type];
      let response: Response;
      let text: string;
      try {
        response = await fetch(`${base}/${encodeURIComponent(from.phoneNumberId)}/messages`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${from.accessToken}`,
            "content-type": "application/json",
            accept: "application/json",
          },
          body: JSON.stringify(templateMessageBody(message, template)),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        text = await response.text();
      } catch (error) {
        const code = causeCode(error);
        if (code !== undefined && neverSent.has(code)) {
          return { kind: "failed", code: "service.unavailable", providerCode: `connect:${code}` };
        }
        const name = (error as { name?: unknown }).name;
        return { kind: "unknown", reason: name === "TimeoutError" ? "timeout" : `transport:${code ?? String(name)}` };
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return { kind: "unknown", reason: `unreadable answer (HTTP ${response.status})` };
      }
      if (response.ok) {
        const id = (body as CloudApiSuccess).messages?.[0]?.id;
        if (typeof id === "string" && id !== "") return { kind: "sent", providerMessageId: id };
        return { kind: "unknown", reason: `HTTP ${response.status} without a message id` };
      }
      const providerCode = (body as CloudApiError).error?.code;
      if (typeof providerCode === "number" && Number.isInteger(providerCode)) {
        return { kind: "failed", code: channelFailureFor(providerCode), providerCode: String(providerCode) };
      }
      return { kind: "unknown", reason: `HTTP ${response.status} without an error object` };
    },
  };
}
