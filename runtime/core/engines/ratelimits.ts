/**
 * The back-off of failed reconcile calls (R-RECONCILE-205): controller-runtime's per-item
 * exponential failure rate limiter — `base·2^n` seconds after the n-th consecutive failure (from
 * 0), capped at `max` — with ±10 % jitter, so that objects failing together do not retry in step.
 * The random source is injected (tests pin it).
 */

/** A source of numbers in [0, 1), as `Math.random`. */
export type Random = () => number;

/** The jitter: ±10 % of the delay. */
export const JITTER = 0.1;

/**
 * Seconds to wait after `failures` consecutive failures (1 after the first), jittered.
 *
 * @example
 * failureDelay({ base: 0.005, max: 1000 }, 3, () => 0.5) // 0.02 (0.005·2², no jitter at 0.5)
 */
export function failureDelay(backoff: { readonly base: number; readonly max: number }, failures: number, random: Random = Math.random): number {
  const exponent = Math.max(0, failures - 1);
  const delay = Math.min(backoff.base * 2 ** Math.min(exponent, 1024), backoff.max);
  return delay * (1 + JITTER * (2 * random() - 1));
}
