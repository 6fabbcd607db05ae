import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, inputOf, makeFake, withWorker, NEW_VERSION } from './setup';

jest.setTimeout(120_000);
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

test('happy path: 3 zones in declared order, routes restored exactly', async () => {
  const fake = makeFake();
  await withWorker(env, fake, async (r) => {
    const h = await r.start(inputOf());
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    expect(res.zones.map((z) => z.phase)).toEqual(['Done', 'Done', 'Done']);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    expect(fake.object('VMCluster', 'vm-az-b')!.spec).toMatchObject({ clusterVersion: NEW_VERSION, vmstorage: { replicaCount: 4 } });
    expect(r.breaches(true)).toEqual([]);
  });
});
