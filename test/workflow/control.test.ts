// Pause/resume and cancel at every step of a zone, on the real time-skipping test server.
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { UPDATE_PROMOTE, type PausePromoted, type PromoteResult } from '../../api/rollout-contract';
import { promoteWait, type Temporal } from '../../cli/temporal';
import { CancelledFailure } from '@temporalio/common';
import type { FakeCluster } from './fake-cluster';
import { eventually, inputOf, makeFake, maybeRecord, NS, withWorker, useTimeSkippingEnv } from './setup';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

/** [step in flight, held activity call, zone, step the workflow pauses before (undefined: next zone), the call after which it is held] */
const STEPS: Array<[string, string, string, string | undefined, string?]> = [
  ['Preparing', 'applyObject:VMAgent:vm-global', '', undefined],
  ['LeavingReads', 'editRoutes:remove:vm-az-b', 'az-b', 'WaitingForSwitch'],
  ['WaitingForSwitch', 'waitOperational:VMAuth:vm-global', 'az-a', 'Upgrading', 'editRoutes:remove:vm-az-a'],
  ['Upgrading', 'applyObject:VMCluster:vm-az-b', 'az-b', 'WaitingOperational'],
  ['WaitingOperational', 'waitOperational:VMCluster:vm-az-b', 'az-b', 'WaitingForQueue'],
  ['WaitingForQueue', 'watchQueue:vm-az-b', 'az-b', 'RejoiningReads'],
  ['RejoiningReads', 'editRoutes:restore:vm-az-b', 'az-b', undefined],
];

describe.each(STEPS)('during %s', (step, key, zone, pausesBefore, after) => {
  test('pause stops at the next safe point, keeps zones as they are, resume finishes', async () => {
    const fake = makeFake();
    await withWorker(env(), fake, async (r) => {
      const held = fake.hold(key, { after });
      const h = await r.start(inputOf());
      await r.reach(held);
      await h.signal('pause');
      held.release();
      const p = await r.progressUntil(h, (p) => p.phase === 'Paused');
      await eventually(() => fake.statuses.at(-1)?.phase === 'Paused');
      await new Promise((res) => setTimeout(res, 200));
      expect(p.paused).toBe(true);
      if (pausesBefore) expect(p).toMatchObject({ currentZone: zone, currentStep: pausesBefore });
      const out = p.zonesOutOfRotation;
      expect(out).toEqual(pausesBefore && step !== 'Preparing' ? [zone] : []);
      const calls = fake.calls.length;
      await env().sleep('2h'); // nothing moves while paused
      expect(fake.calls.length).toBe(calls);
      const st = fake.statuses.at(-1)!;
      expect(st.phase).toBe('Paused');
      expect(st.zonesOutOfRotation).toEqual(out);
      expect(st.conditions?.find((c) => c.type === 'Paused')?.status).toBe('True');
      expect(r.breaches()).toEqual([]);
      await h.signal('resume');
      const res = await h.result();
      if (step === 'WaitingOperational') await maybeRecord('pause-resume-waiting-operational', h);
      expect(res.phase).toBe('Succeeded');
      expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
      expect(fake.statuses.at(-1)!.conditions?.find((c) => c.type === 'Paused')?.status).toBe('False');
      expect(r.breaches(true)).toEqual([]);
    });
  });

  test('cancel cleans up: unpatched zone rejoins at once, a patched one only when operational and drained', async () => {
    const fake = makeFake();
    await withWorker(env(), fake, async (r) => {
      const held = fake.hold(key, { after });
      const h = await r.start(inputOf());
      await r.reach(held);
      await r.cancelAndWaitForActivityCancel(h, held);
      held.release();
      const err = await h.result().catch((e: unknown) => e);
      if (step === 'Upgrading') await maybeRecord('cancel-upgrading', h);
      if (step === 'LeavingReads') await maybeRecord('cancel-leaving-reads', h);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      const st = fake.statuses.at(-1)!;
      expect(st.phase).toBe('Cancelled');
      // The patch of 'Upgrading' lands (the activity finishes) but the VMCluster is not operational
      // yet when the cleanup looks: that zone stays out. Every other step ends with reads restored.
      if (step === 'Upgrading') {
        expect(st.zonesOutOfRotation).toEqual(['az-b']);
        expect(st.zones?.find((z) => z.name === 'az-b')?.message).toMatch(/stays out of read rotation \(cancelled\): VMCluster not operational/);
        expect(st.message).toMatch(/out of read rotation: az-b/);
      } else {
        expect(st.zonesOutOfRotation).toEqual([]);
        expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
      }
      expect(fake.touched('vm-az-c')).toBe(false);
      expect(r.breaches(true)).toEqual([]);
    });
  });
});

