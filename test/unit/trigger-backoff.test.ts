// The retry delay of a failed reconciliation (trigger/backoff.ts): exponential, capped, and fully
// jittered, so that objects failing together do not retry together; and the per-object retry timers
// the trigger runs on it (trigger/retries.ts), on jest's fake clock. Deterministic: the random
// source is a seeded PRNG.
import { backoffCapMs, DEFAULT_RETRY_BACKOFF, retryDelayMs, type Random } from '../../trigger/backoff';
import { RetrySchedule } from '../../trigger/retries';
import { mulberry32 } from '../../workflows/plan';

/** Seeded: the same sequence on every machine. */
const seeded = (seed: number): Random => mulberry32(seed);

describe('retry backoff', () => {
  it('the cap doubles from initialMs up to maxMs and stays finite for any attempt', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => backoffCapMs(n, DEFAULT_RETRY_BACKOFF))).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]);
    expect(backoffCapMs(1e9, DEFAULT_RETRY_BACKOFF)).toBe(60_000);
    expect(backoffCapMs(-1, DEFAULT_RETRY_BACKOFF)).toBe(1000);
  });

  it('draws the delay uniformly below the cap (full jitter), never at or above it', () => {
    const b = { initialMs: 1000, maxMs: 60_000 };
    expect(retryDelayMs(2, b, () => 0)).toBe(0);
    expect(retryDelayMs(2, b, () => 0.5)).toBe(2000);
    expect(retryDelayMs(2, b, () => 0.999_999_999)).toBe(3999);
    // A random source out of range is clamped.
    expect(retryDelayMs(2, b, () => 1)).toBe(3999);
    expect(retryDelayMs(2, b, () => -3)).toBe(0);
  });

  it('objects that failed together do not retry together: 500 retries of the same attempt spread over the whole window', () => {
    for (const seed of [1, 42, 20260101]) {
      const random = seeded(seed);
      for (const attempt of [0, 3, 10]) {
        const cap = backoffCapMs(attempt, DEFAULT_RETRY_BACKOFF);
        const delays = Array.from({ length: 500 }, () => retryDelayMs(attempt, DEFAULT_RETRY_BACKOFF, random));
        expect(delays.every((d) => Number.isInteger(d) && d >= 0 && d < cap)).toBe(true);
        // Lockstep would be one value; a uniform draw gives hundreds, over (nearly) the whole window.
        expect(new Set(delays).size).toBeGreaterThan(300);
        expect(Math.min(...delays)).toBeLessThan(cap * 0.05);
        expect(Math.max(...delays)).toBeGreaterThan(cap * 0.95);
        // And no more than 1/10 of them fall in any tenth of it (uniform: about 50 each).
        const buckets = new Array<number>(10).fill(0);
        for (const d of delays) buckets[Math.floor((d / cap) * 10)]!++;
        expect(Math.max(...buckets)).toBeLessThan(80);
      }
    }
  });

  it('the same seed gives the same delays (a failure is replayable)', () => {
    const run = () => {
      const r = seeded(7);
      return [0, 1, 2, 3].map((n) => retryDelayMs(n, DEFAULT_RETRY_BACKOFF, r));
    };
    expect(run()).toEqual(run());
  });
});

describe("RetrySchedule (the trigger's retry timers)", () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('200 objects failing at the same instant are retried at ~200 different instants, each within its window', () => {
    const retries = new RetrySchedule(DEFAULT_RETRY_BACKOFF, seeded(3));
    const firedAt = new Map<string, number>();
    const start = Date.now();
    for (let i = 0; i < 200; i++) {
      const key = `ns/o${i}`;
      const { attempt, delayMs } = retries.failed(key, () => firedAt.set(key, Date.now() - start));
      expect(attempt).toBe(1);
      expect(delayMs).toBeLessThan(1000);
    }
    jest.advanceTimersByTime(1000);
    expect(firedAt.size).toBe(200);
    expect(new Set(firedAt.values()).size).toBeGreaterThan(150);
  });

  it('consecutive failures of one object widen the window; a success starts it over; a newer failure replaces a pending retry', () => {
    const retries = new RetrySchedule({ initialMs: 100, maxMs: 1000 }, () => 0.99);
    const fired: number[] = [];
    const delays = [1, 2, 3, 4, 5].map(() => retries.failed('k', () => fired.push(Date.now())).delayMs);
    expect(delays).toEqual([99, 198, 396, 792, 990]);
    jest.advanceTimersByTime(1000);
    expect(fired).toHaveLength(1); // only the latest of the five
    retries.succeeded('k');
    expect(retries.failed('k', () => undefined)).toEqual({ attempt: 1, delayMs: 99 });
    // A success while a retry is pending keeps the count: that retry may fail too.
    retries.succeeded('k');
    expect(retries.failed('k', () => undefined).attempt).toBe(2);
  });

  it('stop: no pending or later retry runs', () => {
    const retries = new RetrySchedule(DEFAULT_RETRY_BACKOFF, seeded(5));
    const fired: string[] = [];
    retries.failed('a', () => fired.push('a'));
    retries.stop();
    retries.failed('b', () => fired.push('b'));
    jest.advanceTimersByTime(120_000);
    expect(fired).toEqual([]);
  });
});
