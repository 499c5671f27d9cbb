import type { Context } from "koa";
import { PetStatus as ProtoPetStatus } from "@platform/proto/catalog/v1";
import { ApiError } from "../../http/api-error.js";
import { isPetStatus, statusToProto, type PetStatus } from "./json.js";

/**
 * The animal interface's request shapes (spec 4.1). The gateway checks each request against what
 * the OpenAPI document declares (types, enums, bounds, the name rules) so that one answer names
 * every problem; the catalog service checks its rules again and alone judges cursors.
 */
const INT64_SYNTAX = /^-?(0|[1-9][0-9]{0,18})$/;
const INT64_MAX = 9223372036854775807n;

const isLimit = (text: string) => /^[0-9]{1,3}$/.test(text) && Number(text) >= 1 && Number(text) <= 100;

/**
 * listPets' query: limit 1-100, a known status, each given at most once (the cursor is checked
 * by the catalog). Every problem found is named in one message.
 */
export function parseListQuery(ctx: Context): {
  limit: string | undefined;
  status: PetStatus | undefined;
  cursor: string;
} {
  const problems: string[] = [];
  const single = (name: string): string | undefined => {
    const value = ctx.query[name];
    if (!Array.isArray(value)) return value;
    problems.push(`query parameter ${name} must be given at most once`);
    return undefined;
  };
  const limit = single("limit");
  const status = single("status");
  const cursor = single("cursor");
  if (limit !== undefined && !isLimit(limit)) problems.push("limit must be an integer between 1 and 100");
  if (status !== undefined && !isPetStatus(status)) problems.push("status must be one of available, pending, sold");
  if (problems.length > 0) throw new ApiError(400, problems.join("; "));
  return { limit, status: status as PetStatus | undefined, cursor: cursor ?? "" };
}

/** Pet ids are assigned positive; anything else can name no pet and is refused as malformed. */
export function parsePetId(text: string): string {
  const invalid = () => new ApiError(400, "petId must be a positive 64-bit integer");
  if (!INT64_SYNTAX.test(text)) throw invalid();
  const value = BigInt(text);
  if (value > INT64_MAX || value < 1n) throw invalid();
  return text;
}

const NAME_MAX_CODE_POINTS = 200;

/** The name rules of the catalog (services/catalog/src/domain/pet.ts), checked here to name every problem. */
function nameProblem(name: unknown): string | undefined {
  if (name === undefined) return "name is required";
  if (typeof name !== "string") return "name must be a string";
  const trimmed = name.trim();
  if (trimmed.length === 0) return "name must not be empty";
  if ([...trimmed].length > NAME_MAX_CODE_POINTS) return `name must be at most ${NAME_MAX_CODE_POINTS} characters`;
  if (/\p{Cc}/u.test(trimmed)) return "name must not contain control characters";
  return undefined;
}

function categoryIdProblem(categoryId: unknown): string | undefined {
  if (categoryId === undefined) return "categoryId is required";
  if (typeof categoryId !== "number" || !Number.isInteger(categoryId)) return "categoryId must be an integer";
  if (categoryId < 1) return "categoryId must be a positive integer";
  if (!Number.isSafeInteger(categoryId)) return "categoryId must be at most 9007199254740991";
  return undefined;
}

/**
 * NewPet as the OpenAPI document declares it: a JSON object with a name of 1-200 code points
 * (trimmed, no control characters), a positive integer categoryId and an optional known status.
 * Every problem found is named, in field order, separated by "; ". The catalog service checks its
 * rules again; these mirror them so one answer can name every problem at once.
 */
export function parseNewPet(body: unknown): { name: string; categoryId: string; status: ProtoPetStatus } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError(400, "the request body must be a JSON object");
  }
  const { name, categoryId, status } = body as Record<string, unknown>;
  const problems = [
    nameProblem(name),
    categoryIdProblem(categoryId),
    status !== undefined && !isPetStatus(status) ? "status must be one of available, pending, sold" : undefined,
  ].filter((problem): problem is string => problem !== undefined);
  if (problems.length > 0) throw new ApiError(400, problems.join("; "));
  return {
    name: name as string,
    categoryId: String(categoryId),
    status: status === undefined ? ProtoPetStatus.PET_STATUS_UNSPECIFIED : statusToProto[status as PetStatus],
  };
}
