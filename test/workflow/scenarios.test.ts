// Rollout scenarios on the real time-skipping test server, activities replaced by the fake cluster.
// Every scenario ends with the invariant checker over the recorded action log.
import { ZONE_STEPS, type VMDistributedClusterStatus } from '../../api/types';
import type { Progress } from '../../api/rollout-contract';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { FailureType } from '../../workflows/failures';
import { planZoneOrder, shuffleSeed } from '../../workflows/plan';
import { NEW_VERSION, OLD_VERSION, ZONES, eventually, inputOf, makeFake, maybeRecord, mutations, vmselect, withWorker, useTimeSkippingEnv } from './setup';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

/**
 * In every status, a zone in a step says when that step began: a new date when the step changes
 * (never earlier than the last), the same one while it lasts and once it Failed; none out of a step.
 */
function expectStepsDated(statuses: VMDistributedClusterStatus[], zone: string): void {
  let last: { phase: string; at?: string } | undefined;
  for (const s of statuses) {
    const z = s.zones!.find((x) => x.name === zone)!;
    const inStep = (ZONE_STEPS as readonly string[]).includes(z.phase);
    if (!inStep && z.phase !== 'Failed') expect({ phase: z.phase, stepStartedAt: z.stepStartedAt }).toEqual({ phase: z.phase, stepStartedAt: undefined });
    else {
      expect({ phase: z.phase, dated: typeof z.stepStartedAt }).toEqual({ phase: z.phase, dated: 'string' });
      if (last?.at && (z.phase === last.phase || z.phase === 'Failed')) expect(z.stepStartedAt).toBe(last.at);
      else if (last?.at) expect(Date.parse(z.stepStartedAt!)).toBeGreaterThanOrEqual(Date.parse(last.at));
    }
    last = { phase: z.phase, at: z.stepStartedAt ?? last?.at };
  }
  const dates = new Set(statuses.map((s) => s.zones!.find((x) => x.name === zone)!.stepStartedAt).filter(Boolean));
  expect(dates.size).toBeGreaterThan(1);
}

test('happy path: VMAgent/VMUser first, then 3 zones one at a time, routes restored exactly', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    const res = await h.result();
    await maybeRecord('happy-path', h);
    expect(res.phase).toBe('Succeeded');
    expect(res.zones).toEqual(ZONES.map((z) => ({ name: z, phase: 'Done', vmclusterGeneration: 4 })));
    expect(res.zonesOutOfRotation).toEqual([]);
    expect(mutations(fake)).toEqual([
      'applyObject:VMAgent:vm-global',
      'applyObject:VMAuth:vm-global',
      'applyObject:VMUser:reads-az-a',
      ...ZONES.flatMap((z) => [`editRoutes:remove:vm-${z}`, `applyObject:VMCluster:vm-${z}`, `editRoutes:restore:vm-${z}`]),
    ]);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    for (const z of ZONES)
      expect(fake.object('VMCluster', `vm-${z}`)!.spec).toMatchObject({
        clusterVersion: NEW_VERSION,
        vmselect: { replicaCount: 2, extraArgs: { 'search.maxQueryDuration': '1m' } },
      });
    expect(fake.object('VMCluster', 'vm-az-b')!.spec).toMatchObject({ vmstorage: { replicaCount: 4 } });
    expect(fake.object('VMCluster', 'vm-az-a')!.spec).toMatchObject({ vmstorage: { replicaCount: 3 } });
    expect(fake.object('VMAgent', 'vm-global')!.spec).toMatchObject({ extraArgs: { 'remoteWrite.showURL': 'false' } });
    // Zone az-a left both the VMAuth (crd.objects entry) and its VMUser (whole targetRef).
    const removedA = fake.log.flatMap((a) => (a.type === 'routes' && a.vmcluster === 'vm-az-a' && a.direction === 'remove' ? Object.keys(a.after) : []));
    expect(removedA.sort()).toEqual(['VMAuth/vm-global', 'VMUser/reads-az-a']);
    // Each of those edits carried its record; every record was deleted by the restore.
    const removeA = fake.log.find((a) => a.type === 'routes' && a.vmcluster === 'vm-az-a' && a.direction === 'remove');
    expect(removeA?.type === 'routes' && removeA.recorded).toEqual(['az-a']);
    expect(fake.records.size).toBe(0);
    const last = fake.statuses.at(-1)!;
    expect(last).toMatchObject({ phase: 'Succeeded', observedGeneration: 1, zonesOutOfRotation: [], workflow: { id: r.workflowIdOf(inputOf()) } });
    expect(last.lastSucceeded).toEqual({ clusterVersion: NEW_VERSION, generation: 1 });
    expect(fake.statuses.slice(0, -1).filter((s) => s.lastSucceeded)).toEqual([]);
    expect(last.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(last.zones?.every((z) => z.startedAt && z.finishedAt)).toBe(true);
    // every step was reported
    const phases = fake.statuses.map((s) => s.zones?.find((z) => z.name === 'az-b')?.phase);
    for (const p of ['LeavingReads', 'WaitingForSwitch', 'Upgrading', 'WaitingOperational', 'WaitingForQueue', 'RejoiningReads', 'Done'])
      expect(phases).toContain(p);
    expectStepsDated(fake.statuses, 'az-b');
    expect(r.breaches(true)).toEqual([]);
  });
});

