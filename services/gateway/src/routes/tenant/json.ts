import { TenantPlan, type Tenant, type TestingAllowance } from "@platform/proto/notify/v1";
import { ApiError } from "../../http/api-error.js";

const planNames: Partial<Record<TenantPlan, string>> = {
  [TenantPlan.TENANT_PLAN_TESTING]: "testing",
  [TenantPlan.TENANT_PLAN_COMMERCIAL]: "commercial",
};

/** The testing plan's month as the tenant record and the send answer show it. */
export function testingAllowanceToJson(allowance: TestingAllowance): Record<string, unknown> {
  return {
    limit: Number(allowance.limit),
    used: Number(allowance.used),
    remaining: Number(allowance.remaining),
    month: allowance.month,
    resetsAt: allowance.resetsAt,
  };
}

/**
 * The tenant record. `channel`: the connected number's summary (null: none connected); absent
 * where the caller did not read it (the admin CLI's answers to other commands).
 */
export function tenantToJson(
  tenant: Tenant | undefined,
  channel?: Record<string, unknown> | null,
): Record<string, unknown> {
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
    planReason: tenant.planReason ?? null,
    planChangedAt: tenant.planChangedAt ?? null,
    testingAllowance: tenant.testingAllowance ? testingAllowanceToJson(tenant.testingAllowance) : null,
    ...(channel === undefined ? {} : { channel }),
  };
}
