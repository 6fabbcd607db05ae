import { ZONE_STEPS } from '../../api/types';
import { planZoneOrder, resumeStep, shuffleSeed, zoneSteps } from '../../workflows/plan';
import type { ZoneStepHandlers } from '../../workflows/zone-steps';

const zones = ['az-a', 'az-b', 'az-c', 'az-d', 'az-e'];

test('Declared keeps the declared order', () => {
  expect(planZoneOrder(zones, 'Declared', 'x')).toEqual(zones);
});

test('Shuffle is a permutation, deterministic per seed', () => {
  const seed = shuffleSeed({ uid: 'u-1', generation: 3 });
  const a = planZoneOrder(zones, 'Shuffle', seed);
  expect([...a].sort()).toEqual(zones);
  expect(planZoneOrder(zones, 'Shuffle', seed)).toEqual(a);
  expect(seed).toBe('u-1/3');
});

test('Shuffle differs across generations (not always the declared order)', () => {
  const orders = new Set(Array.from({ length: 20 }, (_, g) => planZoneOrder(zones, 'Shuffle', shuffleSeed({ uid: 'u', generation: g })).join(',')));
  expect(orders.size).toBeGreaterThan(5);
});

test('Shuffle is roughly uniform on the first position', () => {
  const counts = new Map<string, number>();
  for (let g = 0; g < 2000; g++) {
    const first = planZoneOrder(zones, 'Shuffle', shuffleSeed({ uid: 'uid', generation: g }))[0]!;
    counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  for (const z of zones) expect(counts.get(z)).toBeGreaterThan(300);
});

test('resume restarts WaitingOperational at Upgrading, any other step as is', () => {
  for (const s of ZONE_STEPS) expect(resumeStep(s)).toBe(s === 'WaitingOperational' ? 'Upgrading' : s);
});

test('every zone step needs a handler: a table missing one is a compile error (checked by tsc)', () => {
  const run = async () => {};
  const complete: ZoneStepHandlers = {
    LeavingReads: run,
    WaitingForSwitch: run,
    Upgrading: run,
    WaitingOperational: run,
    WaitingForQueue: run,
    Analyzing: run,
    RejoiningReads: run,
  };
  // @ts-expect-error RejoiningReads has no handler
  const missing: ZoneStepHandlers = { LeavingReads: run, WaitingForSwitch: run, Upgrading: run, WaitingOperational: run, WaitingForQueue: run, Analyzing: run };
  expect(Object.keys(complete)).toEqual([...ZONE_STEPS]);
  expect(Object.keys(missing)).not.toContain('RejoiningReads');
});

describe('zoneSteps: the steps a zone takes', () => {
  it('six, the canary seven; a held zone leaves and never rejoins; write-only upgraded, maintenance (or leaveOnly) not', () => {
    expect(zoneSteps({})).toEqual(['LeavingReads', 'WaitingForSwitch', 'Upgrading', 'WaitingOperational', 'WaitingForQueue', 'RejoiningReads']);
    expect(zoneSteps({ canary: true })).toContain('Analyzing');
    expect(zoneSteps({ held: 'write-only' })).toEqual(['LeavingReads', 'WaitingForSwitch', 'Upgrading', 'WaitingOperational']);
    expect(zoneSteps({ held: 'write-only', leaveOnly: true })).toEqual(['LeavingReads', 'WaitingForSwitch']);
    expect(zoneSteps({ held: 'maintenance' })).toEqual(['LeavingReads', 'WaitingForSwitch']);
  });
});
