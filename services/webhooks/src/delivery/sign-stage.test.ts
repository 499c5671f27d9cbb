/** The sign stage without NATS or Postgres (fakes: attempt-fakes.testing.ts). */
import { describe, expect, it } from "vitest";
import { sealSecret, generateSigningSecret } from "../domain/secret-box.js";
import { rotationGraceMs, signatureHeaderName, signDelivery } from "../domain/signature.js";
import {
  attemptOf,
  capturedLogger,
  claimed,
  claimedDelivery,
  endpointId,
  jobMessage,
  otherRing,
  ring,
  secret,
  stageDeps,
} from "./attempt-fakes.testing.js";
import { endpointSecretsOf, openSecrets, signedHeaders, userAgent } from "./sign-stage.js";
import { standardKeyOf, standardSignature } from "./standard-signature.js";

describe("sign", () => {
  const previous = generateSigningSecret();
  const rotated = (expiresAt: Date) =>
    claimedDelivery({
      previousSecretSealed: sealSecret(ring, previous, endpointId),
      previousSecretExpiresAt: expiresAt,
    });

  it("opens the current secret only, when there was no rotation", () => {
    expect(endpointSecretsOf(claimedDelivery(), ring)).toEqual({ current: secret, previous: null });
  });

  it("opens the previous secret too while its grace lasts (by the database's clock), rotated 24 h before it ends", () => {
    const expiresAt = new Date("2026-03-01T12:00:01Z");
    expect(endpointSecretsOf(rotated(expiresAt), ring)).toEqual({
      current: secret,
      previous: { secret: previous, rotatedAt: new Date(expiresAt.getTime() - rotationGraceMs) },
    });
    expect(endpointSecretsOf(rotated(new Date("2026-03-01T12:00:00Z")), ring).previous).toBeNull();
  });

  it("gives back the claim of a delivery whose secret cannot be opened and naks its job for 30 s; the log names only the error", async () => {
    const delivery = claimedDelivery({ secretSealed: sealSecret(otherRing, secret, endpointId) });
    const { deps: d, calls } = stageDeps(claimed(delivery));
    const { logger, lines } = capturedLogger();
    const { msg, answers } = jobMessage();
    expect(await openSecrets(msg, attemptOf(delivery, logger), d)).toBeUndefined();
    expect(calls).toEqual([["release", "dlv_1"]]);
    expect(answers).toEqual([["nak", 30_000]]);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "error",
        deliveryId: "dlv_1",
        error: "SecretKeyUnknownError",
        msg: "the endpoint's signing secret cannot be opened",
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it("signs the body at the given moment, with the delivery's ids beside the signature", () => {
    const delivery = claimedDelivery();
    const body = Buffer.from(delivery.payload);
    const now = new Date("2026-03-01T12:00:00.750Z");
    const secrets = { current: secret, previous: null };
    expect(signedHeaders(delivery, secrets, body, now)).toEqual({
      "content-type": "application/json",
      "user-agent": userAgent,
      [signatureHeaderName]: signDelivery(secrets, body, now),
      "service-event-id": "evt_1",
      "service-delivery-id": "dlv_1",
      "webhook-id": "evt_1",
      "webhook-timestamp": "1772366400",
      "webhook-signature": standardSignature(standardKeyOf(secret), "evt_1", 1772366400, body),
    });
  });
});
