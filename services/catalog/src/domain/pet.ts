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
  else if ([...name].length > NAME_MAX_CODE_POINTS) {
    problems.push(`name must be at most ${NAME_MAX_CODE_POINTS} characters`);
  } else if (/\p{Cc}/u.test(name)) problems.push("name must not contain control characters");
  const categoryId = parseInt64(input.categoryId);
  if (categoryId === undefined || categoryId <= 0n) problems.push("categoryId must be a positive 64-bit integer");
  if (problems.length > 0 || categoryId === undefined) throw new InvalidPetError(problems.join("; "));
  return { name, categoryId: categoryId.toString(), status: input.status ?? DEFAULT_PET_STATUS };
}
