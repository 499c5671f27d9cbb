/**
 * The Standard Webhooks headers, sent beside the spec's `Service-Signature` (docs/webhooks.md,
 * "Standard Webhooks headers"):
 *
 *   webhook-id:        the event id (the envelope's `id`: the same on every attempt and redrive)
 *   webhook-timestamp: Unix seconds, the same `t` as Service-Signature's
 *   webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">, one per signing
 *                      secret, space-separated (both during a rotation's 24 hours)
 *
 * The HMAC key is what Standard Webhooks libraries make of the secret the partner was shown: the
 * part after `whsec_`, base64-decoded. Secrets issued now are 44 alphanumerics (33 bytes, the same
 * in either alphabet, no padding: domain/secret-box.ts); those issued before are 43 base64url
 * characters (32 bytes). Node's decoder reads both alphabets (`-` as `+`, `_` as `/`, padding
 * optional), so the key is the secret's bytes whichever way it is written. Service-Signature keeps
 * its own key (the whole string as UTF-8), so existing verifiers are unaffected.
 */
import { createHmac } from "node:crypto";
import { signingSecretPrefix } from "../domain/secret-box.js";

export const standardIdHeader = "webhook-id";
export const standardTimestampHeader = "webhook-timestamp";
export const standardSignatureHeader = "webhook-signature";

/** The HMAC key of the standard headers: the base64 after `whsec_`, decoded. */
export function standardKeyOf(secret: string): Buffer {
  const encoded = secret.startsWith(signingSecretPrefix) ? secret.slice(signingSecretPrefix.length) : secret;
  const key = Buffer.from(encoded, "base64");
  // Never the secret in the message.
  if (key.length === 0) throw new TypeError("the signing secret has no base64 key after whsec_");
  return key;
}

/** One `v1,<base64>` entry: the HMAC-SHA256 of `<id>.<timestamp>.<raw body>` under `key`. */
export function standardSignature(
  key: Uint8Array,
  id: string,
  timestampSeconds: number,
  rawBody: Uint8Array | string,
): string {
  const mac = createHmac("sha256", key).update(`${id}.${timestampSeconds}.`).update(rawBody).digest("base64");
  return `v1,${mac}`;
}

/**
 * The three headers for these secrets (one signature per secret, in order, space-separated) at
 * `t`. `secrets` are the shown `whsec_...` strings.
 */
export function standardHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  rawBody: Uint8Array | string,
): Record<string, string> {
  if (secrets.length === 0) throw new TypeError("at least one signing secret is required");
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError("the signature timestamp must be whole Unix seconds");
  }
  const signatures = secrets.map((secret) => standardSignature(standardKeyOf(secret), id, timestampSeconds, rawBody));
  return {
    [standardIdHeader]: id,
    [standardTimestampHeader]: String(timestampSeconds),
    [standardSignatureHeader]: signatures.join(" "),
  };
}
