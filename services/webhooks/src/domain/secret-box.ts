/**
 * Endpoint signing secrets: generated as `whsec_` + 32 random bytes (base64url), and encrypted at
 * rest with AES-256-GCM under a key ring read from SECRETS_KEY.
 *
 * SECRETS_KEY is either one base64 32-byte key (its key id is `k1`) or a comma-separated list
 * `id:base64,id:base64` whose first entry is the active key. Sealed secrets look like
 *
 *   v1.<keyId>.<iv>.<tag>.<ciphertext>        (iv, tag, ciphertext base64url; iv 12 bytes, tag 16)
 *
 * and `v1.<keyId>` plus an optional context (e.g. the endpoint id) is authenticated as associated
 * data, so a sealed value cannot be moved to another key id or another endpoint. To rotate, put a
 * new key first and keep the old one after it; reseal what needsReseal() reports; then drop the
 * old key. Nothing here ever puts key or secret material in an error message.
 *
 * The sealing itself is service-kit's (packages/service-kit/src/secret-box.ts, which notify uses
 * for the tenants' access tokens); webhooks' rings carry its own `webhook.*` codes.
 */
import { randomBytes } from "node:crypto";
import {
  parseSecretsKey as parseRing,
  SEALING_CODES,
  sealedKeyId as sealedKeyIdOf,
  type SealingCodes,
} from "@platform/service-kit/secret-box";

export {
  InvalidSecretsKeyError,
  needsReseal,
  openSecret,
  resealSecret,
  SealedSecretMalformedError,
  sealSecret,
  SecretBoxError,
  SecretDecryptionError,
  SecretKeyUnknownError,
  type SecretKeyRing,
} from "@platform/service-kit/secret-box";

export const signingSecretPrefix = "whsec_";

/**
 * A new endpoint signing secret: `whsec_` and 44 characters of A-Z a-z 0-9 (33 random bytes in
 * base64url, drawn again while any character is `-` or `_`: about 4 draws on average). Those 44
 * characters are the same bytes in standard base64 and in base64url, with no padding needed (44 is
 * a multiple of 4), so every Standard Webhooks library accepts the secret as shown
 * (delivery/standard-signature.ts). The key keeps about 262 bits of entropy.
 *
 * Secrets issued before were 32 bytes in 43 base64url characters (and still sign: nothing about a
 * secret's format matters to Service-Signature); isSigningSecret accepts both.
 */
export function generateSigningSecret(): string {
  for (;;) {
    const encoded = randomBytes(33).toString("base64url");
    if (/^[A-Za-z0-9]{44}$/.test(encoded)) return `${signingSecretPrefix}${encoded}`;
  }
}

/** A signing secret as issued now (44 alphanumerics) or before (43 base64url characters). */
export function isSigningSecret(value: string): boolean {
  return /^whsec_(?:[A-Za-z0-9]{44}|[A-Za-z0-9_-]{43})$/.test(value);
}

/** Webhooks' names for the sealing failures (packages/codes, the webhook catalogue). */
export const WEBHOOK_SEALING_CODES: SealingCodes = Object.freeze({
  ...SEALING_CODES,
  keyInvalid: "webhook.secrets_key_invalid",
  sealedMalformed: "webhook.sealed_secret_malformed",
  keyUnknown: "webhook.secrets_key_unknown",
  decryptionFailed: "webhook.secret_decryption_failed",
});

/** Reads SECRETS_KEY into a ring whose failures carry webhooks' codes. */
export const parseSecretsKey = (text: string | undefined) => parseRing(text, WEBHOOK_SEALING_CODES);

/** The key id a sealed secret was encrypted with (webhooks' code when it is malformed). */
export const sealedKeyId = (sealed: string) => sealedKeyIdOf(sealed, WEBHOOK_SEALING_CODES);
