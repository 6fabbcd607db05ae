// The records of what left read rotation live on the route objects and outlive every workflow
// (issue: never strand a zone). Each scenario ends with the invariant checker, which also checks
// that after every route edit the zones missing from the routes are exactly the zones recorded.
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import type { JsonObject } from '../../api/types';
import { eventually, inputOf, makeFake, maybeRecord, NS, useTimeSkippingEnv, vmselect, withWorker, type Running } from './setup';
import { routeUid, type FakeCluster } from './fake-cluster';
import { recordKey, type OutOfRotationRecord } from '../../api/route-records';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

const recordedOn = (fake: FakeCluster, zone: string): string[] =>
  [...fake.records]
    .filter(([, recs]) => Object.values(recs).some((r) => r.zone === zone))
    .map(([k]) => k)
    .sort();

/**
 * g1 takes az-a out of reads, then dies without any cleanup (terminate). It is paused first, so no
 * activity is in flight when it dies (the time-skipping server would otherwise wait for it).
 */
async function killAfterLeaving(r: Running): Promise<void> {
  const afterEdit = r.fake.hold('waitOperational:VMAuth:vm-global', { after: 'editRoutes:remove:vm-az-a' });
  const h1 = await r.start(inputOf({ generation: 1 }));
  await r.reach(afterEdit);
  await h1.signal('pause');
  afterEdit.release();
  await r.progressUntil(h1, (p) => p.phase === 'Paused');
  await h1.terminate('worker and history gone');
}

/** The end every recovery must reach: Succeeded, every zone back, routes as the user left them, no record. */
async function expectAllBack(r: Running, fake: FakeCluster, res: { phase: string; zonesOutOfRotation: string[] }) {
  expect(res.phase).toBe('Succeeded');
  expect(res.zonesOutOfRotation).toEqual([]);
  expect(fake.statuses.at(-1)).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: [] });
  expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
  expect(fake.records.size).toBe(0);
  expect(r.breaches(true)).toEqual([]);
}

test('a forged record (this uid, zone az-b, while the routes still send az-b reads) is not adopted: az-b leaves reads for real in its turn', async () => {
  const uid = 'f0f0f0f0-1111-2222-3333-444455556666';
  const fake = makeFake();
  const forged: OutOfRotationRecord = {
    vmdc: { namespace: NS, name: 'vmdc', uid },
    route: { kind: 'VMAuth', name: 'vm-global', uid: routeUid('VMAuth/vm-global') },
    zone: 'az-b',
    workflowId: 'written-by-hand',
    generation: 1,
    vmcluster: { name: 'vm-az-b', namespace: NS },
    removed: [{ type: 'targetRef', index: 0, targetRef: vmselect('vm-az-b') }],
    since: '2026-12-05T00:00:00.000Z',
  };
  fake.records.set('VMAuth/vm-global', { [recordKey(uid, 'az-b')]: forged });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ generation: 1, uid }));
    const res = await h.result();
    // Adopted, az-b would have gone first (adopted zones lead) and skipped its own leaving.
    expect(res.zones.map((z) => [z.name, z.phase])).toEqual([
      ['az-a', 'Done'],
      ['az-b', 'Done'],
      ['az-c', 'Done'],
    ]);
    expect(fake.statuses[0]!.zonesOutOfRotation ?? []).toEqual([]);
    expect(fake.calls).toContain('editRoutes:remove:vm-az-b');
    // The forged claim was replaced by the record of az-b's real removal, and that was deleted at its rejoin.
    await expectAllBack(r, fake, res);
  });
});

