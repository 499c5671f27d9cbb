import { randomFillSync } from "node:crypto";

/**
 * Random identifiers (`evt_`, `ntf_`, ... and hex) from a pool of cryptographically random bytes
 * filled POOL_BYTES at a time, as node's own randomUUID does: one randomFillSync call per id cost
 * about 1% of notify's CPU each in bench:notify's profile (issue 33; three ids per send), a slice
 * of the pool costs a copy. The bytes are the same CSPRNG's; each is handed out once.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/** `bytes` random bytes as lowercase hex (2 × bytes characters). */
export function randomHex(bytes: number): string {
  if (bytes > POOL_BYTES) return randomFillSync(Buffer.alloc(bytes)).toString("hex");
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString("hex", offset, offset + bytes);
  offset += bytes;
  return hex;
}

/** `prefix` then 12 random bytes in hex: the platform's 24-hex-digit ids (`evt_…`, `ntf_…`). */
export const randomId = (prefix: string): string => `${prefix}${randomHex(12)}`;

/**
 * `prefix`, the time in milliseconds since 1970 (12 hex digits), then 6 random bytes: the same
 * 24-hex-digit format as randomId, in creation order from one millisecond to the next. Ids a
 * table is keyed or indexed by go to the right-hand end of the index rather than to a random page
 * of it, so after a checkpoint a send writes a full-page image of the few pages at that end, not of
 * a page per index per send (bench:notify, issue 33: 2.5 KB of full-page images per send in the
 * round after a checkpoint with random ids). They tell when they were made, as their rows do.
 */
export const timeOrderedId = (prefix: string, now: number = Date.now()): string =>
  `${prefix}${Math.max(0, Math.floor(now)).toString(16).padStart(12, "0").slice(-12)}${randomHex(6)}`;
