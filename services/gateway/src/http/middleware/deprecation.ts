import type { Middleware } from "koa";
import type { CatalogRoute } from "../route.js";

/** koa-router `/v1/pets/:petId` -> a pattern matching exactly that path's requests. */
const pathPattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z]+/g, "[^/]+")}$`);

/**
 * Announces each deprecated row's deprecation on every answer it gives, errors included: this runs
 * before the rate limit and authentication, so a 401 or 429 carries the headers too.
 */
export function announceDeprecations(routes: readonly CatalogRoute[], publicBaseUrl: string): Middleware {
  const deprecated = routes.flatMap((route) =>
    route.deprecation
      ? [
          {
            methods: route.method === "GET" ? ["GET", "HEAD"] : [route.method],
            path: pathPattern(route.path),
            headers: {
              Deprecation: route.deprecation.since,
              Sunset: route.deprecation.sunset,
              Link: `<${publicBaseUrl}${route.deprecation.successorPath}>; rel="successor-version"`,
            },
          },
        ]
      : [],
  );
  return (ctx, next) => {
    const match = deprecated.find((entry) => entry.methods.includes(ctx.method) && entry.path.test(ctx.path));
    if (match) ctx.set(match.headers);
    return next();
  };
}
