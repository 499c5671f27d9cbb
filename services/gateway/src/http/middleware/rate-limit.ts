import type { Middleware } from "koa";
import { ApiError } from "../api-error.js";

export interface RateLimitPolicy {
  /** Tokens added per second, for the whole gateway fleet. */
  ratePerSecond: number;
  /** Bucket size, for the whole fleet. */
  burst: number;
  /**
   * How many gateway replicas share the policy. Each replica enforces rate/replicas and
   * burst/replicas, so the fleet admits the policy's totals when the load balancer spreads a key's
   * requests evenly; the kept state is one small bucket per key per replica.
   */
  replicas: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** A token bucket per caller, refilled continuously. `now` is injectable for tests. */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  readonly rate: number;
  readonly capacity: number;
  /**
   * The policy as the IETF draft's quota `q` per window `w` (whole seconds): `q` is the bucket
   * size and `w` the time the bucket takes to refill from empty, rounded up. A client that sends
   * at most `q` requests in any `w` seconds is never refused; `q` at once is the burst and `q/w`
   * the sustained rate (exact when the bucket refills in a whole number of seconds, else a little
   * under it, never over).
   */
  readonly windowSeconds: number;

  constructor(
    policy: RateLimitPolicy,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.rate = policy.ratePerSecond / policy.replicas;
    this.capacity = Math.max(1, Math.floor(policy.burst / policy.replicas));
    // The epsilon keeps float noise (6 / 0.1 = 60.000000000000004) from adding a second.
    this.windowSeconds = Math.max(1, Math.ceil(this.capacity / this.rate - 1e-9));
  }

  /** Takes one token if there is one; says what is left and when the bucket is full again. */
  take(caller: string): { allowed: boolean; remaining: number; resetSeconds: number } {
    const now = this.now();
    const bucket = this.buckets.get(caller) ?? { tokens: this.capacity, updatedAt: now };
    bucket.tokens = Math.min(this.capacity, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.rate);
    bucket.updatedAt = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(caller, bucket);
    if (this.buckets.size > 100_000) this.evictIdle(now);
    return {
      allowed,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.max(1, Math.ceil((this.capacity - bucket.tokens) / this.rate)),
    };
  }

  /** Forgets buckets that have refilled completely: they hold no state worth keeping. */
  evictIdle(now = this.now()): void {
    for (const [caller, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.rate >= this.capacity) this.buckets.delete(caller);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}

/** The `RateLimit-Policy` value these buckets enforce (also declared in the OpenAPI documents). */
export function rateLimitPolicyHeader(buckets: TokenBuckets): string {
  return `"default";q=${buckets.capacity};w=${buckets.windowSeconds}`;
}

/**
 * Rate limiting for both interfaces, with the IETF draft's structured headers on every response:
 * `RateLimit-Policy: "default";q=<bucket size>;w=<seconds to refill it>` and
 * `RateLimit: "default";r=<tokens left>;t=<seconds until the bucket is full again>`.
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
