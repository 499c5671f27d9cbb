/**
 * The rate limit's rule: a token bucket per caller holding this gateway's share of the fleet-wide
 * policy (DESIGN: 50/s, burst 100 per API key by default). Plain arithmetic, no transport: the
 * Koa middleware that answers with it is http/middleware/rate-limit.ts.
 */
export interface RateLimitPolicy {
  /** Tokens added per second, for the whole gateway fleet. */
  ratePerSecond: number;
  /** Bucket size, for the whole fleet. */
  burst: number;
}

interface Bucket {
  /** Tokens of this gateway's share. */
  tokens: number;
  updatedAt: number;
  /** The fleet size `tokens` was counted for. */
  fleetSize: number;
}

/**
 * A token bucket per caller, refilled continuously, holding this gateway's share of the fleet-wide
 * policy: with N live gateways (`fleetSize`, kept current by the fleet heartbeat, see
 * db/fleet-store.ts) each enforces rate/N and burst/N, so the fleet admits the policy's totals
 * when the ingress spreads a key's requests over the gateways. Nothing is shared per request: a
 * take is arithmetic on one in-memory bucket. When N changes, a bucket is rescaled the next time
 * it is used, keeping its fill level (a share that was empty stays empty and refills at the new
 * share's rate), so the fleet-wide state carries over. `now` is injectable for tests.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private size_ = 1;
  /** The fleet-wide policy: what the documents promise and the headers state. */
  readonly ratePerSecond: number;
  readonly capacity: number;
  /**
   * The policy as the IETF draft's quota `q` per window `w` (whole seconds): `q` is the fleet's
   * bucket size and `w` the time it takes to refill from empty, rounded up. A client that sends
   * at most `q` requests in any `w` seconds, spread over the gateways, is never refused; `q` at
   * once is the burst and `q/w` the sustained rate (exact when the bucket refills in a whole
   * number of seconds, else a little under it, never over).
   */
  readonly windowSeconds: number;

  constructor(
    policy: RateLimitPolicy,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.ratePerSecond = policy.ratePerSecond;
    this.capacity = Math.max(1, Math.floor(policy.burst));
    // The epsilon keeps float noise (6 / 0.1 = 60.000000000000004) from adding a second.
    this.windowSeconds = Math.max(1, Math.ceil(this.capacity / this.ratePerSecond - 1e-9));
  }

  /** How many gateways share the policy now (1 until told otherwise). */
  get fleetSize(): number {
    return this.size_;
  }

  /** Called when the number of live gateways changes; takes effect on each bucket's next take. */
  setFleetSize(size: number): void {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`fleet size must be a positive integer, not ${size}`);
    this.size_ = size;
  }

  /** This gateway's bucket size: burst/N, at least one token so that every gateway can admit. */
  get shareCapacity(): number {
    return this.shareCapacityFor(this.size_);
  }

  private shareCapacityFor(size: number): number {
    return Math.max(1, this.capacity / size);
  }

  /** This gateway's refill rate: rate/N tokens per second. */
  get shareRate(): number {
    return this.ratePerSecond / this.size_;
  }

  /**
   * Takes one token of this gateway's share if there is one. Says, for the fleet, what is left
   * (`remaining`: the requests the fleet admits now when they are spread evenly, N times the whole
   * tokens of this share) and when the bucket is full again (`resetSeconds`, the same for the share
   * and the fleet since both refill in burst/rate seconds).
   */
  take(caller: string): { allowed: boolean; remaining: number; resetSeconds: number } {
    const now = this.now();
    const size = this.size_;
    const capacity = this.shareCapacity;
    const rate = this.shareRate;
    let bucket = this.buckets.get(caller);
    if (bucket === undefined) {
      bucket = { tokens: capacity, updatedAt: now, fleetSize: size };
      this.buckets.set(caller, bucket);
      if (this.buckets.size > 100_000) this.evictIdle(now);
    } else if (bucket.fleetSize !== size) {
      // Same fill level, new share: tokens × (new share / old share).
      bucket.tokens = Math.min(capacity, (bucket.tokens * capacity) / this.shareCapacityFor(bucket.fleetSize));
      bucket.fleetSize = size;
    }
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.updatedAt) / 1000) * rate);
    bucket.updatedAt = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return {
      allowed,
      remaining: Math.floor(bucket.tokens) * size,
      resetSeconds: Math.max(1, Math.ceil((capacity - bucket.tokens) / rate - 1e-9)),
    };
  }

  /** Forgets buckets that have refilled completely: they hold no state worth keeping. */
  evictIdle(now = this.now()): void {
    const capacity = this.shareCapacity;
    const rate = this.shareRate;
    for (const [caller, bucket] of this.buckets) {
      const tokens = (bucket.tokens * capacity) / this.shareCapacityFor(bucket.fleetSize);
      if (tokens + ((now - bucket.updatedAt) / 1000) * rate >= capacity) this.buckets.delete(caller);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}
