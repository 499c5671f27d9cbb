/**
 * The retry schedule: WEBHOOKS_RETRY_DELAYS, the waits after failed attempts 1..7 (spec 3.3), and
 * so the number of attempts a run has. The delivery state machine (delivery-state.ts) uses them.
 */

/** The default of WEBHOOKS_RETRY_DELAYS: the waits after failures 1..7 (spec 3.3). */
export const defaultRetryDelays = "10m,20m,40m,80m,160m,320m,640m";

/** Waits after failed attempts 1..7; so 8 attempts in all. */
export const retryDelayCount = 7;
export const maxAttempts = retryDelayCount + 1;

export class InvalidRetryDelaysError extends Error {
  override name = "InvalidRetryDelaysError";
  readonly code = "webhook.retry_delays_invalid";
  constructor(readonly problems: readonly string[]) {
    super(`WEBHOOKS_RETRY_DELAYS: ${problems.join("; ")}`);
  }
}

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses WEBHOOKS_RETRY_DELAYS: exactly 7 comma-separated positive durations such as `30s`,
 * `10m`, `2h` (units ms, s, m, h, d). Returns milliseconds. Throws naming every bad entry.
 */
export function parseRetryDelays(text: string): number[] {
  const entries = text.split(",").map((entry) => entry.trim());
  const problems: string[] = [];
  if (entries.length !== retryDelayCount) {
    problems.push(
      `needs exactly ${retryDelayCount} delays (one after each failed attempt but the last), got ${entries.length}`,
    );
  }
  const delays = entries.map((entry, index) => {
    const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(entry);
    const ms = match ? Number(match[1]) * units[match[2]!]! : Number.NaN;
    if (!match)
      problems.push(`entry ${index + 1} ${JSON.stringify(entry.slice(0, 20))} is not a duration such as 30s or 10m`);
    else if (ms <= 0) problems.push(`entry ${index + 1} ${JSON.stringify(entry)} must be positive`);
    return ms;
  });
  if (problems.length > 0) throw new InvalidRetryDelaysError(problems);
  return delays;
}

/**
 * Back-pressure (docs/webhooks.md, "Retry-After"): a receiver answering 429 or 503 with a valid
 * `Retry-After` delays the next attempt to at least that long after its answer, never sooner than
 * the schedule's due time, and at most `retryAfterCapMs` past it (Svix's rule, svix-webhooks PR
 * 2203: max(backoff, Retry-After), capped at backoff + 2 h). The attempt still counts as failed.
 */
export const retryAfterStatuses: ReadonlySet<number> = new Set([429, 503]);

/** How far past the schedule's due time a Retry-After can push the next attempt. */
export const retryAfterCapMs = 2 * 3_600_000;

/**
 * The wait a receiver asked for, in milliseconds from `answeredAt`: `Retry-After` as delta
 * seconds (digits only) or an HTTP date in any of RFC 9110's three forms (IMF-fixdate
 * `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`, asctime
 * `Sun Nov  6 08:49:37 1994`, read as GMT). Null when the status is not 429 or 503, or the header
 * is absent or anything else (the schedule applies unchanged). A date in the past is a wait of 0.
 */
export function retryAfterMs(status: number, header: string | undefined, answeredAt: Date): number | null {
  if (!retryAfterStatuses.has(status) || header === undefined) return null;
  const value = header.trim();
  if (/^\d{1,10}$/.test(value)) return Number(value) * 1000;
  let at = Number.NaN;
  if (/^[A-Z][a-z]{2,8}, [0-9A-Za-z -]+ \d{2}:\d{2}:\d{2} GMT$/.test(value)) at = Date.parse(value);
  else if (/^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/.test(value)) at = Date.parse(`${value} GMT`);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - answeredAt.getTime());
}

/**
 * When the next attempt is due after a failure that ended at `failedAt`: the schedule's wait,
 * or, when the receiver asked for a longer one, its wait, capped at the schedule's due time plus
 * `retryAfterCapMs`.
 */
export function nextAttemptDue(failedAt: Date, scheduledDelayMs: number, askedMs: number | null = null): Date {
  const scheduled = failedAt.getTime() + scheduledDelayMs;
  if (askedMs === null) return new Date(scheduled);
  return new Date(Math.min(Math.max(scheduled, failedAt.getTime() + askedMs), scheduled + retryAfterCapMs));
}
