import type { Context } from "koa";
import { codeCatalogue, type CodeEntry } from "@platform/codes";
import type { ApiError } from "./api-error.js";

type Catalogue = typeof codeCatalogue;

/** The catalogue's entries that are problem codes: those with an HTTP status. */
type ProblemCatalogue = {
  [K in keyof Catalogue as Catalogue[K] extends { status: number } ? K : never]: Catalogue[K];
};

/**
 * Every problem code the tenant interface answers with, its HTTP status and its stable title: the
 * problem entries of the one code catalogue (@platform/codes), which also holds each code's
 * meaning and the client's reaction. Partners branch on `code`; `title` and `detail` are for people
 * and may change. The OpenAPI document lists, per operation and status, the codes that operation
 * can produce.
 */
export const problemCodes = Object.fromEntries(
  Object.entries(codeCatalogue).filter(([, entry]) => (entry as CodeEntry).status !== undefined),
) as ProblemCatalogue;

export type ProblemCode = keyof ProblemCatalogue;

/**
 * Which codes an operation can produce, by what it has (see `problemCodesOf` in route.ts).
 * Every tenant route passes the edge: rate limit, key, scope, tenant grant, a downstream call, and
 * a 405 for the other methods on its path.
 */
export const edgeProblemCodes = [
  "auth.key_missing",
  "auth.scheme_invalid",
  "auth.key_invalid",
  "auth.scope_missing",
  "tenant.not_found",
  "request.invalid",
  "request.method_not_allowed",
  "request.rate_limited",
  "service.internal_error",
  "service.unavailable",
] as const satisfies readonly ProblemCode[];

/** Routes with a JSON request body (json-body.ts). */
export const bodyProblemCodes = [
  "request.body_invalid",
  "request.body_too_large",
  "request.unsupported_media_type",
] as const satisfies readonly ProblemCode[];

/** Mutations: the Idempotency-Key header and the owning service's idempotency record. */
export const idempotencyProblemCodes = [
  "request.idempotency_key_required",
  "request.idempotency_key_invalid",
  "idempotency.in_progress",
  "idempotency.key_reused",
] as const satisfies readonly ProblemCode[];

/** The code used when an error carries none of its own. */
const codeForStatus: Record<number, ProblemCode> = {
  400: "request.invalid",
  401: "auth.key_invalid",
  403: "auth.scope_missing",
  404: "request.route_not_found",
  405: "request.method_not_allowed",
  413: "request.body_too_large",
  415: "request.unsupported_media_type",
  429: "request.rate_limited",
  500: "service.internal_error",
  503: "service.unavailable",
};

export function isProblemCode(code: string | undefined): code is ProblemCode {
  return code !== undefined && Object.hasOwn(problemCodes, code);
}

export function problemType(code: string, baseUri: string | undefined): string {
  return baseUri ? `${baseUri}${code}` : `urn:problem:${code}`;
}

/**
 * Called when an error carries a code that is not a problem code of the catalogue: a bug (a
 * service answered with an internal or uncatalogued code the gateway passed on). The problem then
 * falls back to the status's default code; the caller logs the code and counts it.
 */
export type UncataloguedProblemCode = (code: string, status: number) => void;

/**
 * The problem code written for `error`: its own code when that is a catalogue problem code, else
 * (reporting it through `onUncatalogued` when it had one) the status's default.
 */
export function problemCodeFor(error: ApiError, onUncatalogued?: UncataloguedProblemCode): ProblemCode {
  const status = problemStatus(error);
  const own = error.options.code;
  if (isProblemCode(own)) return own;
  if (own !== undefined) onUncatalogued?.(own, status);
  return codeForStatus[status] ?? "service.internal_error";
}

const problemStatus = (error: ApiError) => (error.status >= 400 && error.status < 600 ? error.status : 500);

/**
 * Writes an RFC 9457 problem document for the tenant interface. Its `code` is always a catalogue
 * problem code: an error carrying any other code is reported through `onUncatalogued` and answered
 * with the status's default code.
 */
export function writeProblem(
  ctx: Context,
  error: ApiError,
  baseUri: string | undefined,
  onUncatalogued?: UncataloguedProblemCode,
): void {
  const status = problemStatus(error);
  const code = problemCodeFor(error, onUncatalogued);
  const known = problemCodes[code];
  ctx.status = status;
  ctx.type = "application/problem+json";
  ctx.body = {
    type: problemType(code, baseUri),
    title: known.title,
    status,
    detail: status >= 500 && status !== 503 ? "an unexpected error occurred" : error.message,
    code,
    correlationId: ctx.state.requestId,
  };
}