test('failed zone, then a new generation: g2 adopts the zone from the records and puts every zone back', async () => {
  const fake = makeFake();
  fake.patchBehaviour.set('vm-az-b', 'failed');
  await withWorker(env(), fake, async (r) => {
    const h1 = await r.start(inputOf({ generation: 1 }));
    await r.progressUntil(h1, (p) => p.phase === 'Failed');
    expect(recordedOn(fake, 'az-b')).toEqual(['VMAuth/vm-global', 'VMUser/reads-az-a']);
    // The user fixes the cause and edits the spec: the operator recovers, a new generation starts.
    fake.patchBehaviour.set('vm-az-b', 'operational');
    fake.object('VMCluster', 'vm-az-b')!.updateStatus = 'expanding';
    fake.objectGeneration = 2;
    const h2 = await r.start(inputOf({ generation: 2 }, [h1.workflowId]));
    const res1 = await h1.result();
    expect(res1).toMatchObject({ phase: 'Superseded', zonesOutOfRotation: ['az-b'] });
    const res2 = await h2.result();
    await maybeRecord('failed-then-new-generation-g1', h1);
    await maybeRecord('failed-then-new-generation-g2', h2);
    // az-b first (it is out), then the others (az-a was upgraded by g1), one at a time.
    expect(res2.zones.map((z) => [z.name, z.phase])).toEqual([
      ['az-b', 'Done'],
      ['az-a', 'Skipped'],
      ['az-c', 'Done'],
    ]);
    await expectAllBack(r, fake, res2);
  });
});

test('failed zone, cancel, then a new generation: the cancelled run keeps it out, g2 puts it back', async () => {
  const fake = makeFake();
  fake.patchBehaviour.set('vm-az-b', 'failed');
  await withWorker(env(), fake, async (r) => {
    const h1 = await r.start(inputOf({ generation: 1 }));
    await r.progressUntil(h1, (p) => p.phase === 'Failed');
    await h1.cancel();
    expect(((await h1.result().catch((e: unknown) => e)) as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(fake.statuses.at(-1)).toMatchObject({ phase: 'Cancelled', zonesOutOfRotation: ['az-b'] });
    expect(recordedOn(fake, 'az-b')).toEqual(['VMAuth/vm-global', 'VMUser/reads-az-a']);
    fake.patchBehaviour.set('vm-az-b', 'operational');
    fake.object('VMCluster', 'vm-az-b')!.updateStatus = 'expanding';
    fake.objectGeneration = 2;
    const h2 = await r.start(inputOf({ generation: 2 }, [h1.workflowId]));
    const res2 = await h2.result();
    // g2's first status already reports the adopted zone out of reads.
    expect(fake.statuses.find((s) => s.observedGeneration === 2)).toMatchObject({
      zonesOutOfRotation: ['az-b'],
      message: expect.stringMatching(/adopted.*az-b/),
    });
    await maybeRecord('failed-cancel-new-generation-g2', h2);
    await expectAllBack(r, fake, res2);
  });
});

test('a run terminated right after a route edit (no cleanup at all): the record is there; the next generation restores', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    await killAfterLeaving(r);
    expect(recordedOn(fake, 'az-a')).toEqual(['VMAuth/vm-global', 'VMUser/reads-az-a']);
    fake.objectGeneration = 2;
    const h2 = await r.start(inputOf({ generation: 2 }));
    const res2 = await h2.result();
    await maybeRecord('terminated-after-edit-g2', h2);
    expect(res2.zones[0]).toMatchObject({ name: 'az-a', phase: 'Done' });
    await expectAllBack(r, fake, res2);
  });
});

