/**
 * The cursor paging every list of the tenant interface shares: `limit` 1-100 (default 20, sent on
 * as 0 for "the default") and an opaque `cursor`, the previous page's `nextCursor` as received.
 */
import type { Context } from "koa";
import { ApiError } from "./api-error.js";

/** A query parameter given at most once (a repeated one is a 400). */
export function queryValue(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw new ApiError(400, `${name} may be given once`, { code: "request.invalid" });
  return value;
}

export function pageQuery(ctx: Context): { limit: number; cursor: string } {
  const limit = queryValue(ctx, "limit");
  const cursor = queryValue(ctx, "cursor");
  if (limit !== undefined && (!/^[0-9]{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > 100)) {
    throw new ApiError(400, "limit must be an integer from 1 to 100", { code: "request.invalid" });
  }
  if (cursor !== undefined && (cursor === "" || cursor.length > 200)) {
    throw new ApiError(400, "cursor is not valid; pass back a nextCursor exactly as received", {
      code: "request.invalid",
    });
  }
  return { limit: limit === undefined ? 0 : Number(limit), cursor: cursor ?? "" };
}

/** The OpenAPI parameters of a paged list. */
export const pageParameters = [
  {
    name: "limit",
    in: "query",
    required: false,
    description: "Items per page, 1-100.",
    schema: { type: "integer", minimum: 1, maximum: 100, default: 20 },
  },
  {
    name: "cursor",
    in: "query",
    required: false,
    description: "The previous page's `nextCursor`, exactly as received.",
    schema: { type: "string", minLength: 1, maxLength: 200 },
  },
];
