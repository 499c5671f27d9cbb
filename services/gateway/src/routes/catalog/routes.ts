import { PetStatus as ProtoPetStatus } from "@platform/proto/catalog/v1";
import { callService } from "../../http/api-error.js";
import { readJsonBody } from "../../http/middleware/json-body.js";
import { pathParam, callOptionsOf, type CatalogRoute } from "../../http/route.js";
import { petToJson, statusToProto } from "./json.js";
import { listQueryParameters, petIdParameter } from "./parameters.js";
import { parseListQuery, parseNewPet, parsePetId } from "./shapes.js";

/** getPet is deprecated (spec 9): RFC 9745 Deprecation (an sf-date), RFC 8594 Sunset, successor. */
export const GET_PET_DEPRECATION = "@1795305600"; // 2026-11-22T00:00:00Z, when /v1 shipped with it deprecated
export const GET_PET_SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT";

const tag = "pets";

/** The animal interface (spec 4.1) under /v1: its rows of the route table. */
export const catalogRoutes: CatalogRoute[] = [
  {
    surface: "catalog",
    operationId: "listPets",
    method: "GET",
    path: "/v1/pets",
    tag,
    summary: "List pets, oldest first, optionally by status.",
    description:
      "Keyset-paged by id. The body is always an array; while more pets remain the response carries " +
      '`Link: <…>; rel="next"` with the next page\'s URL (same `limit` and `status`).',
    parameters: listQueryParameters,
    responseSchema: "Pets",
    success: {
      description: "A page of pets.",
      headers: {
        Link: {
          description: "RFC 8288 link to the next page, present while more pets remain.",
          schema: { type: "string", pattern: '^<[^>]*/v1/pets\\?[^>]*cursor=[A-Za-z0-9_-]+>; rel="next"$' },
        },
      },
    },
    errors: { statuses: [400], descriptions: { 400: "A query parameter is invalid (limit, status or cursor)." } },
    async handle(ctx, deps) {
      const query = parseListQuery(ctx);
      const response = await callService(
        deps.catalog.listPets(
          {
            pageSize: query.limit ?? 0, // 0: the service's default
            status: query.status === undefined ? ProtoPetStatus.PET_STATUS_UNSPECIFIED : statusToProto[query.status],
            pageToken: query.cursor,
          },
          callOptionsOf(ctx),
        ),
      );
      if (response.nextPageToken) {
        const next = new URLSearchParams();
        next.set("limit", String(query.limit ?? 20));
        if (query.status !== undefined) next.set("status", query.status);
        next.set("cursor", response.nextPageToken);
        ctx.set("Link", `<${deps.publicBaseUrl}/v1/pets?${next.toString()}>; rel="next"`);
      }
      ctx.body = response.pets.map(petToJson);
    },
  },
  /**
   * An optional Idempotency-Key, scoped to the API key: a repeat replays the first answer. A
   * create whose outcome is unknown is 503 "retry with the same key" with a key, 504 "check
   * before creating again" without one.
   */
  {
    surface: "catalog",
    operationId: "createPet",
    method: "POST",
    path: "/v1/pets",
    tag,
    summary: "Add a pet.",
    description:
      "Creates a pet; `status` defaults to `available`, unknown fields are ignored. Answers 201 with the " +
      "stored pet and its Location. Send an `Idempotency-Key`: it is what makes a retry after a 503 or a " +
      "lost connection safe.",
    optionalIdempotencyKey: true,
    successStatus: 201,
    requestSchema: "NewPet",
    responseSchema: "Pet",
    success: {
      description: "The pet, as stored.",
      headers: {
        Location: {
          required: true,
          description: "The new pet's URL.",
          schema: { type: "string", pattern: "/v1/pets/[1-9][0-9]*$" },
        },
        "Idempotent-Replayed": {
          description: "Present when this answer replays the first request with the same Idempotency-Key.",
          schema: { type: "string", const: "true" },
        },
      },
    },
    errors: {
      statuses: [400, 409, 413, 415, 422, 504],
      descriptions: {
        400:
          "Missing or invalid fields, text that is not well-formed Unicode, a body that is not a JSON " +
          "object, or a malformed Idempotency-Key; `message` names every problem.",
        409:
          "The first request with this Idempotency-Key is still being processed; retry it shortly with " +
          "the same key.",
        422: "This Idempotency-Key was used with a different body; use a new key.",
        503:
          "A downstream service is unavailable, or did not answer in time for a request with an " +
          "Idempotency-Key. Retry after Retry-After with the same Idempotency-Key: if the first attempt " +
          "created the pet, the retry replays it instead of creating another.",
        504:
          "A request without an Idempotency-Key was sent to the catalog but not confirmed in time, so the " +
          "pet may or may not exist. Do not retry blindly: list pets to check, and send an Idempotency-Key " +
          "next time. No Retry-After.",
      },
    },
    async handle(ctx, deps) {
      const idempotencyKey = ctx.state.idempotencyKey;
      const newPet = parseNewPet(await readJsonBody(ctx));
      const { pet, replayed } = await callService(
        deps.catalog.createPet(
          {
            ...newPet,
            idempotencyKey: idempotencyKey ?? "",
            idempotencyScope: idempotencyKey === undefined ? "" : ctx.state.apiKey.id,
          },
          callOptionsOf(ctx),
        ),
        {
          idempotencyKey,
          howToCheck: "The pet may have been created: list pets to check before creating it again",
        },
      );
      const json = petToJson(pet);
      if (replayed) ctx.set("Idempotent-Replayed", "true");
      ctx.set("Location", `${deps.publicBaseUrl}/v1/pets/${String(json.id)}`);
      ctx.body = json;
    },
  },
  {
    surface: "catalog",
    operationId: "getPet",
    method: "GET",
    path: "/v1/pets/:petId",
    tag,
    summary: `Deprecated; removed ${GET_PET_SUNSET}. Use GET /pets with a status filter.`,
    description:
      "Every answer (errors included) carries `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and " +
      '`Link: </v1/pets>; rel="successor-version"`.',
    deprecation: { since: GET_PET_DEPRECATION, sunset: GET_PET_SUNSET, successorPath: "/v1/pets" },
    parameters: [petIdParameter],
    responseSchema: "Pet",
    success: { description: "The pet." },
    errors: { statuses: [400, 404], descriptions: { 400: "petId is not a positive 64-bit integer." } },
    async handle(ctx, deps) {
      const id = parsePetId(pathParam(ctx, "petId"));
      const { pet } = await callService(deps.catalog.getPet({ id }, callOptionsOf(ctx)));
      ctx.body = petToJson(pet);
    },
  },
];
