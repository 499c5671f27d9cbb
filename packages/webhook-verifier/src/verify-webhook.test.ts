import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import { afterEach, describe, expect, it } from "vitest";
import { createReceiver } from "./example-receiver.js";
import {
  NoMatchingSignatureError,
  parseSignatureHeader,
  SignatureHeaderMalformedError,
  SignatureHeaderMissingError,
  TimestampOutsideToleranceError,
  verifySignature,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookEvent,
} from "./index.js";

// Signatures in this file are computed by hand with node:crypto or by the stripe SDK, never by
// the service's signer, so the verifier is checked against the scheme itself.
const secret = "whsec_test_0123456789abcdefghijklmnopqrstuv";
const otherSecret = "whsec_other_zyxwvutsrqponmlkjihgfedcba987";
const t = 1_782_900_000;
const now = t * 1000;
const body = JSON.stringify({
  id: "evt_1",
  type: "booking.created",
  api_version: "2026-07-01",
  occurred_at: "2026-07-01T10:00:00.000Z",
  tenant: "acme",
  livemode: true,
  data: { object: { booking_id: "bk_1", note: "café ☕" } },
});

function hmac(key: string, timestamp: number, payload: string): string {
  return createHmac("sha256", key).update(`${timestamp}.${payload}`).digest("hex");
}

const good = `t=${t},v1=${hmac(secret, t, body)}`;

describe("verifySignature accepts", () => {
  it.each([
    ["a string body", body, good],
    ["a Buffer body", Buffer.from(body, "utf8"), good],
    ["a Uint8Array body", new Uint8Array(Buffer.from(body, "utf8")), good],
    ["spaces around entries", body, ` t=${t} , v1=${hmac(secret, t, body)} `],
    ["the v1 entry first", body, `v1=${hmac(secret, t, body)},t=${t}`],
    ["unknown schemes beside v1", body, `t=${t},v0=abc,v1=${hmac(secret, t, body)},v2=zzz`],
    [
      "a second v1 signed with the previous secret",
      body,
      `t=${t},v1=${hmac(otherSecret, t, body)},v1=${hmac(secret, t, body)}`,
    ],
  ])("%s", (_label, payload, header) => {
    expect(verifySignature({ payload, header, secrets: secret, now })).toEqual({ timestamp: t });
  });

  it("a header that arrived repeated (an array)", () => {
    const header = [`t=${t}`, `v1=${hmac(secret, t, body)}`];
    expect(verifySignature({ payload: body, header, secrets: secret, now })).toEqual({ timestamp: t });
  });

  it("any of several secrets (the receiver is mid-rotation)", () => {
    expect(() => verifySignature({ payload: body, header: good, secrets: [otherSecret, secret], now })).not.toThrow();
  });

  it.each([-300, 300])("a timestamp exactly %i s from now", (offset) => {
    expect(() =>
      verifySignature({ payload: body, header: good, secrets: secret, now: now + offset * 1000 }),
    ).not.toThrow();
  });
});

