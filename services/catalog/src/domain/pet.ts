import { InvalidArgumentError, NotFoundError } from "@platform/service-kit/errors";

/** The animal catalog's one resource. Ids are int64, carried as decimal strings end to end. */
export const petStatuses = ["available", "pending", "sold"] as const;
export type PetStatus = (typeof petStatuses)[number];

export interface Pet {
  id: string;
  name: string;
  categoryId: string;
  status: PetStatus;
}

export interface NewPet {
  name: string;
  categoryId: string;
  status: PetStatus;
}

export const DEFAULT_PET_STATUS: PetStatus = "available";
export const NAME_MAX_CODE_POINTS = 200;
const INT64_MAX = 9223372036854775807n;

export class PetNotFoundError extends NotFoundError {
  override name = "PetNotFoundError";
  constructor(id: string) {
    super("pet.not_found", `pet ${id} not found`);
  }
}

export class InvalidPetError extends InvalidArgumentError {
  override name = "InvalidPetError";
  constructor(message: string) {
    super("pet.invalid", message);
  }
}

/** Matches an unpaired UTF-16 surrogate, i.e. text that is not well-formed Unicode. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** The Idempotency-Key syntax of the public interfaces: 8-128 of A-Z a-z 0-9 _ . : - */
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{8,128}$/;

export class InvalidIdempotencyKeyError extends InvalidArgumentError {
  override name = "InvalidIdempotencyKeyError";
  constructor(message: string) {
    super("idempotency.invalid_key", message);
  }
}

export function isPetStatus(value: unknown): value is PetStatus {
  return typeof value === "string" && (petStatuses as readonly string[]).includes(value);
}

/** A decimal int64 in canonical form ("0", "42", "-7"), or undefined. */
export function parseInt64(text: string): bigint | undefined {
  if (!/^-?(0|[1-9][0-9]{0,18})$/.test(text)) return undefined;
  const value = BigInt(text);
  return value <= INT64_MAX && value >= -INT64_MAX - 1n ? value : undefined;
}

/**
 * Validates a creation request. `status` undefined means "not given" and takes the default.
 * Names are 1-200 Unicode code points after trimming; categoryId is a positive int64. Every
 * problem found is named in one message, separated by "; ".
 */
export function validateNewPet(input: { name: string; categoryId: string; status: PetStatus | undefined }): NewPet {
  const problems: string[] = [];
  const name = input.name.trim();
  if (name.length === 0) problems.push("name must not be empty");
  // Never store a replacement for text that is not Unicode (String.prototype.isWellFormed).
  else if (LONE_SURROGATE.test(name)) problems.push("name must be well-formed Unicode (it has a lone surrogate)");
  else if ([...name].length > NAME_MAX_CODE_POINTS) {
    problems.push(`name must be at most ${NAME_MAX_CODE_POINTS} characters`);
  } else if (/\p{Cc}/u.test(name)) problems.push("name must not contain control characters");
  const categoryId = parseInt64(input.categoryId);
  if (categoryId === undefined || categoryId <= 0n) problems.push("categoryId must be a positive 64-bit integer");
  if (problems.length > 0 || categoryId === undefined) throw new InvalidPetError(problems.join("; "));
  return { name, categoryId: categoryId.toString(), status: input.status ?? DEFAULT_PET_STATUS };
}

/**
 * The optional Idempotency-Key of a creation and whose it is. An empty key means "none"; a key
 * must have the public syntax and a scope (the caller), so two callers' keys never collide.
 */
export function validateIdempotencyKey(key: string, scope: string): { key: string; scope: string } | undefined {
  if (key === "") return undefined;
  if (!IDEMPOTENCY_KEY.test(key))
    throw new InvalidIdempotencyKeyError("idempotency key must be 8-128 of A-Z a-z 0-9 _ . : -");
  if (scope === "") throw new InvalidIdempotencyKeyError("an idempotency key needs its caller's scope");
  return { key, scope };
}