test('the read switch waits for every edited VMUser, not only the VMAuth, when leaving and when rejoining', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const edit = fake.hold('editRoutes:remove:vm-az-a');
    const h = await r.start(inputOf());
    await edit.reached;
    const userSwitch = fake.hold('waitOperational:VMUser:reads-az-a');
    edit.release();
    await userSwitch.reached;
    const afterEdit = fake.calls.slice(fake.calls.indexOf('editRoutes:remove:vm-az-a'));
    expect(afterEdit).toContain('waitOperational:VMAuth:vm-global');
    expect(afterEdit).not.toContain('applyObject:VMCluster:vm-az-a');
    userSwitch.release();
    expect((await h.result()).phase).toBe('Succeeded');
    await maybeRecord('vmuser-switch', h);
    const restore = fake.calls.indexOf('editRoutes:restore:vm-az-a');
    expect(fake.calls.slice(restore, fake.calls.indexOf('editRoutes:remove:vm-az-b'))).toContain('waitOperational:VMUser:reads-az-a');
    expect(r.breaches(true)).toEqual([]);
  });
});

test('[I2] skip race: an edit lands between the dry run that found a zone up to date and the apply: the zone fails in reads, not Skipped; resume takes the full path', async () => {
  const fake = makeFake({ upToDate: ['az-a', 'az-b', 'az-c'] });
  await withWorker(env(), fake, async (r) => {
    const applying = fake.hold('applyObject:VMCluster:vm-az-a', { after: 'dryRun:VMCluster:vm-az-a' });
    const h = await r.start(inputOf());
    await r.reach(applying);
    // Someone sets another version after the dry run said "unchanged": the apply changes the zone.
    const o = fake.object('VMCluster', 'vm-az-a')!;
    o.spec = { ...o.spec, clusterVersion: OLD_VERSION };
    o.generation++;
    applying.release();
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    expect(p.zones.find((z) => z.name === 'az-a')).toMatchObject({
      phase: 'Failed',
      outOfRotation: false,
      message: expect.stringMatching(/ChangedInReads|changed while in read rotation/),
    });
    expect(fake.statuses.at(-1)).toMatchObject({ phase: 'Failed', zonesOutOfRotation: [] });
    expect(fake.calls.filter((c) => c.startsWith('editRoutes'))).toEqual([]);
    await h.signal('resume');
    const res = await h.result();
    await maybeRecord('skip-race-then-resume', h);
    expect(res.zones.map((z) => [z.name, z.phase])).toEqual([
      ['az-a', 'Done'],
      ['az-b', 'Skipped'],
      ['az-c', 'Skipped'],
    ]);
    // The race itself is the one breach: the apply changed the zone while it served reads.
    expect(r.breaches(true).map((b) => b.message)).toEqual(['VMCluster vm-az-a changed while in read rotation']);
  });
});

test('Shuffle order is the deterministic per-generation shuffle', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const input = inputOf({ order: 'Shuffle', uid: 'feedbeef-0000-0000-0000-000000000001' });
    const h = await r.start(input);
    const res = await h.result();
    const expected = planZoneOrder([...ZONES], 'Shuffle', shuffleSeed(input.object));
    expect(res.zones.map((z) => z.name)).toEqual(expected);
    expect(
      mutations(fake)
        .filter((m) => m.startsWith('applyObject:VMCluster'))
        .map((m) => m.split(':')[2]),
    ).toEqual(expected.map((z) => `vm-${z}`));
    expect(r.breaches(true)).toEqual([]);
  });
});

