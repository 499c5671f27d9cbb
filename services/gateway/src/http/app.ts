import Router from "@koa/router";
import Koa, { type Context, type Middleware } from "koa";
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import { apiKeyIdOf } from "../domain/api-key.js";
import type { CatalogClient } from "../grpc/catalog-client.js";
import type { NotifyClient } from "../grpc/notify-client.js";
import type { ProjectionClient } from "../grpc/projection-client.js";
import { answerPoll } from "./poll-etag.js";
import type { WebhooksClient } from "../grpc/webhooks-client.js";
import { ApiError } from "./api-error.js";
import { authenticate, type ApiKeyLookup } from "./authenticate.js";
import { authorize } from "./authorize.js";
import { writeCatalogError } from "./catalog-errors.js";
import { announceGetPetDeprecation, catalogRoutes } from "./catalog-routes.js";
import { httpMetrics } from "./http-metrics.js";
import { catalogOpenApi } from "./openapi/catalog-v1.js";
import { tenantOpenApi } from "./openapi/tenant-v1.js";
import { writeProblem, type UncataloguedProblemCode } from "./problem.js";
import { rateLimit, rateLimitPolicyHeader, type TokenBuckets } from "./rate-limit.js";
import { requestId } from "./request-id.js";
import { tenantRoutes } from "./tenant-routes.js";

export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
}

export interface GatewayDeps {
  catalog: CatalogClient;
  notify: NotifyClient;
  webhooks: WebhooksClient;
  projections: ProjectionClient;
  rateLimits: TokenBuckets;
  /** PROBLEM_BASE_URI: problem `type` is this + code when set, else urn:problem:<code>. */
  problemBaseUri: string | undefined;
  apiKeys: ApiKeyLookup;
  logger: Logger;
  registry: Registry;
  readiness: () => Promise<Readiness>;
  /** Origin prepended to Link and Location headers ("" for path-absolute links). */
  publicBaseUrl: string;
}

/** Anything thrown below becomes an ApiError: ours as is, client errors from Koa by status, the rest 500. */
function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof URIError) return new ApiError(400, "the request path is not valid percent-encoding");
  const status = (error as { status?: unknown; expose?: unknown }).status;
  if (typeof status === "number" && status >= 400 && status < 500 && (error as { expose?: unknown }).expose) {
    return new ApiError(status, (error as Error).message);
  }
  return new ApiError(500, "internal error", { cause: error });
}

/** Writes every failure in its surface's shape and logs one line per request with its id. */
function handleErrorsAndLog(logger: Logger, problemBaseUri: string | undefined, registry: Registry): Middleware {
  const uncatalogued = new Counter({
    name: "gateway_problem_code_uncatalogued_total",
    help: "Tenant-interface errors that carried a code outside the code catalogue's problem codes (answered with the status's default code). Any is a bug.",
    registers: [registry],
  });
  return async (ctx, next) => {
    const started = performance.now();
    const log = logger.child({ requestId: ctx.state.requestId as string });
    ctx.state.logger = log;
    try {
      await next();
      if (ctx.body === undefined && ctx.status === 405) throw new ApiError(405, `${ctx.method} is not allowed here`);
      if (ctx.body === undefined && ctx.status === 404) throw new ApiError(404, "no such resource");
    } catch (thrown) {
      const error = toApiError(thrown);
      if (error.status >= 500) log.error({ err: error.cause ?? error }, error.message);
      for (const [name, value] of Object.entries(error.options.headers ?? {})) ctx.set(name, value);
      writeError(ctx, error, problemBaseUri, (code, status) => {
        uncatalogued.inc();
        log.error(
          { code, status, err: error.cause ?? error },
          "an error code outside the code catalogue's problem codes",
        );
      });
    }
    log.info(
      {
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
      },
      "request",
    );
  };
}

/** The tenant interface (/api/...) answers problem+json; everything else uses the catalog shape. */
function writeError(
  ctx: Context,
  error: ApiError,
  problemBaseUri: string | undefined,
  onUncatalogued: UncataloguedProblemCode,
): void {
  if (isTenantInterface(ctx.path)) writeProblem(ctx, error, problemBaseUri, onUncatalogued);
  else writeCatalogError(ctx, error);
}

const isTenantInterface = (path: string) => path === "/api" || path.startsWith("/api/");
const publicDocuments = new Set(["/v1/openapi.json", "/api/v1/openapi.json"]);

/** Routes are exact: no trailing-slash or letter-case aliases (/v1/pets/ and /V1/PETS are 404). */
export const EXACT_ROUTES = { strict: true, sensitive: true } as const;

export function createGatewayApp(deps: GatewayDeps): Koa {
  const app = new Koa();
  app.silent = true; // errors are logged by handleErrorsAndLog, with the request id

  const operational = new Router(EXACT_ROUTES);
  operational.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  operational.get("/readyz", async (ctx) => {
    const readiness = await deps.readiness();
    ctx.status = readiness.ready ? 200 : 503;
    ctx.body = { status: readiness.ready ? "ready" : "not_ready", checks: readiness.checks };
  });
  const documentOptions = { rateLimitPolicy: rateLimitPolicyHeader(deps.rateLimits) };
  const documents = { catalog: catalogOpenApi(documentOptions), tenant: tenantOpenApi(documentOptions) };
  operational.get("/v1/openapi.json", (ctx) => {
    ctx.body = documents.catalog;
  });
  operational.get("/api/v1/openapi.json", (ctx) => {
    ctx.body = documents.tenant;
  });

  const v1 = new Router({ ...EXACT_ROUTES, prefix: "/v1" });
  const catalog = catalogRoutes({ catalog: deps.catalog, publicBaseUrl: deps.publicBaseUrl }, EXACT_ROUTES);
  v1.use(catalog.routes(), catalog.allowedMethods());

  // The tenant interface: every route from the table, behind scope, grant and idempotency checks.
  const tenants = new Router(EXACT_ROUTES);
  for (const route of tenantRoutes) {
    tenants.register(
      route.path,
      [route.method],
      [
        authorize(route),
        ...(route.poll ? [answerPoll] : []),
        (ctx) => route.handle(ctx, { notify: deps.notify, webhooks: deps.webhooks, projections: deps.projections }),
      ],
    );
  }

  const requireKey = authenticate(deps.apiKeys);
  const limit = rateLimit(deps.rateLimits, (ctx) => {
    const token = /^bearer +(\S+)/i.exec(ctx.get("authorization"))?.[1];
    const keyId = token === undefined ? undefined : apiKeyIdOf(token);
    return keyId ? `key:${keyId}` : `ip:${ctx.ip}`;
  });
  const edge: Middleware = async (ctx, next) => {
    if (publicDocuments.has(ctx.path)) await next();
    else if (isTenantInterface(ctx.path) || ctx.path.startsWith("/v1/")) {
      await limit(ctx, async () => void (await requireKey(ctx, next)));
    } else await next();
  };

  app.use(requestId);
  app.use(httpMetrics(deps.registry));
  app.use(handleErrorsAndLog(deps.logger, deps.problemBaseUri, deps.registry));
  app.use(operational.routes());
  app.use(operational.allowedMethods());
  app.use(announceGetPetDeprecation(deps.publicBaseUrl));
  app.use(edge);
  app.use(v1.routes());
  app.use(v1.allowedMethods());
  app.use(tenants.routes());
  app.use(tenants.allowedMethods());
  return app;
}
