/**
 * Upgrading vmrollout itself with rollouts in flight (docs/upgrading.md), on a real Temporal dev
 * server: Worker Versioning pins a rollout to the worker build that started it.
 *
 * Build A's worker (Worker Deployment D, build id A, current) starts a rollout and holds it mid-zone;
 * build B's worker joins on the same task queue (D, build id B) and B is made current, as the chart's
 * hook does; a rollout started then runs on B only. A's worker stops: the rollout it started waits,
 * B taking none of its tasks; A's worker comes back (the old build's pods are kept until drained) and
 * the rollout finishes there, its every workflow task and activity on A. Version A reports itself
 * draining while that rollout runs, drained once it has ended: its worker can go.
 *
 * Both builds are this tree's workflow bundle (as the image's worker builds it) with the worker
 * options of production (worker/main.ts workerDeploymentOptions); what tells them apart is their
 * build id, their worker identity (recorded by the server on each completed workflow task) and the
 * build that ran each activity (recorded by the test's activities, the workflow suite's in-memory fake
 * cluster). The drainage status is refreshed every second here instead of every 3 minutes.
 *
 * Negative control (the last test): the same upgrade with Worker Versioning switched off
 * (useWorkerVersioning false: unversioned workers on one task queue). When A's worker stops, B takes
 * over the rollout that A started and finishes it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Context } from '@temporalio/activity';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundle } from '@temporalio/worker';
import { workflowIdFor } from '../../api/rollout-contract';
import { failureConverterPath, parsePayloadKeys, payloadDataConverter } from '../../process/payload-codec';
import { workflowBundleOptions } from '../../process/workflow-bundle';
import { loadConfig } from '../../worker/config';
import { startWorker, workerDeploymentOptions } from '../../worker/main';
import type { RolloutActivities } from '../../workflows/activity-types';
import type { rolloutWorkflow } from '../../workflows';
import { harnessTempDir, waitFor } from '../infra/harness/processes';
import { useTemporalDevEnv } from '../infra/harness/temporal';
import { inputOf, makeFake } from '../workflow/setup';
import type { FakeCluster, Held } from '../workflow/fake-cluster';
import { unreachableKubeConfig } from '../infra/harness/kube';

jest.setTimeout(120_000);

const { VERSION_DRAINAGE_STATUS_DRAINING, VERSION_DRAINAGE_STATUS_DRAINED } = temporal.api.enums.v1.VersionDrainageStatus;
const { WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING, WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED } = temporal.api.enums.v1.WorkerDeploymentVersionStatus;

// The server's defaults (3 min each) would make the drain take minutes.
const env = useTemporalDevEnv({
  extraArgs: [
    '--dynamic-config-value',
    'matching.wv.VersionDrainageStatusRefreshInterval="1s"',
    '--dynamic-config-value',
    'matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"',
  ],
});
const dataConverter = payloadDataConverter(parsePayloadKeys(`upgrade:${randomBytes(32).toString('base64')}`))!;
let bundle: WorkflowBundle;
let client: Client;
const namespace = () => env().namespace ?? 'default';

beforeAll(async () => {
  bundle = await bundleWorkflowCode({ ...workflowBundleOptions(failureConverterPath()), logger: new DefaultLogger('WARN') });
  client = new Client({ connection: env().connection, namespace: namespace(), dataConverter });
}, 120_000);

interface Ran {
  build: string;
  workflowId: string;
  activity: string;
}

/** One upgrade on its own task queue and Worker Deployment; each rollout's activities on its own fake cluster. */
function upgrade(versioned: boolean) {
  const taskQueue = `upgrade-${randomUUID()}`;
  const deploymentName = `vmrollout-${randomUUID()}`;
  const fakes = new Map<string, FakeCluster>();
  const ran: Ran[] = [];
  const running = new Map<string, { worker: Worker; run: Promise<void> }>();
  const holds: Held[] = [];

  /** The fake cluster's activities, each call recorded with the build that ran it. */
  const activitiesOf = (build: string): RolloutActivities => {
    const names = Object.keys(makeFake().activities()) as Array<keyof RolloutActivities>;
    return Object.fromEntries(
      names.map((n) => [
        n,
        (...args: unknown[]) => {
          const workflowId = Context.current().info.workflowExecution!.workflowId;
          ran.push({ build, workflowId, activity: n });
          return (fakes.get(workflowId)!.activities()[n] as (...a: unknown[]) => Promise<unknown>)(...args);
        },
      ]),
    ) as unknown as RolloutActivities;
  };

  return {
    ran,
    taskQueue,
    deploymentName,
    /** A worker of `build`, as production starts it (versioned or not). */
    async worker(build: string) {
      const worker = await Worker.create({
        connection: env().nativeConnection,
        namespace: namespace(),
        taskQueue,
        identity: `worker-${build}`,
        workflowBundle: bundle,
        dataConverter,
        activities: activitiesOf(build),
        // A workflow task on a stopped worker's sticky queue goes to the task queue after 1 s, not 10 s.
        stickyQueueScheduleToStartTimeout: '1s',
        // Switched off, the worker still names its version (one process may not run two workers of
        // the same version on one queue) but polls as an unversioned worker.
        ...(versioned
          ? workerDeploymentOptions({ deploymentVersion: { deploymentName, buildId: build } })
          : { workerDeploymentOptions: { useWorkerVersioning: false, version: { deploymentName, buildId: build } } }),
      });
      running.set(build, { worker, run: worker.run() });
    },
    /** Stops build's worker and waits until it has stopped. */
    async stop(build: string) {
      const w = running.get(build)!;
      if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
      await w.run;
    },
    /** What the chart's hook does: retried until the build's workers poll (the version exists once they do). */
    async setCurrent(buildId: string) {
      await waitFor(
        async () =>
          !!(await client.workflowService.setWorkerDeploymentCurrentVersion({ namespace: namespace(), deploymentName, buildId, identity: 'upgrade-test' })),
        { timeoutMs: 30_000, intervalMs: 200, description: `version ${buildId} current` },
      );
    },
    async describeVersion(buildId: string) {
      const r = await client.workflowService.describeWorkerDeploymentVersion({ namespace: namespace(), deploymentVersion: { deploymentName, buildId } });
      return r.workerDeploymentVersionInfo!;
    },
    /** Holds the rollout's wait for az-a's VMCluster (released at the latest by stopAll, so that workers can stop). */
    holdZoneA(fake: FakeCluster): Held {
      const held = fake.hold('waitOperational:VMCluster:vm-az-a');
      holds.push(held);
      return held;
    },
    async start(fake: FakeCluster): Promise<WorkflowHandle<typeof rolloutWorkflow>> {
      const input = inputOf({ readDrainDelayMs: 0, uid: randomUUID() });
      fake.client = client;
      fakes.set(workflowIdFor(input.object), fake);
      return client.workflow.start<typeof rolloutWorkflow>('rolloutWorkflow', { taskQueue, workflowId: workflowIdFor(input.object), args: [input] });
    },
    async stopAll() {
      for (const h of holds) h.release();
      for (const w of running.values()) if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
      await Promise.all([...running.values()].map((w) => w.run));
    },
  };
}

