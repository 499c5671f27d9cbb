import { z } from "zod";
import { ApiError } from "../../http/api-error.js";
import { isNotAnObject, parseShape } from "../../http/request-shape.js";

export const MAX_CAP = Number.MAX_SAFE_INTEGER;

/** A cap: a whole number of tokens from 0 to 2^53-1. */
const cap = () => {
  const range = `must be a whole number of tokens from 0 to ${MAX_CAP}`;
  return z
    .int({
      error: ({ input }) =>
        input === undefined ? "is required" : Number.isInteger(input) ? range : "must be an integer",
    })
    .min(0, range)
    .max(MAX_CAP, range);
};

const versionProblem = `must be a whole number from 0 to ${MAX_CAP}`;

/**
 * `{"softCap": n, "hardCap": n, "expectedVersion"?: n}`: whole token counts 0 to 2^53-1, soft not
 * above hard; unknown members are ignored. notify checks the same rules again.
 */
export const usageLimitsShape = z
  .object(
    {
      softCap: cap(),
      hardCap: cap(),
      expectedVersion: z.int({ error: versionProblem }).min(0, versionProblem).max(MAX_CAP, versionProblem).optional(),
    },
    { error: "the request body must be a JSON object" },
  )
  .refine((limits) => limits.softCap <= limits.hardCap, {
    message: "softCap must not be greater than hardCap",
    when: ({ issues }) => issues.length === 0, // only between two valid caps
  })
  .meta({
    description:
      "`softCap` must not be greater than `hardCap`. With `expectedVersion` the change applies only when it " +
      "is the limits' current `version` (0: never set); otherwise 412 usage.version_mismatch.",
  });

/** The limits to set; every problem found is named in one detail (a body that is no object: request.invalid). */
export function parseUsageLimits(body: unknown): { softCap: number; hardCap: number; expectedVersion?: number } {
  const { softCap, hardCap, expectedVersion } = parseShape(
    usageLimitsShape,
    body,
    (detail, issues) =>
      new ApiError(400, detail, { code: isNotAnObject(issues) ? "request.invalid" : "usage.limits_invalid" }),
  );
  return { softCap, hardCap, ...(expectedVersion === undefined ? {} : { expectedVersion }) };
}
