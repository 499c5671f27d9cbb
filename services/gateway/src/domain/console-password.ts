import { hash, verify, type Algorithm } from "@node-rs/argon2";

/**
 * Console passwords: argon2id with OWASP's recommended minimum (m = 19456 KiB, t = 2, p = 1),
 * stored as the PHC string (which carries its parameters, so raising them later still verifies
 * old hashes).
 */
export const PASSWORD_HASH_OPTIONS = {
  // Algorithm.Argon2id (a const enum, which isolated modules cannot read).
  algorithm: 2 as Algorithm.Argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/** Counted in code points: at least 12 (a passphrase), at most 256. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string, confirmation: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `The password must be at least ${PASSWORD_MIN_LENGTH} characters long.`;
  if (length > PASSWORD_MAX_LENGTH) return `The password must be at most ${PASSWORD_MAX_LENGTH} characters long.`;
  if (password !== confirmation) return "The two passwords differ.";
  return undefined;
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS);
}

/** False for a wrong password or a malformed hash. */
export async function verifyPassword(phc: string, password: string): Promise<boolean> {
  try {
    return await verify(phc, password);
  } catch {
    return false;
  }
}

/**
 * A hash to verify against when the account does not exist or has no password yet, so a refusal
 * takes as long as for a wrong password (no account enumeration by timing).
 */
let decoy: Promise<string> | undefined;
export const decoyPasswordHash = (): Promise<string> => (decoy ??= hashPassword("decoy password, never matches"));
