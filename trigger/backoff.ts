// The delay before a failed reconciliation is tried again. Pure.
//
// Exponential backoff with FULL jitter (a uniform draw in [0, cap)): without jitter, objects that
// failed together (an API server timing out under a burst) all retry at the same instant, fail
// together again, and keep doing so at every doubling (docs/benchmarks.md). The random source is a
// parameter so a test can draw from a seeded one.

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** Default: 1 s doubling to 60 s. */
export const DEFAULT_RETRY_BACKOFF: Backoff = { initialMs: 1000, maxMs: 60_000 };

/** A random source like Math.random: a number in [0, 1). */
export type Random = () => number;

/** The upper bound of the delay before retry `attempt` (0 = the first retry): initialMs · 2^attempt, at most maxMs. */
export function backoffCapMs(attempt: number, b: Backoff): number {
  // 2^30 · initialMs is beyond any sensible maxMs; bounding the exponent keeps the product finite.
  return Math.min(b.maxMs, b.initialMs * 2 ** Math.min(Math.max(0, attempt), 30));
}

/** The delay before retry `attempt`: uniform in [0, backoffCapMs(attempt)), whole milliseconds. */
export function retryDelayMs(attempt: number, b: Backoff, random: Random): number {
  const cap = backoffCapMs(attempt, b);
  // Clamped: a random source returning 1 (or more) must not exceed the cap.
  const r = Math.min(Math.max(random(), 0), 1 - Number.EPSILON);
  return Math.floor(r * cap);
}
