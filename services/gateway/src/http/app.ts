import Router from "@koa/router";
import Koa, { type Context, type Middleware } from "koa";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { CatalogClient } from "../grpc/catalog-client.js";
import { ApiError } from "./api-error.js";
import { authenticate, type ApiKeyLookup } from "./authenticate.js";
import { writeCatalogError } from "./catalog-errors.js";
import { catalogRoutes } from "./catalog-routes.js";
import { httpMetrics } from "./http-metrics.js";
import { catalogOpenApi } from "./openapi/catalog-v1.js";
import { requestId } from "./request-id.js";

export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
}

export interface GatewayDeps {
  catalog: CatalogClient;
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
function handleErrorsAndLog(logger: Logger): Middleware {
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
      writeError(ctx, error);
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

function writeError(ctx: Context, error: ApiError): void {
  // The tenant interface (/api/v1) answers problem+json; everything else uses the catalog shape.
  writeCatalogError(ctx, error);
}

export function createGatewayApp(deps: GatewayDeps): Koa {
  const app = new Koa();
  app.silent = true; // errors are logged by handleErrorsAndLog, with the request id

  const operational = new Router();
  operational.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  operational.get("/readyz", async (ctx) => {
    const readiness = await deps.readiness();
    ctx.status = readiness.ready ? 200 : 503;
    ctx.body = { status: readiness.ready ? "ready" : "not_ready", checks: readiness.checks };
  });
  operational.get("/v1/openapi.json", (ctx) => {
    ctx.body = catalogOpenApi;
  });

  const v1 = new Router({ prefix: "/v1" });
  const catalog = catalogRoutes({ catalog: deps.catalog, publicBaseUrl: deps.publicBaseUrl });
  v1.use(catalog.routes(), catalog.allowedMethods());

  const requireKey = authenticate(deps.apiKeys);
  const v1Auth: Middleware = async (ctx, next) => {
    if (ctx.path.startsWith("/v1/") && ctx.path !== "/v1/openapi.json") await requireKey(ctx, next);
    else await next();
  };

  app.use(requestId);
  app.use(httpMetrics(deps.registry));
  app.use(handleErrorsAndLog(deps.logger));
  app.use(operational.routes());
  app.use(operational.allowedMethods());
  app.use(v1Auth);
  app.use(v1.routes());
  app.use(v1.allowedMethods());
  return app;
}
