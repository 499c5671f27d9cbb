import { ApiError } from "../../http/api-error.js";

export const MAX_CAP = Number.MAX_SAFE_INTEGER;

/**
 * `{"softCap": n, "hardCap": n, "expectedVersion"?: n}`: whole token counts 0 to 2^53-1, soft not above hard. Names
 * every problem found in one message; notify checks the same rules again.
 */
export function parseUsageLimits(body: unknown): { softCap: number; hardCap: number; expectedVersion?: number } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError(400, "the request body must be a JSON object", { code: "request.invalid" });
  }
  const { softCap, hardCap, expectedVersion } = body as Record<string, unknown>;
  const problems: string[] = [];
  if (
    expectedVersion !== undefined &&
    (typeof expectedVersion !== "number" ||
      !Number.isInteger(expectedVersion) ||
      expectedVersion < 0 ||
      expectedVersion > MAX_CAP)
  ) {
    problems.push(`expectedVersion must be a whole number from 0 to ${MAX_CAP}`);
  }
  for (const [name, value] of [
    ["softCap", softCap],
    ["hardCap", hardCap],
  ] as const) {
    if (value === undefined) problems.push(`${name} is required`);
    else if (typeof value !== "number" || !Number.isInteger(value)) problems.push(`${name} must be an integer`);
    else if (value < 0 || value > MAX_CAP) {
      problems.push(`${name} must be a whole number of tokens from 0 to ${MAX_CAP}`);
    }
  }
  if (problems.length === 0 && (softCap as number) > (hardCap as number)) {
    problems.push("softCap must not be greater than hardCap");
  }
  if (problems.length > 0) throw new ApiError(400, problems.join("; "), { code: "usage.limits_invalid" });
  return {
    softCap: softCap as number,
    hardCap: hardCap as number,
    ...(expectedVersion === undefined ? {} : { expectedVersion: expectedVersion as number }),
  };
}
