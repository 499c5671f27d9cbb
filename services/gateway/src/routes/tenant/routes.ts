import { callService } from "../../http/api-error.js";
import { callOptionsOf, tenantIdOf, type TenantRoute } from "../../http/route.js";
import { tenantToJson } from "./json.js";
import { channelSummaryToJson } from "../channel/json.js";
import type { Channel } from "@platform/proto/notify/v1/channel";
import type { CallOptions } from "@platform/service-kit/grpc-client";
import type { TenantRouteDeps } from "../../http/route.js";

/** The tenant's connected channel; undefined when it has none (notify: NOT_FOUND channel.not_connected). */
export async function connectedChannel(
  deps: Pick<TenantRouteDeps, "notify">,
  tenantId: string,
  options: CallOptions,
): Promise<Channel | undefined> {
  try {
    return (await deps.notify.readChannel({ tenantId }, options)).channel;
  } catch (error) {
    const code = (error as { metadata?: { get(key: string): unknown[] } }).metadata?.get("error-code")[0];
    if (code === "channel.not_connected") return undefined;
    throw error;
  }
}

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
      "when the allowance resets; `channel` is the tenant's own WhatsApp number (null until one is connected: PUT " +
      "/channel) with its display number, verified name, quality rating and status, never its token. The plan changes (an operator's act when an agreement is signed or a card is saved) " +
      "show in `planReason`, `planChangedAt`, the activity feed and the `tenant.plan_changed` webhook event.",
    responseSchema: "Tenant",
    problems: [],
    async handle(ctx, deps) {
      const tenantId = tenantIdOf(ctx);
      // Both read at once; the tenant's own answer decides a failure. A tenant that does not exist
      // fails both reads, and whichever answered first used to decide: the channel's unmapped
      // NOT_FOUND made a 500 (CI's tenant-edge test, about one run in three under load).
      const [tenantRead, channelRead] = await Promise.allSettled([
        callService(deps.notify.getTenant({ tenantId }, callOptionsOf(ctx))),
        callService(connectedChannel(deps, tenantId, callOptionsOf(ctx))),
      ]);
      if (tenantRead.status === "rejected") throw tenantRead.reason;
      if (channelRead.status === "rejected") throw channelRead.reason;
      ctx.body = tenantToJson(tenantRead.value.tenant, channelSummaryToJson(channelRead.value));
    },
  },
];
