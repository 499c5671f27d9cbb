import { catalogCodeForStatus } from "../catalog-errors.js";
import { GET_PET_SUNSET } from "../catalog-routes.js";

const everyResponseHeaders = {
  "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" },
  RateLimit: { $ref: "#/components/headers/RateLimit" },
  "RateLimit-Policy": { $ref: "#/components/headers/RateLimit-Policy" },
};

const errorResponse = (description: string) => ({
  description,
  headers: everyResponseHeaders,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

const common = {
  "401": errorResponse("The API key is missing, malformed, unknown or revoked."),
  "405": errorResponse("The path exists but not with this method; see the Allow header."),
  "429": {
    ...errorResponse("Over the API key's rate limit; honour Retry-After."),
    headers: { ...everyResponseHeaders, "Retry-After": { schema: { type: "string", pattern: "^[0-9]+$" } } },
  },
  "500": errorResponse("An unexpected failure; nothing internal is disclosed."),
  "503": {
    ...errorResponse("A downstream service is temporarily unavailable; retry with backoff."),
    headers: { ...everyResponseHeaders, "Retry-After": { schema: { type: "string" } } },
  },
};

/** OpenAPI 3.1 document of the animal interface, served at /v1/openapi.json. */
export const catalogOpenApi = {
  openapi: "3.1.0",
  info: {
    title: "Animal catalog",
    version: "1.0.0",
    description:
      "Lists, adds and retrieves animals. All operations need `Authorization: Bearer <API key>`. " +
      "Errors use the Error shape; its `code` is one per status: " +
      Object.entries(catalogCodeForStatus)
        .map(([status, code]) => `${status} \`${code}\``)
        .join(", ") +
      ".",
  },
  servers: [{ url: "/v1" }],
  security: [{ bearerAuth: [] }],
  paths: {
    "/pets": {
      get: {
        operationId: "listPets",
        summary: "List pets, oldest first, optionally by status.",
        parameters: [
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
          { name: "status", in: "query", schema: { $ref: "#/components/schemas/PetStatus" } },
          {
            name: "cursor",
            in: "query",
            description: "Opaque; taken from the `next` link of the previous page.",
            schema: { type: "string" },
          },
        ],
        responses: {
          "200": {
            description: 'A page of pets. While more remain, `Link: <…>; rel="next"` names the next page.',
            headers: {
              "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" },
              Link: { schema: { type: "string" }, description: 'RFC 8288 link with rel="next"' },
            },
            content: { "application/json": { schema: { $ref: "#/components/schemas/Pets" } } },
          },
          "400": errorResponse("A query parameter is invalid (limit, status or cursor)."),
          ...common,
        },
      },
      post: {
        operationId: "createPet",
        summary: "Add a pet.",
        parameters: [
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description:
              "Optional; 8-128 of A-Z a-z 0-9 _ . : -, bare or as a quoted sf-string, remembered 24 hours per API " +
              "key. A repeat with the same body replays the first answer (`Idempotent-Replayed: true`) and never " +
              "creates a second pet; with another body it is 422. Send one on every create: it is what makes a " +
              "retry after a 503 or a lost connection safe.",
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
              Location: { schema: { type: "string" } },
              "Idempotent-Replayed": {
                schema: { type: "string", const: "true" },
                description: "Present when this answer replays the first request with the same Idempotency-Key.",
              },
            },
            content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" } } },
          },
          "400": errorResponse(
            "Missing required fields, invalid values, text that is not well-formed Unicode, a body that is not a " +
              "JSON object, or a malformed Idempotency-Key.",
          ),
          "409": errorResponse(
            "`idempotency_in_progress`: the first request with this Idempotency-Key is still being processed; " +
              "retry it shortly with the same key.",
          ),
          "413": errorResponse("The body is larger than 1 MiB."),
          "415": errorResponse("The body is not application/json."),
          "422": errorResponse(
            "`idempotency_key_reused`: this Idempotency-Key was used with a different body; use a new key.",
          ),
          ...common,
          "503": {
            ...common["503"],
            description:
              "A downstream service is unavailable, or did not answer in time for a request with an " +
              "Idempotency-Key. Retry after Retry-After with the same Idempotency-Key: if the first attempt " +
              "created the pet, the retry replays it instead of creating another.",
          },
          "504": errorResponse(
            "`outcome_unknown`: a request without an Idempotency-Key was sent to the catalog but not confirmed " +
              "in time, so the pet may or may not exist. Do not retry blindly: list pets to check, and send an " +
              "Idempotency-Key next time. No Retry-After.",
          ),
        },
      },
    },
    "/pets/{petId}": {
      get: {
        operationId: "getPet",
        deprecated: true,
        summary: `Deprecated; removed ${GET_PET_SUNSET}. Use GET /pets with a status filter.`,
        parameters: [{ name: "petId", in: "path", required: true, schema: { type: "integer", format: "int64" } }],
        responses: {
          "200": {
            description: "The pet.",
            headers: {
              ...everyResponseHeaders,
              Deprecation: { schema: { type: "string", pattern: "^@[0-9]+$" }, description: "RFC 9745" },
              Sunset: { schema: { type: "string", const: GET_PET_SUNSET }, description: "RFC 8594" },
              Link: { schema: { type: "string" }, description: 'rel="successor-version"' },
            },
            content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" } } },
          },
          "400": errorResponse("petId is not a 64-bit integer."),
          "404": errorResponse("No pet has this id."),
          ...common,
        },
      },
    },
  },
  components: {
    securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
    headers: {
      "X-Request-Id": {
        description: "Echoes a safe caller-supplied X-Request-Id, else a generated one.",
        schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
      },
      RateLimit: { schema: { type: "string", pattern: '^"default";r=[0-9]+;t=[0-9]+$' } },
      "RateLimit-Policy": { schema: { type: "string", pattern: '^"default";q=[0-9]+;w=1$' } },
    },
    schemas: {
      PetStatus: { type: "string", enum: ["available", "pending", "sold"] },
      Pet: {
        type: "object",
        required: ["id", "name", "categoryId", "status"],
        properties: {
          id: { type: "integer", format: "int64" },
          name: { type: "string", minLength: 1, maxLength: 200 },
          categoryId: { type: "integer", format: "int64", minimum: 1 },
          status: { $ref: "#/components/schemas/PetStatus" },
        },
      },
      NewPet: {
        type: "object",
        required: ["name", "categoryId"],
        properties: {
          name: { type: "string", minLength: 1, maxLength: 200 },
          categoryId: { type: "integer", format: "int64", minimum: 1 },
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
