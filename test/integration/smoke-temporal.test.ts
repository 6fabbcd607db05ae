import { randomUUID } from 'node:crypto';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SA_CLUSTER_VERSION, SA_GENERATION, SA_NAME, SA_NAMESPACE } from '../../api/rollout-contract';
import { startTimeSkippingEnv, useTemporalDevEnv } from '../infra/harness/temporal';
import { greet, sleepOneHour } from '../fixtures/workflows/smoke';

// Bundle once for both servers (webpack + swc; takes a few seconds on 2 cores).
let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
const workflowBundle = () =>
  (bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('../fixtures/workflows/smoke'), logger: new DefaultLogger('WARN') }));

describe('Temporal dev server (real temporal CLI)', () => {
  const env = useTemporalDevEnv();

  it('runs a workflow and registers the VMDC search attributes', async () => {
    const e = env();
    const taskQueue = `smoke-${randomUUID()}`;
    const worker = await Worker.create({ connection: e.nativeConnection, taskQueue, workflowBundle: await workflowBundle() });
    const workflowId = `smoke-${randomUUID()}`;
    const result = await worker.runUntil(async () => {
      const handle = await e.client.workflow.start(greet, {
        taskQueue,
        workflowId,
        args: ['vmrollout'],
        typedSearchAttributes: [
          { key: SA_NAMESPACE, value: 'monitoring' },
          { key: SA_NAME, value: 'vmdc-a' },
          { key: SA_GENERATION, value: 7 },
          { key: SA_CLUSTER_VERSION, value: 'v1.150.0' },
        ],
      });
      return handle.result();
    });
    expect(result).toBe('hello vmrollout from greet');
    const desc = await e.client.workflow.getHandle(workflowId).describe();
    expect(desc.typedSearchAttributes.get(SA_GENERATION)).toBe(7);
    expect(desc.typedSearchAttributes.get(SA_NAME)).toBe('vmdc-a');
  }, 120_000);
});

describe('Temporal time-skipping test server (real temporal-test-server)', () => {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await startTimeSkippingEnv();
  }, 120_000);
  afterAll(async () => {
    await env?.teardown();
  });

  it('a workflow sleeping one hour finishes within seconds', async () => {
    const e = env!;
    const taskQueue = `smoke-ts-${randomUUID()}`;
    const worker = await Worker.create({ connection: e.nativeConnection, taskQueue, workflowBundle: await workflowBundle() });
    const started = Date.now();
    const sleptMs = await worker.runUntil(e.client.workflow.execute(sleepOneHour, { taskQueue, workflowId: `sleep-${randomUUID()}` }));
    expect(sleptMs).toBeGreaterThanOrEqual(3_600_000);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);
});
