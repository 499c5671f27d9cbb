/**
 * Query shapes: a request's query declared once as a zod object whose members are the query
 * parameters. The same declaration checks the query (every problem named in one detail) and
 * becomes the operation's OpenAPI parameters.
 */
import type { Context } from "koa";
import { z } from "zod";
import type { ApiError } from "./api-error.js";
import { shapeSchema } from "./openapi/shape-schema.js";
import { problemsOf } from "./request-shape.js";

export type QueryShape = z.ZodObject<z.ZodRawShape>;

/** A number given as text: text of `syntax` is read as a number, anything else fails `schema`'s type. */
export const fromText = <S extends z.ZodType>(syntax: RegExp, schema: S) =>
  z.preprocess((value) => (typeof value === "string" && syntax.test(value) ? Number(value) : value), schema);

/**
 * The query checked against its shape: each parameter at most once, each as declared. Every
 * problem is named in one detail, parameters in declaration order; otherwise the surface's 400.
 */
export function parseQuery<S extends QueryShape>(
  ctx: Context,
  shape: S,
  refuse: (detail: string) => ApiError,
): z.output<S> {
  const problems: string[] = [];
  const given: Record<string, string> = {};
  const query = ctx.query; // Koa parses on each read of ctx.query (from a cache); read it once
  for (const name of Object.keys(shape.shape)) {
    const value = query[name];
    if (Array.isArray(value)) problems.push(`query parameter ${name} must be given at most once`);
    else if (value !== undefined) given[name] = value;
  }
  const result = shape.safeParse(given);
  if (!result.success) problems.push(...problemsOf(result.error.issues));
  if (problems.length > 0) throw refuse(problems.join("; "));
  return result.data!;
}

/**
 * The shape's members as OpenAPI query parameters, each member's description on the parameter.
 * `declareOptional` writes `required: false` on the optional ones (the tenant document does).
 */
export function queryParameters(shape: QueryShape, options: { declareOptional: boolean }): object[] {
  const schema = shapeSchema(shape);
  const required = new Set((schema.required ?? []) as string[]);
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(properties).map(([name, { description, ...member }]) => ({
    name,
    in: "query",
    ...(required.has(name) ? { required: true } : options.declareOptional ? { required: false } : {}),
    ...(description === undefined ? {} : { description }),
    schema: member,
  }));
}
