import { createDecipheriv, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  generateSigningSecret,
  InvalidSecretsKeyError,
  isSigningSecret,
  needsReseal,
  openSecret,
  parseSecretsKey,
  resealSecret,
  SealedSecretMalformedError,
  sealedKeyId,
  sealSecret,
  SecretDecryptionError,
  SecretKeyUnknownError,
} from "./secret-box.js";

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const secret = "whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";

describe("signing secrets", () => {
  it("are whsec_ plus 33 random bytes in 44 alphanumerics (base64 and base64url alike), different every time", () => {
    const secrets = Array.from({ length: 50 }, generateSigningSecret);
    for (const value of secrets) {
      expect(value).toMatch(/^whsec_[A-Za-z0-9]{44}$/);
      expect(Buffer.from(value.slice(6), "base64url")).toHaveLength(33);
      expect(Buffer.from(value.slice(6), "base64url").toString("base64")).toBe(value.slice(6));
      expect(isSigningSecret(value)).toBe(true);
    }
    expect(new Set(secrets).size).toBe(50);
  });

  it("accepts the 43-character base64url secrets issued before", () => {
    expect(isSigningSecret(secret)).toBe(true);
    expect(isSigningSecret(`whsec_${"a-_".repeat(14)}b`)).toBe(true);
  });

  it.each([
    "whsec_short",
    "sk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG",
    `whsec_${"a".repeat(42)}+`,
    `whsec_${"a".repeat(43)}-`,
    `whsec_${"a".repeat(45)}`,
  ])("tells %s is not one", (value) => {
    expect(isSigningSecret(value)).toBe(false);
  });
});

describe("parseSecretsKey", () => {
  it("reads one base64 key as key id k1 (the format npm start generates)", () => {
    const ring = parseSecretsKey(`${keyA.toString("base64")}\n`);
    expect(ring.activeKeyId).toBe("k1");
    expect(ring.keys.get("k1")?.equals(keyA)).toBe(true);
    expect([...ring.keys.keys()]).toEqual(["k1"]);
  });

  it("reads base64url too", () => {
    expect(parseSecretsKey(keyA.toString("base64url")).keys.get("k1")?.equals(keyA)).toBe(true);
  });

  it("reads id:base64 entries with the first active", () => {
    const ring = parseSecretsKey(`k2:${keyB.toString("base64")}, k1:${keyA.toString("base64")}`);
    expect(ring.activeKeyId).toBe("k2");
    expect(ring.keys.get("k2")?.equals(keyB)).toBe(true);
    expect(ring.keys.get("k1")?.equals(keyA)).toBe(true);
  });

  const short = randomBytes(31).toString("base64");
  const long = randomBytes(33).toString("base64");
  it.each([
    ["nothing", undefined, [/is required/]],
    ["an empty string", "  ", [/is required/]],
    ["31 bytes", short, [/the key must be exactly 32 bytes/]],
    ["33 bytes", long, [/the key must be exactly 32 bytes/]],
    ["not base64", "not base64 at all!!", [/the key must be exactly 32 bytes/]],
    ["an entry without an id", `k2:${keyB.toString("base64")},${keyA.toString("base64")}`, [/entry 2 needs an id/]],
    ["a bad id", `k.2:${keyB.toString("base64")}`, [/entry 1 needs an id/]],
    [
      "a repeated id",
      `k1:${keyB.toString("base64")},k1:${keyA.toString("base64")}`,
      [/entry 2 \(k1\) repeats key id k1/],
    ],
    [
      "two bad entries",
      `k2:${short},k1:${long}`,
      [/entry 1 \(k2\) must be exactly 32 bytes/, /entry 2 \(k1\) must be exactly 32 bytes/],
    ],
  ])("refuses %s, naming every problem", (_label, text, expected) => {
    try {
      parseSecretsKey(text);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidSecretsKeyError);
      const invalid = error as InvalidSecretsKeyError;
      expect(invalid.code).toBe("webhook.secrets_key_invalid");
      expect(invalid.problems).toHaveLength(expected.length);
      expected.forEach((pattern, index) => expect(invalid.problems[index]).toMatch(pattern));
      // never echo key material
      for (const material of [short, long, keyA.toString("base64"), keyB.toString("base64")]) {
        expect(invalid.message).not.toContain(material);
      }
    }
  });
});

