// The canary analysis over its bake (workflows/analysis.ts): the baseline it is compared with, and
// what its measurements add up to (the first failure decides; nothing measured is never a pass).
import type { AnalysisMeasurement } from '../../api/types';
import { baselineCandidates, concludeAnalysis, MAX_MEASUREMENTS, measurementInterval, recordMeasurement, startAnalysis } from '../../workflows/analysis';
import type { ZoneState } from '../../workflows/state';

const zone = (name: string, phase: ZoneState['phase'], outOfRotation = false): ZoneState => ({
  name,
  vmcluster: `vm-${name}`,
  phase,
  outOfRotation,
  patchAttempted: false,
  drainedConfirmed: false,
});
const m = (verdict: AnalysisMeasurement['verdict'], message: string = verdict): AnalysisMeasurement => ({ at: 't', verdict, queries: [], message });

test('the baseline: the first zone of the order this rollout has not touched, in reads; none when there is none', () => {
  const order = ['az-c', 'az-a', 'az-b'];
  expect(baselineCandidates([zone('az-a', 'Pending'), zone('az-b', 'Pending'), zone('az-c', 'Analyzing', true)], order, 'az-c').map((z) => z.name)).toEqual([
    'az-a',
    'az-b',
  ]);
  // Skipped (already at the new version), Done, Failed or out of reads are no baseline.
  expect(baselineCandidates([zone('az-a', 'Skipped'), zone('az-b', 'Pending', true), zone('az-c', 'Analyzing', true)], order, 'az-c')).toEqual([]);
  expect(baselineCandidates([zone('az-a', 'Done'), zone('az-b', 'Pending'), zone('az-c', 'Analyzing', true)], order, 'az-c').map((z) => z.name)).toEqual([
    'az-b',
  ]);
});

test('Successful only when every measurement was; any Failed decides (and stays shown); Inconclusive otherwise', () => {
  const a0 = startAnalysis('t0', 120_000, 'az-b');
  expect(a0).toMatchObject({ verdict: 'Running', bakeSeconds: 120, measurements: 0, message: 'comparing with zone az-b' });
  const ok = [m('Successful'), m('Successful')].reduce(recordMeasurement, a0);
  expect(concludeAnalysis(ok)).toMatchObject({
    verdict: 'Successful',
    measurements: 2,
    message: 'canary analysis Successful after 2 measurements against az-b (0 Failed, 0 Inconclusive): Successful',
  });
  const failed = [m('Successful'), m('Failed', 'the first failure'), m('Successful')].reduce(recordMeasurement, a0);
  expect(failed.latest!.message).toBe('the first failure');
  expect(concludeAnalysis(failed)).toMatchObject({ verdict: 'Failed', failed: 1 });
  expect(concludeAnalysis([m('Successful'), m('Inconclusive')].reduce(recordMeasurement, a0))).toMatchObject({ verdict: 'Inconclusive', inconclusive: 1 });
  expect(concludeAnalysis([m('Inconclusive'), m('Failed')].reduce(recordMeasurement, a0)).verdict).toBe('Failed');
});

test('nothing measured, no baseline, or a bake cut short is Inconclusive, never a pass', () => {
  expect(concludeAnalysis(startAnalysis('t0', 60_000, undefined))).toMatchObject({
    verdict: 'Inconclusive',
    message: 'canary analysis Inconclusive after 0 measurements against no zone (0 Failed, 0 Inconclusive): no zone to compare with',
  });
  const cut = concludeAnalysis(recordMeasurement(startAnalysis('t0', 60_000, 'az-b'), m('Successful')), 'the bake cut short by generation 9');
  expect(cut).toMatchObject({ verdict: 'Inconclusive', message: expect.stringMatching(/: the bake cut short by generation 9$/) });
});

test('the interval: as asked, at most the bake, and stretched so that one bake takes at most MAX_MEASUREMENTS measurements', () => {
  expect(measurementInterval(300_000, 30_000)).toBe(30_000);
  expect(measurementInterval(10_000, 30_000)).toBe(10_000);
  // 24 h every second would be 86,400 measurements: one every 173 s at least.
  const day = 24 * 3_600_000;
  expect(measurementInterval(day, 1_000)).toBe(Math.ceil(day / MAX_MEASUREMENTS));
  expect(day / measurementInterval(day, 1_000)).toBeLessThanOrEqual(MAX_MEASUREMENTS);
});
