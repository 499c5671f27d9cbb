/**
 * The sign stage of a delivery attempt: the endpoint's secrets opened (one that cannot be opened:
 * the claim given back, the job nak'ed for 30 s), and the headers of the POST, signed at the
 * moment it is sent (a fresh `t` per attempt). The stages in order: delivery-attempt.ts.
 */
import type { AttemptStore, ClaimedDelivery } from "../db/attempt-store.js";
import { openSecret, type SecretKeyRing } from "../domain/secret-box.js";
import {
  rotationGraceMs,
  signatureHeaderName,
  signatureHeaderValue,
  signingSecrets,
  type EndpointSecrets,
} from "../domain/signature.js";
import type { ClaimedAttempt, JobMessage } from "./claim-stage.js";
import { standardHeaders } from "./standard-signature.js";

export const userAgent = "platform-webhooks/1.0";

/** A secret that cannot be opened is a configuration problem (a missing SECRETS_KEY entry). */
export const secretFailureDelayMs = 30_000;

export interface SignDeps {
  store: AttemptStore;
  keyRing: SecretKeyRing;
}

/**
 * The endpoint's secrets in plaintext: the current one, and the previous one until its grace
 * after the rotation ends (by the database's clock at the claim). Throws when one cannot be opened.
 */
export function endpointSecretsOf(delivery: ClaimedDelivery, ring: SecretKeyRing): EndpointSecrets {
  const current = openSecret(ring, delivery.secretSealed, delivery.endpointId);
  const expiresAt = delivery.previousSecretExpiresAt;
  if (delivery.previousSecretSealed === null || expiresAt === null || expiresAt <= delivery.now) {
    return { current, previous: null };
  }
  return {
    current,
    previous: {
      secret: openSecret(ring, delivery.previousSecretSealed, delivery.endpointId),
      rotatedAt: new Date(expiresAt.getTime() - rotationGraceMs),
    },
  };
}

/** The secrets, or undefined when they cannot be opened (the job is answered). */
export async function openSecrets(
  msg: JobMessage,
  claimed: ClaimedAttempt,
  deps: SignDeps,
): Promise<EndpointSecrets | undefined> {
  try {
    return endpointSecretsOf(claimed.delivery, deps.keyRing);
  } catch (error) {
    // Names the failure class only: never key or secret material.
    claimed.log.error(
      { ...claimed.ids, error: (error as Error).name },
      "the endpoint's signing secret cannot be opened",
    );
    await deps.store.release(claimed.delivery.id);
    msg.nak(secretFailureDelayMs);
    return undefined;
  }
}

/**
 * The headers of the POST of `body`, signed at `now`: Service-Signature (spec 6.2) and the
 * Standard Webhooks headers (standard-signature.ts), with the same `t` and the same secrets (the
 * previous one too within a rotation's grace).
 */
export function signedHeaders(
  delivery: ClaimedDelivery,
  secrets: EndpointSecrets,
  body: Buffer,
  now: Date,
): Record<string, string> {
  const signing = signingSecrets(secrets, now);
  const t = Math.floor(now.getTime() / 1000);
  return {
    "content-type": "application/json",
    "user-agent": userAgent,
    [signatureHeaderName]: signatureHeaderValue(signing, t, body),
    "service-event-id": delivery.eventId,
    "service-delivery-id": delivery.id,
    ...standardHeaders(signing, delivery.eventId, t, body),
  };
}