test('[I2] a run terminated right after its route edit, before the vmauth pods were confirmed: the next generation confirms the switch in the pods before it changes the adopted zone', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    // g1 dies right after its route edit: no pod was ever confirmed to run a config without az-a.
    // (Paused at the safe point after the edit, so no activity is in flight when it dies.)
    const editing = fake.hold('editRoutes:remove:vm-az-a');
    const h1 = await r.start(inputOf({ generation: 1 }));
    await r.reach(editing);
    await h1.signal('pause');
    editing.release();
    await r.progressUntil(h1, (p) => p.phase === 'Paused');
    await h1.terminate('worker and history gone');
    expect(fake.calls.filter((c) => c.startsWith('confirmSwitch:absent'))).toEqual([]);
    expect(recordedOn(fake, 'az-a')).toEqual(['VMAuth/vm-global', 'VMUser/reads-az-a']);
    fake.objectGeneration = 2;
    const confirming = fake.hold('confirmSwitch:absent:vm-az-a');
    const h2 = await r.start(inputOf({ generation: 2 }));
    await r.reach(confirming);
    // It says so while it waits.
    const p = await r.progress(h2);
    expect(p.zones.find((z) => z.name === 'az-a')!.message).toMatch(/runs the operator's config without VMCluster vm-az-a/);
    expect(fake.calls).not.toContain('applyObject:VMCluster:vm-az-a');
    confirming.release();
    const res2 = await h2.result();
    await maybeRecord('terminated-before-confirm-g2', h2);
    const g2calls = fake.calls.slice(fake.calls.indexOf('confirmSwitch:absent:vm-az-a'));
    expect(g2calls.indexOf('confirmSwitch:absent:vm-az-a')).toBeLessThan(g2calls.indexOf('applyObject:VMCluster:vm-az-a'));
    expect(res2.zones[0]).toMatchObject({ name: 'az-a', phase: 'Done' });
    await expectAllBack(r, fake, res2);
  });
});

test('partial edit (a concurrent VMUser edit empties the second route): what landed stays recorded and reported; resume finishes', async () => {
  const fake = makeFake();
  const onlyAzA: JsonObject[] = [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: NS }, paths: ['/select/.*'] }];
  let edits = 0;
  fake.beforeRouteEdit = (route) => {
    if (route === 'VMUser/reads-az-a' && edits++ === 0) fake.userSet('VMUser/reads-az-a', onlyAzA);
  };
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    expect(p.message).toMatch(/EmptyRoute/);
    // The VMAuth edit landed with its record; the VMUser was not touched: az-a is out, and says so.
    expect(recordedOn(fake, 'az-a')).toEqual(['VMAuth/vm-global']);
    expect(p.zonesOutOfRotation).toEqual(['az-a']);
    expect(fake.statuses.at(-1)).toMatchObject({ phase: 'Failed', zonesOutOfRotation: ['az-a'] });
    expect(r.breaches()).toEqual([]);
    // The user gives the VMUser another backend again; resume leaves the VMUser too and finishes.
    fake.userAppend('VMUser/reads-az-a', vmselect('vm-az-b', 'vm-az-c'));
    await h.signal('resume');
    const res = await h.result();
    await maybeRecord('partial-edit-then-resume', h);
    expect(res.phase).toBe('Succeeded');
    expect(fake.records.size).toBe(0);
    expect(fake.routes.get('VMUser/reads-az-a')).toEqual([...onlyAzA, vmselect('vm-az-b', 'vm-az-c')]);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('a refused announcement stops the run before any route is touched', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const planning = fake.hold('readRoutes');
    const h = await r.start(inputOf());
    await r.reach(planning);
    fake.objectGeneration = 2; // the object moved on: the status is no longer this run's to write
    planning.release();
    const res = await h.result();
    expect(res.phase).toBe('Superseded');
    expect(fake.calls.filter((c) => c.startsWith('editRoutes') || c.startsWith('applyObject:VMCluster'))).toEqual([]);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    expect(fake.records.size).toBe(0);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('a status the API server rejects is reported in progress and retried; the rollout does not move on meanwhile', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    fake.rejectStatusWrites = 3;
    const h = await r.start(inputOf());
    const p = await r.progressUntil(h, (p) => !!p.statusError, 1_000);
    expect(p.statusError).toMatch(/StatusRejected.*HTTP 422/);
    expect(fake.calls.filter((c) => c.startsWith('applyObject') || c.startsWith('editRoutes'))).toEqual([]);
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    expect((await r.progress(h)).statusError).toBeUndefined();
    expect(r.breaches(true)).toEqual([]);
  });
});