test.each<[string, (fake: FakeCluster) => void, string, (fake: FakeCluster) => void]>([
  [
    'a VMCluster that never becomes operational',
    (fake) => fake.patchBehaviour.set('vm-az-a', 'hang'),
    'waitOperational:VMCluster:vm-az-a',
    (fake) => expect(fake.calls).not.toContain('editRoutes:restore:vm-az-a'),
  ],
  [
    'the queue of a patched, operational zone that is not drained',
    (fake) => fake.queueBehaviour.set('vm-az-a', 'unreachable'),
    'watchQueue:vm-az-a',
    (fake) => expect(fake.calls).toContain('sampleQueue:vm-az-a'),
  ],
])('cancel while waiting for %s: the zone stays out', async (_what, arrange, heldCall, check) => {
  const fake = makeFake();
  arrange(fake);
  await withWorker(env(), fake, async (r) => {
    const held = fake.hold(heldCall);
    const h = await r.start(inputOf());
    await r.reach(held);
    await r.cancelAndWaitForActivityCancel(h, held);
    held.release();
    const err = await h.result().catch((e: unknown) => e);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(fake.statuses.at(-1)).toMatchObject({ phase: 'Cancelled', zonesOutOfRotation: ['az-a'] });
    check(fake);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('spec.paused at start: Paused before acting; resume runs the rollout', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ paused: true }));
    const p = await r.progressUntil(h, (p) => p.phase === 'Paused');
    expect(p.zonesOutOfRotation).toEqual([]);
    expect(fake.calls).toEqual(['verifyInput:g1', 'takeOverObject:g1', 'readRecords', 'writeStatus:Paused']);
    await h.signal('resume');
    expect((await h.result()).phase).toBe('Succeeded');
    expect(r.breaches(true)).toEqual([]);
  });
});

test('pauseBetweenZones waits between zones, with no zone out of rotation', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ pauseBetweenZonesMs: 3_600_000 }));
    const p = await r.progressUntil(h, (p) => p.currentStep === 'PauseBetweenZones', 60_000);
    expect(p.zonesOutOfRotation).toEqual([]);
    expect((await h.result()).phase).toBe('Succeeded');
    expect(r.breaches(true)).toEqual([]);
  });
});

test('promote ends the pauseBetweenZones wait at once (its timer cancelled, never fired); refused, saying why, when no wait runs', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const WAIT_MS = 3_600_000;
    const h = await r.start(inputOf({ pauseBetweenZonesMs: WAIT_MS, paused: true }));
    await r.progressUntil(h, (p) => p.phase === 'Paused');
    // The plugin's own call (cli/temporal.ts), as `kubectl vmdc promote` sends it.
    const t = { client: env().client, connection: env().connection, namespace: NS, address: '-', converter: loadDataConverter({}) } as Temporal;
    const refused = await promoteWait(t, h.workflowId).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((refused as WorkflowUpdateFailedError).cause?.message).toBe(
      'no gate, pauseBetweenZones or canary wait in progress: the rollout is Paused; nothing to promote',
    );
    await h.signal('resume');

    // Both waits (after az-a, after az-b) are promoted. No result() call in between: the test server
    // skips time only while a client waits for a result, so reaching the next zone proves the wait ended early.
    for (const [after, next] of [
      ['az-a', 'az-b'],
      ['az-b', 'az-c'],
    ] as const) {
      await r.progressUntil(h, (p) => p.currentStep === 'PauseBetweenZones' && p.currentZone === after, 60_000);
      const promoted = after === 'az-a' ? await promoteWait(t, h.workflowId) : await h.executeUpdate<PromoteResult, []>(UPDATE_PROMOTE);
      expect(promoted).toEqual({ after, skippedMs: expect.any(Number) });
      expect((promoted as PausePromoted).skippedMs).toBeGreaterThan(WAIT_MS - 60_000);
      await r.progressUntil(h, (p) => p.currentZone === next && p.currentStep !== 'PauseBetweenZones', 60_000);
    }
    expect((await h.result()).phase).toBe('Succeeded');

    const events = (await h.fetchHistory()).events ?? [];
    const waitTimers = events
      .filter((e) => Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0) === WAIT_MS / 1000)
      .map((e) => e.timerStartedEventAttributes!.timerId);
    expect(waitTimers).toHaveLength(2);
    const fired = events.filter((e) => waitTimers.includes(e.timerFiredEventAttributes?.timerId ?? '-'));
    const cancelled = events.filter((e) => waitTimers.includes(e.timerCanceledEventAttributes?.timerId ?? '-'));
    expect([fired.length, cancelled.length]).toEqual([0, 2]);
    expect(r.breaches(true)).toEqual([]);
  });
});
