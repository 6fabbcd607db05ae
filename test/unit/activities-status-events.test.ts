// The Events a status write raises (activities/status/events.ts): one per zone transition and per
// rollout phase an SRE is told about, none when the status already says it (a retried write).
import type { VMDistributedClusterStatus, ZonePhase } from '../../api/types';
import { statusEvents } from '../../activities/status/events';
import { RELEASED_BY_HAND } from '../../api/recorded-status';

const zone = (name: string, phase: ZonePhase, extra: object = {}) => ({ name, phase, ...extra });
const st = (zones: ReturnType<typeof zone>[], extra: Partial<VMDistributedClusterStatus> = {}): VMDistributedClusterStatus => ({
  phase: 'Progressing',
  zones,
  ...extra,
});
const reasons = (before: VMDistributedClusterStatus | undefined, after: VMDistributedClusterStatus) =>
  statusEvents(before, after).map((e) => `${e.type}/${e.reason}`);

test.each([
  ['LeavingReads', 'WaitingForSwitch', 'Normal/ZoneLeftReads'],
  ['WaitingForSwitch', 'Upgrading', undefined],
  ['Upgrading', 'WaitingOperational', 'Normal/ZoneUpgraded'],
  ['WaitingOperational', 'WaitingForQueue', 'Normal/ZoneOperational'],
  ['WaitingForQueue', 'RejoiningReads', 'Normal/ZoneDrained'],
  ['WaitingOperational', 'Failed', 'Warning/ZoneFailed'],
] as Array<[ZonePhase, ZonePhase, string | undefined]>)('zone %s → %s: %s', (from, to, expected) => {
  expect(reasons(st([zone('az-a', 'Done'), zone('az-b', from)]), st([zone('az-a', 'Done'), zone('az-b', to)]))).toEqual(expected ? [expected] : []);
});

test('a retried write (the status already says it) raises nothing', () => {
  const s = st([zone('az-a', 'WaitingForQueue', { vmclusterGeneration: 4 })], { zonesOutOfRotation: ['az-a'] });
  expect(statusEvents(s, s)).toEqual([]);
});

test('the upgrade names the VMCluster generation; a failure says whether the zone is kept out of reads', () => {
  const [upgraded] = statusEvents(st([zone('az-a', 'Upgrading')]), st([zone('az-a', 'WaitingOperational', { vmclusterGeneration: 7 })]));
  expect(upgraded!.message).toContain('generation 7');
  const failedOut = statusEvents(undefined, st([zone('az-a', 'Failed', { message: 'zoneTimeout exhausted' })], { zonesOutOfRotation: ['az-a'] }));
  expect(failedOut.map((e) => e.message)).toEqual(['zone az-a failed, kept OUT of read rotation: zoneTimeout exhausted']);
  const failedIn = statusEvents(undefined, st([zone('az-a', 'Failed', { message: 'carriers not ready' })], { zonesOutOfRotation: [] }));
  expect(failedIn[0]!.message).toContain('still in read rotation');
});

test('a zone leaving zonesOutOfRotation rejoined, or was released by a person', () => {
  const before = st([zone('az-a', 'RejoiningReads')], { zonesOutOfRotation: ['az-a'] });
  expect(reasons(before, st([zone('az-a', 'Done')], { zonesOutOfRotation: [] }))).toEqual(['Normal/ZoneRejoined']);
  expect(reasons(before, st([zone('az-a', 'RejoiningReads', { message: RELEASED_BY_HAND })], { zonesOutOfRotation: [] }))).toEqual(['Normal/ZoneReleased']);
  // A write that does not carry zonesOutOfRotation says nothing about it.
  expect(reasons(before, st([zone('az-a', 'RejoiningReads')]))).toEqual([]);
});

test('a new generation starting over Done zones raises nothing until its zones move', () => {
  const old = st([zone('az-a', 'Done'), zone('az-b', 'Done')], { phase: 'Succeeded' });
  expect(reasons(old, st([zone('az-a', 'Pending'), zone('az-b', 'Pending')]))).toEqual([]);
});

test('the rollout phases an SRE is told: succeeded, failed, cancelled, paused and resumed — once each', () => {
  const s = (phase: VMDistributedClusterStatus['phase'], message?: string) => st([], { phase, ...(message ? { message } : {}) });
  expect(statusEvents(s('Progressing'), s('Succeeded', 'every zone upgraded'))).toEqual([
    { type: 'Normal', reason: 'RolloutSucceeded', message: 'every zone upgraded' },
  ]);
  expect(reasons(s('Progressing'), s('Failed'))).toEqual(['Warning/RolloutFailed']);
  expect(reasons(s('Progressing'), s('Cancelled'))).toEqual(['Normal/RolloutCancelled']);
  expect(reasons(s('Progressing'), s('Paused'))).toEqual(['Normal/RolloutPaused']);
  expect(reasons(s('Paused'), s('Progressing'))).toEqual(['Normal/RolloutResumed']);
  expect(reasons(s('Succeeded'), s('Succeeded'))).toEqual([]);
  expect(reasons(s('Pending'), s('Progressing'))).toEqual([]);
});

