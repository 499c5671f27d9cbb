/**
 * The animal interface's request shapes (spec 4.1), declared once for the check and the OpenAPI
 * document. The gateway checks each request against what the document declares (types, enums,
 * bounds, the name rules) so that one answer names every problem; the catalog service checks its
 * rules again and alone judges cursors.
 */
import type { Context } from "koa";
import { z } from "zod";
import { PetStatus as ProtoPetStatus } from "@platform/proto/catalog/v1";
import { ApiError } from "../../http/api-error.js";
import { pageLimit } from "../../http/page-query.js";
import { parseQuery } from "../../http/query-shape.js";
import { mustBe, parseShape } from "../../http/request-shape.js";
import { petStatuses, statusToProto, type PetStatus } from "./json.js";

const badRequest = (detail: string) => new ApiError(400, detail);

/** A pet's status; the PetStatus component of the document. */
export const petStatusShape = z
  .enum(petStatuses as [PetStatus, ...PetStatus[]], { error: `must be one of ${petStatuses.join(", ")}` })
  .meta({ id: "PetStatus" });

/** listPets' query: limit 1-100 and a known status, each at most once; the cursor is the catalog's to judge. */
export const listQueryShape = z.object({
  limit: pageLimit("Page size; anything outside 1-100 is refused, never clamped."),
  status: petStatusShape.optional(),
  cursor: z
    .string()
    .meta({
      description: "Opaque; taken from the `next` link of the previous page, valid for the same status only.",
      pattern: "^[A-Za-z0-9_-]{1,200}$",
    })
    .optional(),
});

export function parseListQuery(ctx: Context): {
  limit: number | undefined;
  status: PetStatus | undefined;
  cursor: string;
} {
  const { limit, status, cursor } = parseQuery(ctx, listQueryShape, badRequest);
  return { limit, status, cursor: cursor ?? "" };
}

const INT64_SYNTAX = /^-?(0|[1-9][0-9]{0,18})$/;
const INT64_MAX = 9223372036854775807n;

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
function nameProblem(name: string): string | undefined {
  const trimmed = name.trim();
  if (trimmed.length === 0) return "must not be empty";
  if ([...trimmed].length > NAME_MAX_CODE_POINTS) return `must be at most ${NAME_MAX_CODE_POINTS} characters`;
  if (/\p{Cc}/u.test(trimmed)) return "must not contain control characters";
  return undefined;
}

/** A positive JSON integer; above 2^53-1 it cannot be represented exactly. */
const categoryIdProblem = ({ input }: { input?: unknown }) => {
  if (input === undefined) return "is required";
  if (typeof input !== "number" || !Number.isInteger(input)) return "must be an integer";
  return input < 1 ? "must be a positive integer" : `must be at most ${Number.MAX_SAFE_INTEGER}`;
};

/**
 * NewPet: a JSON object with a name of 1-200 code points (trimmed, no control characters), a
 * positive integer categoryId and an optional known status; unknown members are ignored.
 */
export const newPetShape = z.object(
  {
    name: z
      .string(mustBe("a string"))
      .check((payload) => {
        const problem = nameProblem(payload.value);
        if (problem) payload.issues.push({ code: "custom", message: problem, input: payload.value });
      })
      .meta({
        description: "1-200 Unicode code points after trimming surrounding whitespace; no control characters.",
        minLength: 1,
        pattern: "^\\s*[^\\s\\p{Cc}](?:[^\\p{Cc}]{0,198}[^\\s\\p{Cc}])?\\s*$",
      }),
    categoryId: z.int({ error: categoryIdProblem }).min(1, "must be a positive integer").meta({
      format: "int64",
      description: "Positive; JSON integers above 2^53-1 cannot be represented exactly and are refused.",
    }),
    status: petStatusShape.optional().meta({ default: "available" }),
  },
  { error: "the request body must be a JSON object" },
);

export function parseNewPet(body: unknown): { name: string; categoryId: string; status: ProtoPetStatus } {
  const { name, categoryId, status } = parseShape(newPetShape, body, badRequest);
  return {
    name,
    categoryId: String(categoryId),
    status: status === undefined ? ProtoPetStatus.PET_STATUS_UNSPECIFIED : statusToProto[status],
  };
}
