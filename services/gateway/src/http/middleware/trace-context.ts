import type { Middleware } from "koa";
import { SpanKind, SpanStatusCode, startSpan, traceparentOf, type Tracer } from "@platform/service-kit/tracing";

/**
 * One server span per request, the child of the partner's traceparent when it is safe to continue
 * (startSpan checks its syntax and non-zero ids, like X-Request-Id; else a new trace), and
 * ctx.state.traceparent / traceId for the gRPC calls the route makes and the log lines. Its attributes are the method, the
 * route template and the status: never the path or query (they carry tenant ids and phone numbers).
 * With tracing off the span is a no-op and a valid partner traceparent passes through unchanged.
 */
export function traceContext(tracer: Tracer): Middleware {
  return async (ctx, next) => {
    const span = startSpan(tracer, ctx.method, ctx.get("traceparent") || undefined, {
      kind: SpanKind.SERVER,
      attributes: { "http.request.method": ctx.method },
    });
    ctx.state.traceparent = traceparentOf(span);
    ctx.state.traceId = ctx.state.traceparent === undefined ? undefined : span.spanContext().traceId;
    try {
      await next();
    } finally {
      // A span that records nothing (tracing off, or not sampled) ignores its name and attributes.
      if (span.isRecording()) {
        const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
        if (typeof route === "string") {
          span.updateName(`${ctx.method} ${route}`);
          span.setAttribute("http.route", route);
        }
        span.setAttribute("http.response.status_code", ctx.status);
        if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
  };
}
