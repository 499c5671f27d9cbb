import Router from "@koa/router";
import type { Middleware } from "koa";
import { authorize } from "./middleware/authorize.js";
import { checkOptionalIdempotencyKey } from "./middleware/idempotency-key.js";
import { answerPoll } from "./middleware/poll-etag.js";
import { successStatusOf, type Route, type RouteDeps } from "./route.js";

/** Routes are exact: no trailing-slash or letter-case aliases (/v1/pets/ and /V1/PETS are 404). */
export const EXACT_ROUTES = { strict: true, sensitive: true } as const;

/**
 * The routes() of a router whose paths are all fixed (no parameters, EXACT_ROUTES), run only for
 * requests to one of those paths: any other request matches none of its routes, so the router
 * would only pass it on, after testing each route. Its allowedMethods() still runs on every
 * request (it answers by what any router matched). A router with a parameter keeps routes().
 */
export function fixedPathRoutes(router: Router): Middleware {
  const routes = router.routes() as Middleware;
  const paths = new Set<string>();
  for (const layer of router.stack) {
    if (typeof layer.path !== "string" || layer.paramNames.length > 0) return routes;
    paths.add(layer.path);
  }
  return (ctx, next) => (paths.has(ctx.path) ? (routes(ctx, next) as Promise<void>) : next());
}

/** The checks a row's surface puts between the edge (rate limit, key) and its handler. */
function checksOf(route: Route): Middleware[] {
  if (route.surface === "tenant") return [authorize(route), ...(route.poll ? [answerPoll] : [])];
  return route.optionalIdempotencyKey ? [checkOptionalIdempotencyKey] : [];
}

/** The one router: every row of every capability's table, behind its surface's checks. */
export function routerOf(routes: readonly Route[], deps: RouteDeps): Router {
  const router = new Router(EXACT_ROUTES);
  for (const route of routes) {
    const handle: Middleware = async (ctx) => {
      ctx.status = successStatusOf(route, await route.handle(ctx, deps));
    };
    router.register(route.path, [route.method], [...checksOf(route), handle]);
  }
  return router;
}
