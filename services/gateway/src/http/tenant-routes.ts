import { TenantPlan, type Tenant } from "@platform/proto/notify/v1";
import { activationRoutes } from "./activation-routes.js";
import { ApiError, callService as call } from "./api-error.js";
import { notificationRoutes } from "./notification-routes.js";
import { pollRoutes } from "./poll-routes.js";
import { requestIdOf, tenantIdOf, type TenantRoute } from "./tenant-route.js";
import { usageRoutes } from "./usage-routes.js";
import { webhookRoutes } from "./webhook-routes.js";

const planNames: Partial<Record<TenantPlan, string>> = {
  [TenantPlan.TENANT_PLAN_TESTING]: "testing",
  [TenantPlan.TENANT_PLAN_COMMERCIAL]: "commercial",
};

export function tenantToJson(tenant: Tenant | undefined): Record<string, unknown> {
  if (!tenant) throw new ApiError(500, "notify answered without a tenant");
  return {
    id: tenant.id,
    name: tenant.name,
    status: tenant.status,
    activated: tenant.activated,
    channelReady: tenant.channelReady,
    version: Number(tenant.version),
    lastErrorCode: tenant.lastErrorCode ?? null,
    plan: planNames[tenant.plan] ?? null,
    createdAt: tenant.createdAt,
    activationState: tenant.activationState || null,
  };
}

/** The tenant record itself. */
export const tenantRecordRoutes: TenantRoute[] = [
  {
    operationId: "getTenant",
    method: "GET",
    path: "/api/v1/tenants/:tenantId",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag: "tenant",
    summary: "Read the tenant record.",
    description:
      "The tenant's name, plan, activation and channel readiness, with a `version` that increases on every change.",
    responseSchema: "Tenant",
    problems: [],
    async handle(ctx, deps) {
      const { tenant } = await call(deps.notify.getTenant({ tenantId: tenantIdOf(ctx) }, requestIdOf(ctx)));
      ctx.body = tenantToJson(tenant);
    },
  },
];

/** Every tenant-interface route: one table per capability. */
export const tenantRoutes: TenantRoute[] = [
  ...tenantRecordRoutes,
  ...usageRoutes,
  ...activationRoutes,
  ...notificationRoutes,
  ...webhookRoutes,
  ...pollRoutes,
];
