import type { Context } from "koa";
import type { Scope } from "../domain/api-key.js";
import type { NotifyClient } from "../grpc/notify-client.js";
import type { ProjectionClient } from "../grpc/projection-client.js";
import type { WebhooksClient } from "../grpc/webhooks-client.js";
import { bodyProblemCodes, edgeProblemCodes, idempotencyProblemCodes, type ProblemCode } from "./problem.js";

export interface TenantRouteDeps {
  notify: NotifyClient;
  webhooks: WebhooksClient;
  /** notify's poll reads (work, attention, activity). */
  projections: ProjectionClient;
}

/**
 * One row per tenant-interface operation, kept in one table per capability (tenant-routes.ts,
 * usage-routes.ts, ...). The router, the authorization middleware (scope, tenant grant,
 * Idempotency-Key on mutations), the OpenAPI document and the credential tests are all driven by
 * these rows, so a route added to a table inherits the whole edge.
 */
export interface TenantRoute {
  operationId: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Koa-router path under the gateway root; always starts with /api/v1/tenants/:tenantId. */
  path: string;
  scope: Scope;
  /** Mutations require an Idempotency-Key. */
  mutation: boolean;
  /**
   * A poll-friendly GET (poll-etag.ts): a strong ETag on every 200 and 304 for a matching
   * If-None-Match, documented in OpenAPI. One line per route opts in.
   */
  poll?: boolean;
  /** The capability the route belongs to: its table, and its tag in the OpenAPI document. */
  tag: string;
  summary: string;
  description: string;
  /** OpenAPI parameters besides tenantId and Idempotency-Key (other path segments, query). */
  parameters?: object[];
  /** The status of a success (200 unless given); 204 has no body. */
  successStatus?: 200 | 201 | 202 | 204;
  /** components/schemas names for the OpenAPI document. */
  requestSchema?: string;
  /** The success body's schema; absent for a 204. */
  responseSchema?: string;
  /** The route's own codes, beyond those every route, body or mutation has (problemCodesOf). */
  problems: readonly ProblemCode[];
  handle(ctx: Context, deps: TenantRouteDeps): Promise<void>;
}

/** Every problem code a route can answer with: the edge's, its body's, its idempotency's, its own. */
export function problemCodesOf(route: TenantRoute): ProblemCode[] {
  return [
    ...edgeProblemCodes,
    ...(route.requestSchema ? bodyProblemCodes : []),
    ...(route.mutation ? idempotencyProblemCodes : []),
    ...route.problems,
  ];
}

export const requestIdOf = (ctx: Context) => ({ requestId: ctx.state.requestId as string });

/** What a tenant id looks like (notify's rule): 1-64 of A-Z a-z 0-9 _ - */
export const TENANT_ID_PATTERN = "^[A-Za-z0-9_-]{1,64}$";
const TENANT_ID = new RegExp(TENANT_ID_PATTERN);

export function isTenantId(value: string): boolean {
  return TENANT_ID.test(value);
}

/** The {tenantId} path parameter (every tenant route has one). */
export const tenantIdOf = (ctx: Context): string => String((ctx.params as Record<string, string>).tenantId ?? "");
