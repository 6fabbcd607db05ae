// The statistics the benchmarks report with (bench/analysis/stats.ts).
import { mean, minMaxMean, quantile, round, sum } from '../../bench/analysis/stats';

test('quantile: linear between the nearest ranks, input left unsorted, NaN for nothing', () => {
  const xs = [4, 1, 3, 2];
  expect(quantile(xs, 0.5)).toBe(2.5);
  expect(quantile(xs, 0.99)).toBeCloseTo(3.97, 12); // rank 2.97: 3 + 0.97 × (4 − 3)
  expect(quantile(xs, 0)).toBe(1);
  expect(quantile(xs, 1)).toBe(4);
  expect(xs).toEqual([4, 1, 3, 2]);
  expect(quantile([7], 0.99)).toBe(7);
  expect(quantile([], 0.5)).toBeNaN();
});

test('mean of nothing is NaN (a missing measurement), sum of nothing 0', () => {
  expect(mean([1, 2, 6])).toBe(3);
  expect(mean([])).toBeNaN();
  expect(sum([])).toBe(0);
});

test('round to the given digits', () => {
  expect(round(1.23456, 3)).toBe(1.235);
  expect(round(1.25)).toBe(1.3);
});

test('minMaxMean: rounded to 0.1, all 0 for nothing (a count of events, not a missing measurement)', () => {
  expect(minMaxMean([97.33, 100.26, 92])).toEqual({ min: 92, max: 100.3, mean: 96.5 });
  expect(minMaxMean([])).toEqual({ min: 0, max: 0, mean: 0 });
});