type Event = temporal.api.history.v1.IHistoryEvent;
async function historyOf(h: WorkflowHandle) {
  const events: Event[] = (await h.fetchHistory()).events ?? [];
  return {
    /** The identity of the worker that completed each workflow task. */
    completedBy: events.flatMap((e) => (e.workflowTaskCompletedEventAttributes ? [e.workflowTaskCompletedEventAttributes.identity ?? ''] : [])),
    taskFailures: events.filter((e) => e.workflowTaskFailedEventAttributes).map((e) => e.workflowTaskFailedEventAttributes?.failure?.message),
  };
}

async function versioningOf(h: WorkflowHandle) {
  const info = (await h.describe()).raw.workflowExecutionInfo?.versioningInfo;
  return { behavior: info?.behavior, buildId: info?.deploymentVersion?.buildId };
}

const buildsOf = (ran: Ran[], h: WorkflowHandle) => new Set(ran.filter((r) => r.workflowId === h.workflowId).map((r) => r.build));

/**
 * The upgrade up to build A's departure: A starts a rollout (held in zone az-a), B joins (and, when
 * versioned, becomes current), a rollout started then runs to its end, and A's worker stops once the
 * held step is released. Returns the first rollout, still running.
 */
async function upgradeUntilAStops(u: ReturnType<typeof upgrade>, versioned: boolean) {
  await u.worker('a');
  if (versioned) await u.setCurrent('a');
  const first = makeFake();
  const held = u.holdZoneA(first);
  const h1 = await u.start(first);
  await held.reached;

  // The upgrade: build B polls the same task queue (and becomes current); A still runs.
  await u.worker('b');
  if (versioned) await u.setCurrent('b');
  const h2 = await u.start(makeFake());
  await h2.result();

  // A's pods go (as a Deployment's rolling update would take them): its step in flight ends first.
  held.release();
  await u.stop('a');
  return { first, h1, h2, afterA: u.ran.length };
}

