// The small statistics every benchmark reports with.

export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;
export const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
/** NaN for no values: a missing measurement must not read as 0. */
export const mean = (xs: readonly number[]): number => (xs.length ? sum(xs) / xs.length : NaN);

/** The q-quantile (0..1), linear between the two nearest ranks; NaN for no values. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * q;
  const lo = Math.floor(i);
  const hi = Math.ceil(i);
  return s[lo]! + (s[hi]! - s[lo]!) * (i - lo);
}

/** Smallest, largest and mean value, rounded to 0.1; all 0 for no values (a count that is zero). */
export function minMaxMean(xs: readonly number[]): { min: number; max: number; mean: number } {
  if (xs.length === 0) return { min: 0, max: 0, mean: 0 };
  return { min: round(Math.min(...xs)), max: round(Math.max(...xs)), mean: round(mean(xs)) };
}
