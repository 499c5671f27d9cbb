import Router, { type RouterOptions } from "@koa/router";
import type { Context } from "koa";
import { PetStatus as ProtoPetStatus, type Pet as ProtoPet } from "@platform/proto/catalog/v1";
import type { ApiKeyRecord } from "../domain/api-key.js";
import type { CatalogClient } from "../grpc/catalog-client.js";
import { ApiError, callService as call } from "./api-error.js";
import { parseOptionalIdempotencyKey } from "./idempotency-key.js";
import { readJsonBody } from "./json-body.js";

/**
 * The animal interface (spec 4.1) under /v1. The gateway checks the HTTP shape of each request
 * (types, enums, integer syntax) and leaves business rules (name length, positive category,
 * page size, cursor validity) to the catalog service.
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

/** One query parameter, given at most once. */
function singleQuery(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw new ApiError(400, `query parameter ${name} must be given at most once`);
  return value;
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return 0; // the service applies the default
  if (!/^[0-9]{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 100) {
    throw new ApiError(400, "limit must be an integer between 1 and 100");
  }
  return Number(text);
}

function parsePetId(text: string): string {
  if (!INT64_SYNTAX.test(text)) throw new ApiError(400, "petId must be a 64-bit integer");
  const value = BigInt(text);
  if (value > INT64_MAX || value < -INT64_MAX - 1n) throw new ApiError(400, "petId must be a 64-bit integer");
  return text;
}

/** NewPet's shape: an object with string name, integer categoryId and an optional known status. */
function parseNewPet(body: unknown): { name: string; categoryId: string; status: ProtoPetStatus } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError(400, "the request body must be a JSON object");
  }
  const { name, categoryId, status } = body as Record<string, unknown>;
  const problems: string[] = [];
  if (name === undefined) problems.push("name is required");
  else if (typeof name !== "string") problems.push("name must be a string");
  if (categoryId === undefined) problems.push("categoryId is required");
  else if (typeof categoryId !== "number" || !Number.isInteger(categoryId))
    problems.push("categoryId must be an integer");
  else if (!Number.isSafeInteger(categoryId)) problems.push("categoryId must be at most 9007199254740991");
  if (status !== undefined && !isPetStatus(status)) problems.push("status must be one of available, pending, sold");
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
    const limitText = singleQuery(ctx, "limit");
    const statusText = singleQuery(ctx, "status");
    const cursor = singleQuery(ctx, "cursor");
    if (statusText !== undefined && !isPetStatus(statusText)) {
      throw new ApiError(400, "status must be one of available, pending, sold");
    }
    const response = await call(
      deps.catalog.listPets(
        {
          pageSize: parseLimit(limitText),
          status: statusText === undefined ? ProtoPetStatus.PET_STATUS_UNSPECIFIED : statusToProto[statusText],
          pageToken: cursor ?? "",
        },
        { requestId: ctx.state.requestId as string },
      ),
    );
    if (response.nextPageToken) {
      const next = new URLSearchParams();
      next.set("limit", String(limitText ?? 20));
      if (statusText !== undefined) next.set("status", statusText);
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

  router.get("/pets/:petId", async (ctx) => {
    ctx.set("Deprecation", GET_PET_DEPRECATION);
    ctx.set("Sunset", GET_PET_SUNSET);
    ctx.set("Link", `<${deps.publicBaseUrl}/v1/pets>; rel="successor-version"`);
    const id = parsePetId(ctx.params.petId ?? "");
    const { pet } = await call(deps.catalog.getPet({ id }, { requestId: ctx.state.requestId as string }));
    ctx.body = toJsonPet(pet);
  });

  return router;
}
