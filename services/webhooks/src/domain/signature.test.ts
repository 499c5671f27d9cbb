import { NoMatchingSignatureError, verifySignature } from "@platform/webhook-verifier";
import fc from "fast-check";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import {
  computeSignature,
  previousSecretSigns,
  rotateSecrets,
  rotationGraceMs,
  signatureHeaderValue,
  signDelivery,
  signingSecrets,
  type EndpointSecrets,
} from "./signature.js";

const current = "whsec_current_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const previous = "whsec_previous_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
const rotatedAt = new Date("2026-07-01T00:00:00.000Z");
const rotated: EndpointSecrets = { current, previous: { secret: previous, rotatedAt } };
const body = Buffer.from(
  '{"id":"evt_1","type":"booking.created","api_version":"2026-07-01","occurred_at":"2026-07-01T00:00:00.000Z",' +
    '"tenant":"acme","livemode":true,"data":{"object":{"booking_id":"bk_1","note":"café"}}}',
  "utf8",
);

describe("the signature scheme", () => {
  it("matches a known answer computed outside this project (openssl dgst -sha256 -hmac)", () => {
    // printf '%s' '1782900000.{"id":"evt_1"}' | openssl dgst -sha256 -hmac 'whsec_known_answer'
    expect(computeSignature("whsec_known_answer", 1_782_900_000, '{"id":"evt_1"}')).toBe(
      "17559709c458c95f036005d9e54abfbf0efed46abaf9121904a317e77e37a865",
    );
  });

  it("writes t then one v1 per secret, lowercase hex", () => {
    const header = signatureHeaderValue([current, previous], 1_782_900_000, body);
    expect(header).toMatch(/^t=1782900000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
  });

  it.each([
    ["no secrets", [], 1],
    ["a fractional t", [current], 1.5],
    ["a negative t", [current], -1],
  ])("refuses to sign with %s", (_label, secrets, t) => {
    expect(() => signatureHeaderValue(secrets, t, body)).toThrow(TypeError);
  });
});

describe("rotation", () => {
  it.each([
    ["no rotation yet", { current, previous: null }, 0, [current]],
    ["at the rotation", rotated, 0, [current, previous]],
    ["1 ms before the 24 h are up", rotated, rotationGraceMs - 1, [current, previous]],
    ["exactly 24 h after", rotated, rotationGraceMs, [current]],
    ["25 h after", rotated, rotationGraceMs + 3_600_000, [current]],
  ])("%s: signs with the expected secrets, current first", (_label, secrets, offsetMs, expected) => {
    const now = new Date(rotatedAt.getTime() + offsetMs);
    expect(signingSecrets(secrets, now)).toEqual(expected);
    expect(previousSecretSigns(secrets, now)).toBe(expected.length === 2);
  });

  it("makes the new secret current and times the old one's grace from the rotation", () => {
    const later = new Date(rotatedAt.getTime() + 3 * rotationGraceMs);
    expect(rotateSecrets(rotated, "whsec_new", later)).toEqual({
      current: "whsec_new",
      previous: { secret: current, rotatedAt: later },
    });
  });

  it("keeps only one previous secret: a second rotation within 24 h ends the first one's grace", () => {
    const soon = new Date(rotatedAt.getTime() + 60_000);
    const twice = rotateSecrets(rotated, "whsec_newest", soon);
    expect(signingSecrets(twice, soon)).toEqual(["whsec_newest", current]);
  });
});

describe("signDelivery", () => {
  it("uses now as t, so every attempt gets a fresh timestamp", () => {
    const first = signDelivery(rotated, body, new Date("2026-07-01T00:10:00.900Z"));
    const retry = signDelivery(rotated, body, new Date("2026-07-01T00:20:00.000Z"));
    expect(first.startsWith("t=1782864600,")).toBe(true);
    expect(retry.startsWith("t=1782865200,")).toBe(true);
    expect(first).not.toBe(retry);
  });
});

describe("cross-checked with the stripe SDK (a verifier this project did not write)", () => {
  const stripe = new Stripe("sk_test_unused");
  const sign = (secrets: EndpointSecrets, now: Date) => signDelivery(secrets, body, now);

  it("accepts our body, header and secret", () => {
    const header = sign({ current, previous: null }, new Date());
    const event = stripe.webhooks.constructEvent(body, header, current) as unknown as { id: string };
    expect(event.id).toBe("evt_1");
  });

  it("accepts either secret during the rotation grace (two v1 entries)", () => {
    const now = new Date();
    const header = sign(
      { current, previous: { secret: previous, rotatedAt: new Date(now.getTime() - 3_600_000) } },
      now,
    );
    expect(() => stripe.webhooks.constructEvent(body, header, current)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(body, header, previous)).not.toThrow();
  });

  it("stops accepting the previous secret once the 24 h are up", () => {
    const now = new Date();
    const header = sign(
      { current, previous: { secret: previous, rotatedAt: new Date(now.getTime() - rotationGraceMs) } },
      now,
    );
    expect(() => stripe.webhooks.constructEvent(body, header, previous)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });

  it("rejects a tampered body", () => {
    const header = sign({ current, previous: null }, new Date());
    const tampered = Buffer.from(body);
    tampered[10] = tampered[10]! ^ 0x01;
    expect(() => stripe.webhooks.constructEvent(tampered, header, current)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });

  it("rejects a wrong secret", () => {
    const header = sign({ current, previous: null }, new Date());
    expect(() => stripe.webhooks.constructEvent(body, header, "whsec_wrong")).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });

  it("rejects a t older than 5 minutes", () => {
    const header = sign({ current, previous: null }, new Date(Date.now() - 301_000));
    expect(() => stripe.webhooks.constructEvent(body, header, current)).toThrow(/Timestamp outside the tolerance zone/);
  });
});

describe("with the partner verifier (property)", () => {
  const secret = fc.string({ minLength: 1, maxLength: 60 }).map((s) => `whsec_${s}`);
  const moment = fc.date({
    min: new Date("2001-01-01T00:00:00Z"),
    max: new Date("2100-01-01T00:00:00Z"),
    noInvalidDate: true,
  });

  it("verify(sign(x)) holds for any body, secret and time", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), secret, moment, (bytes, key, now) => {
        const payload = Buffer.from(bytes);
        const header = signDelivery({ current: key, previous: null }, payload, now);
        expect(verifySignature({ payload, header, secrets: key, now })).toEqual({
          timestamp: Math.floor(now.getTime() / 1000),
        });
      }),
    );
  });

  it("any single-byte tamper of the body fails", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 2048 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        secret,
        moment,
        (bytes, position, flip, key, now) => {
          const header = signDelivery({ current: key, previous: null }, Buffer.from(bytes), now);
          const tampered = Buffer.from(bytes);
          const index = position % tampered.length;
          tampered[index] = tampered[index]! ^ flip;
          expect(() => verifySignature({ payload: tampered, header, secrets: key, now })).toThrow(
            NoMatchingSignatureError,
          );
        },
      ),
    );
  });

  it("a changed t (still within tolerance) fails", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 256 }),
        secret,
        moment,
        fc.integer({ min: 1, max: 9 }),
        (bytes, key, now, bump) => {
          const header = signDelivery({ current: key, previous: null }, Buffer.from(bytes), now);
          const t = Number(/^t=(\d+)/.exec(header)![1]);
          // A different t that is still within the tolerance: only the signature can refuse it.
          const forged = header.replace(/^t=\d+/, `t=${t + bump}`);
          expect(() => verifySignature({ payload: Buffer.from(bytes), header: forged, secrets: key, now })).toThrow(
            NoMatchingSignatureError,
          );
        },
      ),
    );
  });
});
