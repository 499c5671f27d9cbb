/**
 * Signing a delivery (spec 6.2):
 *
 *   Service-Signature: t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<raw body>">
 *
 * keyed with the endpoint secret (the whole `whsec_...` string as UTF-8, as Stripe does, so
 * stock verifiers work). A fresh `t` per attempt. During the 24 hours after a rotation the header
 * carries a second `v1` signed with the previous secret.
 */
import { createHmac } from "node:crypto";

export const signatureHeaderName = "Service-Signature";

/** How long the previous secret keeps signing after a rotation (spec 8). */
export const rotationGraceMs = 24 * 60 * 60 * 1000;

/** An endpoint's signing secrets in plaintext (decrypted for the moment of signing). */
export interface EndpointSecrets {
  current: string;
  /** The secret replaced by the latest rotation, with the moment of that rotation. */
  previous: { secret: string; rotatedAt: Date } | null;
}

/**
 * A rotation: the new secret becomes current and the current one becomes previous, timed from
 * `now`. Only one previous secret is kept: rotating twice within 24 hours ends the grace of the
 * first one at once.
 */
export function rotateSecrets(secrets: EndpointSecrets, newSecret: string, now: Date): EndpointSecrets {
  return { current: newSecret, previous: { secret: secrets.current, rotatedAt: now } };
}

/** Whether the previous secret still signs at `now`: strictly less than 24 hours after rotation. */
export function previousSecretSigns(secrets: EndpointSecrets, now: Date): boolean {
  return secrets.previous !== null && now.getTime() < secrets.previous.rotatedAt.getTime() + rotationGraceMs;
}

/** The secrets that sign at `now`: the current one first, then the previous one within its grace. */
export function signingSecrets(secrets: EndpointSecrets, now: Date): string[] {
  return previousSecretSigns(secrets, now) && secrets.previous
    ? [secrets.current, secrets.previous.secret]
    : [secrets.current];
}

/** The lowercase-hex HMAC-SHA256 of `<t>.<raw body>`. */
export function computeSignature(secret: string, timestampSeconds: number, rawBody: Uint8Array | string): string {
  return createHmac("sha256", secret).update(`${timestampSeconds}.`).update(rawBody).digest("hex");
}

/** The header value for these secrets (one `v1` per secret, in order) at `t`. */
export function signatureHeaderValue(
  secrets: readonly string[],
  timestampSeconds: number,
  rawBody: Uint8Array | string,
): string {
  if (secrets.length === 0) throw new TypeError("at least one signing secret is required");
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError("the signature timestamp must be whole Unix seconds");
  }
  const entries = secrets.map((secret) => `v1=${computeSignature(secret, timestampSeconds, rawBody)}`);
  return [`t=${timestampSeconds}`, ...entries].join(",");
}

/**
 * Signs one attempt of a delivery: `t` is `now` in Unix seconds (so every attempt gets a fresh
 * one), with a `v1` for the current secret and, within 24 hours of a rotation, the previous one.
 */
export function signDelivery(secrets: EndpointSecrets, rawBody: Uint8Array | string, now: Date): string {
  return signatureHeaderValue(signingSecrets(secrets, now), Math.floor(now.getTime() / 1000), rawBody);
}
