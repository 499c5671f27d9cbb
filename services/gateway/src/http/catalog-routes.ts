import Router, { type RouterOptions } from "@koa/router";
import type { Context, Middleware } from "koa";
import { PetStatus as ProtoPetStatus, type Pet as ProtoPet } from "@platform/proto/catalog/v1";
import type { ApiKeyRecord } from "../domain/api-key.js";
import type { CatalogClient } from "../grpc/catalog-client.js";
import { ApiError, callService as call } from "./api-error.js";
import { parseOptionalIdempotencyKey } from "./idempotency-key.js";
import { readJsonBody } from "./json-body.js";

/**
 * The animal interface (spec 4.1) under /v1. The gateway checks each request against what the
 * OpenAPI document declares (types, enums, bounds, the name rules) so that one answer names every
 * problem; the catalog service checks its rules again and alone judges cursors.
 */
const statusToProto = {
  available: ProtoPetStatus.PET_STATUS_AVAILABLE,
  pending: ProtoPetStatus.PET_STATUS_PENDING,
  sold: ProtoPetStatus.PET_STATUS_SOLD,
} as const;
type PetStatus = keyof typeof statusToProto;
const statusFromProto: Partial<Record<ProtoPetStatus, PetStatus>> = {
  [ProtoPetStatus.PET_STATUS_AVAILABLE]: "available",
  [ProtoPetStatus.PET_STATUS_PENDING]: "pending",
  [ProtoPetStatus.PET_STATUS_SOLD]: "sold",
};

/** getPet is deprecated (spec 9): RFC 9745 Deprecation (an sf-date), RFC 8594 Sunset, successor. */
export const GET_PET_DEPRECATION = "@1795305600"; // 2026-11-22T00:00:00Z, when /v1 shipped with it deprecated
export const GET_PET_SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT";

const GET_PET_PATH = /^\/v1\/pets\/[^/]+$/;

/**
 * Announces getPet's deprecation on every answer it gives, errors included: this runs before the
 * rate limit and authentication, so a 401 or 429 from getPet carries the headers too.
 */
export function announceGetPetDeprecation(publicBaseUrl: string): Middleware {
  const successor = `<${publicBaseUrl}/v1/pets>; rel="successor-version"`;
  return async (ctx, next) => {
    if ((ctx.method === "GET" || ctx.method === "HEAD") && GET_PET_PATH.test(ctx.path)) {
      ctx.set("Deprecation", GET_PET_DEPRECATION);
      ctx.set("Sunset", GET_PET_SUNSET);
      ctx.set("Link", successor);
    }
    await next();
  };
}

const INT64_SYNTAX = /^-?(0|[1-9][0-9]{0,18})$/;
const INT64_MAX = 9223372036854775807n;

function isPetStatus(value: unknown): value is PetStatus {
  return typeof value === "string" && Object.hasOwn(statusToProto, value);
}

function toJsonPet(pet: ProtoPet | undefined): Record<string, unknown> {
  if (!pet) throw new ApiError(500, "catalog answered without a pet");
  // ids are int64 strings on the wire; partners get JSON integers (exact below 2^53).
  return {
    id: Number(pet.id),
    name: pet.name,
    categoryId: Number(pet.categoryId),
    status: statusFromProto[pet.status],
  };
}

const isLimit = (text: string) => /^[0-9]{1,3}$/.test(text) && Number(text) >= 1 && Number(text) <= 100;

/**
 * listPets' query: limit 1-100, a known status, each given at most once (the cursor is checked
 * by the catalog). Every problem found is named in one message.
 */
function parseListQuery(ctx: Context): { limit: string | undefined; status: PetStatus | undefined; cursor: string } {
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
function parsePetId(text: string): string {
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
function parseNewPet(body: unknown): { name: string; categoryId: string; status: ProtoPetStatus } {
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

export function catalogRoutes(
  deps: { catalog: CatalogClient; publicBaseUrl: string },
  routerOptions: RouterOptions,
): Router {
  const router = new Router(routerOptions);

  router.get("/pets", async (ctx) => {
    const query = parseListQuery(ctx);
    const response = await call(
      deps.catalog.listPets(
        {
          pageSize: query.limit === undefined ? 0 : Number(query.limit), // 0: the service's default
          status: query.status === undefined ? ProtoPetStatus.PET_STATUS_UNSPECIFIED : statusToProto[query.status],
          pageToken: query.cursor,
        },
        { requestId: ctx.state.requestId as string },
      ),
    );
    if (response.nextPageToken) {
      const next = new URLSearchParams();
      next.set("limit", query.limit ?? "20");
      if (query.status !== undefined) next.set("status", query.status);
      next.set("cursor", response.nextPageToken);
      ctx.set("Link", `<${deps.publicBaseUrl}/v1/pets?${next.toString()}>; rel="next"`);
    }
    ctx.body = response.pets.map(toJsonPet);
  });

  /**
   * An optional Idempotency-Key, scoped to the API key: a repeat replays the first answer. A
   * create whose outcome is unknown is 503 "retry with the same key" with a key, 504 "check
   * before creating again" without one.
   */
  router.post("/pets", async (ctx) => {
    const idempotencyKey = parseOptionalIdempotencyKey(ctx.request.headers["idempotency-key"]);
    const newPet = parseNewPet(await readJsonBody(ctx));
    const { pet, replayed } = await call(
      deps.catalog.createPet(
        {
          ...newPet,
          idempotencyKey: idempotencyKey ?? "",
          idempotencyScope: idempotencyKey === undefined ? "" : (ctx.state.apiKey as ApiKeyRecord).id,
        },
        { requestId: ctx.state.requestId as string },
      ),
      {
        idempotencyKey,
        howToCheck: "The pet may have been created: list pets to check before creating it again",
      },
    );
    const json = toJsonPet(pet);
    if (replayed) ctx.set("Idempotent-Replayed", "true");
    ctx.status = 201;
    ctx.set("Location", `${deps.publicBaseUrl}/v1/pets/${String(json.id)}`);
    ctx.body = json;
  });

  // Deprecation, Sunset and the successor Link are set by announceGetPetDeprecation.
  router.get("/pets/:petId", async (ctx) => {
    const id = parsePetId(ctx.params.petId ?? "");
    const { pet } = await call(deps.catalog.getPet({ id }, { requestId: ctx.state.requestId as string }));
    ctx.body = toJsonPet(pet);
  });

  return router;
}
