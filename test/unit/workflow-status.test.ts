import { mergeConditions } from '../../api/conditions';
import { buildStatus } from '../../workflows/status';
import { progressOf, type RolloutState } from '../../workflows/state';

const object = { namespace: 'ns', name: 'x', uid: 'u', generation: 7 };
const wf = { id: 'vmdc/ns/x/g7-u', runId: 'r' };

function state(): RolloutState {
  return {
    phase: 'Progressing',
    message: 'zone b: WaitingForQueue',
    order: ['b', 'a'],
    zones: [
      { name: 'a', vmcluster: 'vm-a', phase: 'Pending', outOfRotation: false, patchAttempted: false, drainedConfirmed: false },
      { name: 'b', vmcluster: 'vm-b', phase: 'WaitingForQueue', vmclusterGeneration: 9, startedAt: 't0', outOfRotation: true, patchAttempted: true, drainedConfirmed: false },
    ],
    currentZone: 'b',
    currentStep: 'WaitingForQueue',
    paused: false,
    conditions: [],
    routesDeferred: false,
  };
}

test('status: phase, zones in rollout order, out-of-rotation zones with a reason, workflow ref', () => {
  const s = state();
  const st = buildStatus(s, object, wf, '2026-01-01T00:00:00.000Z');
  expect(st).toMatchObject({
    observedGeneration: 7,
    phase: 'Progressing',
    workflow: wf,
    currentZone: 'b',
    zonesOutOfRotation: ['b'],
    zones: [
      { name: 'b', phase: 'WaitingForQueue', vmclusterGeneration: 9, startedAt: 't0', message: 'out of read rotation: WaitingForQueue' },
      { name: 'a', phase: 'Pending' },
    ],
  });
  expect(st.conditions?.map((c) => [c.type, c.status])).toEqual([['Ready', 'False'], ['Progressing', 'True'], ['Paused', 'False']]);
});

test('conditions keep lastTransitionTime while their status is unchanged', () => {
  const s = state();
  buildStatus(s, object, wf, 't1');
  s.message = 'other';
  const st2 = buildStatus(s, object, wf, 't2');
  expect(st2.conditions?.every((c) => c.lastTransitionTime === 't1')).toBe(true);
  s.phase = 'Paused';
  s.paused = true;
  const st3 = buildStatus(s, object, wf, 't3');
  const byType = Object.fromEntries(st3.conditions!.map((c) => [c.type, c]));
  expect(byType.Paused).toMatchObject({ status: 'True', lastTransitionTime: 't3' });
  expect(byType.Progressing).toMatchObject({ status: 'False', lastTransitionTime: 't3' });
  expect(byType.Ready).toMatchObject({ status: 'False', lastTransitionTime: 't1' });
});

test('mergeConditions keeps conditions of other types (e.g. Valid from the trigger)', () => {
  const out = mergeConditions([{ type: 'Valid', status: 'True', reason: 'Valid', message: '', lastTransitionTime: 't0' }], [{ type: 'Ready', status: 'True', reason: 'Succeeded', message: '' }], { now: 't1', order: 'canonical' });
  expect(out.map((c) => c.type)).toEqual(['Ready', 'Valid']);
});

test('progress query shape', () => {
  const s = state();
  s.zones[1]!.removals = [{ route: { kind: 'VMAuth', name: 'g' }, vmcluster: { name: 'vm-b', namespace: 'ns' }, removed: [{ type: 'targetRef', index: 0, targetRef: {} }] }];
  const p = progressOf(s, { pauseRequested: true, supersededBy: undefined });
  expect(p).toMatchObject({ phase: 'Progressing', currentZone: 'b', currentStep: 'WaitingForQueue', zonesOutOfRotation: ['b'], pauseRequested: true });
  expect(p.zones[1]).toMatchObject({ name: 'b', removedRefs: 1 });
  expect(p.zones[1]).not.toHaveProperty('removals');
});
