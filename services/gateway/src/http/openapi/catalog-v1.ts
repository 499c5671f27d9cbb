import { catalogCodeForStatus } from "../catalog-errors.js";
import { GET_PET_SUNSET } from "../catalog-routes.js";
import {
  documentContact,
  documentLicense,
  everyResponseHeaders,
  headerRef,
  headersForStatus,
  responseHeaderComponents,
} from "./response-headers.js";

const errorDescriptions: Record<number, string> = {
  400: "The request is invalid; `message` names every problem found.",
  401: "The API key is missing, malformed, unknown or revoked.",
  404: "No pet has this id.",
  405: "Answered to the other methods on this path; Allow lists the supported ones.",
  413: "The body is larger than 1 MiB.",
  415: "The body is not UTF-8 application/json.",
  429: "Over the API key's rate limit; honour Retry-After.",
  500: "An unexpected failure; nothing internal is disclosed.",
  503: "A downstream service is temporarily unavailable; retry after Retry-After.",
};

/** getPet's deprecation headers: on every answer of getPet (not on 405s, which other methods get). */
const deprecationHeaders = {
  Deprecation: headerRef("Deprecation"),
  Sunset: headerRef("Sunset"),
  Link: headerRef("Successor-Link"),
};

/**
 * One Error response per status, its `code` fixed to that status's code (catalogCodeForStatus),
 * so a response whose code the operation cannot produce fails validation.
 */
function errorResponse(status: number, extraHeaders: Record<string, unknown> = {}, description?: string) {
  const code = catalogCodeForStatus[status];
  if (!code) throw new Error(`no catalog error code for ${status}`);
  return {
    description: `${description ?? errorDescriptions[status]} Code \`${code}\`.`,
    headers: { ...everyResponseHeaders, ...headersForStatus[status], ...extraHeaders },
    content: {
      "application/json": {
        schema: {
          allOf: [
            { $ref: "#/components/schemas/Error" },
            { properties: { code: { const: code }, status: { const: status } } },
          ],
        },
      },
    },
  };
}

/** The statuses every catalog operation can answer: key, rate limit, the catalog call, other methods. */
const edgeStatuses = [401, 405, 429, 500, 503];

function errorResponses(statuses: number[], extraHeaders: Record<string, unknown> = {}, descriptions = {}) {
  return Object.fromEntries(
    [...statuses, ...edgeStatuses]
      .sort((a, b) => a - b)
      .map((status) => [
        String(status),
        errorResponse(
          status,
          status === 405 ? {} : extraHeaders,
          (descriptions as Record<number, string | undefined>)[status],
        ),
      ]),
  );
}