test('a gate is told when the rollout reaches it (once), when it is passed, and an abort as the end of the rollout', () => {
  const waiting = { gates: ['AfterFirstZone' as const], nextZone: 'az-b', since: '2026-12-05T10:00:00Z' };
  const before = st([zone('az-a', 'Done'), zone('az-b', 'Pending')]);
  const atGate = st([zone('az-a', 'Done'), zone('az-b', 'Pending')], { awaiting: waiting, message: 'waiting at gate AfterFirstZone' });
  expect(statusEvents(before, atGate)).toEqual([{ type: 'Normal', reason: 'RolloutAwaitingApproval', message: 'waiting at gate AfterFirstZone' }]);
  expect(reasons(atGate, atGate)).toEqual([]);
  // The next gate (another zone, or the same zone reached again after a new generation) is told again.
  expect(reasons(atGate, { ...atGate, awaiting: { ...waiting, since: '2026-12-05T11:00:00Z' } })).toEqual(['Normal/RolloutAwaitingApproval']);
  const started = st([zone('az-a', 'Done'), zone('az-b', 'LeavingReads')]);
  expect(statusEvents(atGate, started)).toEqual([{ type: 'Normal', reason: 'RolloutPromoted', message: 'gate AfterFirstZone passed: zone az-b starts' }]);
  expect(reasons(atGate, st([zone('az-a', 'Done'), zone('az-b', 'Pending')], { phase: 'Aborted' }))).toEqual(['Normal/RolloutAborted']);
  expect(reasons(atGate, st([zone('az-a', 'Done'), zone('az-b', 'Pending')], { phase: 'Superseded' }))).toEqual([]);
});

test('the canary: its bake starts on ZoneDrained, it rejoins on CanaryPassed; a promote after an Inconclusive analysis says so', () => {
  const analysis = {
    verdict: 'Running',
    baseline: 'az-b',
    startedAt: 't',
    bakeSeconds: 300,
    measurements: 0,
    failed: 0,
    inconclusive: 0,
    message: 'comparing with zone az-b',
  };
  const [drained] = statusEvents(st([zone('az-a', 'WaitingForQueue')]), st([zone('az-a', 'Analyzing', { analysis })]));
  expect(drained).toEqual({
    type: 'Normal',
    reason: 'ZoneDrained',
    message: 'zone az-a: vmagent backlog drained; the canary is analysed for 300 s against zone az-b, out of read rotation',
  });
  const passed = {
    ...analysis,
    verdict: 'Successful',
    measurements: 11,
    message: 'canary analysis Successful after 11 measurements against az-b (0 Failed, 0 Inconclusive)',
  };
  expect(statusEvents(st([zone('az-a', 'Analyzing', { analysis })]), st([zone('az-a', 'RejoiningReads', { analysis: passed })]))).toEqual([
    { type: 'Normal', reason: 'CanaryPassed', message: `zone az-a: ${passed.message}; rejoining read rotation` },
  ]);
  const awaiting = { gates: [], nextZone: 'az-a', canary: 'az-a', since: 't' };
  const waiting = st([zone('az-a', 'Analyzing', { analysis })], { awaiting });
  expect(reasons(st([zone('az-a', 'Analyzing', { analysis })]), waiting)).toEqual(['Normal/RolloutAwaitingApproval']);
  expect(statusEvents(waiting, st([zone('az-a', 'RejoiningReads', { analysis: { ...analysis, verdict: 'Inconclusive', promoted: true } })]))).toContainEqual({
    type: 'Normal',
    reason: 'RolloutPromoted',
    message: 'canary az-a promoted by a person after an Inconclusive analysis: it rejoins reads',
  });
});

test('the capacity guard: its wait is RolloutAwaitingApproval (the message says why), its promote says the zone goes on out of reads', () => {
  const awaiting = { gates: [], nextZone: 'az-b', capacity: '20 of 100 reads failed', since: 't' };
  const out = { zonesOutOfRotation: ['az-b'] };
  const waiting = st([zone('az-b', 'WaitingForSwitch')], { ...out, awaiting, message: 'the capacity guard stopped before zone az-b' });
  expect(statusEvents(st([zone('az-b', 'WaitingForSwitch')], out), waiting)).toEqual([
    { type: 'Normal', reason: 'RolloutAwaitingApproval', message: 'the capacity guard stopped before zone az-b' },
  ]);
  expect(statusEvents(waiting, st([zone('az-b', 'Upgrading')], out))).toEqual([
    { type: 'Normal', reason: 'RolloutPromoted', message: 'zone az-b goes on, out of reads, promoted by a person after the capacity guard breached' },
  ]);
});

test('a zone its trafficMode holds is told held once its last step is done, and stays out (no ZoneRejoined)', () => {
  const held = (phase: ZonePhase) => zone('az-c', phase, { trafficMode: 'write-only' });
  const before = st([held('WaitingOperational')], { zonesOutOfRotation: ['az-c'] });
  expect(statusEvents(before, st([held('Done')], { zonesOutOfRotation: ['az-c'] }))).toEqual([
    { type: 'Normal', reason: 'ZoneHeld', message: 'zone az-c held out of read rotation: trafficMode write-only' },
  ]);
  // Already told (a retried write, or the next generation finding it held): nothing.
  expect(reasons(st([held('Skipped')], { zonesOutOfRotation: ['az-c'] }), st([held('Skipped')], { zonesOutOfRotation: ['az-c'] }))).toEqual([]);
  // Negative control: the same zone done without a trafficMode is no hold.
  expect(reasons(st([zone('az-c', 'WaitingOperational')]), st([zone('az-c', 'Done')], { zonesOutOfRotation: ['az-c'] }))).toEqual([]);
});