test('a cancel ends even when every status write is rejected for good, saying what it could not write', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ paused: true }));
    await r.progressUntil(h, (p) => p.phase === 'Paused');
    fake.rejectStatusWrites = Number.POSITIVE_INFINITY;
    await h.cancel();
    expect(((await h.result().catch((e: unknown) => e)) as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect((await r.progress(h)).statusError).toMatch(/StatusRejected.*HTTP 422/);
    // The Web UI's current details say the status it could not write.
    const details = (await h.query<{ currentDetails?: string }>('__temporal_workflow_metadata')).currentDetails ?? '';
    expect(details).toMatch(/could not write the status.*Cancelled/s);
  });
});

test('cancel while the patch is rolling out and the operator pruned a field of it: decided by generations, the zone stays out', async () => {
  const fake = makeFake();
  fake.prunedKeys.add('typoField');
  fake.patchBehaviour.set('vm-az-a', 'hang');
  await withWorker(env(), fake, async (r) => {
    const input = inputOf();
    input.spec.overrideSpec = { ...input.spec.overrideSpec, vmselect: { extraArgs: { 'search.maxQueryDuration': '1m' }, typoField: 1 } };
    const h = await r.start(input);
    await r.progressUntil(h, (p) => p.currentStep === 'WaitingOperational');
    // The patch landed (generation moved, the typo pruned) but the VMCluster is still restarting.
    expect(fake.object('VMCluster', 'vm-az-a')).toMatchObject({ generation: 4, updateStatus: 'expanding' });
    expect(fake.object('VMCluster', 'vm-az-a')!.spec.vmselect).not.toHaveProperty('typoField');
    await r.cancelAndWaitForActivityCancel(h);
    expect(((await h.result().catch((e: unknown) => e)) as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    const st = fake.statuses.at(-1)!;
    expect(st).toMatchObject({ phase: 'Cancelled', zonesOutOfRotation: ['az-a'] });
    expect(st.zones?.find((z) => z.name === 'az-a')?.message).toMatch(/not operational at generation 4/);
    expect(recordedOn(fake, 'az-a')).toEqual(['VMAuth/vm-global', 'VMUser/reads-az-a']);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('a recorded zone that is no longer in the spec fails fast, before any zone leaves, naming the release command', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    await killAfterLeaving(r);
    fake.objectGeneration = 2;
    const input = inputOf({ generation: 2 });
    input.spec.zones = input.spec.zones.filter((z) => z.name !== 'az-a');
    const calls = fake.calls.length;
    const h2 = await r.start(input);
    const p = await r.progressUntil(h2, (p) => p.phase === 'Failed');
    expect(p.message).toMatch(/no longer in the spec: az-a .*release-zone/);
    expect(fake.calls.slice(calls).filter((c) => c.startsWith('editRoutes') || c.startsWith('applyObject'))).toEqual([]);
    await h2.cancel();
    await eventually(async () => (await h2.describe()).status.name !== 'RUNNING');
  });
});

test('a patch the API server refuses fails the rollout in its dry run, before any zone leaves reads; resume after the fix', async () => {
  const fake = makeFake();
  fake.refused.set('VMCluster/vm-az-b', 'HTTP 422: VMCluster.operator.victoriametrics.com "vm-az-b" is invalid: spec.vmstorage.replicaCount: Invalid value: 4');
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    expect(p.zones.every((z) => !z.outOfRotation && z.phase === 'Pending')).toBe(true);
    expect(p.zonesOutOfRotation).toEqual([]);
    expect(p.message).toMatch(/PatchRejected.*HTTP 422.*replicaCount/);
    expect(fake.calls.filter((c) => c.startsWith('editRoutes') || c.startsWith('applyObject:VMCluster'))).toEqual([]);
    expect(fake.statuses.at(-1)?.message).toMatch(/HTTP 422/);
    fake.refused.clear();
    await h.signal('resume');
    const res = await h.result();
    await maybeRecord('dry-run-refused-then-resume', h);
    expect(res.phase).toBe('Succeeded');
    expect(r.breaches(true)).toEqual([]);
  });
});
