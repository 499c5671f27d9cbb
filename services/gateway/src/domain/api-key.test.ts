import { describe, expect, it } from "vitest";
import { apiKeyIdOf, digestApiKey, issueApiKey, verifyApiKey, type ApiKeyRecord } from "./api-key.js";

const recordFor = (issued: ReturnType<typeof issueApiKey>, revoked = false): ApiKeyRecord => ({
  id: issued.id,
  name: "test",
  digest: issued.digest,
  scopes: [],
  tenantIds: [],
  revoked,
});

describe("API keys", () => {
  it("are issued with an id embedded in the key and only a digest kept", () => {
    const issued = issueApiKey();
    expect(issued.key).toMatch(/^sk_live_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
    expect(apiKeyIdOf(issued.key)).toBe(issued.id);
    expect(issued.digest).toEqual(digestApiKey(issued.key));
    expect(issued.digest.toString("hex")).not.toContain(issued.key.slice(-43));
  });

  it("digest as SHA-256 of the key's UTF-8 bytes, matching the digests already stored", () => {
    expect(digestApiKey("abc").toString("hex")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(digestApiKey("é").toString("hex")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
  });

  it("are unique", () => {
    const keys = new Set(Array.from({ length: 200 }, () => issueApiKey().key));
    expect(keys.size).toBe(200);
  });

  it("verify only the exact key, and never a revoked one", () => {
    const issued = issueApiKey();
    expect(verifyApiKey(issued.key, recordFor(issued))).toBe(true);
    const tampered = issued.key.slice(0, -1) + (issued.key.endsWith("A") ? "B" : "A");
    expect(verifyApiKey(tampered, recordFor(issued))).toBe(false);
    expect(verifyApiKey(issueApiKey().key, recordFor(issued))).toBe(false);
    expect(verifyApiKey(issued.key, recordFor(issued, true))).toBe(false);
  });

  it.each([
    "",
    "sk_live_",
    "sk_test_" + "0".repeat(24) + "_" + "A".repeat(43),
    "Bearer x",
    "sk_live_" + "G".repeat(24),
  ])("has no id in the malformed key %j", (key) => {
    expect(apiKeyIdOf(key)).toBeUndefined();
  });
});
