import type { ChannelFailureCode } from "../domain/channel-provider.js";

/**
 * The WhatsApp Business Cloud API's documented error codes (`error.code` of its error object)
 * and the partner-safe code each becomes. Codes not listed here become
 * partner.channel_send_failed. The table is documented in docs/interface-decisions.md.
 */
const table: [ChannelFailureCode, number[]][] = [
  // Throughput, pair, spam and account rate limits: retry later with the same Idempotency-Key.
  ["partner.channel_rate_limited", [4, 80007, 130429, 131048, 131056]],
  // The recipient cannot receive this message (not on WhatsApp, unreachable, not allowed).
  ["partner.recipient_undeliverable", [131026, 131021, 131030, 131045]],
  // Template missing, paused or disabled, or parameters that do not fit it: configuration.
  ["partner.template_unavailable", [132000, 132001, 132005, 132007, 132012, 132015, 132016, 132068, 132069]],
  // Credentials, permissions, account or phone-number state: the channel cannot send.
  ["partner.channel_not_ready", [0, 3, 10, 190, 200, 368, 131031, 131042, 131049, 131053, 133010]],
  // The provider says it is down: nothing was sent; retry later with the same key.
  ["service.unavailable", [1, 2, 131000, 131016]],
];

const byCode = new Map<number, ChannelFailureCode>(table.flatMap(([code, list]) => list.map((n) => [n, code])));

export function channelFailureFor(providerCode: number): ChannelFailureCode {
  return byCode.get(providerCode) ?? "partner.channel_send_failed";
}

/**
 * The catalogue code of a `failed` status callback (the message was accepted, then not delivered):
 * the same table where a code says why, else notification.delivery_failed (the provider's own code
 * is kept for operators, never shown to partners).
 */
export function deliveryFailureFor(providerCode: string | null): string {
  const code = providerCode === null ? NaN : Number(providerCode);
  const mapped = Number.isInteger(code) ? byCode.get(code) : undefined;
  return mapped === undefined || mapped === "service.unavailable" || mapped === "partner.channel_send_failed"
    ? "notification.delivery_failed"
    : mapped;
}