test('unchanged, operational zones are skipped without leaving reads', async () => {
  const fake = makeFake({ upToDate: ['az-a', 'az-c'] });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    const res = await h.result();
    await maybeRecord('skip-unchanged', h);
    expect(res.zones.map((z) => z.phase)).toEqual(['Skipped', 'Done', 'Skipped']);
    // A skipped zone's apply changes no spec (only what vmrollout records on the object).
    expect(mutations(fake).filter((m) => m.includes('VMCluster') || m.startsWith('editRoutes'))).toEqual([
      'applyObject:VMCluster:vm-az-a',
      'editRoutes:remove:vm-az-b',
      'applyObject:VMCluster:vm-az-b',
      'editRoutes:restore:vm-az-b',
      'applyObject:VMCluster:vm-az-c',
    ]);
    expect(fake.log.flatMap((e) => (e.type === 'patch' && e.kind === 'VMCluster' && e.changed ? [e.name] : []))).toEqual(['vm-az-b']);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('a zone that would leave a route empty: Failed, no edit; resume after the user adds a backend', async () => {
  const fake = makeFake();
  fake.setRoute('VMUser/reads-az-a', [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: 'default' } }]);
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    expect(p.zones.find((z) => z.name === 'az-a')).toMatchObject({ phase: 'Failed', failedStep: 'LeavingReads', outOfRotation: false });
    expect(p.zonesOutOfRotation).toEqual([]);
    expect(p.message).toMatch(/VMUser reads-az-a/);
    expect(fake.calls.filter((c) => c.startsWith('editRoutes') || c.startsWith('applyObject:VMCluster'))).toEqual([]);
    expect(fake.statuses.at(-1)).toMatchObject({ phase: 'Failed', zonesOutOfRotation: [] });
    fake.userAppend('VMUser/reads-az-a', vmselect('vm-az-b', 'vm-az-c'));
    await h.signal('resume');
    const res = await h.result();
    await maybeRecord('empty-route-then-resume', h);
    expect(res.phase).toBe('Succeeded');
    expect(r.breaches(true)).toEqual([]);
  });
});

test('VMCluster failed: zone Failed and kept out, next zone untouched; resume after the operator recovers', async () => {
  const fake = makeFake();
  fake.patchBehaviour.set('vm-az-b', 'failed');
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    expect(p.zones.find((z) => z.name === 'az-b')).toMatchObject({ phase: 'Failed', failedStep: 'WaitingOperational', outOfRotation: true });
    expect(p.zonesOutOfRotation).toEqual(['az-b']);
    expect(p.message).toMatch(/ObjectFailed/);
    expect(fake.touched('vm-az-c')).toBe(false);
    const st = fake.statuses.at(-1)!;
    expect(st).toMatchObject({ phase: 'Failed', zonesOutOfRotation: ['az-b'], currentZone: 'az-b' });
    expect(st.zones?.find((z) => z.name === 'az-b')?.message).toMatch(/kept out of read rotation/);
    // Failed keeps the date of the step that failed.
    const began = fake.statuses.filter((s) => s.zones?.find((z) => z.name === 'az-b')?.phase === 'WaitingOperational').at(-1)!;
    expect(st.zones?.find((z) => z.name === 'az-b')?.stepStartedAt).toBe(began.zones!.find((z) => z.name === 'az-b')!.stepStartedAt);
    expect(r.breaches()).toEqual([]);
    // the operator recovers; resume retries from Upgrading (re-apply, then wait)
    fake.patchBehaviour.set('vm-az-b', 'operational');
    fake.object('VMCluster', 'vm-az-b')!.updateStatus = 'expanding';
    await h.signal('resume');
    const res = await h.result();
    await maybeRecord('vmcluster-failed-then-resume', h);
    expect(res.phase).toBe('Succeeded');
    expect(mutations(fake).filter((m) => m === 'applyObject:VMCluster:vm-az-b')).toHaveLength(2);
    expectStepsDated(fake.statuses, 'az-b');
    expect(r.breaches(true)).toEqual([]);
  });
});

test('zone timeout (VMCluster never operational): Failed after zoneTimeout; resume retries the zone', async () => {
  const fake = makeFake();
  fake.patchBehaviour.set('vm-az-a', 'hang');
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ zoneTimeoutMs: 5 * 60_000 }));
    // let the server skip time while the activity retries
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed', 60_000);
    expect(p.zones.find((z) => z.name === 'az-a')).toMatchObject({ phase: 'Failed', failedStep: 'WaitingOperational', outOfRotation: true });
    expect(p.message).toMatch(/zoneTimeout exhausted|NotReady/);
    expect(fake.touched('vm-az-b')).toBe(false);
    fake.patchBehaviour.set('vm-az-a', 'operational');
    await h.signal('resume');
    const res = await h.result();
    await maybeRecord('zone-timeout-then-resume', h);
    expect(res.phase).toBe('Succeeded');
    expect(r.breaches(true)).toEqual([]);
  });
});

