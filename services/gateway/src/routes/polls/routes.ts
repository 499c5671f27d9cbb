/**
 * The tenant's poll reads (issue 10): the work ledger, the open attention items and the activity
 * feed, projections of the event stream kept by notify (ProjectionService). Cursor-paged, newest
 * first, poll-friendly (ETag / If-None-Match -> 304). Ids, states and reason codes only.
 */
import { callService } from "../../http/api-error.js";
import { callOptionsOf, tenantIdOf, type TenantRoute } from "../../http/route.js";
import { pageParameters, pageQuery } from "../../http/page-query.js";
import { activityItemToJson, attentionItemToJson, orNull, workItemToJson } from "./json.js";

const tag = "polls";

export const pollRoutes: TenantRoute[] = [
  {
    surface: "tenant",
    operationId: "listWork",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/work",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag,
    summary: "Poll the work ledger: notification commands and their states.",
    description:
      "One item per notification command with its latest state (`sent`, `unknown`, `failed`) and reason code, " +
      "most recently changed first. A projection of the event stream: it may trail a send by a moment. " +
      "Pass `nextCursor` back as `cursor` until it is null.",
    parameters: pageParameters,
    responseSchema: "WorkPage",
    problems: [],
    async handle(ctx, deps) {
      const page = pageQuery(ctx);
      const response = await callService(
        deps.projections.listWork({ tenantId: tenantIdOf(ctx), ...page }, callOptionsOf(ctx)),
      );
      ctx.body = { data: response.items.map(workItemToJson), nextCursor: orNull(response.nextCursor) };
    },
  },
  {
    surface: "tenant",
    operationId: "listAttention",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/attention",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag,
    summary: "Poll the open attention items.",
    description:
      "What needs someone: webhook endpoints paused by a dead letter (until resumed), escalations (raised until " +
      "resolved), a stalled activation (until the tenant is live). Open items only, newest first.",
    parameters: pageParameters,
    responseSchema: "AttentionPage",
    problems: [],
    async handle(ctx, deps) {
      const page = pageQuery(ctx);
      const response = await callService(
        deps.projections.listAttention({ tenantId: tenantIdOf(ctx), ...page }, callOptionsOf(ctx)),
      );
      ctx.body = { data: response.items.map(attentionItemToJson), nextCursor: orNull(response.nextCursor) };
    },
  },
  {
    surface: "tenant",
    operationId: "listActivity",
    method: "GET",
    path: "/api/v1/tenants/:tenantId/activity",
    scope: "tenant:read",
    mutation: false,
    poll: true,
    tag,
    summary: "Poll everything that happened to the tenant.",
    description:
      "Every event of the tenant (webhook catalog events and the platform's own facts such as notification " +
      "outcomes), newest first, with ids, states and reason codes: never conversation content.",
    parameters: pageParameters,
    responseSchema: "ActivityPage",
    problems: [],
    async handle(ctx, deps) {
      const page = pageQuery(ctx);
      const response = await callService(
        deps.projections.listActivity({ tenantId: tenantIdOf(ctx), ...page }, callOptionsOf(ctx)),
      );
      ctx.body = { data: response.items.map(activityItemToJson), nextCursor: orNull(response.nextCursor) };
    },
  },
];
