/**
 * An endpoint's health, from the attempts of the last 24 hours (what the console shows beside
 * each endpoint and the API returns on it):
 *
 * | health     | when                                                                  |
 * | ---------- | --------------------------------------------------------------------- |
 * | `paused`   | the endpoint is paused (by the pause operation or after a dead-letter) |
 * | `healthy`  | no attempt in 24 h, or at least 95 % of them succeeded                 |
 * | `degraded` | from 50 % up to (not including) 95 % succeeded                         |
 * | `failing`  | under 50 % succeeded                                                   |
 */

export type EndpointHealth = "healthy" | "degraded" | "failing" | "paused";

/** Success rate in percent at or above which an endpoint is healthy. */
export const HEALTHY_SUCCESS_PERCENT = 95;
/** At or above (and under HEALTHY_SUCCESS_PERCENT): degraded; under: failing. */
export const DEGRADED_SUCCESS_PERCENT = 50;

export interface AttemptCounts {
  attempts: number;
  succeeded: number;
}

/** succeeded / attempts; null when no attempt was made. */
export function successRateOf(counts: AttemptCounts): number | null {
  return counts.attempts > 0 ? counts.succeeded / counts.attempts : null;
}

export function endpointHealth(paused: boolean, counts: AttemptCounts): EndpointHealth {
  if (paused) return "paused";
  // Compared in integers: exactly 95 % (19 of 20) is healthy, whatever floating point says.
  const percent100 = counts.succeeded * 100;
  if (counts.attempts === 0 || percent100 >= HEALTHY_SUCCESS_PERCENT * counts.attempts) return "healthy";
  return percent100 >= DEGRADED_SUCCESS_PERCENT * counts.attempts ? "degraded" : "failing";
}
