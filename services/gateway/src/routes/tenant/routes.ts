import { callService } from "../../http/api-error.js";
import { callOptionsOf, tenantIdOf, type TenantRoute } from "../../http/route.js";
import { tenantToJson } from "./json.js";

/** The tenant record itself. */
export const tenantRecordRoutes: TenantRoute[] = [
  {
    surface: "tenant",
    operationId: "getTenant",
    method: "GET",
    path: "/api/v1/tenants/:tenantId",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag: "tenant",
    summary: "Read the tenant record.",
    description:
      "The tenant's name, plan, activation and channel readiness, with a `version` that increases on every change. " +
      "On the free `testing` plan, `testingAllowance` says how many of this UTC month's sends are used and left and " +
      "when the allowance resets; the plan changes (an operator's act when an agreement is signed or a card is saved) " +
      "show in `planReason`, `planChangedAt`, the activity feed and the `tenant.plan_changed` webhook event.",
    responseSchema: "Tenant",
    problems: [],
    async handle(ctx, deps) {
      const { tenant } = await callService(deps.notify.getTenant({ tenantId: tenantIdOf(ctx) }, callOptionsOf(ctx)));
      ctx.body = tenantToJson(tenant);
    },
  },
];
