/**
 * Request shapes: each request body and query is declared once, as a zod schema in its
 * capability's shapes.ts. The same declaration checks the request here (every problem named in
 * one detail, members in declaration order) and becomes the JSON Schema of the OpenAPI document
 * (openapi/shape-schema.ts). Bounds only the owning service judges are documented with
 * `.meta({...})`, which the JSON Schema carries and the check ignores.
 */
import type { z } from "zod";
import type { ApiError } from "./api-error.js";

/** A member's own error: "is required" when it is missing, else "must be <what>". */
export const mustBe = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? "is required" : `must be ${what}`),
});

/** Where a problem is: the member path up to the first array index ("eventTypes", "actor.actorReference"). */
function memberOf(path: readonly PropertyKey[]): string {
  const index = path.findIndex((segment) => typeof segment !== "string");
  return (index === -1 ? path : path.slice(0, index)).join(".");
}

/**
 * One problem per member (its first), unknown members first, then the members in declaration
 * order; a member's message is prefixed with its path, the request's own messages are whole.
 */
export function problemsOf(issues: readonly z.core.$ZodIssue[]): string[] {
  const unknown = issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => `${JSON.stringify(key.slice(0, 40))} is not a member of this request`)
      : [],
  );
  const byMember = new Map<string, string>();
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") continue;
    const member = memberOf(issue.path);
    if (!byMember.has(member)) byMember.set(member, member === "" ? issue.message : `${member} ${issue.message}`);
  }
  return [...unknown, ...byMember.values()];
}

/** Whether the problem is the request as a whole: not a JSON object at all. */
export const isNotAnObject = (issues: readonly z.core.$ZodIssue[]) =>
  issues.some((issue) => issue.path.length === 0 && issue.code === "invalid_type");

/** The request checked against its shape; otherwise the surface's 400 naming every problem. */
export function parseShape<S extends z.ZodType>(
  shape: S,
  input: unknown,
  refuse: (detail: string, issues: readonly z.core.$ZodIssue[]) => ApiError,
): z.output<S> {
  const result = shape.safeParse(input);
  if (result.success) return result.data;
  throw refuse(problemsOf(result.error.issues).join("; "), result.error.issues);
}
