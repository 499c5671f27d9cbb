import { callService } from "../../http/api-error.js";
import { readJsonBody } from "../../http/middleware/json-body.js";
import { idempotencyKeyOf, callOptionsOf, tenantIdOf, type TenantRoute } from "../../http/route.js";
import { limitsToJson, unsetLimits, usageToJson } from "./json.js";
import { parseUsageLimits } from "./shapes.js";

const tag = "usage";

/** Monthly token caps (owned by notify). */
export const usageRoutes: TenantRoute[] = [
  {
    surface: "tenant",
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
      const { usage } = await callService(deps.notify.getUsage({ tenantId: tenantIdOf(ctx) }, callOptionsOf(ctx)));
      ctx.body = usageToJson(usage);
    },
  },
  {
    surface: "tenant",
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
      const { limits } = await callService(deps.notify.getUsageLimits({ tenantId }, callOptionsOf(ctx)));
      ctx.body = limits ? limitsToJson(limits) : unsetLimits(tenantId);
    },
  },
  {
    surface: "tenant",
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
      const response = await callService(
        deps.notify.setUsageLimits(
          {
            tenantId: tenantIdOf(ctx),
            softCap: String(softCap),
            hardCap: String(hardCap),
            idempotencyKey: idempotencyKeyOf(ctx),
            ...(expectedVersion === undefined ? {} : { expectedVersion: String(expectedVersion) }),
          },
          callOptionsOf(ctx),
        ),
        {
          idempotencyKey: idempotencyKeyOf(ctx),
          howToCheck: "The limits may have been set: read the usage before setting them again",
        },
      );
      if (response.replayed) ctx.set("Idempotent-Replayed", "true");
      ctx.body = limitsToJson(response.limits);
    },
  },
];
