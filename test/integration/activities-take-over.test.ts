/**
 * takeOverObject against a real Temporal dev server (with the VMDC search attributes): other
 * running workflows of the same object are signalled `supersede` and awaited until closed; a
 * running workflow of a newer generation makes the caller stale (and is left alone).
 */
import { MockActivityEnvironment, type TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { SA_CLUSTER_VERSION, SA_GENERATION, SA_NAME, SA_NAMESPACE, SIGNAL_SUPERSEDE, workflowIdFor, type RolloutInput } from '../../api/rollout-contract';
import type { ObjectGeneration } from '../../api/types';
import type { RolloutActivities } from '../../workflows/activity-types';
import type { StandinState } from '../fixtures/workflows/rollout-standin';
import { waitFor } from '../infra/harness/processes';
import { startTemporalDevEnv } from '../infra/harness/temporal';
import { KubeConfig } from '@kubernetes/client-node';

jest.setTimeout(180_000);

const TQ = 'take-over-test';
let env: TestWorkflowEnvironment;
let worker: Worker;
let workerRun: Promise<void>;
let acts: RolloutActivities;

beforeAll(async () => {
  env = await startTemporalDevEnv();
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../fixtures/workflows/rollout-standin'),
    logger: new DefaultLogger('WARN'),
  });
  worker = await Worker.create({ connection: env.nativeConnection, namespace: env.namespace, taskQueue: TQ, workflowBundle });
  workerRun = worker.run();
  // No Kubernetes call here: a kubeconfig pointing nowhere.
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'none', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'none' }],
    contexts: [{ name: 'none', cluster: 'none', user: 'none' }],
    currentContext: 'none',
  });
  acts = createActivities({ kubeConfig, temporalClient: env.client });
});

afterAll(async () => {
  worker?.shutdown();
  await workerRun?.catch(() => {});
  await env?.teardown();
});

const obj = (name: string, generation: number, uid = 'a1b2c3d4-0000'): ObjectGeneration => ({ namespace: 'ns1', name, uid, generation });

async function startStandin(o: ObjectGeneration) {
  const input = { object: o, spec: { paused: false }, previousWorkflowIds: [] } as unknown as RolloutInput;
  return env.client.workflow.start('rolloutWorkflow', {
    taskQueue: TQ,
    workflowId: workflowIdFor(o),
    args: [input],
    typedSearchAttributes: [
      { key: SA_NAMESPACE, value: o.namespace },
      { key: SA_NAME, value: o.name },
      { key: SA_GENERATION, value: o.generation },
      { key: SA_CLUSTER_VERSION, value: 'v1' },
    ],
  });
}

async function visibleRunning(name: string, n: number) {
  await waitFor(
    async () => {
      let count = 0;
      for await (const _ of env.client.workflow.list({ query: `VmdcName = '${name}' AND ExecutionStatus = 'Running'` })) count++;
      return count === n;
    },
    { timeoutMs: 30_000, description: `${n} running workflows of ${name} in visibility` },
  );
}

const takeOver = (input: Parameters<RolloutActivities['takeOverObject']>[0]): Promise<{ stale: boolean; superseded: string[] }> =>
  new MockActivityEnvironment().run(acts.takeOverObject, input);

it('supersedes every older workflow (known id or found through visibility) and waits until they closed', async () => {
  const g3 = await startStandin(obj('x', 3));
  const g4 = await startStandin(obj('x', 4));
  const other = await startStandin(obj('y', 1)); // another object: untouched
  await visibleRunning('x', 2);
  const own = obj('x', 5);
  const r = await takeOver({ object: own, ownWorkflowId: workflowIdFor(own), previousWorkflowIds: [g3.workflowId, 'vmdc/ns1/x/g2-gone0000'] });
  expect(r.stale).toBe(false);
  expect(r.superseded.sort()).toEqual([g3.workflowId, g4.workflowId].sort());
  for (const h of [g3, g4]) {
    expect((await h.describe()).status.name).not.toBe('RUNNING');
    const state = (await h.result()) as StandinState;
    expect(state.outcome).toBe('superseded');
    expect(state.signals).toEqual([{ name: SIGNAL_SUPERSEDE, arg: { generation: 5 } }]);
  }
  expect((await other.describe()).status.name).toBe('RUNNING');
  // nothing left: a second call supersedes nobody
  expect(await takeOver({ object: own, ownWorkflowId: workflowIdFor(own), previousWorkflowIds: [g3.workflowId] })).toEqual({ stale: false, superseded: [] });
  await other.terminate();
});

it('is stale when a newer generation of the same object runs, and leaves it alone', async () => {
  const g7 = await startStandin(obj('z', 7));
  await visibleRunning('z', 1);
  const own = obj('z', 6);
  expect(await takeOver({ object: own, ownWorkflowId: workflowIdFor(own), previousWorkflowIds: [] })).toEqual({ stale: true, superseded: [] });
  const state = await g7.query<StandinState>('standin');
  expect(state.signals).toEqual([]);
  expect((await g7.describe()).status.name).toBe('RUNNING');
  // the same name after delete-and-recreate (another uid) with a lower generation supersedes the old object's workflow
  const recreated = obj('z', 1, 'ffff0000-1111');
  const r = await takeOver({ object: recreated, ownWorkflowId: workflowIdFor(recreated), previousWorkflowIds: [] });
  expect(r).toEqual({ stale: false, superseded: [g7.workflowId] });
  expect(((await g7.result()) as StandinState).outcome).toBe('superseded');
});
