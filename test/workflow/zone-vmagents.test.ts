// One VMAgent per zone (spec.zones[].vmagent) on the time-skipping test server: the zones' own
// VMAgents are applied with spec.vmagent before any zone leaves, and every read of a zone's queue
// (the carriers' readiness, the headroom and drop readings, the queue wait) names all of them; the
// reading itself (each VMAgent's remoteWrite list, the pods of all summed) is the real QueueReader's
// (test/unit/activities-vmagent-queue.test.ts), and the e2e's on real vmagents.
import { inputOf, makeFake, useTimeSkippingEnv, withWorker } from './setup';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

test("the zones' VMAgents are applied in prepare, and every queue read of every zone reads them beside spec.vmagent", async () => {
  const fake = makeFake();
  for (const n of ['vmagent-az-b', 'vmagent-az-c']) fake.addObject('VMAgent', n, { remoteWrite: [] }, 1);
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf({ zoneVmagents: { 'az-b': 'vmagent-az-b', 'az-c': 'vmagent-az-c' } }))).result();
    expect(res.phase).toBe('Succeeded');
    const prepared = fake.calls.slice(
      0,
      fake.calls.findIndex((c) => c.startsWith('editRoutes')),
    );
    expect(prepared).toEqual(expect.arrayContaining(['applyObject:VMAgent:vm-global', 'applyObject:VMAgent:vmagent-az-b', 'applyObject:VMAgent:vmagent-az-c']));
    expect(fake.queueAgents.length).toBeGreaterThanOrEqual(9);
    for (const agents of fake.queueAgents) expect(agents).toEqual(['vm-global', 'vmagent-az-b', 'vmagent-az-c']);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('negative control: without zones[].vmagent only spec.vmagent is read', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    expect((await (await r.start(inputOf())).result()).phase).toBe('Succeeded');
    expect(fake.queueAgents.length).toBeGreaterThanOrEqual(9);
    for (const agents of fake.queueAgents) expect(agents).toEqual(['vm-global']);
  });
});
