// The one derivation of what the rollout tells (workflows/status.ts), as a table: a state (a run
// note, zone phases and notes) → phase, message, zone messages, conditions; the Web UI's details,
// the progress query and the Events follow from the same derivation.
import { mergeConditions } from '../../api/conditions';
import type { ZonePhase, ZoneStep } from '../../api/types';
import { statusEvents } from '../../activities/status/events';
import type { RolloutState, RunNote, ZoneNote, ZoneState } from '../../workflows/state';
import { deriveStatus, progressOf } from '../../workflows/status';

const object = { namespace: 'ns', name: 'x', uid: 'u', generation: 7 };
const wf = { id: 'vmdc/ns/x/g7-u', runId: 'r' };
const NOW = '2026-01-01T00:00:00.000Z';

function zone(name: string, o: Partial<ZoneState> = {}): ZoneState {
  return { name, vmcluster: `vm-${name}`, phase: 'Pending', outOfRotation: false, patchAttempted: false, drainedConfirmed: false, ...o };
}

function state(o: Partial<RolloutState> = {}): RolloutState {
  return { run: { kind: 'starting' }, order: ['b', 'a'], zones: [zone('a'), zone('b')], paused: false, conditions: [], routesDeferred: false, ...o };
}

/** State with zone b at `phase`, noted `note`, (optionally) out of reads. */
function zoneB(run: RunNote, phase: ZonePhase, note?: ZoneNote, o: Partial<ZoneState> = {}): RolloutState {
  const step = phase === 'Pending' || phase === 'Done' || phase === 'Skipped' || phase === 'Failed' ? undefined : (phase as ZoneStep);
  return state({ run, currentZone: 'b', ...(step ? { currentStep: step } : {}), zones: [zone('a'), zone('b', { phase, note, ...o })] });
}

const out = { outOfRotation: true };
const CONFIRMED = '1 vmauth pod runs config 00000001 without VMCluster vm-b';

type Row = [what: string, s: RolloutState, phase: string, message: string, zoneBMessage: string | undefined];

