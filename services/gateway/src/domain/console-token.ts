import { createHmac, hash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The console's bearer secrets: session ids (the cookie's value), invitation tokens and console
 * link tokens. Each is 256 random bits in base64url (43 characters); the database holds only its
 * SHA-256 digest, so a copy of the tables opens no session. A fast digest is enough: there is
 * nothing to brute-force in 256 random bits.
 */
export function issueConsoleToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What a token looks like; anything else is refused before any lookup. */
export const CONSOLE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const isConsoleToken = (value: string): boolean => CONSOLE_TOKEN_PATTERN.test(value);

export function digestConsoleToken(token: string): Buffer {
  return hash("sha256", token, "buffer");
}

/**
 * The CSRF token of a session (or of a signed-out visitor's pre-session cookie): an HMAC of the
 * cookie's secret value, so nothing more is stored, it changes whenever the session does, and a
 * page of another site can neither read nor compute it.
 */
export function csrfTokenOf(secret: string): string {
  return createHmac("sha256", secret).update("console-csrf").digest("base64url");
}

/** Constant-time equality of two strings (false when the lengths differ). */
export function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A console link's token, derived from the API key that minted it: HMAC(key, link id). Only its
 * digest is stored; a repeat of the same POST (same Idempotency-Key, same key) derives the same
 * token again and answers the same URL, without the database ever holding it.
 */
export function consoleLinkToken(apiKey: string, linkId: string): string {
  return createHmac("sha256", apiKey).update(`console-link\0${linkId}`).digest("base64url");
}
