/**
 * Secrets sealed at rest with AES-256-GCM under the key ring SECRETS_KEY (the scheme of webhooks'
 * signing secrets, services/webhooks/src/domain/secret-box.ts, for any service that keeps a
 * secret: notify seals each tenant's WhatsApp access token with it).
 *
 * SECRETS_KEY is either one base64 32-byte key (its key id is `k1`) or a comma-separated list
 * `id:base64,id:base64` whose first entry is the active key. Sealed secrets look like
 *
 *   v1.<keyId>.<iv>.<tag>.<ciphertext>        (iv, tag, ciphertext base64url; iv 12 bytes, tag 16)
 *
 * and `v1.<keyId>` plus a context (e.g. the tenant id) is authenticated as associated data, so a
 * sealed value cannot be moved to another key id or another owner. Nothing here ever puts key or
 * secret material in an error message.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface SecretKeyRing {
  /** The key new secrets are sealed with. */
  activeKeyId: string;
  keys: ReadonlyMap<string, Buffer>;
}

/** The base class of every secret-box failure; `code` is stable. */
export class SecretBoxError extends Error {
  override name = "SecretBoxError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** SECRETS_KEY cannot be read; `problems` names each entry by position and id, never by value. */
export class InvalidSecretsKeyError extends SecretBoxError {
  override name = "InvalidSecretsKeyError";
  constructor(readonly problems: readonly string[]) {
    super("sealing.key_invalid", `SECRETS_KEY: ${problems.join("; ")}`);
  }
}

export class SealedSecretMalformedError extends SecretBoxError {
  override name = "SealedSecretMalformedError";
  constructor() {
    super("sealing.sealed_malformed", "the sealed secret is not in the v1.<keyId>.<iv>.<tag>.<ciphertext> format");
  }
}

export class SecretKeyUnknownError extends SecretBoxError {
  override name = "SecretKeyUnknownError";
  constructor(readonly keyId: string) {
    super("sealing.key_unknown", `the sealed secret names key id ${keyId}, which SECRETS_KEY does not hold`);
  }
}

export class SecretDecryptionError extends SecretBoxError {
  override name = "SecretDecryptionError";
  constructor() {
    super("sealing.decryption_failed", "the sealed secret does not authenticate under its key");
  }
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$|^[A-Za-z0-9_-]+$/;

function decodeKey(text: string): Buffer | undefined {
  if (!BASE64.test(text)) return undefined;
  const bytes = Buffer.from(
    text,
    text.includes("+") || text.includes("/") || text.endsWith("=") ? "base64" : "base64url",
  );
  return bytes.length === 32 ? bytes : undefined;
}

/**
 * Reads SECRETS_KEY: a single base64 32-byte key (key id `k1`), or `id:base64,id:base64,...`
 * with the first entry active. Throws InvalidSecretsKeyError naming every bad entry.
 */
export function parseSecretsKey(text: string | undefined): SecretKeyRing {
  const value = (text ?? "").trim();
  if (value === "") throw new InvalidSecretsKeyError(["is required (32 bytes, base64)"]);
  const single = !value.includes(":") && !value.includes(",");
  const entries = single
    ? [["k1", value] as const]
    : value.split(",").map((entry) => {
        const colon = entry.indexOf(":");
        return colon < 0
          ? (["", entry.trim()] as const)
          : ([entry.slice(0, colon).trim(), entry.slice(colon + 1).trim()] as const);
      });
  const problems: string[] = [];
  const keys = new Map<string, Buffer>();
  entries.forEach(([id, encoded], index) => {
    const where = single ? "the key" : `entry ${index + 1}${KEY_ID.test(id) ? ` (${id})` : ""}`;
    if (!KEY_ID.test(id)) problems.push(`${where} needs an id of 1-32 characters A-Z a-z 0-9 _ - before a colon`);
    else if (keys.has(id)) problems.push(`${where} repeats key id ${id}`);
    const key = decodeKey(encoded);
    if (!key) problems.push(`${where} must be exactly 32 bytes in base64`);
    if (key && KEY_ID.test(id) && !keys.has(id)) keys.set(id, key);
  });
  if (problems.length > 0) throw new InvalidSecretsKeyError(problems);
  return { activeKeyId: entries[0]![0], keys };
}

function associatedData(keyId: string, context: string): Buffer {
  return Buffer.from(`v1.${keyId}.${context}`, "utf8");
}

/**
 * Encrypts a secret under the ring's active key with a fresh 12-byte IV. `context` (for example
 * the endpoint id) must be given again to open it.
 */
export function sealSecret(ring: SecretKeyRing, plaintext: string, context = ""): string {
  const key = ring.keys.get(ring.activeKeyId);
  if (!key) throw new SecretKeyUnknownError(ring.activeKeyId);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(associatedData(ring.activeKeyId, context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [
    "v1",
    ring.activeKeyId,
    iv.toString("base64url"),
    tag.toString("base64url"),
    ciphertext.toString("base64url"),
  ].join(".");
}

interface SealedParts {
  keyId: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

function parseSealed(sealed: string): SealedParts {
  const parts = sealed.split(".");
  const base64url = /^[A-Za-z0-9_-]*$/;
  if (
    parts.length !== 5 ||
    parts[0] !== "v1" ||
    !KEY_ID.test(parts[1]!) ||
    !parts.slice(2).every((p) => base64url.test(p))
  ) {
    throw new SealedSecretMalformedError();
  }
  const [, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string];
  const parsed = {
    keyId,
    iv: Buffer.from(iv, "base64url"),
    tag: Buffer.from(tag, "base64url"),
    ciphertext: Buffer.from(ciphertext, "base64url"),
  };
  if (parsed.iv.length !== 12 || parsed.tag.length !== 16) throw new SealedSecretMalformedError();
  return parsed;
}

/** The key id a sealed secret was encrypted with. */
export function sealedKeyId(sealed: string): string {
  return parseSealed(sealed).keyId;
}

/** Decrypts a sealed secret; the same `context` as at sealing is required. */
export function openSecret(ring: SecretKeyRing, sealed: string, context = ""): string {
  const { keyId, iv, tag, ciphertext } = parseSealed(sealed);
  const key = ring.keys.get(keyId);
  if (!key) throw new SecretKeyUnknownError(keyId);
  const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: 16 });
  decipher.setAAD(associatedData(keyId, context));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretDecryptionError();
  }
}

/** Whether a sealed secret should be re-encrypted under the active key (after a key rotation). */
export function needsReseal(ring: SecretKeyRing, sealed: string): boolean {
  return sealedKeyId(sealed) !== ring.activeKeyId;
}

/** Opens a sealed secret with whichever ring key it names and seals it again under the active key. */
export function resealSecret(ring: SecretKeyRing, sealed: string, context = ""): string {
  return sealSecret(ring, openSecret(ring, sealed, context), context);
}