const rows: Row[] = [
  ['a new run', state(), 'Pending', 'starting', undefined],
  [
    'zones adopted from the records',
    zoneB({ kind: 'adopted', zones: ['b'] }, 'Pending', { kind: 'adopted', since: 't0', generation: 3 }, out),
    'Pending',
    'adopted zones out of read rotation: b',
    'out of read rotation since t0 (left by generation 3): upgraded once every vmauth pod is confirmed to run a config without it; rejoins once operational at the desired spec and drained',
  ],
  [
    'preparing',
    state({ run: { kind: 'preparing' } }),
    'Progressing',
    'applying the VMAgent, creating missing VMClusters, applying the VMAuth and the VMUsers',
    undefined,
  ],
  [
    'waiting for the carriers',
    zoneB({ kind: 'zone-step', zone: 'b', step: 'LeavingReads' }, 'LeavingReads', { kind: 'waiting-for-carriers', carriers: ['a', 'c'] }),
    'Progressing',
    'zone b: LeavingReads',
    'waiting until the zones that will carry its reads (a, c) are operational with empty vmagent backlogs',
  ],
  [
    'confirming the switch before leaving',
    zoneB({ kind: 'zone-step', zone: 'b', step: 'LeavingReads' }, 'LeavingReads', { kind: 'confirming-switch', expect: 'present', vmauth: 'g' }),
    'Progressing',
    'zone b: LeavingReads',
    "waiting until every ready vmauth pod runs the operator's config with VMCluster vm-b (config-reloader content hash = CRC32 of Secret vmauth-config-g)",
  ],
  [
    'announced leaving',
    zoneB({ kind: 'zone-step', zone: 'b', step: 'LeavingReads' }, 'LeavingReads', { kind: 'leaving' }, { ...out, switchConfirmed: 'before' }),
    'Progressing',
    'zone b: LeavingReads',
    'out of read rotation for the upgrade',
  ],
  [
    'out for the upgrade, switch confirmed',
    zoneB({ kind: 'zone-step', zone: 'b', step: 'Upgrading' }, 'Upgrading', { kind: 'out-for-upgrade' }, { ...out, switchConfirmed: CONFIRMED }),
    'Progressing',
    'zone b: Upgrading',
    `out of read rotation for the upgrade (${CONFIRMED})`,
  ],
  [
    'draining reads',
    zoneB(
      { kind: 'zone-step', zone: 'b', step: 'WaitingForSwitch' },
      'WaitingForSwitch',
      { kind: 'draining-reads', quietMs: 10_000 },
      { ...out, switchConfirmed: CONFIRMED },
    ),
    'Progressing',
    'zone b: WaitingForSwitch',
    `${CONFIRMED}; waiting until VMCluster vm-b's vmselects see no new /select/ request for 10 s (at most readDrainDelay)`,
  ],
  [
    'out of reads with nothing noted',
    zoneB({ kind: 'zone-step', zone: 'b', step: 'WaitingForQueue' }, 'WaitingForQueue', undefined, out),
    'Progressing',
    'zone b: WaitingForQueue',
    'out of read rotation: WaitingForQueue',
  ],
  [
    'a zone failed out of reads',
    zoneB({ kind: 'failed', zone: 'b', step: 'Upgrading', reason: 'boom' }, 'Failed', { kind: 'failed', step: 'Upgrading', reason: 'boom' }, out),
    'Failed',
    'zone b failed at Upgrading: boom',
    'failed at Upgrading, kept out of read rotation: boom',
  ],
  [
    'a zone failed in reads',
    zoneB({ kind: 'failed', zone: 'b', step: 'LeavingReads', reason: 'EmptyRoute' }, 'Failed', { kind: 'failed', step: 'LeavingReads', reason: 'EmptyRoute' }),
    'Failed',
    'zone b failed at LeavingReads: EmptyRoute',
    'failed at LeavingReads: EmptyRoute',
  ],
  ['preparing failed', state({ run: { kind: 'failed', reason: 'boom' } }), 'Failed', 'failed: boom', undefined],
  [
    'retrying a zone',
    zoneB({ kind: 'retrying', zone: 'b', step: 'Upgrading' }, 'Failed', { kind: 'failed', step: 'Upgrading', reason: 'boom' }, out),
    'Progressing',
    'retrying zone b from Upgrading',
    'failed at Upgrading, kept out of read rotation: boom',
  ],
  ['retrying preparing', state({ run: { kind: 'retrying' } }), 'Progressing', 'retrying', undefined],
  [
    'paused before a step',
    { ...zoneB({ kind: 'zone-step', zone: 'b', step: 'Upgrading' }, 'Upgrading', { kind: 'out-for-upgrade' }, out), paused: true },
    'Paused',
    'paused before Upgrading of zone b',
    'out of read rotation for the upgrade',
  ],
  ['paused before any zone', state({ paused: true }), 'Paused', 'paused', undefined],
  [
    'the status refused',
    zoneB({ kind: 'status-refused' }, 'LeavingReads', { kind: 'leaving' }),
    'Progressing',
    'the status is no longer ours to write (a newer generation, or the object is gone): stopping',
    'out of read rotation for the upgrade',
  ],
  [
    'a zone skipped',
    zoneB({ kind: 'zone-skipped', zone: 'b' }, 'Skipped', { kind: 'skipped' }),
    'Progressing',
    'zone b already up to date',
    'already up to date and operational',
  ],
  ['a zone done', zoneB({ kind: 'zone-done', zone: 'b' }, 'Done'), 'Progressing', 'zone b done', undefined],
  [
    'route objects applied at the end',
    state({ run: { kind: 'applying-deferred-routes' } }),
    'Progressing',
    'applying the VMAuth and the VMUsers (left while zones were out of reads)',
    undefined,
  ],
  [
    'superseded before the patch',
    zoneB({ kind: 'superseded', generation: 8 }, 'Pending', { kind: 'superseded-unpatched', generation: 8 }),
    'Superseded',
    'superseded by generation 8',
    'not upgraded: superseded by generation 8',
  ],
  [
    'cancelled, kept out',
    zoneB({ kind: 'cancelled', out: ['b'] }, 'WaitingOperational', { kind: 'stays-out', why: 'cancelled', reason: 'VMCluster not operational' }, out),
    'Cancelled',
    'cancelled; out of read rotation: b',
    'stays out of read rotation (cancelled): VMCluster not operational',
  ],
  [
    'cancelled before the upgrade',
    zoneB({ kind: 'cancelled', out: [] }, 'Upgrading', { kind: 'rejoined', why: 'cancelled', how: 'before-upgrade' }),
    'Cancelled',
    'cancelled',
    'rejoined reads (cancelled) before upgrade',
  ],
  [
    'rejoined after the upgrade',
    zoneB({ kind: 'cancelled', out: [] }, 'RejoiningReads', { kind: 'rejoined', why: 'cancelled', how: 'after-upgrade' }),
    'Cancelled',
    'cancelled',
    'rejoined reads (cancelled) after upgrade',
  ],
  [
    'rejoined, the patch never landed',
    zoneB({ kind: 'superseded', generation: 9 }, 'Failed', { kind: 'rejoined', why: 'superseded after failure', how: 'not-changed' }),
    'Superseded',
    'superseded by generation 9',
    'rejoined reads (superseded after failure): VMCluster was not changed',
  ],
  [
    'rejoined once drained',
    zoneB({ kind: 'cancelled', out: [] }, 'WaitingForQueue', { kind: 'rejoined', why: 'cancelled', how: 'drained', generation: 4 }),
    'Cancelled',
    'cancelled',
    'rejoined reads (cancelled): operational at generation 4 and drained',
  ],
  [
    'stale',
    state({ run: { kind: 'stale', message: 'generation 8 asks for another rollout' } }),
    'Superseded',
    'generation 8 asks for another rollout',
    undefined,
  ],
  [
    'succeeded',
    state({
      run: { kind: 'succeeded', clusterVersion: 'v2', upgraded: 1, upToDate: 1 },
      zones: [zone('a', { phase: 'Done' }), zone('b', { phase: 'Skipped', note: { kind: 'skipped' } })],
    }),
    'Succeeded',
    'all zones at v2 (1 upgraded, 1 already up to date)',
    'already up to date and operational',
  ],
];

