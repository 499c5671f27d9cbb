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
