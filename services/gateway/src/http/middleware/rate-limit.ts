import type { Middleware } from "koa";
import type { TokenBuckets } from "../../domain/token-buckets.js";
import { ApiError } from "../api-error.js";

/**
 * The `RateLimit-Policy` value of the fleet-wide policy (also declared in the OpenAPI documents):
 * the same on every gateway whatever the fleet size.
 */
export function rateLimitPolicyHeader(buckets: TokenBuckets): string {
  return `"default";q=${buckets.capacity};w=${buckets.windowSeconds}`;
}

/**
 * Rate limiting for both interfaces, with the IETF draft's structured headers on every response:
 * `RateLimit-Policy: "default";q=<bucket size>;w=<seconds to refill it>` and
 * `RateLimit: "default";r=<requests the fleet admits now>;t=<seconds until the bucket is full again>`,
 * all in fleet-wide terms (see TokenBuckets.take).
 * Callers are API key ids when the Authorization header carries a well-formed key, else the
 * client address. Over the limit: 429 request.rate_limited with Retry-After = t.
 */
export function rateLimit(buckets: TokenBuckets, callerOf: (ctx: Parameters<Middleware>[0]) => string): Middleware {
  const policyHeader = rateLimitPolicyHeader(buckets);
  return async (ctx, next) => {
    const { allowed, remaining, resetSeconds } = buckets.take(callerOf(ctx));
    ctx.set("RateLimit-Policy", policyHeader);
    ctx.set("RateLimit", `"default";r=${remaining};t=${resetSeconds}`);
    if (!allowed) {
      throw new ApiError(429, `rate limit exceeded; retry after ${resetSeconds} s`, {
        code: "request.rate_limited",
        headers: { "retry-after": String(resetSeconds) },
      });
    }
    await next();
  };
}
