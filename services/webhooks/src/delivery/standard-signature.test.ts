/** The Standard Webhooks signer, checked against the `standardwebhooks` package (the spec's own). */
import { verifySignature } from "@platform/webhook-verifier";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { generateSigningSecret } from "../domain/secret-box.js";
import { rotationGraceMs } from "../domain/signature.js";
import { claimedDelivery } from "./attempt-fakes.testing.js";
import { signedHeaders } from "./sign-stage.js";
import { standardHeaders, standardKeyOf, standardSignature } from "./standard-signature.js";

const body = '{"id":"evt_1","type":"booking.created"}';

describe("standard signature", () => {
  it("matches the Standard Webhooks specification's known answer", () => {
    // The example of the spec and of its libraries' tests.
    const key = standardKeyOf("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect(standardSignature(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}')).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });

  it("matches the docs' known answer, computed with openssl", () => {
    const key = standardKeyOf("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect(standardHeaders(["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], "evt_1", 1782900000, '{"id":"evt_1"}')).toEqual({
      "webhook-id": "evt_1",
      "webhook-timestamp": "1782900000",
      "webhook-signature": "v1,tL/gZVDpWt21xneSCH53T/zC/Fi5SNhNkUmZfGd3DrU=",
    });
    expect(key).toHaveLength(24);
  });

  it("keys an older 43-character base64url secret with its 32 bytes, read in either base64 alphabet", () => {
    const encoded = Buffer.alloc(32, 0xfb).toString("base64url");
    expect(encoded).toMatch(/^(-_v7){10}-_s$/);
    expect(standardKeyOf(`whsec_${encoded}`)).toEqual(Buffer.alloc(32, 0xfb));
    const standard = `whsec_${encoded.replaceAll("-", "+").replaceAll("_", "/")}=`;
    expect(standardKeyOf(standard)).toEqual(Buffer.alloc(32, 0xfb));
    expect(() => standardKeyOf("whsec_")).toThrow(TypeError);
  });

  it("issues secrets the package accepts as shown: 44 alphanumerics, 33 bytes in either alphabet, no padding", () => {
    for (const secret of Array.from({ length: 200 }, generateSigningSecret)) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
      expect(standardKeyOf(secret)).toHaveLength(33);
      expect(new Webhook(secret).sign("evt_1", new Date(1_782_900_000_000), body)).toBe(
        standardSignature(standardKeyOf(secret), "evt_1", 1_782_900_000, body),
      );
    }
  });

  it("puts one signature per secret, space-separated, and the package verifies each secret", () => {
    const [current, previous] = [generateSigningSecret(), generateSigningSecret()];
    const t = Math.floor(Date.now() / 1000);
    const headers = standardHeaders([current, previous], "evt_1", t, body);
    expect(headers["webhook-id"]).toBe("evt_1");
    expect(headers["webhook-timestamp"]).toBe(String(t));
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateSigningSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow(WebhookVerificationError);
  });

  it("signs a delivery's headers with one t for both schemes; both secrets within a rotation's grace, only the new one after", () => {
    const [current, previous] = [generateSigningSecret(), generateSigningSecret()];
    const delivery = claimedDelivery();
    const payload = Buffer.from(delivery.payload);
    const now = new Date(Math.floor(Date.now() / 1000) * 1000 + 750);
    const rotatedAt = new Date(now.getTime() - rotationGraceMs + 1000);
    const headers = signedHeaders(delivery, { current, previous: { secret: previous, rotatedAt } }, payload, now);
    const t = Math.floor(now.getTime() / 1000);
    expect(headers["webhook-id"]).toBe(delivery.eventId);
    expect(headers["webhook-timestamp"]).toBe(String(t));
    expect(headers["Service-Signature"]).toMatch(new RegExp(`^t=${t},v1=[0-9a-f]{64},v1=[0-9a-f]{64}$`));
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(payload.toString(), headers)).toEqual(JSON.parse(delivery.payload));
      expect(verifySignature({ payload, header: headers["Service-Signature"], secrets: [secret] })).toEqual({
        timestamp: t,
      });
    }
    // The grace ends exactly 24 h after the rotation.
    const after = signedHeaders(
      delivery,
      { current, previous: { secret: previous, rotatedAt: new Date(now.getTime() - rotationGraceMs) } },
      payload,
      now,
    );
    expect(after["webhook-signature"]!.split(" ")).toHaveLength(1);
    expect(() => new Webhook(previous).verify(payload.toString(), after)).toThrow(WebhookVerificationError);
    expect(new Webhook(current).verify(payload.toString(), after)).toEqual(JSON.parse(delivery.payload));
  });
});
