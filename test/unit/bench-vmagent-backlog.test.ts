// When a zone's vmagent backlog was truly gone (bench/analysis/vmagent-backlog.ts), on hand-made series.
import { trulyDrainedAt, valueAt, type QueuePoint } from '../../bench/analysis/vmagent-backlog';

/** [at, pending bytes, send retries so far] → points. */
const series = (...rows: Array<[number, number, number?]>): QueuePoint[] => rows.map(([at, bytes, retries = 0]) => ({ at, bytes, retries }));

describe('trulyDrainedAt', () => {
  test('a backlog that drains: the first 0 after the last pending bytes', () => {
    const s = series([0, 0], [100, 500], [200, 300], [300, 0], [400, 0]);
    expect(trulyDrainedAt(s, 0, 400)).toEqual({ at: 300, pendingZeroAt: 300, lastBacklogAt: 200, peakBytes: 500 });
  });

  test('a block re-sent after the pending bytes reached 0: gone only at the retry', () => {
    // vmagent holds a block outside the pending bytes while it retries; the counter grows at 300.
    const s = series([0, 0], [100, 500], [200, 0], [300, 0, 1], [400, 0, 1]);
    expect(trulyDrainedAt(s, 0, 400)).toEqual({ at: 300, pendingZeroAt: 200, lastBacklogAt: 100, peakBytes: 500, lastRetryAt: 300 });
  });

  test('a retry before the pending bytes reached 0 does not move the drain', () => {
    const s = series([0, 0], [100, 500], [150, 400, 1], [200, 300, 1], [300, 0, 1]);
    expect(trulyDrainedAt(s, 0, 300)).toEqual({ at: 300, pendingZeroAt: 300, lastBacklogAt: 200, peakBytes: 500, lastRetryAt: 150 });
  });

  test('a transient 0 before the backlog refills is not the drain', () => {
    const s = series([100, 500], [200, 0], [300, 200], [400, 0], [500, 0]);
    expect(trulyDrainedAt(s, 0, 500)).toMatchObject({ at: 400, pendingZeroAt: 400, lastBacklogAt: 300 });
  });

  test('a queue that never drained, no backlog at all, and an empty series: undefined', () => {
    expect(trulyDrainedAt(series([100, 500], [200, 400], [300, 400]), 0, 300)).toBeUndefined();
    expect(trulyDrainedAt(series([100, 0], [200, 0]), 0, 200)).toBeUndefined();
    expect(trulyDrainedAt([], 0, 1000)).toBeUndefined();
  });

  test('only the window counts: a backlog before it, a drain after it, a retry counted against a point outside it', () => {
    const s = series([0, 900], [50, 0], [100, 0, 5], [200, 300, 5], [300, 300, 5], [400, 0, 5]);
    // From 100: the retry count 5 at 100 is not compared with the 0 before the window; the backlog at 0 is not seen.
    expect(trulyDrainedAt(s, 100, 400)).toEqual({ at: 400, pendingZeroAt: 400, lastBacklogAt: 300, peakBytes: 300 });
    // Until 300: the 0 at 400 is past the decision, so not drained within the window.
    expect(trulyDrainedAt(s, 100, 300)).toBeUndefined();
  });
});

describe('valueAt', () => {
  const s = series([100, 5], [200, 7]);
  test('the last point at or before t', () => {
    expect(valueAt(s, 100)).toEqual({ bytes: 5, extrapolated: false });
    expect(valueAt(s, 199)).toEqual({ bytes: 5, extrapolated: false });
    expect(valueAt(s, 200)).toEqual({ bytes: 7, extrapolated: false });
  });
  test('past the end: the last value, extrapolated; before the start or no points: undefined', () => {
    expect(valueAt(s, 250)).toEqual({ bytes: 7, extrapolated: true });
    expect(valueAt(s, 99)).toBeUndefined();
    expect(valueAt([], 0)).toBeUndefined();
  });
});
