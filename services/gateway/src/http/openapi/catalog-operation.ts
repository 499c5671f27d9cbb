import { catalogCodeForStatus } from "../catalog-error.js";
import type { CatalogRoute } from "../route.js";
import { everyResponseHeaders, headerRef, headersForStatus } from "./response-headers.js";
import { ref } from "./schema-parts.js";

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

/** A deprecated operation's headers: on every answer of it (not on 405s, which other methods get). */
const deprecationHeaders = {
  Deprecation: headerRef("Deprecation"),
  Sunset: headerRef("Sunset"),
  Link: headerRef("Successor-Link"),
};

/** The optional Idempotency-Key of a catalog create. */
const idempotencyKeyParameter = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Optional; 8-128 of A-Z a-z 0-9 _ . : -, bare or as a quoted sf-string, remembered 24 hours per API " +
    "key. A repeat with the same body replays the first answer (`Idempotent-Replayed: true`) and never " +
    "creates a second pet; with another body it is 422.",
  schema: { type: "string", pattern: '^(?:[A-Za-z0-9_.:-]{8,128}|"[A-Za-z0-9_.:-]{8,128}")$' },
};

/**
 * One Error response per status, its `code` fixed to that status's code (catalogCodeForStatus),
 * so a response whose code the operation cannot produce fails validation.
 */
function errorResponse(status: number, extraHeaders: Record<string, unknown>, description: string | undefined) {
  const code = catalogCodeForStatus[status];
  if (!code) throw new Error(`no catalog error code for ${status}`);
  return {
    description: `${description ?? errorDescriptions[status]} Code \`${code}\`.`,
    headers: { ...everyResponseHeaders, ...headersForStatus[status], ...extraHeaders },
    content: {
      "application/json": {
        schema: {
          allOf: [ref("Error"), { properties: { code: { const: code }, status: { const: status } } }],
        },
      },
    },
  };
}

/** The statuses every catalog operation can answer: key, rate limit, the catalog call, other methods. */
const edgeStatuses = [401, 405, 429, 500, 503];

function errorResponses(route: CatalogRoute) {
  const extraHeaders = route.deprecation ? deprecationHeaders : {};
  return Object.fromEntries(
    [...route.errors.statuses, ...edgeStatuses]
      .sort((a, b) => a - b)
      .map((status) => [
        String(status),
        errorResponse(status, status === 405 ? {} : extraHeaders, route.errors.descriptions?.[status]),
      ]),
  );
}

function successResponse(route: CatalogRoute) {
  return {
    description: route.success.description,
    headers: {
      ...everyResponseHeaders,
      ...route.success.headers,
      ...(route.deprecation ? deprecationHeaders : {}),
    },
    ...(route.responseSchema ? { content: { "application/json": { schema: ref(route.responseSchema) } } } : {}),
  };
}

/** A catalog row as an OpenAPI operation: its parameters, success, and one Error response per status. */
export function catalogOperation(route: CatalogRoute) {
  const parameters = [...(route.parameters ?? []), ...(route.optionalIdempotencyKey ? [idempotencyKeyParameter] : [])];
  return {
    operationId: route.operationId,
    tags: [route.tag],
    ...(route.deprecation ? { deprecated: true } : {}),
    summary: route.summary,
    description: route.description,
    parameters,
    ...(route.requestSchema
      ? { requestBody: { required: true, content: { "application/json": { schema: ref(route.requestSchema) } } } }
      : {}),
    responses: { [String(route.successStatus ?? 200)]: successResponse(route), ...errorResponses(route) },
  };
}
