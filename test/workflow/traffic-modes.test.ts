// spec.zones[].trafficMode on the time-skipping test server: a write-only zone leaves reads, is
// upgraded out of them and never rejoins; a maintenance zone leaves and its VMCluster is left alone;
// neither is put back by a cancel; back to read-write, the next generation takes it over from the
// records and puts it back once drained. Each ends with the invariant checker ([I1] counting the
// zones not held); the negative control shows the same rollout without the mode puts the zone back.
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { inputOf, makeFake, NEW_VERSION, OLD_VERSION, useTimeSkippingEnv, withWorker } from './setup';
import type { FakeCluster } from './fake-cluster';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

const edits = (calls: string[], direction: 'remove' | 'restore', vmcluster: string) =>
  calls.filter((c) => c.startsWith(`editRoutes:${direction}`) && c.includes(vmcluster)).length;
const applied = (calls: string[], vmcluster: string) => calls.filter((c) => c === `applyObject:VMCluster:${vmcluster}`).length;
const recordedZones = (fake: FakeCluster) => [...new Set([...fake.records.values()].flatMap((recs) => Object.values(recs).map((r) => r.zone)))].sort();
const zoneOf = (fake: FakeCluster, name: string) => fake.statuses.at(-1)!.zones!.find((z) => z.name === name)!;

test('write-only: the zone leaves reads, is upgraded out of them and stays out; maintenance: leaves, its VMCluster untouched', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf({ trafficModes: { 'az-b': 'write-only', 'az-c': 'maintenance' } }))).result();
    expect(res).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: ['az-b', 'az-c'] });
    expect(res.zones.map((z) => [z.name, z.phase])).toEqual([
      ['az-a', 'Done'],
      ['az-b', 'Done'],
      ['az-c', 'Skipped'],
    ]);
    // Left once, never restored; az-b upgraded, az-c not even dry-run.
    expect([edits(fake.calls, 'remove', 'vm-az-b'), edits(fake.calls, 'restore', 'vm-az-b')]).toEqual([1, 0]);
    expect([edits(fake.calls, 'remove', 'vm-az-c'), edits(fake.calls, 'restore', 'vm-az-c')]).toEqual([1, 0]);
    expect(fake.object('VMCluster', 'vm-az-b')!.spec.clusterVersion).toBe(NEW_VERSION);
    expect(fake.calls.filter((c) => c.includes(':VMCluster:vm-az-c'))).toEqual([]);
    // Nor waited for: no queue wait, no rejoin.
    expect(fake.calls.some((c) => c.startsWith('watchQueue') && c.includes('vm-az-b'))).toBe(false);
    expect(recordedZones(fake)).toEqual(['az-b', 'az-c']);
    const last = fake.statuses.at(-1)!;
    expect(last).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: ['az-b', 'az-c'] });
    expect(last.message).toBe(
      `every zone not in maintenance at ${NEW_VERSION} (2 upgraded, 0 already up to date); held out of reads by their trafficMode: az-b (write-only), az-c (maintenance)`,
    );
    expect(zoneOf(fake, 'az-b')).toMatchObject({
      trafficMode: 'write-only',
      message: expect.stringContaining('held out of reads (trafficMode write-only): written and upgraded'),
    });
    expect(zoneOf(fake, 'az-c')).toMatchObject({ trafficMode: 'maintenance', message: expect.stringContaining('left alone by rollouts') });
    expect(r.breaches(true, ['vm-az-b', 'vm-az-c'])).toEqual([]);
    // The oracle's own control: without telling it which zones are held, two zones out breach [I1].
    expect(r.breaches(true).map((b) => b.invariant)).toContain(1);
  });
});

test('negative control: the same rollout without trafficMode puts every zone back', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf())).result();
    expect(res).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: [] });
    expect([edits(fake.calls, 'remove', 'vm-az-b'), edits(fake.calls, 'restore', 'vm-az-b')]).toEqual([1, 1]);
    expect(applied(fake.calls, 'vm-az-c')).toBe(1);
    expect(recordedZones(fake)).toEqual([]);
  });
});

