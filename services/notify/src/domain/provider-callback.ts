import { InvalidArgumentError } from "@platform/service-kit/errors";
import type { ProviderStatusKind } from "./delivery-status.js";

/**
 * The WhatsApp Cloud API's webhook notification (what its app webhook POSTs), as notify applies
 * it: `{object: "whatsapp_business_account", entry: [{id, changes: [{field, value}]}]}`.
 * `messages` changes carry `statuses` (of messages the platform sent) and `messages` (from
 * customers); `phone_number_quality_update` and `account_update` concern the number itself.
 * Everything else is recorded and ignored.
 */
export class ProviderCallbackInvalidError extends InvalidArgumentError {
  override name = "ProviderCallbackInvalidError";
  constructor(message: string) {
    super("provider.callback_invalid", message);
  }
}

export interface ReportedStatus {
  phoneNumberId: string;
  providerMessageId: string;
  status: ProviderStatusKind;
  at: Date;
  /** errors[0].code of a failed status, as text; null otherwise. */
  providerCode: string | null;
}

export type NumberUpdateField = "phone_number_quality_update" | "account_update";

export interface ParsedCallbacks {
  statuses: ReportedStatus[];
  /** One per `messages` change that holds customer messages, in order. */
  inbound: { phoneNumberId: string; messages: unknown[] }[];
  /** One per number-level change, in order. */
  numberUpdates: { field: NumberUpdateField; value: unknown }[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const reportable = new Set<string>(["sent", "delivered", "read", "failed"]);

/** The body as JSON, checked to be a provider notification (the shape, not every entry). */
export function parseCallbackBody(body: Uint8Array): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw new ProviderCallbackInvalidError("the callback body is not UTF-8 JSON");
  }
  if (!isObject(parsed) || typeof parsed.object !== "string" || !Array.isArray(parsed.entry)) {
    throw new ProviderCallbackInvalidError("the callback body is not an object with `object` and an `entry` list");
  }
  return parsed;
}

function timeOf(value: unknown, fallback: Date): Date {
  const seconds = typeof value === "string" ? Number(value) : typeof value === "number" ? value : NaN;
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : fallback;
}

/**
 * What a recorded notification asks notify to do. Malformed entries (a status without an id, a
 * change without a value) are skipped: the body was signed by the provider, and one odd entry
 * must not hold back the others.
 */
export function readCallbacks(notification: Record<string, unknown>, receivedAt: Date): ParsedCallbacks {
  const parsed: ParsedCallbacks = { statuses: [], inbound: [], numberUpdates: [] };
  if (notification.object !== "whatsapp_business_account" || !Array.isArray(notification.entry)) return parsed;
  for (const entry of notification.entry) {
    if (!isObject(entry) || !Array.isArray(entry.changes)) continue;
    for (const change of entry.changes) {
      if (!isObject(change) || !isObject(change.value)) continue;
      const { field, value } = change;
      if (field === "phone_number_quality_update" || field === "account_update") {
        parsed.numberUpdates.push({ field, value });
        continue;
      }
      if (field !== "messages") continue;
      const metadata = isObject(value.metadata) ? value.metadata : {};
      const phoneNumberId = typeof metadata.phone_number_id === "string" ? metadata.phone_number_id : "";
      for (const status of Array.isArray(value.statuses) ? value.statuses : []) {
        if (!isObject(status) || typeof status.id !== "string" || status.id === "") continue;
        if (typeof status.status !== "string" || !reportable.has(status.status)) continue;
        const firstError = Array.isArray(status.errors) && isObject(status.errors[0]) ? status.errors[0] : undefined;
        const code = firstError?.code;
        parsed.statuses.push({
          phoneNumberId,
          providerMessageId: status.id,
          status: status.status as ProviderStatusKind,
          at: timeOf(status.timestamp, receivedAt),
          providerCode: typeof code === "number" || typeof code === "string" ? String(code) : null,
        });
      }
      if (Array.isArray(value.messages) && value.messages.length > 0) {
        parsed.inbound.push({ phoneNumberId, messages: value.messages });
      }
    }
  }
  return parsed;
}
