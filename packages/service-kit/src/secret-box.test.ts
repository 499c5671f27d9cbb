import { describe, expect, it } from "vitest";
import {
  InvalidSecretsKeyError,
  openSecret,
  parseSecretsKey,
  sealSecret,
  SecretDecryptionError,
} from "./secret-box.js";

describe("secret box (SECRETS_KEY, AES-256-GCM)", () => {
  const ring = parseSecretsKey(Buffer.alloc(32, 9).toString("base64"));
  it("seals without the secret's bytes and opens only with the same context", () => {
    const sealed = sealSecret(ring, "EAAG-the-token", "tenant_channels:a");
    expect(sealed).toMatch(/^v1\.k1\./);
    expect(sealed).not.toContain("EAAG");
    expect(openSecret(ring, sealed, "tenant_channels:a")).toBe("EAAG-the-token");
    expect(() => openSecret(ring, sealed, "tenant_channels:b")).toThrow(SecretDecryptionError);
  });
  it("refuses a malformed key, naming no key material", () => {
    expect(() => parseSecretsKey("not-a-key")).toThrow(InvalidSecretsKeyError);
    expect(() => parseSecretsKey("")).toThrow(/is required/);
  });
});
