import type { Context } from "koa";
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { CallOptions, ReplicaRetry } from "@platform/service-kit/grpc-client";
import type { ConsoleLinks } from "../db/console-links.js";
import type { Scope } from "../domain/api-key.js";
import type { CatalogClient } from "../grpc/catalog-client.js";
import type { NotifyClient } from "../grpc/notify-client.js";
import type { ProjectionClient } from "../grpc/projection-client.js";
import type { WebhooksClient } from "../grpc/webhooks-client.js";
import { ApiError } from "./api-error.js";
import { bodyProblemCodes, edgeProblemCodes, idempotencyProblemCodes, type ProblemCode } from "./problem.js";

/** What a tenant route's handler may call. */
export interface TenantRouteDeps {
  notify: NotifyClient;
  webhooks: WebhooksClient;
  /** notify's poll reads (work, attention, activity). */
  projections: ProjectionClient;
  /** The console's links (POST .../console-links); absent when the gateway runs without the console. */
  console?: {
    links: ConsoleLinks;
    /** The console's origin as a browser reaches it (CONSOLE_BASE_URL, else the request's). */
    origin(ctx: Context): string;
  };
}

/** What a catalog route's handler may call. */
export interface CatalogRouteDeps {
  catalog: CatalogClient;
  /** Origin prepended to Link and Location headers ("" for path-absolute links). */
  publicBaseUrl: string;
}

/** What the router hands the rows: each surface's deps. */
export type RouteDeps = TenantRouteDeps & CatalogRouteDeps;

/**
 * One row per operation, kept in one table per capability (routes/<capability>/routes.ts). The
 * router, the edge checks, the OpenAPI documents and the credential tests are all driven by these
 * rows, so a route added to a table inherits the whole edge. A row says which surface it belongs
 * to: the animal catalog (/v1, spec 2.2 Error shape) or the tenant interface (/api/v1, problem+json).
 */
interface RouteRow<Deps> {
  operationId: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Koa-router path under the gateway root. */
  path: string;
  /** The capability the route belongs to: its table, and its tag in the OpenAPI document. */
  tag: string;
  summary: string;
  description: string;
  /** OpenAPI parameters besides those the surface adds (tenantId, Idempotency-Key, If-None-Match). */
  parameters?: object[];
  /** The status of a success (200 unless given); 204 has no body. The router sends it: handlers never set it. */
  successStatus?: 200 | 201 | 202 | 204;
  /** components/schemas name of the JSON request body, declared in the capability's shapes.ts. */
  requestSchema?: string;
  /** The success body's schema; absent for a 204. */
  responseSchema?: string;
  /** Sets the body (and headers) of a success; returns OTHER_SUCCESS when it answered the row's otherSuccess. */
  handle(ctx: Context, deps: Deps): Promise<void | typeof OTHER_SUCCESS>;
}

/** A handler's word that it answered its row's `otherSuccess` (a dry run's 200), not `successStatus`. */
export const OTHER_SUCCESS = Symbol("otherSuccess");

/**
 * A tenant-interface operation: problem+json errors, a scope and a tenant grant (authorize.ts), a
 * required Idempotency-Key on mutations; the path always starts with /api/v1/tenants/:tenantId.
 */
export interface TenantRoute extends RouteRow<TenantRouteDeps> {
  surface: "tenant";
  scope: Scope;
  /** Other scopes that also admit a key to this route (any one of `scope` and these is enough). */
  alsoScopes?: readonly Scope[];
  /** Mutations require an Idempotency-Key. */
  mutation: boolean;
  /**
   * A poll-friendly GET (poll-etag.ts): a strong ETag on every 200 and 304 for a matching
   * If-None-Match, documented in OpenAPI. One line per route opts in.
   */
  poll?: boolean;
  /** The route's own codes, beyond those every route, body or mutation has (problemCodesOf). */
  problems: readonly ProblemCode[];
  /** A second success answer besides successStatus (a dry run's 200 beside a job's 202), documented too. */
  otherSuccess?: { status: 200 | 201 | 202; responseSchema: string; description: string };
  /** Headers the route's success answer may add (OpenAPI header objects, by name). */
  successHeaders?: Record<string, unknown>;
}

/** A deprecated operation's announcement (RFC 9745 Deprecation, RFC 8594 Sunset, the successor). */
export interface Deprecation {
  /** An sf-date: `@<epoch seconds>`. */
  since: string;
  /** An HTTP date. */
  sunset: string;
  /** The successor's path, linked with rel="successor-version". */
  successorPath: string;
}

