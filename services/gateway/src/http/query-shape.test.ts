import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError } from "./api-error.js";
import { pageParameters, pageQuery } from "./page-query.js";
import { fromText, parseQuery, queryParameters } from "./query-shape.js";

const contextWith = (query: Record<string, string | string[]>) => ({ query }) as unknown as Context;
const refuse = (detail: string) => new ApiError(400, detail);

const shape = z.object({
  size: fromText(/^[0-9]{1,2}$/, z.int({ error: "must be 1-10" }).min(1, "must be 1-10").max(10, "must be 1-10"))
    .meta({ description: "Items." })
    .optional(),
  kind: z.enum(["a", "b"], { error: "must be a or b" }).optional(),
});

describe("query shapes", () => {
  it("reads numbers given as text and names every problem, repeats first", () => {
    expect(parseQuery(contextWith({ size: "07", kind: "a" }), shape, refuse)).toEqual({ size: 7, kind: "a" });
    expect(() => parseQuery(contextWith({ kind: ["a", "b"], size: "x" }), shape, refuse)).toThrow(
      "query parameter kind must be given at most once; size must be 1-10",
    );
  });

  it("documents each member as a query parameter, its description on the parameter", () => {
    expect(queryParameters(shape, { declareOptional: false })).toEqual([
      {
        name: "size",
        in: "query",
        description: "Items.",
        schema: { type: "integer", minimum: 1, maximum: 10 },
      },
      { name: "kind", in: "query", schema: { type: "string", enum: ["a", "b"] } },
    ]);
  });

  it("pages: limit 0 and an empty cursor mean the first page at the service's default size", () => {
    expect(pageQuery(contextWith({}))).toEqual({ limit: 0, cursor: "" });
    expect(pageQuery(contextWith({ limit: "100", cursor: "c1" }))).toEqual({ limit: 100, cursor: "c1" });
    expect(() => pageQuery(contextWith({ limit: "101", cursor: "" }))).toThrow(
      "limit must be an integer between 1 and 100; cursor is not valid; pass back a nextCursor exactly as received",
    );
    expect(pageParameters.map((parameter) => (parameter as { name: string }).name)).toEqual(["limit", "cursor"]);
  });
});
