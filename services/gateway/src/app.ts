import Router from "@koa/router";
import Koa, { type Context, type Middleware } from "koa";
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import { noTracing, type Tracing } from "@platform/service-kit/tracing";
import { apiKeyIdOf } from "./domain/api-key.js";
import type { CatalogClient } from "./grpc/catalog-client.js";
import type { NotifyClient } from "./grpc/notify-client.js";
import type { ProjectionClient } from "./grpc/projection-client.js";
import type { WebhooksClient } from "./grpc/webhooks-client.js";
import { catalogOpenApi, tenantOpenApi } from "./routes/documents.js";
import { catalogRoutes, routes } from "./routes/index.js";
import { ApiError } from "./http/api-error.js";
import { writeCatalogError } from "./http/catalog-error.js";
import { authenticate, type ApiKeyLookup } from "./http/middleware/authenticate.js";
import { announceDeprecations } from "./http/middleware/deprecation.js";
import { httpMetrics } from "./http/middleware/http-metrics.js";
import type { TokenBuckets } from "./domain/token-buckets.js";
import { rateLimit, rateLimitPolicyHeader } from "./http/middleware/rate-limit.js";
import { requestId } from "./http/middleware/request-id.js";
import { traceContext } from "./http/middleware/trace-context.js";
import { writeProblem, type UncataloguedProblemCode } from "./http/problem.js";
import { EXACT_ROUTES, fixedPathRoutes, routerOf } from "./http/router.js";
import type { ConsoleLinks } from "./db/console-links.js";
import type { ConsoleStore } from "./db/console-store.js";
import { consoleOriginOf, type ConsoleSettings } from "./console/route.js";
import { consoleMiddleware } from "./console/router.js";
import { consolePages, redactConsolePath } from "./console/routes.js";
import { providerCallbackRouter, type ProviderCallbackSettings } from "./routes/provider-callbacks/callbacks.js";
import "./http/state.js";

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
  /** The gateway's readiness, from state kept current in the background: it never waits on a check. */
  readiness: () => Readiness;
  /** Origin prepended to Link and Location headers ("" for path-absolute links). */
  publicBaseUrl: string;
  /** Spans of every request (no-op when OTEL_EXPORTER_OTLP_ENDPOINT is unset; the default). */
  tracing?: Tracing;
  /** TRUST_PROXY: take the scheme and client address from X-Forwarded-Proto / X-Forwarded-For. */
  trustProxy?: boolean;
  /** The provider's signed callbacks (routes/provider-callbacks); absent: the path answers 404 not configured. */
  providerCallbacks?: ProviderCallbackSettings;
  /** The console under /console (docs/console.md); not mounted when absent. */
  console?: { store: ConsoleStore; settings: ConsoleSettings; links: ConsoleLinks };
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
    const { traceId, requestId } = ctx.state;
    // The request's logger is made on first use: at LOG_LEVEL=warn most requests never log.
    let child: Logger | undefined;
    const log = () => (child ??= logger.child(traceId ? { requestId, trace_id: traceId } : { requestId }));
    ctx.state.log = log;
    try {
      await next();
      if (ctx.body === undefined && ctx.status === 405) throw new ApiError(405, `${ctx.method} is not allowed here`);
      if (ctx.body === undefined && ctx.status === 404) throw new ApiError(404, "no such resource");
    } catch (thrown) {
      const error = toApiError(thrown);
      if (error.status >= 500) log().error({ err: error.cause ?? error }, error.message);
      for (const [name, value] of Object.entries(error.options.headers ?? {})) ctx.set(name, value);
      writeError(ctx, error, problemBaseUri, (code, status) => {
        uncatalogued.inc();
        log().error(
          { code, status, err: error.cause ?? error },
          "an error code outside the code catalogue's problem codes",
        );
      });
    }
    if (!logger.isLevelEnabled("info")) return;
    log().info(
      {
        method: ctx.method,
        path: redactConsolePath(ctx.path),
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

export function createGatewayApp(deps: GatewayDeps): Koa {
  const app = new Koa();
  app.silent = true; // errors are logged by handleErrorsAndLog, with the request id
  app.proxy = deps.trustProxy ?? false;
  // Behind one trusted proxy: the client address is the last X-Forwarded-For entry (the one the
  // proxy appended), never an earlier one a client could have written itself.
  app.maxIpsCount = 1;

  const operational = new Router(EXACT_ROUTES);
  operational.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  operational.get("/readyz", (ctx) => {
    const readiness = deps.readiness();
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

  // Every operation of both surfaces: one router over the capabilities' route tables.
  const site = deps.console;
  const router = routerOf(routes, {
    ...deps,
    console: site && { links: site.links, origin: (ctx: Context) => consoleOriginOf(ctx, site.settings) },
  });

  const requireKey = authenticate(deps.apiKeys);
  const limit = rateLimit(deps.rateLimits, (ctx) => {
    const token = /^bearer +(\S+)/i.exec(ctx.get("authorization"))?.[1];
    const keyId = token === undefined ? undefined : apiKeyIdOf(token);
    return keyId ? `key:${keyId}` : `ip:${ctx.ip}`;
  });
  // Plain functions returning the chain's promise: no async frame of their own on every request.
  const edge: Middleware = (ctx, next) => {
    const path = ctx.path;
    if (publicDocuments.has(path)) return next();
    if (isTenantInterface(path) || path.startsWith("/v1/")) {
      return limit(ctx, () => requireKey(ctx, next) as Promise<void>) as Promise<void>;
    }
    return next();
  };

  app.use(requestId);
  app.use(traceContext((deps.tracing ?? noTracing).tracer));
  app.use(httpMetrics(deps.registry));
  app.use(handleErrorsAndLog(deps.logger, deps.problemBaseUri, deps.registry));
  app.use(fixedPathRoutes(operational));
  app.use(operational.allowedMethods());
  if (deps.console) {
    // Everything under /console: pages, their checks and errors, as HTML; never the API's edge.
    const { notify, webhooks, projections } = deps;
    const { store, settings } = deps.console;
    app.use(consoleMiddleware(consolePages, { notify, webhooks, projections, store, settings }));
  }
  // The provider's callback path: signed by the provider, never an API key (before the edge).
  const callbacks = providerCallbackRouter(
    deps.providerCallbacks ?? { appSecret: undefined, verifyToken: undefined, maxBytes: 0 },
    { notify: deps.notify },
  );
  app.use(fixedPathRoutes(callbacks));
  app.use(callbacks.allowedMethods());
  app.use(announceDeprecations(catalogRoutes, deps.publicBaseUrl));
  app.use(edge);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
