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
