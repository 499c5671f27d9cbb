import { randomUUID } from "node:crypto";
import type { Middleware } from "koa";

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's X-Request-Id when it is safe to echo and log; otherwise a fresh one. */
export function resolveRequestId(header: string | undefined): string {
  return header !== undefined && SAFE_REQUEST_ID.test(header) ? header : `req_${randomUUID().replaceAll("-", "")}`;
}

/** Sets ctx.state.requestId and the X-Request-Id response header before anything else runs. */
export const requestId: Middleware = (ctx, next) => {
  const id = resolveRequestId(ctx.get("x-request-id") || undefined);
  ctx.state.requestId = id;
  ctx.set("X-Request-Id", id);
  return next();
};
