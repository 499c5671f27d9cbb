import { problemCodes, type ProblemCode } from "../problem.js";
import { acceptedScopesOf, problemCodesOf, TENANT_ID_PATTERN, type TenantRoute } from "../route.js";
import { everyResponseHeaders, headersForStatus } from "./response-headers.js";
import { ref } from "./schema-parts.js";

/**
 * One problem response per status: the Problem shape with `code` limited to the codes this
 * operation can produce at this status, so an undeclared code fails validation.
 */
function problemResponse(status: number, codes: ProblemCode[]) {
  return {
    description: `Problem codes: ${codes.map((code) => `\`${code}\` (${problemCodes[code].title})`).join(", ")}.`,
    headers: { ...everyResponseHeaders, ...headersForStatus[status] },
    content: {
      "application/problem+json": {
        schema: {
          allOf: [ref("Problem"), { properties: { code: { enum: codes }, status: { const: status } } }],
        },
      },
    },
  };
}

/** A poll-friendly GET's request header (TenantRoute.poll). */
const ifNoneMatchParameter = {
  name: "If-None-Match",
  in: "header",
  required: false,
  description: "The `ETag` of the answer last seen: 304 with no body while the answer is the same.",
  schema: { type: "string", maxLength: 1024 },
};

/** A poll-friendly GET's response headers on 200 and 304. */
const pollHeaders = {
  ETag: {
    description: "Strong validator: a hash of the JSON body. Send it back as `If-None-Match`.",
    required: true,
    schema: { type: "string", pattern: '^"[A-Za-z0-9_-]{32}"$' },
  },
  "Cache-Control": {
    description: "`private, no-cache`: revalidate with If-None-Match before reusing a stored answer.",
    required: true,
    schema: { type: "string", const: "private, no-cache" },
  },
};

const tenantIdParameter = {
  name: "tenantId",
  in: "path",
  required: true,
  description: "1-64 of A-Z a-z 0-9 _ -; anything else is 400 `request.invalid` (checked after the scope).",
  schema: { type: "string", minLength: 1, maxLength: 64, pattern: TENANT_ID_PATTERN },
};

const idempotencyKeyParameter = {
  name: "Idempotency-Key",
  in: "header",
  required: true,
  description: "8-128 of A-Z a-z 0-9 _ . : -, bare or as a quoted sf-string. A repeat replays the first result.",
  schema: { type: "string", pattern: '^([A-Za-z0-9_.:-]{8,128}|"[A-Za-z0-9_.:-]{8,128}")$' },
};

const replayedHeader = {
  "Idempotent-Replayed": {
    description: "Present on a replay of an earlier request with the same Idempotency-Key.",
    schema: { type: "string", const: "true" },
  },
};

/** The row's parameters, with the tenantId every route has and the headers its kind adds. */
const parametersOf = (route: TenantRoute): unknown[] => [
  tenantIdParameter,
  ...(route.parameters ?? []),
  ...(route.mutation ? [idempotencyKeyParameter] : []),
  ...(route.poll ? [ifNoneMatchParameter] : []),
];

function successOf(route: TenantRoute, status: number) {
  return {
    description: status === 204 ? "Success; no body." : "Success.",
    headers: {
      ...everyResponseHeaders,
      ...(route.mutation ? replayedHeader : {}),
      ...(route.poll ? pollHeaders : {}),
      ...route.successHeaders,
    },
    ...(route.responseSchema ? { content: { "application/json": { schema: ref(route.responseSchema) } } } : {}),
  };
}

const notModified = {
  description: "Not modified: `If-None-Match` names the current ETag; no body.",
  headers: { ...everyResponseHeaders, ...pollHeaders },
};

/** One problem response per status the row's codes have, in status order. */
function problemResponsesOf(route: TenantRoute): Record<string, unknown> {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of problemCodesOf(route)) {
    const status = problemCodes[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus.keys()]
      .sort((a, b) => a - b)
      .map((status) => [String(status), problemResponse(status, byStatus.get(status)!)]),
  );
}

/** A tenant row as an OpenAPI operation: its parameters, success, and one problem response per status. */
export function tenantOperation(route: TenantRoute) {
  const successStatus = route.successStatus ?? 200;
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: `${route.description} Needs the ${acceptedScopesOf(route)
      .map((scope) => `\`${scope}\``)
      .join(" or the ")} scope and a key granted this tenant.`,
    security: acceptedScopesOf(route).map((scope) => ({ bearerAuth: [scope] })),
    "x-required-scope": route.scope,
    ...(route.alsoScopes ? { "x-accepted-scopes": acceptedScopesOf(route) } : {}),
    parameters: parametersOf(route),
    ...(route.requestSchema
      ? { requestBody: { required: true, content: { "application/json": { schema: ref(route.requestSchema) } } } }
      : {}),
    responses: {
      [String(successStatus)]: successOf(route, successStatus),
      ...(route.otherSuccess
        ? {
            [String(route.otherSuccess.status)]: {
              ...successOf({ ...route, responseSchema: route.otherSuccess.responseSchema }, route.otherSuccess.status),
              description: route.otherSuccess.description,
            },
          }
        : {}),
      ...(route.poll ? { "304": notModified } : {}),
      ...problemResponsesOf(route),
    },
  };
}

/** The problem+json shape of every tenant-interface error. */
export const problemSchema = {
  type: "object",
  required: ["type", "title", "status", "detail", "code", "correlationId"],
  properties: {
    type: { type: "string", format: "uri" },
    title: { type: "string" },
    status: { type: "integer", minimum: 400, maximum: 599 },
    detail: { type: "string" },
    code: ref("ProblemCode"),
    correlationId: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
  },
};
