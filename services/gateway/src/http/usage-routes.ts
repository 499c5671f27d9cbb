import type { UsageLimits } from "@platform/proto/notify/v1";
import type { UsageMonth } from "@platform/proto/notify/v1/usage";
import { ApiError, callService as call } from "./api-error.js";
import { readJsonBody } from "./json-body.js";
import { requestIdOf, tenantIdOf, type TenantRoute } from "./tenant-route.js";

const MAX_CAP = Number.MAX_SAFE_INTEGER;

function limitsToJson(limits: UsageLimits | undefined): Record<string, unknown> {
  if (!limits) throw new ApiError(500, "notify answered without limits");
  return {
    tenantId: limits.tenantId,
    softCap: Number(limits.softCap),
    hardCap: Number(limits.hardCap),
    version: Number(limits.version),
    updatedAt: limits.updatedAt,
  };
}

/** A tenant that never set limits: no caps apply, and nothing has been written (version 0). */
const unsetLimits = (tenantId: string) => ({ tenantId, softCap: null, hardCap: null, version: 0, updatedAt: null });

/** GET /usage: the current UTC month (caps null and limitsVersion 0 when limits were never set). */
export function usageToJson(usage: UsageMonth | undefined): Record<string, unknown> {
  if (!usage) throw new ApiError(500, "notify answered without usage");
  return {
    tenantId: usage.tenantId,
    month: usage.month,
    unit: "tokens",
    tokensUsed: Number(usage.tokensUsed),
    softCap: usage.limits ? Number(usage.limits.softCap) : null,
    hardCap: usage.limits ? Number(usage.limits.hardCap) : null,
    limitsVersion: usage.limits ? Number(usage.limits.version) : 0,
    thresholds: usage.crossed.map((c) => ({
      threshold: c.threshold,
      cap: Number(c.cap),
      tokensUsed: Number(c.tokensUsed),
      crossedAt: c.crossedAt,
      eventId: c.eventId,
    })),
  };
}

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

const tag = "usage";

/** Monthly token caps (owned by notify). */
export const usageRoutes: TenantRoute[] = [
  {
    operationId: "getUsage",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/usage",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag,
    summary: "Read this UTC month's token usage, caps and the thresholds crossed.",
    description:
      "Tokens used in the current UTC calendar month, the caps (null when never set) with the limits' " +
      "`version` as `limitsVersion`, and each cap reached this month with when and the id of its " +
      "usage.threshold_crossed event (at most once per cap and month).",
    responseSchema: "Usage",
    problems: [],
    async handle(ctx, deps) {
      const { usage } = await call(deps.notify.getUsage({ tenantId: tenantIdOf(ctx) }, requestIdOf(ctx)));
      ctx.body = usageToJson(usage);
    },
  },
  {
    operationId: "getUsageLimits",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/usage/limits",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag,
    summary: "Read the monthly token soft cap and hard cap.",
    description:
      "The limits as last set, with their `version`. A tenant that never set limits answers 200 with " +
      "`softCap`, `hardCap` and `updatedAt` null and `version` 0: no caps apply.",
    responseSchema: "CurrentUsageLimits",
    problems: [],
    async handle(ctx, deps) {
      const tenantId = tenantIdOf(ctx);
      const { limits } = await call(deps.notify.getUsageLimits({ tenantId }, requestIdOf(ctx)));
      ctx.body = limits ? limitsToJson(limits) : unsetLimits(tenantId);
    },
  },
  {
    operationId: "setUsageLimits",
    method: "PUT",
    path: "/api/v1/tenants/:tenantId/usage/limits",
    scope: "usage:manage",
    mutation: true,
    tag,
    summary: "Set the monthly token soft cap and hard cap.",
    description:
      "Replaces both caps (whole token counts, 0 to 2^53-1, `softCap` not above `hardCap`) and bumps " +
      "`version`. With `expectedVersion` (0: never set) the change applies only to that version: 412 " +
      "usage.version_mismatch otherwise. A cap lowered to or below this month's usage is crossed now " +
      "(usage.threshold_crossed) unless it was already crossed this month. Every problem with the body is " +
      "named in one `detail`.",
    requestSchema: "UsageLimitsRequest",
    responseSchema: "UsageLimits",
    problems: ["usage.limits_invalid", "usage.version_mismatch"],
    async handle(ctx, deps) {
      const { softCap, hardCap, expectedVersion } = parseUsageLimits(await readJsonBody(ctx));
      const response = await call(
        deps.notify.setUsageLimits(
          {
            tenantId: tenantIdOf(ctx),
            softCap: String(softCap),
            hardCap: String(hardCap),
            idempotencyKey: ctx.state.idempotencyKey as string,
            ...(expectedVersion === undefined ? {} : { expectedVersion: String(expectedVersion) }),
          },
          requestIdOf(ctx),
        ),
        {
          idempotencyKey: ctx.state.idempotencyKey as string,
          howToCheck: "The limits may have been set: read the usage before setting them again",
        },
      );
      if (response.replayed) ctx.set("Idempotent-Replayed", "true");
      ctx.body = limitsToJson(response.limits);
    },
  },
];
