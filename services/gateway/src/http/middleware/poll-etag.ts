/**
 * Poll-friendly GETs (a `poll: true` row of a route table): every 200 carries a strong `ETag`, a
 * hash of its JSON body, and a request whose `If-None-Match` names it (or `*`) is answered 304
 * with no body and the same ETag. Clients that poll pay for a body only when it changed.
 */
import { createHash } from "node:crypto";
import type { Context, Next } from "koa";

/** A strong ETag of a JSON body. */
export function etagOf(body: unknown): string {
  return `"${createHash("sha256").update(JSON.stringify(body)).digest("base64url").slice(0, 32)}"`;
}

/** RFC 9110 If-None-Match: weak comparison against a comma-separated list, or `*`. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return header.split(",").some((tag) => tag.trim() === "*" || opaque(tag) === opaque(etag));
}

export async function answerPoll(ctx: Context, next: Next): Promise<void> {
  await next();
  if (ctx.status !== 200 || ctx.body === undefined || ctx.body === null) return;
  const etag = etagOf(ctx.body);
  ctx.set("ETag", etag);
  ctx.set("Cache-Control", "private, no-cache");
  if (ifNoneMatchHits(ctx.get("If-None-Match") || undefined, etag)) {
    ctx.status = 304;
    ctx.body = null;
  }
}
