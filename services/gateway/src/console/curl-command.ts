/**
 * "Copy as curl" for a delivery: a shell script that sends the exact payload to the endpoint's URL
 * with the headers the webhooks service sends (docs/webhooks.md "The delivery pipeline"), so a
 * partner can replay it against their receiver. The signature is the one header it cannot hold:
 * the console never has the endpoint's secret, so the script computes `Service-Signature` from the
 * partner's own copy in $WEBHOOK_SECRET (spec 6.2: HMAC-SHA256 of "<t>.<raw body>", lowercase hex).
 */

/** The User-Agent of every delivery (services/webhooks delivery/sign-stage.ts `userAgent`). */
export const DELIVERY_USER_AGENT = "platform-webhooks/1.0";

/** A POSIX shell single-quoted word: everything literal, a ' closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface CurlDelivery {
  url: string;
  payload: string;
  eventId: string;
  deliveryId: string;
}

export function curlCommand(delivery: CurlDelivery): string {
  return [
    `# Sends delivery ${delivery.deliveryId} again, byte for byte. Set WEBHOOK_SECRET to the`,
    "# endpoint's signing secret: the console never shows it; the script signs with it.",
    `BODY=${shellQuote(delivery.payload)}`,
    "T=$(date +%s)",
    `SIG=$(printf '%s.%s' "$T" "$BODY" | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" | sed 's/^.*= //')`,
    `curl -X POST ${shellQuote(delivery.url)} \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -H ${shellQuote(`User-Agent: ${DELIVERY_USER_AGENT}`)} \\`,
    `  -H ${shellQuote(`Service-Event-Id: ${delivery.eventId}`)} \\`,
    `  -H ${shellQuote(`Service-Delivery-Id: ${delivery.deliveryId}`)} \\`,
    `  -H "Service-Signature: t=$T,v1=$SIG" \\`,
    `  --data-binary "$BODY"`,
  ].join("\n");
}
