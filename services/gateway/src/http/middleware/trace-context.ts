import type { Middleware } from "koa";
import {
  parseTraceparent,
  SpanKind,
  SpanStatusCode,
  startSpan,
  traceparentOf,
  type Tracer,
} from "@platform/service-kit/tracing";

/**
 * The partner's W3C `traceparent` when it is safe to continue (syntax and non-zero ids checked,
 * like X-Request-Id), else undefined: the gateway's span then starts a new trace.
 */
export function resolveTraceparent(header: string | undefined): string | undefined {
  return parseTraceparent(header) ? header!.trim() : undefined;
}

/**
 * One server span per request, the child of the partner's traceparent (or a new trace), and
 * ctx.state.traceparent for the gRPC calls the route makes. Its attributes are the method, the
 * route template and the status: never the path or query (they carry tenant ids and phone numbers).
 * With tracing off the span is a no-op and a valid partner traceparent passes through unchanged.
 */
export function traceContext(tracer: Tracer): Middleware {
  return async (ctx, next) => {
    const span = startSpan(tracer, ctx.method, resolveTraceparent(ctx.get("traceparent") || undefined), {
      kind: SpanKind.SERVER,
      attributes: { "http.request.method": ctx.method },
    });
    ctx.state.traceparent = traceparentOf(span);
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      if (typeof route === "string") {
        span.updateName(`${ctx.method} ${route}`);
        span.setAttribute("http.route", route);
      }
      span.setAttribute("http.response.status_code", ctx.status);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
