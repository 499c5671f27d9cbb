import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Meta's webhook signature (WhatsApp Cloud API app webhooks): `X-Hub-Signature-256: sha256=<hex>`,
 * the lowercase-hex HMAC-SHA256 of the raw request body keyed with the app secret. Checked over
 * the bytes as received, before anything parses them, in constant time.
 */
export function hubSignatureOf(appSecret: string, body: Uint8Array): string {
  return `sha256=${createHmac("sha256", appSecret).update(body).digest("hex")}`;
}

/** Whether `header` is the signature of `body` under `appSecret` (a missing or malformed header is not). */
export function isValidHubSignature(appSecret: string, body: Uint8Array, header: string | undefined): boolean {
  if (header === undefined) return false;
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match) return false;
  const expected = createHmac("sha256", appSecret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(match[1]!, "hex"));
}

/** Constant-time equality of two secrets as text (the subscription handshake's verify token). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHmac("sha256", "verify-token").update(given).digest();
  const b = createHmac("sha256", "verify-token").update(expected).digest();
  return timingSafeEqual(a, b);
}
