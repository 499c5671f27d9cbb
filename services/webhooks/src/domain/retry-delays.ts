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
