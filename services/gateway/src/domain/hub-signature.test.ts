import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hubSignatureOf, isValidHubSignature, sameSecret } from "./hub-signature.js";

describe("X-Hub-Signature-256", () => {
  const secret = "app-secret";
  const body = Buffer.from('{"object":"whatsapp_business_account","entry":[]}');
  const good = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

  it("is sha256= and the hex HMAC-SHA256 of the raw body keyed with the app secret", () => {
    expect(hubSignatureOf(secret, body)).toBe(good);
    expect(isValidHubSignature(secret, body, good)).toBe(true);
    expect(isValidHubSignature(secret, body, good.toUpperCase().replace("SHA256=", "sha256="))).toBe(true);
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["another secret's", hubSignatureOf("other", body)],
    ["another body's", hubSignatureOf(secret, Buffer.from(`${body.toString()} `))],
    ["sha1", `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`],
    ["truncated", good.slice(0, -2)],
    ["not hex", `sha256=${"z".repeat(64)}`],
  ])("refuses a %s signature", (_label, header) => {
    expect(isValidHubSignature(secret, body, header)).toBe(false);
  });

  it("compares verify tokens whole", () => {
    expect(sameSecret("token-1", "token-1")).toBe(true);
    expect(sameSecret("token-1", "token-12")).toBe(false);
    expect(sameSecret("", "token-1")).toBe(false);
  });
});
