/**
 * The pause before trying again after a run of failures: of a fetch from a pull consumer, of the
 * outbox relay's pass, of declaring the streams after a reconnect.
 */

/**
 * How long to wait after `failures` failures in a row: 250 ms doubled per failure (500 ms after
 * the first, 1 s, 2 s, 4 s, 8 s), never more than 10 s (from the sixth on).
 */
export function failureBackoffMs(failures: number): number {
  return Math.min(10_000, 250 * 2 ** Math.min(failures, 6));
}