test('a read switch that cannot be confirmed in the vmauth pods: the zone fails at LeavingReads while still in reads; resume once fixed', async () => {
  const fake = makeFake();
  fake.unconfirmableSwitch.add('vm-az-a');
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ zoneTimeoutMs: 5 * 60_000 }));
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed', 60_000);
    expect(p.zones.find((z) => z.name === 'az-a')).toMatchObject({ phase: 'Failed', failedStep: 'LeavingReads', outOfRotation: false });
    expect(p.zonesOutOfRotation).toEqual([]);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    expect(mutations(fake).filter((m) => m.startsWith('editRoutes'))).toEqual([]);
    expect(fake.calls).toContain('confirmSwitch:present:vm-az-a');
    fake.unconfirmableSwitch.clear();
    await h.signal('resume');
    const res = await h.result();
    await maybeRecord('switch-unconfirmable-then-resume', h);
    expect(res.phase).toBe('Succeeded');
    expect(r.breaches(true)).toEqual([]);
  });
});

test('vmagent unreachable: never drained, zone times out and stays out; cancel keeps it out', async () => {
  const fake = makeFake();
  fake.queueBehaviour.set('vm-az-a', 'unreachable');
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ zoneTimeoutMs: 5 * 60_000 }));
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed', 60_000);
    expect(p.zones.find((z) => z.name === 'az-a')).toMatchObject({ phase: 'Failed', failedStep: 'WaitingForQueue', outOfRotation: true });
    expect(fake.log.some((a) => a.type === 'routes' && a.direction === 'restore')).toBe(false);
    await h.cancel();
    await expect(h.result()).rejects.toThrow(WorkflowFailedError);
    await maybeRecord('vmagent-unreachable-cancel', h);
    const st = fake.statuses.at(-1)!;
    expect(st.phase).toBe('Cancelled');
    expect(st.zonesOutOfRotation).toEqual(['az-a']);
    expect(st.zones?.find((z) => z.name === 'az-a')?.message).toMatch(/stays out of read rotation.*not drained/);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('a slow queue drains after a few polls: the zone waits, showing each sample in the status, then rejoins', async () => {
  const fake = makeFake();
  fake.queueBehaviour.set('vm-az-a', { notDrainedAttempts: 3 });
  await withWorker(env(), fake, async (r) => {
    const sampled = fake.hold('queueSampled:vm-az-a');
    const h = await r.start(inputOf());
    await r.reach(sampled);
    // While the one activity still waits, the progress query shows its latest sample (sent to the
    // workflow with every status report), not only the one it returns.
    await eventually(async () => {
      const p = await r.progress(h);
      return (
        p.currentStep === 'WaitingForQueue' &&
        p.lastQueueSample?.zone === 'az-a' &&
        p.lastQueueSample.drained === false &&
        p.lastQueueSample.podPendingBytes?.['vmagent-0'] === 3072
      );
    });
    sampled.release();
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    // One activity for the whole wait (a long drain costs heartbeats, not history events)...
    expect(fake.calls.filter((c) => c === 'watchQueue:vm-az-a')).toHaveLength(1);
    // ...which showed every not-drained sample in the status as it went.
    const live = fake.statuses.filter((s) =>
      /waiting for the vmagent backlog .*4 KiB pending on 2\/2 vmagent pods \[vmagent-0 3072 B, vmagent-1 1024 B\]; not empty/.test(
        s.zones?.find((z) => z.name === 'az-a')?.message ?? '',
      ),
    );
    expect(live).toHaveLength(3);
    // The progress query keeps the last sample of the last zone, with its empty streak.
    expect((await h.query<Progress>('progress')).lastQueueSample).toMatchObject({
      zone: 'az-c',
      drained: true,
      podPendingBytes: { 'vmagent-0': 0, 'vmagent-1': 0 },
      emptySince: expect.any(String),
    });
    expect(r.breaches(true)).toEqual([]);
    await maybeRecord('slow-queue-live-progress', h);
  });
});