test.each(rows)('%s', (_what, s, phase, message, zoneBMessage) => {
  const { status, details } = deriveStatus(s, object, wf, NOW);
  expect(status.phase).toBe(phase);
  expect(status.message).toBe(message);
  expect(status.zones?.map((z) => z.name)).toEqual(['b', 'a']); // rollout order
  expect(status.zones?.[0]?.message).toBe(zoneBMessage);
  // Only a success records itself for `kubectl vmdc undo`; every other write leaves the last one as it is (merge patch).
  expect(status.lastSucceeded).toEqual(phase === 'Succeeded' ? { clusterVersion: 'v2', generation: object.generation } : undefined);
  expect(status.zonesOutOfRotation).toEqual(s.zones.filter((z) => z.outOfRotation).map((z) => z.name));
  // Every zone out of reads says why.
  for (const z of status.zones ?? []) if (status.zonesOutOfRotation?.includes(z.name)) expect(z.message).toBeTruthy();
  const byType = Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c]));
  expect(byType.Ready).toMatchObject({ status: phase === 'Succeeded' ? 'True' : 'False', reason: phase, message });
  expect(byType.Progressing).toMatchObject({ status: phase === 'Progressing' || phase === 'Pending' ? 'True' : 'False', reason: phase });
  expect(byType.Paused).toMatchObject({ status: phase === 'Paused' ? 'True' : 'False' });
  // The Web UI says the same: the phase, the zone and its place, and the message.
  expect(details.split('\n\n')[0]).toBe(`**${phase}**${s.currentZone ? `: zone 1 of 2, \`b\` ${status.zones![0]!.phase}` : ''}`);
  expect(details.endsWith(message)).toBe(true);
  // The progress query (what the CLI shows while the workflow runs) too.
  const p = progressOf(s, { pauseRequested: false, supersededBy: undefined });
  expect([p.phase, p.message, p.zones.find((z) => z.name === 'b')?.message]).toEqual([phase, message, zoneBMessage]);
});

test('the Events follow from the derived statuses before and after a transition', () => {
  const told = (s: RolloutState) => deriveStatus(s, object, wf, NOW).status;
  const reasons = (before: RolloutState, after: RolloutState) => statusEvents(told(before), told(after)).map((e) => `${e.type} ${e.reason}: ${e.message}`);
  const leaving = zoneB({ kind: 'zone-step', zone: 'b', step: 'LeavingReads' }, 'LeavingReads', { kind: 'leaving' }, out);
  const switching = zoneB({ kind: 'zone-step', zone: 'b', step: 'WaitingForSwitch' }, 'WaitingForSwitch', { kind: 'out-for-upgrade' }, out);
  expect(reasons(leaving, switching)).toEqual([
    'Normal ZoneLeftReads: zone b left read rotation: its routes are edited; waiting until every vmauth pod serves them',
  ]);
  const failed = zoneB(
    { kind: 'failed', zone: 'b', step: 'WaitingForSwitch', reason: 'boom' },
    'Failed',
    { kind: 'failed', step: 'WaitingForSwitch', reason: 'boom' },
    out,
  );
  expect(reasons(switching, failed)).toEqual([
    'Warning ZoneFailed: zone b failed, kept OUT of read rotation: failed at WaitingForSwitch, kept out of read rotation: boom',
    'Warning RolloutFailed: zone b failed at WaitingForSwitch: boom',
  ]);
  expect(reasons(switching, { ...switching, paused: true })).toEqual(['Normal RolloutPaused: paused before WaitingForSwitch of zone b']);
  expect(reasons({ ...switching, paused: true }, switching)).toEqual(['Normal RolloutResumed: zone b: WaitingForSwitch']);
  const cancelled = zoneB({ kind: 'cancelled', out: [] }, 'WaitingForSwitch', { kind: 'rejoined', why: 'cancelled', how: 'before-upgrade' });
  expect(reasons(switching, cancelled)).toEqual(['Normal ZoneRejoined: zone b back in read rotation', 'Normal RolloutCancelled: cancelled']);
});

test('conditions keep lastTransitionTime while their status is unchanged', () => {
  const s = zoneB({ kind: 'zone-step', zone: 'b', step: 'WaitingForQueue' }, 'WaitingForQueue');
  s.conditions = deriveStatus(s, object, wf, 't1').status.conditions!;
  s.run = { kind: 'zone-done', zone: 'b' };
  const st2 = deriveStatus(s, object, wf, 't2').status;
  expect(st2.conditions?.every((c) => c.lastTransitionTime === 't1')).toBe(true);
  s.conditions = st2.conditions!;
  s.paused = true;
  const byType = Object.fromEntries(deriveStatus(s, object, wf, 't3').status.conditions!.map((c) => [c.type, c]));
  expect(byType.Paused).toMatchObject({ status: 'True', lastTransitionTime: 't3' });
  expect(byType.Progressing).toMatchObject({ status: 'False', lastTransitionTime: 't3' });
  expect(byType.Ready).toMatchObject({ status: 'False', lastTransitionTime: 't1' });
});

test('mergeConditions keeps conditions of other types (e.g. Valid from the trigger)', () => {
  const merged = mergeConditions(
    [{ type: 'Valid', status: 'True', reason: 'Valid', message: '', lastTransitionTime: 't0' }],
    [{ type: 'Ready', status: 'True', reason: 'Succeeded', message: '' }],
    { now: 't1', order: 'canonical' },
  );
  expect(merged.map((c) => c.type)).toEqual(['Ready', 'Valid']);
});

test('progress query shape', () => {
  const s = zoneB({ kind: 'zone-step', zone: 'b', step: 'WaitingForQueue' }, 'WaitingForQueue', undefined, { ...out, vmclusterGeneration: 9 });
  s.zones[1]!.removals = [
    { route: { kind: 'VMAuth', name: 'g' }, vmcluster: { name: 'vm-b', namespace: 'ns' }, removed: [{ type: 'targetRef', index: 0, targetRef: {} }] },
  ];
  const p = progressOf(s, { pauseRequested: true, supersededBy: 8 });
  expect(p).toMatchObject({
    phase: 'Progressing',
    currentZone: 'b',
    currentStep: 'WaitingForQueue',
    zonesOutOfRotation: ['b'],
    pauseRequested: true,
    supersededBy: 8,
  });
  expect(p.zones[1]).toMatchObject({ name: 'b', removedRefs: 1, message: 'out of read rotation: WaitingForQueue' });
  expect(p.zones[1]).not.toHaveProperty('removals');
  expect(p.zones[1]).not.toHaveProperty('note');
});
