// strategy.dryRun on the time-skipping test server: the rollout planned into status.plan, nothing
// written but the status.
import { inputOf, makeFake, withWorker, useTimeSkippingEnv } from './setup';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

/** Every call that writes something other than the status. */
const writes = (calls: string[]) => calls.filter((c) => c.startsWith('applyObject') || c.startsWith('editRoutes'));

test('a dry run plans every zone as the rollout would judge it, writes only the status, and ends Planned', async () => {
  const fake = makeFake({ upToDate: ['az-a'] });
  fake.headroom.set('vm-az-c', { rateBytesPerSecond: 2000, roomBytes: 1_000_000 });
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf({ upToDate: ['az-a'], dryRun: true, gates: ['BeforeEachZone'] }))).result();
    expect(res.phase).toBe('Planned');
    expect(res.message).toBe('dry run (strategy.dryRun), nothing changed: 1 zone would be upgraded, 1 skipped, 1 would fail: status.plan');
    expect(writes(fake.calls)).toEqual([]);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    const plan = fake.statuses.at(-1)!.plan!;
    expect(plan).toMatchObject({ generation: 1, order: ['az-a', 'az-b', 'az-c'] });
    expect(plan.zones.map((z) => [z.zone, z.would, z.gates, z.routes, z.removedRefs])).toEqual([
      ['az-a', 'skip', [], [], 0],
      ['az-b', 'upgrade', ['BeforeEachZone'], ['VMAuth/vm-global', 'VMUser/reads-az-a'], 2],
      ['az-c', 'fail', [], ['VMAuth/vm-global', 'VMUser/reads-az-a'], 2],
    ]);
    expect(plan.zones[1]!.queueHeadroom).toMatchObject({ fits: true });
    expect(plan.zones[2]!.reason).toMatch(/^would stay in reads \(InsufficientHeadroom\): 1 vmagent queue for the zone would overflow/);
    expect(fake.statuses.at(-1)).toMatchObject({ phase: 'Planned', zonesOutOfRotation: [] });
  });
});

test('negative control: the same spec without dryRun upgrades (and the plan is not written)', async () => {
  const fake = makeFake({ upToDate: ['az-a'] });
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf({ upToDate: ['az-a'] }))).result();
    expect(res.phase).toBe('Succeeded');
    expect(writes(fake.calls)).toContain('applyObject:VMCluster:vm-az-b');
    expect(fake.statuses.some((s) => s.plan)).toBe(false);
  });
});

test('a zone whose leaving would empty a route is planned to fail, in reads', async () => {
  const fake = makeFake();
  fake.setRoute('VMUser/reads-az-a', [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: 'default' } }]);
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf({ dryRun: true }))).result();
    expect(res.phase).toBe('Planned');
    const a = fake.statuses.at(-1)!.plan!.zones.find((z) => z.zone === 'az-a')!;
    expect(a).toMatchObject({ would: 'fail', reason: expect.stringMatching(/VMUser reads-az-a/) });
    expect(writes(fake.calls)).toEqual([]);
  });
});
