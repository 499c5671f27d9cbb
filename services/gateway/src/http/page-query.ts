/**
 * The cursor paging every list shares, declared once: `limit` 1-100 (default 20, sent on as 0 for
 * "the default") and an opaque `cursor`, the previous page's `nextCursor` as received.
 */
import type { Context } from "koa";
import { z } from "zod";
import { ApiError } from "./api-error.js";
import { fromText, parseQuery, queryParameters, type QueryShape } from "./query-shape.js";

const LIMIT_PROBLEM = "must be an integer between 1 and 100";

/** `limit`: 1-100 items per page, given as up to three digits; absent means the service's default (20). */
export const pageLimit = (description: string) =>
  fromText(
    /^[0-9]{1,3}$/,
    z.int({ error: LIMIT_PROBLEM }).min(1, LIMIT_PROBLEM).max(100, LIMIT_PROBLEM).meta({ default: 20, description }),
  ).optional();

const CURSOR_PROBLEM = "is not valid; pass back a nextCursor exactly as received";

/** The tenant interface's page: `limit` and `cursor` (1-200 characters; the service judges it). */
export const pageQueryShape = z.object({
  limit: pageLimit("Items per page, 1-100."),
  cursor: z
    .string()
    .min(1, CURSOR_PROBLEM)
    .max(200, CURSOR_PROBLEM)
    .meta({ description: "The previous page's `nextCursor`, exactly as received." })
    .optional(),
});

/** A tenant-interface query problem: 400 request.invalid. */
export const invalidQuery = (detail: string) => new ApiError(400, detail, { code: "request.invalid" });

/** A tenant-interface query: its page (limit 0 for the default, "" for the first page) and any other members. */
export function tenantQuery<S extends QueryShape>(ctx: Context, shape: S) {
  const query = parseQuery(ctx, shape, invalidQuery);
  const { limit, cursor } = query as { limit?: number; cursor?: string };
  return { ...query, limit: limit ?? 0, cursor: cursor ?? "" };
}

export function pageQuery(ctx: Context): { limit: number; cursor: string } {
  return tenantQuery(ctx, pageQueryShape);
}

/** A tenant-interface query's OpenAPI parameters. */
export const tenantQueryParameters = (shape: QueryShape) => queryParameters(shape, { declareOptional: true });

/** The OpenAPI parameters of a paged list. */
export const pageParameters = tenantQueryParameters(pageQueryShape);
