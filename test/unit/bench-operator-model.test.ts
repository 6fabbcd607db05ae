// The VM operator's queue wait replayed on a recorded series (bench/analysis/operator-model.ts): 5 s
// readiness polls from the patch, then a 50 s poll that accepts the first 0 pending bytes.
import { firstEmptyPoll, replayOperator, replayOperatorPhases } from '../../bench/analysis/operator-model';
import type { QueuePoint } from '../../bench/analysis/vmagent-backlog';

/** A point every 100 ms over [0, endMs), its pending bytes from bytesAt. */
const every100ms = (endMs: number, bytesAt: (t: number) => number): QueuePoint[] =>
  Array.from({ length: endMs / 100 }, (_, i) => ({ at: i * 100, bytes: bytesAt(i * 100), retries: 0 }));

describe('firstEmptyPoll', () => {
  const s: QueuePoint[] = [
    { at: 0, bytes: 1000, retries: 0 },
    { at: 60_000, bytes: 0, retries: 0 },
    { at: 200_000, bytes: 0, retries: 0 },
  ];
  test('polls at readyAt and every 50 s after, done at the first 0', () => {
    expect(firstEmptyPoll(s, 10_000)).toEqual({ at: 60_000, polls: 2, extrapolated: false });
    expect(firstEmptyPoll(s, 60_000)).toEqual({ at: 60_000, polls: 1, extrapolated: false });
  });
  test('a poll past the end of the series reads its last value, flagged', () => {
    expect(firstEmptyPoll(s.slice(0, 2), 20_000)).toEqual({ at: 70_000, polls: 2, extrapolated: true });
  });
  test('ready before the series starts, or a queue that never reads 0: no decision', () => {
    expect(firstEmptyPoll(s, -1)).toBeUndefined();
    expect(firstEmptyPoll([{ at: 0, bytes: 1, retries: 0 }], 0)).toBeUndefined();
    expect(firstEmptyPoll([], 0)).toBeUndefined();
  });
});

describe('replayOperator', () => {
  const drainedAt2s = every100ms(200_000, (t) => (t < 2_000 ? 1000 : 0));
  test('readiness is seen at the first 5 s poll at or after the VMCluster became operational', () => {
    // Patched at 0, operational at 12 s: polls at 0, 5, 10, 15 s → seen at 15 s; the queue reads 0 then.
    expect(replayOperator(drainedAt2s, 0, 12_000)).toEqual({ decisionAt: 15_000, readyDetectedAt: 15_000, polls: 1, extrapolated: false });
    // Operational exactly on a poll.
    expect(replayOperator(drainedAt2s, 0, 10_000)?.readyDetectedAt).toBe(10_000);
    // Operational before the patch landed (already): the immediate poll, at 1 s, reads bytes; the next, 50 s later, 0.
    expect(replayOperator(drainedAt2s, 1_000, 500)).toEqual({ decisionAt: 51_000, readyDetectedAt: 1_000, polls: 2, extrapolated: false });
  });
});

describe('replayOperatorPhases', () => {
  // Operational at 0; the queue has bytes until 2 s, 0 from then on. A phase p < 2 s reads bytes at p
  // and decides at p + 50 s; a phase p ≥ 2 s decides at p.
  const s = every100ms(200_000, (t) => (t < 2_000 ? 1000 : 0));

  test('50 phases, hand-computed latencies from the backlog gone at 2 s', () => {
    const r = replayOperatorPhases(s, 0, 2_000, 2_000);
    // Latencies: phases 0..1.9 s → p + 48 s (20 of them); phases 2..4.9 s → p − 2 s (30 of them).
    // Sum: 20 × 48,000 + 100 × (0 + … + 19) + 100 × (0 + … + 29) = 960,000 + 19,000 + 43,500.
    expect(r).toEqual({
      phases: 50,
      meanLatencyMs: 1_022_500 / 50,
      p50LatencyMs: 2_450, // between the 25th and 26th of 50 sorted: 2,400 and 2,500
      maxLatencyMs: 49_900,
      acceptedBeforeDrainedFraction: 0,
      acceptedBeforePendingZeroFraction: 0,
      waitedOneMorePollFraction: 0.4,
      extrapolatedFraction: 0,
    });
  });

  test('a block still retried after the pending bytes reached 0: the phases that accept in between are early', () => {
    // Truly gone at 3 s (the last retry), pending 0 at 2 s: phases 2.0..2.9 s accept before it.
    const r = replayOperatorPhases(s, 0, 3_000, 2_000);
    expect(r.acceptedBeforeDrainedFraction).toBe(0.2);
    expect(r.acceptedBeforePendingZeroFraction).toBe(0);
    expect(r.meanLatencyMs).toBe(1_022_500 / 50 - 1_000);
  });

  test('a transient 0 read by one phase counts as accepted before the pending bytes reached 0', () => {
    const blip = every100ms(200_000, (t) => (t < 2_000 && t !== 500 ? 1000 : 0));
    const r = replayOperatorPhases(blip, 0, 2_000, 2_000);
    expect(r.acceptedBeforePendingZeroFraction).toBe(0.02);
    expect(r.acceptedBeforeDrainedFraction).toBe(0.02);
  });

  test('a queue that never drained, and an empty series: no phase decides, every figure NaN', () => {
    for (const points of [every100ms(200_000, () => 1000), []]) {
      const r = replayOperatorPhases(points, 0, 2_000, 2_000);
      expect(r.phases).toBe(0);
      for (const v of [r.meanLatencyMs, r.p50LatencyMs, r.maxLatencyMs, r.acceptedBeforeDrainedFraction, r.waitedOneMorePollFraction, r.extrapolatedFraction])
        expect(v).toBeNaN();
    }
  });
});