test('a rollout started on build A stays on A, even while A is away, and finishes there; B, current, takes the new ones; then A drains', async () => {
  const u = upgrade(true);
  try {
    const { first, h1, h2, afterA } = await upgradeUntilAStops(u, true);
    const pinnedTo = (buildId: string) => ({ behavior: temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED, buildId });
    expect(await versioningOf(h1)).toEqual(pinnedTo('a'));

    // The rollout started after the switch ran on B only, though A was polling too.
    expect(await versioningOf(h2)).toEqual(pinnedTo('b'));
    expect(new Set((await historyOf(h2)).completedBy)).toEqual(new Set(['worker-b']));
    expect(buildsOf(u.ran, h2)).toEqual(new Set(['b']));

    // Without A, B (current, polling, idle) takes none of A's rollout: it waits for A.
    await new Promise((r) => setTimeout(r, 3000));
    expect(u.ran.slice(afterA).filter((r) => r.workflowId === h1.workflowId)).toEqual([]);
    expect((await h1.describe()).status.name).toBe('RUNNING');
    // Version A still has a rollout pinned to it: draining, not drained.
    await waitFor(async () => (await u.describeVersion('a')).drainageInfo?.status === VERSION_DRAINAGE_STATUS_DRAINING, {
      timeoutMs: 30_000,
      description: 'version a draining',
    });
    expect((await u.describeVersion('a')).status).toBe(WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING);

    // A's worker back (an old build's pod kept until drained): the rollout finishes on A, no task failed.
    await u.worker('a');
    await h1.result();
    expect(first.statuses.at(-1)).toMatchObject({ phase: 'Succeeded' });
    const history = await historyOf(h1);
    expect(history.taskFailures).toEqual([]);
    expect(new Set(history.completedBy)).toEqual(new Set(['worker-a']));
    expect(buildsOf(u.ran, h1)).toEqual(new Set(['a']));
    // Not vacuous: zones az-b and az-c ran after B became current.
    expect(u.ran.slice(afterA).filter((r) => r.workflowId === h1.workflowId).length).toBeGreaterThan(10);

    // No rollout is pinned to A any more: drained, its worker can go.
    await waitFor(async () => (await u.describeVersion('a')).drainageInfo?.status === VERSION_DRAINAGE_STATUS_DRAINED, {
      timeoutMs: 30_000,
      description: 'version a drained',
    });
    expect((await u.describeVersion('a')).status).toBe(WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED);
    await u.stop('a');
  } finally {
    await u.stopAll();
  }
});

test('negative control: with Worker Versioning off, build B takes over the rollout build A started', async () => {
  const u = upgrade(false);
  try {
    const { first, h1, afterA } = await upgradeUntilAStops(u, false);
    await h1.result();
    expect(first.statuses.at(-1)).toMatchObject({ phase: 'Succeeded' });
    expect(
      new Set(
        u.ran
          .slice(afterA)
          .filter((r) => r.workflowId === h1.workflowId)
          .map((r) => r.build),
      ),
    ).toEqual(new Set(['b']));
    expect((await historyOf(h1)).completedBy.at(-1)).toBe('worker-b');
    expect(await versioningOf(h1)).toEqual({ behavior: undefined, buildId: undefined });
  } finally {
    await u.stopAll();
  }
});

test('the worker process, given TEMPORAL_WORKER_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID, polls as that version', async () => {
  const u = upgrade(true);
  const bundlePath = path.join(harnessTempDir('worker-upgrade'), 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, bundle.code);
  const config = loadConfig({
    TEMPORAL_ADDRESS: env().address,
    TEMPORAL_NAMESPACE: namespace(),
    TASK_QUEUE: u.taskQueue,
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: '0',
    TEMPORAL_METRICS_BIND: '',
    WORKFLOW_BUNDLE: bundlePath,
    TEMPORAL_WORKER_DEPLOYMENT_NAME: u.deploymentName,
    TEMPORAL_WORKER_BUILD_ID: '1.0.0-rc.1',
  });
  // No activity runs here: a kubeconfig pointing nowhere is enough.
  const kubeConfig = unreachableKubeConfig();
  const running = await startWorker(config, { installRuntime: false, kubeConfig });
  try {
    // The server makes a version current only once its workers poll.
    await u.setCurrent('1.0.0-rc.1');
    const version = await u.describeVersion('1.0.0-rc.1');
    expect(version.status).toBe(temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT);
  } finally {
    await running.shutdown();
  }
});
