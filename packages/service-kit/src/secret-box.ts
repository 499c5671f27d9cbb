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
  /** The stable codes this ring's failures carry (a service's own, e.g. webhooks'); default SEALING_CODES. */
  codes?: SealingCodes;
}

/** The code of each failure: the `sealing.*` ones, or a service's own names for them. */
export interface SealingCodes {
  keyInvalid: string;
  sealedMalformed: string;
  keyUnknown: string;
  decryptionFailed: string;
}

export const SEALING_CODES: SealingCodes = Object.freeze({
  keyInvalid: "sealing.key_invalid",
  sealedMalformed: "sealing.sealed_malformed",
  keyUnknown: "sealing.key_unknown",
  decryptionFailed: "sealing.decryption_failed",
});

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
  constructor(
    readonly problems: readonly string[],
    code = SEALING_CODES.keyInvalid,
  ) {
    super(code, `SECRETS_KEY: ${problems.join("; ")}`);
  }
}

export class SealedSecretMalformedError extends SecretBoxError {
  override name = "SealedSecretMalformedError";
  constructor(code = SEALING_CODES.sealedMalformed) {
    super(code, "the sealed secret is not in the v1.<keyId>.<iv>.<tag>.<ciphertext> format");
  }
}

export class SecretKeyUnknownError extends SecretBoxError {
  override name = "SecretKeyUnknownError";
  constructor(
    readonly keyId: string,
    code = SEALING_CODES.keyUnknown,
  ) {
    super(code, `the sealed secret names key id ${keyId}, which SECRETS_KEY does not hold`);
  }
}

export class SecretDecryptionError extends SecretBoxError {
  override name = "SecretDecryptionError";
  constructor(code = SEALING_CODES.decryptionFailed) {
    super(code, "the sealed secret does not authenticate under its key");
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
 * with the first entry active. Throws InvalidSecretsKeyError naming every bad entry. `codes`: the
 * stable codes the ring's failures carry (default SEALING_CODES).
 */
export function parseSecretsKey(text: string | undefined, codes: SealingCodes = SEALING_CODES): SecretKeyRing {
  const value = (text ?? "").trim();
  if (value === "") throw new InvalidSecretsKeyError(["is required (32 bytes, base64)"], codes.keyInvalid);
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
  if (problems.length > 0) throw new InvalidSecretsKeyError(problems, codes.keyInvalid);
  return { activeKeyId: entries[0]![0], keys, ...(codes === SEALING_CODES ? {} : { codes }) };
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
  if (!key) throw new SecretKeyUnknownError(ring.activeKeyId, codesOf(ring).keyUnknown);
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

const codesOf = (ring: SecretKeyRing): SealingCodes => ring.codes ?? SEALING_CODES;

function parseSealed(sealed: string, codes: SealingCodes = SEALING_CODES): SealedParts {
  const parts = sealed.split(".");
  const base64url = /^[A-Za-z0-9_-]*$/;
  if (
    parts.length !== 5 ||
    parts[0] !== "v1" ||
    !KEY_ID.test(parts[1]!) ||
    !parts.slice(2).every((p) => base64url.test(p))
  ) {
    throw new SealedSecretMalformedError(codes.sealedMalformed);
  }
  const [, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string];
  const parsed = {
    keyId,
    iv: Buffer.from(iv, "base64url"),
    tag: Buffer.from(tag, "base64url"),
    ciphertext: Buffer.from(ciphertext, "base64url"),
  };
  if (parsed.iv.length !== 12 || parsed.tag.length !== 16) throw new SealedSecretMalformedError(codes.sealedMalformed);
  return parsed;
}

/** The key id a sealed secret was encrypted with. */
export function sealedKeyId(sealed: string, codes: SealingCodes = SEALING_CODES): string {
  return parseSealed(sealed, codes).keyId;
}

/** Decrypts a sealed secret; the same `context` as at sealing is required. */
export function openSecret(ring: SecretKeyRing, sealed: string, context = ""): string {
  const { keyId, iv, tag, ciphertext } = parseSealed(sealed, codesOf(ring));
  const key = ring.keys.get(keyId);
  if (!key) throw new SecretKeyUnknownError(keyId, codesOf(ring).keyUnknown);
  const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: 16 });
  decipher.setAAD(associatedData(keyId, context));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretDecryptionError(codesOf(ring).decryptionFailed);
  }
}

/** Whether a sealed secret should be re-encrypted under the active key (after a key rotation). */
export function needsReseal(ring: SecretKeyRing, sealed: string): boolean {
  return sealedKeyId(sealed, codesOf(ring)) !== ring.activeKeyId;
}

/** Opens a sealed secret with whichever ring key it names and seals it again under the active key. */
export function resealSecret(ring: SecretKeyRing, sealed: string, context = ""): string {
  return sealSecret(ring, openSecret(ring, sealed, context), context);
}