describe("sealing secrets with AES-256-GCM", () => {
  const ring = parseSecretsKey(`k1:${keyA.toString("base64")}`);

  it("round-trips and writes v1.<keyId>.<iv>.<tag>.<ciphertext> without the plaintext", () => {
    const sealed = sealSecret(ring, secret, "we_123");
    expect(sealed).toMatch(/^v1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(sealedKeyId(sealed)).toBe("k1");
    expect(openSecret(ring, sealed, "we_123")).toBe(secret);
  });

  it("can be opened by hand from the documented format (AES-256-GCM, AAD v1.<keyId>.<context>)", () => {
    const [, keyId, iv, tag, ciphertext] = sealSecret(ring, secret, "we_123").split(".") as [
      string,
      string,
      string,
      string,
      string,
    ];
    const decipher = createDecipheriv("aes-256-gcm", keyA, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(`v1.${keyId}.we_123`));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]);
    expect(plain.toString("utf8")).toBe(secret);
  });

  it("uses a fresh IV each time", () => {
    expect(sealSecret(ring, secret)).not.toBe(sealSecret(ring, secret));
  });

  it("refuses another context (a sealed secret moved to another endpoint)", () => {
    const sealed = sealSecret(ring, secret, "we_123");
    expect(() => openSecret(ring, sealed, "we_456")).toThrow(SecretDecryptionError);
  });

  it.each([2, 3, 4])("refuses a sealed secret with part %i altered", (part) => {
    const parts = sealSecret(ring, secret, "we_123").split(".");
    const bytes = Buffer.from(parts[part]!, "base64url");
    bytes[0] = bytes[0]! ^ 0x01;
    parts[part] = bytes.toString("base64url");
    expect(() => openSecret(ring, parts.join("."), "we_123")).toThrow(SecretDecryptionError);
  });

  it("refuses a sealed secret relabelled with another key id even when the ring holds it", () => {
    const both = parseSecretsKey(`k1:${keyA.toString("base64")},k2:${keyB.toString("base64")}`);
    const sealed = sealSecret(both, secret).replace(/^v1\.k1\./, "v1.k2.");
    expect(() => openSecret(both, sealed)).toThrow(SecretDecryptionError);
  });

  it("names an unknown key id", () => {
    const sealed = sealSecret(ring, secret).replace(/^v1\.k1\./, "v1.k9.");
    expect(() => openSecret(ring, sealed)).toThrow(SecretKeyUnknownError);
    expect(() => openSecret(ring, sealed)).toThrow(
      expect.objectContaining({ code: "webhook.secrets_key_unknown" }) as Error,
    );
  });

  it.each([
    ["an empty string", ""],
    ["plaintext", secret],
    ["another version", "v2.k1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA"],
    ["a short IV", "v1.k1.AAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA"],
    ["a short tag", "v1.k1.AAAAAAAAAAAAAAAA.AAAA.AAAA"],
    ["six parts", "v1.k1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA.AAAA"],
    ["standard base64", "v1.k1.AAAAAAAAAAAAAAA+.AAAAAAAAAAAAAAAAAAAAAA.AAAA"],
  ])("refuses %s as malformed", (_label, sealed) => {
    expect(() => openSecret(ring, sealed)).toThrow(SealedSecretMalformedError);
  });
});

describe("rotating SECRETS_KEY", () => {
  it("adds a new first key, reseals what needs it, then drops the old key", () => {
    const before = parseSecretsKey(keyA.toString("base64"));
    const sealedBefore = sealSecret(before, secret, "we_1");

    const during = parseSecretsKey(`k2:${keyB.toString("base64")},k1:${keyA.toString("base64")}`);
    expect(openSecret(during, sealedBefore, "we_1")).toBe(secret);
    expect(needsReseal(during, sealedBefore)).toBe(true);
    const resealed = resealSecret(during, sealedBefore, "we_1");
    expect(sealedKeyId(resealed)).toBe("k2");
    expect(needsReseal(during, resealed)).toBe(false);

    const after = parseSecretsKey(`k2:${keyB.toString("base64")}`);
    expect(openSecret(after, resealed, "we_1")).toBe(secret);
    expect(() => openSecret(after, sealedBefore, "we_1")).toThrow(SecretKeyUnknownError);
  });
});