describe("verifySignature refuses, with a stable code", () => {
  it.each([
    ["no header", undefined, SignatureHeaderMissingError, "header_missing"],
    ["an empty header", "  ", SignatureHeaderMissingError, "header_missing"],
    ["an entry without =", `t=${t},v1`, SignatureHeaderMalformedError, "header_malformed"],
    ["no t", `v1=${hmac(secret, t, body)}`, SignatureHeaderMalformedError, "header_malformed"],
    ["two t entries", `t=${t},t=${t},v1=${hmac(secret, t, body)}`, SignatureHeaderMalformedError, "header_malformed"],
    ["a non-numeric t", `t=abc,v1=${hmac(secret, t, body)}`, SignatureHeaderMalformedError, "header_malformed"],
    ["a fractional t", `t=${t}.5,v1=${hmac(secret, t, body)}`, SignatureHeaderMalformedError, "header_malformed"],
    ["no v1", `t=${t},v0=${hmac(secret, t, body)}`, SignatureHeaderMalformedError, "header_malformed"],
    [
      "a signature over another body",
      `t=${t},v1=${hmac(secret, t, body + " ")}`,
      NoMatchingSignatureError,
      "no_matching_signature",
    ],
    [
      "a signature with another secret",
      `t=${t},v1=${hmac(otherSecret, t, body)}`,
      NoMatchingSignatureError,
      "no_matching_signature",
    ],
    [
      "a signature with another t",
      `t=${t},v1=${hmac(secret, t + 1, body)}`,
      NoMatchingSignatureError,
      "no_matching_signature",
    ],
    [
      "an uppercase-hex signature",
      `t=${t},v1=${hmac(secret, t, body).toUpperCase()}`,
      NoMatchingSignatureError,
      "no_matching_signature",
    ],
    [
      "a truncated signature",
      `t=${t},v1=${hmac(secret, t, body).slice(0, 63)}`,
      NoMatchingSignatureError,
      "no_matching_signature",
    ],
  ])("%s", (_label, header, type, code) => {
    const attempt = () => verifySignature({ payload: body, header, secrets: secret, now });
    expect(attempt).toThrow(type);
    expect(attempt).toThrow(expect.objectContaining({ code }) as Error);
  });

  it.each([-301, 301, -3600])("a genuine signature whose t is %i s from now", (offset) => {
    const attempt = () => verifySignature({ payload: body, header: good, secrets: secret, now: now + offset * 1000 });
    expect(attempt).toThrow(TimestampOutsideToleranceError);
    expect(attempt).toThrow(expect.objectContaining({ code: "timestamp_outside_tolerance" }) as Error);
  });

  it("honours a custom tolerance", () => {
    expect(() =>
      verifySignature({ payload: body, header: good, secrets: secret, now: now + 61_000, toleranceSeconds: 60 }),
    ).toThrow(TimestampOutsideToleranceError);
  });

  it("never puts a secret in its message", () => {
    try {
      verifySignature({ payload: body, header: `t=${t},v1=${hmac(otherSecret, t, body)}`, secrets: secret, now });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect(String((error as Error).message)).not.toContain(secret);
    }
  });

  it.each([
    ["no secrets", []],
    ["an empty secret", [""]],
  ])("treats %s as a programming error", (_label, secrets) => {
    expect(() => verifySignature({ payload: body, header: good, secrets, now })).toThrow(TypeError);
  });
});

describe("parseSignatureHeader", () => {
  it("returns t and every v1 in order", () => {
    expect(parseSignatureHeader("t=5,v1=aa,v1=bb")).toEqual({ timestamp: 5, signatures: ["aa", "bb"] });
  });
});

describe("verifyWebhook", () => {
  it("returns the parsed envelope after verifying", () => {
    const event = verifyWebhook({ payload: Buffer.from(body), header: good, secrets: secret, now });
    expect(event).toMatchObject({ id: "evt_1", type: "booking.created", data: { object: { note: "café ☕" } } });
  });

  it("does not parse a body that fails verification", () => {
    expect(() => verifyWebhook({ payload: "not json", header: good, secrets: secret, now })).toThrow(
      NoMatchingSignatureError,
    );
  });
});

describe("against the stripe SDK's signer (same t=/v1= HMAC-SHA256 scheme)", () => {
  const stripe = new Stripe("sk_test_unused");

  it("accepts a header stripe generates for our secret", () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: t });
    expect(verifySignature({ payload: body, header, secrets: secret, now })).toEqual({ timestamp: t });
  });

  it("refuses a stripe header for another secret", () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret: otherSecret, timestamp: t });
    expect(() => verifySignature({ payload: body, header, secrets: secret, now })).toThrow(NoMatchingSignatureError);
  });
});

describe("the documented example receiver", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function post(header: string | undefined) {
    const received: WebhookEvent[] = [];
    const server = createReceiver([secret], (event) => received.push(event));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(header === undefined ? {} : { "service-signature": header }) },
      body,
    });
    return { status: response.status, text: await response.text(), received };
  }

  it("answers 204 and hands over the event for a fresh genuine delivery", async () => {
    const fresh = Math.floor(Date.now() / 1000);
    const result = await post(`t=${fresh},v1=${hmac(secret, fresh, body)}`);
    expect(result.status).toBe(204);
    expect(result.received.map((event) => event.id)).toEqual(["evt_1"]);
  });

  it.each([
    ["a missing header", undefined, "header_missing"],
    ["a stale timestamp", good, "timestamp_outside_tolerance"],
    ["a wrong signature", `t=${t},v1=${"0".repeat(64)}`, "no_matching_signature"],
  ])("answers 400 with the code for %s", async (_label, header, code) => {
    const result = await post(header);
    expect(result).toEqual({ status: 400, text: code, received: [] });
  });
});