/** OpenAPI 3.1 document of the animal interface, served at /v1/openapi.json. */
export function catalogOpenApi(options: { rateLimitPolicy: string }) {
  return {
    openapi: "3.1.0",
    info: {
      title: "Animal catalog",
      version: "1.0.0",
      description:
        "Lists, adds and retrieves animals. All operations need `Authorization: Bearer <API key>`; any active " +
        "key may use the catalog. Every response carries X-Request-Id, RateLimit and RateLimit-Policy. " +
        "Errors use the Error shape; its `code` is one per status: " +
        Object.entries(catalogCodeForStatus)
          .map(([status, code]) => `${status} \`${code}\``)
          .join(", ") +
        ".",
      contact: documentContact,
      license: documentLicense,
    },
    servers: [{ url: "/v1" }],
    security: [{ bearerAuth: [] }],
    tags: [{ name: "pets", description: "The animal catalog." }],
    paths: {
      "/pets": {
        get: {
          operationId: "listPets",
          tags: ["pets"],
          summary: "List pets, oldest first, optionally by status.",
          description:
            "Keyset-paged by id. The body is always an array; while more pets remain the response carries " +
            '`Link: <…>; rel="next"` with the next page\'s URL (same `limit` and `status`).',
          parameters: [
            {
              name: "limit",
              in: "query",
              description: "Page size; anything outside 1-100 is refused, never clamped.",
              schema: { type: "integer", minimum: 1, maximum: 100, default: 20 },
            },
            { name: "status", in: "query", schema: { $ref: "#/components/schemas/PetStatus" } },
            {
              name: "cursor",
              in: "query",
              description: "Opaque; taken from the `next` link of the previous page, valid for the same status only.",
              schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,200}$" },
            },
          ],
          responses: {
            "200": {
              description: "A page of pets.",
              headers: {
                ...everyResponseHeaders,
                Link: {
                  description: "RFC 8288 link to the next page, present while more pets remain.",
                  schema: { type: "string", pattern: '^<[^>]*/v1/pets\\?[^>]*cursor=[A-Za-z0-9_-]+>; rel="next"$' },
                },
              },
              content: { "application/json": { schema: { $ref: "#/components/schemas/Pets" } } },
            },
            ...errorResponses([400], {}, { 400: "A query parameter is invalid (limit, status or cursor)." }),
          },
        },
        post: {
          operationId: "createPet",
          tags: ["pets"],
          summary: "Add a pet.",
          description:
            "Creates a pet; `status` defaults to `available`, unknown fields are ignored. Answers 201 with the " +
            "stored pet and its Location. Send an `Idempotency-Key`: it is what makes a retry after a 503 or a " +
            "lost connection safe.",
          parameters: [
            {
              name: "Idempotency-Key",
              in: "header",
              required: false,
              description:
                "Optional; 8-128 of A-Z a-z 0-9 _ . : -, bare or as a quoted sf-string, remembered 24 hours per API " +
                "key. A repeat with the same body replays the first answer (`Idempotent-Replayed: true`) and never " +
                "creates a second pet; with another body it is 422.",
              schema: { type: "string", pattern: '^(?:[A-Za-z0-9_.:-]{8,128}|"[A-Za-z0-9_.:-]{8,128}")$' },
            },
          ],
          requestBody: {
            required: true,
            content: { "application/json": { schema: { $ref: "#/components/schemas/NewPet" } } },
          },
          responses: {
            "201": {
              description: "The pet, as stored.",
              headers: {
                ...everyResponseHeaders,
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
              content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" } } },
            },
            ...errorResponses(
              [400, 409, 413, 415, 422, 504],
              {},
              {
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
            ),
          },
        },
      },
      "/pets/{petId}": {
        get: {
          operationId: "getPet",
          tags: ["pets"],
          deprecated: true,
          summary: `Deprecated; removed ${GET_PET_SUNSET}. Use GET /pets with a status filter.`,
          description:
            "Every answer (errors included) carries `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and " +
            '`Link: </v1/pets>; rel="successor-version"`.',
          parameters: [
            {
              name: "petId",
              in: "path",
              required: true,
              description: "A positive 64-bit integer in canonical decimal form (no sign, no leading zeros).",
              schema: { type: "integer", format: "int64", minimum: 1 },
            },
          ],
          responses: {
            "200": {
              description: "The pet.",
              headers: { ...everyResponseHeaders, ...deprecationHeaders },
              content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" } } },
            },
            ...errorResponses([400, 404], deprecationHeaders, {
              400: "petId is not a positive 64-bit integer.",
            }),
          },
        },
      },
    },
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
      headers: {
        ...responseHeaderComponents(options.rateLimitPolicy),
        Deprecation: {
          description: "RFC 9745: getPet has been deprecated since this moment (an sf-date, epoch seconds).",
          required: true,
          schema: { type: "string", pattern: "^@[0-9]+$" },
        },
        Sunset: {
          description: "RFC 8594: getPet is removed at this moment.",
          required: true,
          schema: { type: "string", const: GET_PET_SUNSET },
        },
        "Successor-Link": {
          description: 'RFC 8288: `<…/v1/pets>; rel="successor-version"`.',
          required: true,
          schema: { type: "string", pattern: '^<[^>]*/v1/pets>; rel="successor-version"$' },
        },
      },
      schemas: {
        PetStatus: { type: "string", enum: ["available", "pending", "sold"] },
        Pet: {
          type: "object",
          required: ["id", "name", "categoryId", "status"],
          properties: {
            id: { type: "integer", format: "int64", minimum: 1 },
            name: { type: "string", minLength: 1, maxLength: 200 },
            categoryId: { type: "integer", format: "int64", minimum: 1, maximum: 9007199254740991 },
            status: { $ref: "#/components/schemas/PetStatus" },
          },
        },
        NewPet: {
          type: "object",
          required: ["name", "categoryId"],
          properties: {
            name: {
              type: "string",
              description: "1-200 Unicode code points after trimming surrounding whitespace; no control characters.",
              minLength: 1,
              pattern: "^\\s*[^\\s\\p{Cc}](?:[^\\p{Cc}]{0,198}[^\\s\\p{Cc}])?\\s*$",
            },
            categoryId: {
              type: "integer",
              format: "int64",
              description: "Positive; JSON integers above 2^53-1 cannot be represented exactly and are refused.",
              minimum: 1,
              maximum: 9007199254740991,
            },
            status: { $ref: "#/components/schemas/PetStatus", default: "available" },
          },
        },
        Pets: { type: "array", items: { $ref: "#/components/schemas/Pet" } },
        Error: {
          type: "object",
          required: ["code", "message", "status"],
          properties: {
            code: { type: "string", enum: Object.values(catalogCodeForStatus) },
            message: { type: "string" },
            status: { type: "integer" },
          },
        },
      },
    },
  } as const;
}