test('a zone that would carry the reads has a vmagent backlog: the next zone stays in reads until it is empty, saying so', async () => {
  const fake = makeFake();
  fake.queueBehaviour.set('vm-az-b', { notDrainedAttempts: 2 });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    const firstLeave = fake.calls.indexOf('editRoutes:remove:vm-az-a');
    const checks = fake.calls.slice(0, firstLeave).filter((c) => c === 'waitCarriersReady:vm-az-b,vm-az-c');
    expect(checks).toHaveLength(3); // two with az-b's backlog, then ready
    expect(
      fake.statuses.some((s) =>
        /waiting until the zones that will carry its reads \(az-b, az-c\)/.test(s.zones?.find((z) => z.name === 'az-a')?.message ?? ''),
      ),
    ).toBe(true);
    expect(r.breaches(true)).toEqual([]);
    await maybeRecord('carrier-backlog-holds-leave', h);
  });
});

test('stale generation: takeOver says stale, nothing is touched', async () => {
  const fake = makeFake({ generation: 2 });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ generation: 1 }));
    const res = await h.result();
    await maybeRecord('stale-generation', h);
    expect(res.phase).toBe('Superseded');
    expect(fake.calls).toEqual(['verifyInput:g1', 'takeOverObject:g1']);
    expect(fake.statuses).toEqual([]);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('refused input (it does not describe its object): the workflow fails InputRefused having called nothing else', async () => {
  const fake = makeFake();
  fake.inputVerdict = { verdict: 'refused', message: 'workflow input refused, nothing done: the spec differs' };
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ generation: 1 }));
    const err = await h.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(FailureType.InputRefused);
    expect((cause as ApplicationFailure).message).toContain('the spec differs');
    expect(fake.calls).toEqual(['verifyInput:g1']);
    expect(fake.statuses).toEqual([]);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
  });
});

test('outdated input (the object asks for another rollout now): Superseded, nothing done', async () => {
  const fake = makeFake();
  fake.inputVerdict = { verdict: 'stale', generation: 2, message: 'at generation 2; nothing done' };
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf({ generation: 1 }))).result();
    expect(res).toMatchObject({ phase: 'Superseded', message: 'at generation 2; nothing done' });
    expect(fake.calls).toEqual(['verifyInput:g1']);
    expect(fake.statuses).toEqual([]);
  });
});

test('supersede mid-zone (patched): g1 finishes the zone in flight, ends Superseded; g2 takes over and finishes', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const held = fake.hold('waitOperational:VMCluster:vm-az-b');
    const h1 = await r.start(inputOf({ generation: 1 }));
    await r.reach(held);
    fake.objectGeneration = 2;
    const h2 = await r.start(inputOf({ generation: 2 }, [h1.workflowId]));
    await eventually(async () => (await r.progress(h1)).supersededBy === 2);
    held.release();
    const res1 = await h1.result();
    expect(res1.phase).toBe('Superseded');
    expect(res1.zones.map((z) => z.phase)).toEqual(['Done', 'Done', 'Pending']);
    expect(fake.calls.filter((c) => c.includes('vm-az-c') && c.startsWith('applyObject')).length).toBe(0);
    const res2 = await h2.result();
    await maybeRecord('supersede-mid-zone-g1', h1);
    await maybeRecord('supersede-mid-zone-g2', h2);
    expect(res2.phase).toBe('Succeeded');
    expect(res2.zones.map((z) => z.phase)).toEqual(['Skipped', 'Skipped', 'Done']);
    expect(fake.statuses.at(-1)).toMatchObject({ phase: 'Succeeded', observedGeneration: 2 });
    // The superseded generation 1 never recorded a success.
    expect(fake.statuses.filter((s) => s.lastSucceeded).map((s) => s.lastSucceeded!.generation)).toEqual([2]);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('supersede before the patch: the zone rejoins at once, nothing is upgraded', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const held = fake.hold('waitOperational:VMAuth:vm-global', { after: 'editRoutes:remove:vm-az-a' });
    const h1 = await r.start(inputOf({ generation: 1 }));
    await r.reach(held);
    // after az-a's route edit, the VMAuth wait is its WaitingForSwitch
    expect((await r.progress(h1)).currentStep).toBe('WaitingForSwitch');
    await h1.signal('supersede', { generation: 2 });
    held.release();
    const res1 = await h1.result();
    expect(res1.phase).toBe('Superseded');
    expect(res1.zones.map((z) => z.phase)).toEqual(['Pending', 'Pending', 'Pending']);
    expect(fake.calls.filter((c) => c.startsWith('applyObject:VMCluster'))).toEqual([]);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('user edits to routes during a zone survive the restore', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const held = fake.hold('watchQueue:vm-az-b');
    const h = await r.start(inputOf());
    await r.reach(held);
    fake.userAppend('VMAuth/vm-global', { static: { url: 'http://cold-storage:8481' }, paths: ['/select/cold/.*'] });
    fake.userAppend('VMUser/reads-az-a', vmselect('vm-az-c'));
    held.release();
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    expect(fake.routes.get('VMAuth/vm-global')).toHaveLength(3);
    expect(fake.routes.get('VMAuth/vm-global')![1]).toEqual(vmselect('vm-az-a', 'vm-az-b', 'vm-az-c'));
    expect(r.breaches(true)).toEqual([]);
  });
});

