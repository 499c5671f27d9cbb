import type { Middleware } from "koa";
import { ApiError } from "../api-error.js";

const KEY = /^[A-Za-z0-9_.:-]{8,128}$/;

/**
 * The Idempotency-Key of a mutation: 8-128 of A-Z a-z 0-9 _ . : -, sent bare or as the IETF
 * draft's quoted sf-string ("abc-123-x"). Missing or malformed: 400 with its own code.
 */
export function parseIdempotencyKey(header: string | undefined): string {
  if (header === undefined || header.trim() === "") {
    throw new ApiError(400, "this operation needs an Idempotency-Key header (8-128 of A-Z a-z 0-9 _ . : -)", {
      code: "request.idempotency_key_required",
    });
  }
  return validKey(header);
}

/**
 * An optional Idempotency-Key (catalog creates): absent is undefined; present it must be valid
 * (an empty or repeated header is malformed, never silently ignored).
 */
export function parseOptionalIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  return validKey(Array.isArray(header) ? header.join(", ") : header);
}

/** The router's check of a row with an optional Idempotency-Key: leaves the checked key in ctx.state. */
export const checkOptionalIdempotencyKey: Middleware = async (ctx, next) => {
  ctx.state.idempotencyKey = parseOptionalIdempotencyKey(ctx.request.headers["idempotency-key"]);
  await next();
};

function validKey(header: string): string {
  const trimmed = header.trim();
  const value =
    trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  if (!KEY.test(value)) {
    throw new ApiError(400, "Idempotency-Key must be 8-128 of A-Z a-z 0-9 _ . : -, bare or in double quotes", {
      code: "request.idempotency_key_invalid",
    });
  }
  return value;
}
