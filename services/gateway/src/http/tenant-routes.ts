import type { Context } from "koa";
import { TenantPlan, type Tenant, type UsageLimits } from "@platform/proto/notify/v1";
import type { Scope } from "../domain/api-key.js";
import type { NotifyClient } from "../grpc/notify-client.js";
import { ApiError, callService as call } from "./api-error.js";
import { readJsonBody } from "./json-body.js";

export interface TenantRouteDeps {
  notify: NotifyClient;
}

/**
 * One row per tenant-interface operation. The router, the authorization middleware (scope,
 * tenant grant, Idempotency-Key on mutations), the OpenAPI document and the credential tests are
 * all driven by this table, so a route added here inherits the whole edge.
 */
export interface TenantRoute {
  operationId: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Koa-router path under the gateway root; always starts with /api/v1/tenants/:tenantId. */
  path: string;
  scope: Scope;
  /** Mutations require an Idempotency-Key. */
  mutation: boolean;
  summary: string;
  /** OpenAPI parameters besides tenantId and Idempotency-Key (other path segments, query). */
  parameters?: object[];
  /** components/schemas names for the OpenAPI document. */
  requestSchema?: string;
  responseSchema: string;
  handle(ctx: Context, deps: TenantRouteDeps): Promise<void>;
}

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
  };
}

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

const requestIdOf = (ctx: Context) => ({ requestId: ctx.state.requestId as string });

/** The {tenantId} path parameter (every tenant route has one). */
export const tenantIdOf = (ctx: Context): string => String((ctx.params as Record<string, string>).tenantId ?? "");

function parseUsageLimits(body: unknown): { softCap: number; hardCap: number } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ApiError(400, "the request body must be a JSON object", { code: "request.invalid" });
  }
  const { softCap, hardCap } = body as Record<string, unknown>;
  const problems: string[] = [];
  for (const [name, value] of [
    ["softCap", softCap],
    ["hardCap", hardCap],
  ] as const) {
    if (value === undefined) problems.push(`${name} is required`);
    else if (typeof value !== "number" || !Number.isInteger(value)) problems.push(`${name} must be an integer`);
  }
  if (problems.length > 0) throw new ApiError(400, problems.join("; "), { code: "usage.limits_invalid" });
  return { softCap: softCap as number, hardCap: hardCap as number };
}

export const tenantRoutes: TenantRoute[] = [
  {
    operationId: "getTenant",
    method: "GET",
    path: "/api/v1/tenants/:tenantId",
    scope: "tenant:read",
    mutation: false,
    summary: "Read the tenant record.",
    responseSchema: "Tenant",
    async handle(ctx, deps) {
      const { tenant } = await call(deps.notify.getTenant({ tenantId: tenantIdOf(ctx) }, requestIdOf(ctx)));
      ctx.body = tenantToJson(tenant);
    },
  },
  {
    operationId: "setUsageLimits",
    method: "PUT",
    path: "/api/v1/tenants/:tenantId/usage/limits",
    scope: "usage:manage",
    mutation: true,
    summary: "Set the monthly token soft cap and hard cap.",
    requestSchema: "UsageLimitsRequest",
    responseSchema: "UsageLimits",
    async handle(ctx, deps) {
      const { softCap, hardCap } = parseUsageLimits(await readJsonBody(ctx));
      const response = await call(
        deps.notify.setUsageLimits(
          {
            tenantId: tenantIdOf(ctx),
            softCap: String(softCap),
            hardCap: String(hardCap),
            idempotencyKey: ctx.state.idempotencyKey as string,
          },
          requestIdOf(ctx),
        ),
      );
      if (response.replayed) ctx.set("Idempotent-Replayed", "true");
      ctx.body = limitsToJson(response.limits);
    },
  },
];