test('cancel while Failed after a VMCluster failure: the patched zone stays out, status Cancelled says so', async () => {
  const fake = makeFake();
  fake.patchBehaviour.set('vm-az-a', 'failed');
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    await r.progressUntil(h, (p) => p.phase === 'Failed');
    await h.cancel();
    const err = await h.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    const st = fake.statuses.at(-1)!;
    expect(st).toMatchObject({ phase: 'Cancelled', zonesOutOfRotation: ['az-a'] });
    expect(st.zones?.find((z) => z.name === 'az-a')?.message).toMatch(/not operational/);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('continue-as-new at a zone boundary keeps the rollout going (history bound)', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start({ ...inputOf(), continueAsNewAfterEvents: 150 } as ReturnType<typeof inputOf>);
    const res = await h.result(); // follows the continued runs
    expect(res.phase).toBe('Succeeded');
    expect(res.zones.map((z) => z.phase)).toEqual(['Done', 'Done', 'Done']);
    const runIds = new Set(fake.statuses.map((s) => s.workflow?.runId));
    expect(runIds.size).toBeGreaterThan(1);
    expect(fake.calls.filter((c) => c.startsWith('takeOverObject'))).toHaveLength(1);
    expect(fake.calls.filter((c) => c.startsWith('applyObject:VMCluster'))).toHaveLength(3);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    expect(r.breaches(true)).toEqual([]);
  });
});

// spec.vmuserSelector: a VMUser the spec does not name, routing to every zone, selected by its labels
// (the real listing and label checks: integration tests; on real processes: the e2e and the real-operator bed).
const teamReader = (fake: ReturnType<typeof makeFake>, labels: Record<string, string>) => {
  fake.addObject('VMUser', 'team', { username: 'team' }, 1);
  fake.vmuserLabels.set('team', labels);
  fake.setRoute('VMUser/team', [vmselect('vm-az-a', 'vm-az-b', 'vm-az-c')]);
};

test('a VMUser spec.vmuserSelector selects is taken out of each zone and put back exactly, as a named one', async () => {
  const fake = makeFake();
  teamReader(fake, { 'vmrollout.io/reads': 'global' });
  await withWorker(env(), fake, async (r) => {
    expect((await (await r.start(inputOf({ vmuserSelector: 'vmrollout.io/reads=global' }))).result()).phase).toBe('Succeeded');
    // Each zone's leave edited it (its removal recorded), and its rejoin put it back: as it was.
    const teamEdits = (direction: string) =>
      fake.log.flatMap((e) => (e.type === 'routes' && e.direction === direction && Object.hasOwn(e.after, 'VMUser/team') ? [e.vmcluster] : []));
    expect(teamEdits('remove')).toEqual(ZONES.map((z) => `vm-${z}`));
    expect(teamEdits('restore')).toEqual(ZONES.map((z) => `vm-${z}`));
    expect(fake.routeSnapshot()['VMUser/team']).toEqual([vmselect('vm-az-a', 'vm-az-b', 'vm-az-c')]);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('negative control: the same VMUser without its label (or without the selector) is never edited', async () => {
  for (const [labels, selector] of [
    [{ 'vmrollout.io/reads': 'other' }, 'vmrollout.io/reads=global'],
    [{ 'vmrollout.io/reads': 'global' }, undefined],
  ] as const) {
    const fake = makeFake();
    teamReader(fake, labels);
    await withWorker(env(), fake, async (r) => {
      expect((await (await r.start(inputOf(selector ? { vmuserSelector: selector } : {}))).result()).phase).toBe('Succeeded');
      expect(fake.log.some((e) => e.type === 'routes' && Object.hasOwn(e.after, 'VMUser/team'))).toBe(false);
    });
  }
});