test('held zones stay out across generations; the route objects are applied without them; back to read-write, the zone is taken over and put back', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h1 = await r.start(inputOf({ generation: 1, trafficModes: { 'az-b': 'write-only' } }));
    expect((await h1.result()).zonesOutOfRotation).toEqual(['az-b']);
    // g2: still write-only, nothing else to do: az-b is not left again, not taken over, not put back;
    // the spec's route objects are applied without its VMCluster (the apply must not put it back).
    fake.objectGeneration = 2;
    const before = fake.calls.length;
    const res2 = await (await r.start(inputOf({ generation: 2, trafficModes: { 'az-b': 'write-only' } }, [h1.workflowId]))).result();
    expect(res2.zones.map((z) => [z.name, z.phase])).toEqual([
      ['az-a', 'Skipped'],
      ['az-b', 'Skipped'],
      ['az-c', 'Skipped'],
    ]);
    const g2 = fake.calls.slice(before);
    expect(g2.filter((c) => c.startsWith('editRoutes'))).toEqual([]);
    expect(g2).toContain('applyObject:VMAuth:vm-global without vm-az-b');
    expect(g2).toContain('applyObject:VMUser:reads-az-a without vm-az-b');
    expect(zoneOf(fake, 'az-b').message).toContain('held out of reads (trafficMode write-only): written, not read');
    // g3: read-write again: taken over first (confirmed out, drained), put back; the routes applied in full at the end.
    fake.objectGeneration = 3;
    const before3 = fake.calls.length;
    const res3 = await (await r.start(inputOf({ generation: 3 }, [h1.workflowId]))).result();
    expect(res3).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: [] });
    expect(res3.zones[0]).toMatchObject({ name: 'az-b', phase: 'Done' });
    const g3 = fake.calls.slice(before3);
    expect(edits(g3, 'restore', 'vm-az-b')).toBe(1);
    expect(g3.some((c) => c.startsWith('watchQueue') && c.includes('vm-az-b'))).toBe(true);
    expect(g3).toContain('applyObject:VMAuth:vm-global');
    expect(g3.some((c) => c.includes(' without '))).toBe(false);
    expect(recordedZones(fake)).toEqual([]);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    // az-b was held while az-c left in g1; in g3 it rejoined before any other zone left.
    expect(r.breaches(true, ['vm-az-b'])).toEqual([]);
  });
});

test('a cancel never puts a held zone back: the status says it stays out for its trafficMode', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ trafficModes: { 'az-a': 'write-only' }, gates: ['BeforeEachZone'] }));
    // A held zone already out is not gated; az-a leaves at its turn, after the first gate.
    await r.progressUntil(h, (p) => p.awaiting?.nextZone === 'az-a');
    await h.executeUpdate('promote');
    await r.progressUntil(h, (p) => p.awaiting?.nextZone === 'az-b');
    await h.cancel();
    expect(((await h.result().catch((e: unknown) => e)) as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    const last = fake.statuses.at(-1)!;
    expect(last).toMatchObject({ phase: 'Cancelled', zonesOutOfRotation: ['az-a'] });
    expect(zoneOf(fake, 'az-a').message).toBe('stays out of read rotation (cancelled): its trafficMode is write-only');
    expect(edits(fake.calls, 'restore', 'vm-az-a')).toBe(0);
    expect(recordedZones(fake)).toEqual(['az-a']);
    expect(r.breaches(true, ['vm-az-a'])).toEqual([]);
  });
});

