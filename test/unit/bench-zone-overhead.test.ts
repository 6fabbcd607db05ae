// The orchestration overhead maths of the rollout benchmark (bench/analysis/zone-overhead.ts,
// drain-detection.ts) on one hand-made zone.
import { drainDetectionLatency, drainLatencyOverZones } from '../../bench/analysis/drain-detection';
import { overheadOverZones, unavoidableWaits, zoneOverhead, zoneTimeline, type ZoneInstants } from '../../bench/analysis/zone-overhead';

const QUEUE_DRAINED_FOR_MS = 6_000;
const READ_DRAIN_DELAY_MS = 2_000;

// ms from the zone's start: the demo's shape (reloads 4 s, quiet 1 s of a 2 s readDrainDelay, 12 s down).
const zone: ZoneInstants = {
  startedAt: 0,
  leaveWritten: 500,
  leaveServed: 4_500,
  readsQuietFrom: 4_800,
  readsQuietTo: 5_800,
  zoneDown: 6_000,
  zoneUp: 18_000,
  backlogGone: 20_000,
  decisionAt: 26_400, // 400 ms after backlog gone + queueDrainedFor
  rejoinWritten: 26_600,
  rejoinServed: 30_600,
  finishedAt: 30_800,
};

describe('unavoidableWaits', () => {
  test('each wait from its own instants; the reads drain is the measured quiet, not readDrainDelay', () => {
    expect(unavoidableWaits(zone, QUEUE_DRAINED_FOR_MS)).toEqual({
      leaveReloadMs: 4_000,
      readsQuietMs: 1_000,
      downtimeMs: 12_000,
      backlogMs: 2_000,
      queueDrainedForMs: 6_000,
      rejoinReloadMs: 4_000,
    });
  });
});

describe('zoneOverhead', () => {
  const o = zoneOverhead(zone, unavoidableWaits(zone, QUEUE_DRAINED_FOR_MS), READ_DRAIN_DELAY_MS);

  test('the headline: 30.8 s for 29 s of unavoidable waits', () => {
    expect(o.actualMs).toBe(30_800);
    expect(o.idealMs).toBe(29_000);
    expect(o.orchestrationMs).toBe(1_800);
    expect(o.overhead).toBeCloseTo(30_800 / 29_000, 12); // 1.0621: misses 1.05
  });

  test('counting readDrainDelay in place of the quiet hides a second of orchestration', () => {
    expect(o.overheadCountingReadDrainDelay).toBeCloseTo(30_800 / 30_000, 12); // 1.0267
    expect(o.overheadCountingReadDrainDelay).toBeLessThan(o.overhead);
  });

  test('a quiet as long as readDrainDelay: both ratios agree', () => {
    const slow = { ...zone, readsQuietTo: zone.readsQuietFrom + READ_DRAIN_DELAY_MS };
    const s = zoneOverhead(slow, unavoidableWaits(slow, QUEUE_DRAINED_FOR_MS), READ_DRAIN_DELAY_MS);
    expect(s.overhead).toBe(s.overheadCountingReadDrainDelay);
  });
});

describe('overheadOverZones', () => {
  const of = (overhead: number, overheadCountingReadDrainDelay: number) => ({
    actualMs: 0,
    idealMs: 0,
    orchestrationMs: 0,
    overhead,
    overheadCountingReadDrainDelay,
  });
  test('mean and max of each ratio', () => {
    const r = overheadOverZones([of(1.1, 1.04), of(1.0, 1.0)]);
    expect(r.overheadMean).toBeCloseTo(1.05, 12);
    expect(r.overheadMax).toBe(1.1);
    expect(r.overheadMeanCountingReadDrainDelay).toBeCloseTo(1.02, 12);
    expect(r.overheadMaxCountingReadDrainDelay).toBe(1.04);
  });
  test('no zone: NaN, never a ratio that looks met', () => {
    expect(Object.values(overheadOverZones([])).every(Number.isNaN)).toBe(true);
  });
});

describe('zoneTimeline', () => {
  const t = zoneTimeline(zone, QUEUE_DRAINED_FOR_MS);
  test('contiguous segments in order, hand-computed', () => {
    expect(t.map((s) => s.ms)).toEqual([500, 4_000, 300, 1_000, 200, 12_000, 2_000, 6_000, 400, 200, 4_000, 200]);
  });
  test('they sum to the zone time, the ideal ones to the unavoidable waits', () => {
    const total = (xs: typeof t) => xs.reduce((a, s) => a + s.ms, 0);
    expect(total(t)).toBe(zone.finishedAt - zone.startedAt);
    expect(total(t.filter((s) => s.ideal))).toBe(29_000);
    expect(total(t.filter((s) => !s.ideal))).toBe(1_800);
  });
});

describe('drainDetectionLatency', () => {
  test('after backlog gone + queueDrainedFor, in ms and in polls', () => {
    expect(drainDetectionLatency(zone.decisionAt, zone.backlogGone, QUEUE_DRAINED_FOR_MS, 500)).toEqual({ latencyMs: 400, overPoll: 0.8 });
  });
  test('a decision before its target is negative', () => {
    expect(drainDetectionLatency(25_900, zone.backlogGone, QUEUE_DRAINED_FOR_MS, 500)).toEqual({ latencyMs: -100, overPoll: -0.2 });
  });
});

describe('drainLatencyOverZones', () => {
  test('one zone over a poll shows in the max even when the mean is under one', () => {
    const r = drainLatencyOverZones([0.5, 1.4, 0.8]);
    expect(r.mean).toBeCloseTo(0.9, 12);
    expect(r.max).toBe(1.4);
  });
  test('no zone: NaN', () => {
    expect(drainLatencyOverZones([])).toEqual({ mean: NaN, max: NaN });
  });
});