/**
 * An animal-catalog operation (spec 4.1): the Error shape of spec 2.2, any active key and no scope,
 * an optional Idempotency-Key on creates. Its OpenAPI success and error answers are described on
 * the row (the catalog's statuses are fixed per operation, not derived from codes).
 */
export interface CatalogRoute extends RouteRow<CatalogRouteDeps> {
  surface: "catalog";
  /** An optional Idempotency-Key (catalog creates): checked by the router when present. */
  optionalIdempotencyKey?: boolean;
  /** Deprecation, Sunset and successor Link on every answer (errors included, before auth). */
  deprecation?: Deprecation;
  /** The success answer's description and headers besides those of every answer. */
  success: { description: string; headers?: Record<string, unknown> };
  /** The operation's own error statuses (the edge's are added) and descriptions that differ from the defaults. */
  errors: { statuses: number[]; descriptions?: Record<number, string> };
}

export type Route = TenantRoute | CatalogRoute;

/** Every scope that admits a key to a tenant route: its own, then the others it accepts. */
export const acceptedScopesOf = (route: TenantRoute): Scope[] => [route.scope, ...(route.alsoScopes ?? [])];

/** The status the router sends for what a row's handler answered. */
export function successStatusOf(route: Route, answered: void | typeof OTHER_SUCCESS): number {
  if (answered === OTHER_SUCCESS) {
    if (route.surface !== "tenant" || !route.otherSuccess) throw new Error(`${route.operationId} has no otherSuccess`);
    return route.otherSuccess.status;
  }
  return route.successStatus ?? 200;
}

/** Every problem code a tenant route can answer with: the edge's, its body's, its idempotency's, its own. */
export function problemCodesOf(route: TenantRoute): ProblemCode[] {
  return [
    ...edgeProblemCodes,
    ...(route.requestSchema ? bodyProblemCodes : []),
    ...(route.mutation ? idempotencyProblemCodes : []),
    ...route.problems,
  ];
}

/**
 * What every gRPC call a route makes carries: the request id, the request span's trace context,
 * and whether the call may be made again on another replica when its connection dies before an
 * answer (CallOptions.repeatable): when the request is a read (GET, HEAD: every `mutation: false`
 * row and the catalog's GETs) or carries an Idempotency-Key. A route with a key passes it to every
 * mutation it calls (the service deduplicates on it); a keyless mutation (a catalog create
 * without a key) is never repeated: its outcome stays unknown (504, api-error.ts).
 */
export const callOptionsOf = (ctx: Context): CallOptions => ({
  requestId: ctx.state.requestId,
  traceparent: ctx.state.traceparent,
  repeatable: ctx.method === "GET" || ctx.method === "HEAD" || ctx.state.idempotencyKey !== undefined,
  onReplicaRetry: (retry) => logReplicaRetry(ctx, retry),
});

/** One line per retry on another replica: a replica's connection died under a call. */
export function logReplicaRetry(ctx: Context, retry: ReplicaRetry): void {
  ctx.state.log().warn(
    {
      method: retry.method,
      from: retry.from,
      to: retry.to ?? null,
      error: { code: GrpcStatus[retry.error.code], details: retry.error.details },
      outcome: GrpcStatus[retry.code],
    },
    retry.to === undefined
      ? "a call's connection died before an answer and no other replica was ready"
      : "a call's connection died before an answer; retried on another replica",
  );
}

/** The checked Idempotency-Key of a tenant mutation (the router refuses a mutation without one). */
export function idempotencyKeyOf(ctx: Context): string {
  const key = ctx.state.idempotencyKey;
  if (key === undefined) throw new ApiError(500, "a mutation ran without its Idempotency-Key");
  return key;
}

/** A path segment of the matched route ("" when absent). */
export const pathParam = (ctx: Context, name: string): string =>
  String((ctx.params as Record<string, string | undefined>)[name] ?? "");

/** What a tenant id looks like (notify's rule): 1-64 of A-Z a-z 0-9 _ - */
export const TENANT_ID_PATTERN = "^[A-Za-z0-9_-]{1,64}$";
const TENANT_ID = new RegExp(TENANT_ID_PATTERN);

export function isTenantId(value: string): boolean {
  return TENANT_ID.test(value);
}

/** The {tenantId} path parameter (every tenant route has one). */
export const tenantIdOf = (ctx: Context): string => pathParam(ctx, "tenantId");