test('a dry run plans held zones as hold: leaving for good, or out already; write-only upgraded, maintenance left alone', async () => {
  const fake = makeFake({ upToDate: ['az-a'] });
  await withWorker(env(), fake, async (r) => {
    const modes = { trafficModes: { 'az-a': 'write-only', 'az-c': 'maintenance' } } as const;
    const res = await (await r.start(inputOf({ upToDate: ['az-a'], dryRun: true, ...modes }))).result();
    expect(res.message).toBe('dry run (strategy.dryRun), nothing changed: 1 zone would be upgraded, 0 skipped, 2 held out of reads (trafficMode): status.plan');
    const plan = fake.statuses.at(-1)!.plan!;
    expect(plan.zones.map((z) => [z.zone, z.would, z.routes])).toEqual([
      ['az-a', 'hold', ['VMAuth/vm-global', 'VMUser/reads-az-a']],
      ['az-b', 'upgrade', ['VMAuth/vm-global', 'VMUser/reads-az-a']],
      ['az-c', 'hold', ['VMAuth/vm-global', 'VMUser/reads-az-a']],
    ]);
    expect(plan.zones[0]!.reason).toBe('trafficMode write-only: would leave reads for good; already up to date');
    expect(plan.zones[2]!.reason).toBe('trafficMode maintenance: would leave reads for good; its VMCluster left alone');
    expect(fake.calls.filter((c) => c.includes(':VMCluster:vm-az-c'))).toEqual([]);
    // Once they are out (the rollout ran), the plan says so and removes nothing more.
    fake.objectGeneration = 2;
    await (await r.start(inputOf({ generation: 2, upToDate: ['az-a'], ...modes }))).result();
    fake.objectGeneration = 3;
    await (await r.start(inputOf({ generation: 3, upToDate: ['az-a'], dryRun: true, ...modes }))).result();
    const again = fake.statuses.at(-1)!.plan!;
    expect(again.zones.map((z) => [z.zone, z.would, z.removedRefs])).toEqual([
      ['az-a', 'hold', 0],
      ['az-b', 'skip', 0],
      ['az-c', 'hold', 0],
    ]);
    expect(again.zones[0]!.reason).toBe('trafficMode write-only: out of reads already (recorded), stays out; already up to date');
  });
});

test.each([
  ['maintenance', ['az-a'], 0],
  // Negative control: read-write, the same zone rejoins at once.
  [undefined, [], 1],
] as const)('superseded right after a zone left, before any patch: held (%s) it stays out, else it rejoins at once', async (mode, out, restores) => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const held = fake.hold('editRoutes:remove:vm-az-a');
    const h = await r.start(inputOf(mode ? { trafficModes: { 'az-a': mode } } : {}));
    await r.reach(held);
    await h.signal('supersede', { generation: 2 });
    held.release();
    expect(await h.result()).toMatchObject({ phase: 'Superseded', zonesOutOfRotation: out });
    expect(edits(fake.calls, 'restore', 'vm-az-a')).toBe(restores);
    if (mode) expect(zoneOf(fake, 'az-a').message).toBe('stays out of read rotation (superseded by generation 2): its trafficMode is maintenance');
  });
});

test('an edit landing between the dry run and the apply of a held zone already out is no change in reads: it is upgraded out of them', async () => {
  const fake = makeFake({ upToDate: ['az-a', 'az-b', 'az-c'] });
  await withWorker(env(), fake, async (r) => {
    const modes = { upToDate: ['az-a', 'az-b', 'az-c'], trafficModes: { 'az-a': 'write-only' as const } };
    const h1 = await r.start(inputOf({ generation: 1, ...modes }));
    expect((await h1.result()).zonesOutOfRotation).toEqual(['az-a']);
    fake.objectGeneration = 2;
    const applying = fake.hold('applyObject:VMCluster:vm-az-a');
    const h2 = await r.start(inputOf({ generation: 2, ...modes }, [h1.workflowId]));
    await r.reach(applying);
    const o = fake.object('VMCluster', 'vm-az-a')!;
    o.spec = { ...o.spec, clusterVersion: OLD_VERSION };
    o.generation++;
    applying.release();
    const res = await h2.result();
    expect(res).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: ['az-a'] });
    expect(res.zones.find((z) => z.name === 'az-a')!.phase).toBe('Done');
    expect(fake.object('VMCluster', 'vm-az-a')!.spec.clusterVersion).toBe(NEW_VERSION);
    // The race changed the zone out of reads, never in them.
    expect(r.breaches(true, ['vm-az-a'])).toEqual([]);
  });
});
