import type { Context } from "koa";
import type { ApiError } from "./api-error.js";

/**
 * The animal interface's Error shape (spec 2.2): `{code, message, status}`. Its `code` values are
 * one per HTTP status, documented in the OpenAPI document and docs/interface-decisions.md.
 */
export const catalogCodeForStatus: Record<number, string> = {
  400: "bad_request",
  401: "unauthorized",
  404: "not_found",
  405: "method_not_allowed",
  409: "idempotency_in_progress",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "idempotency_key_reused",
  429: "rate_limited",
  500: "internal_error",
  503: "unavailable",
  504: "outcome_unknown",
};

export function writeCatalogError(ctx: Context, error: ApiError): void {
  const status = catalogCodeForStatus[error.status] ? error.status : 500;
  ctx.status = status;
  ctx.type = "application/json";
  ctx.body = { code: catalogCodeForStatus[status], message: status === 500 ? "internal error" : error.message, status };
}
