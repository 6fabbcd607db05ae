/**
 * A worker killed mid-attempt (SIGKILL: no graceful shutdown) leaves the attempt started on the
 * Temporal server until its heartbeat timeout. The next boot of the same instance releases it at its
 * start (worker/predecessor.ts): the attempt is retried at once, or, if its cancellation was asked
 * for meanwhile, reported cancelled. Real dev server; the killed worker is its own process
 * (test/fixtures/held-attempt-worker.ts); the restarted one runs here. Negative control: a worker of
 * another instance releases nothing, and the attempt waits out its 20 s heartbeat timeout.
 */
import * as path from 'node:path';
import { Context } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { isPredecessor, predecessorReleases, releasePredecessors, workerIdentity, type ReleaseResult } from '../../worker/predecessor';
import type { heldAttempt } from '../fixtures/workflows/held-attempt';
import { harnessTempDir, startProcess, tailFile, waitFor } from '../infra/harness/processes';
import { useTemporalDevEnv } from '../infra/harness/temporal';

jest.setTimeout(180_000);

const PendingState = temporal.api.enums.v1.PendingActivityState;
const REPO = path.resolve(__dirname, '..', '..');
const env = useTemporalDevEnv();
let n = 0;

/** Starts the held-attempt workflow on a fresh task queue, lets a killable worker process (`identity`) start its attempt, and SIGKILLs it. */
async function killedMidAttempt(
  identity: string,
  beforeKill?: (handle: WorkflowHandle<typeof heldAttempt>) => Promise<void>,
): Promise<{ handle: WorkflowHandle<typeof heldAttempt>; taskQueue: string; killedAt: number }> {
  const taskQueue = `predecessor-${process.pid}-${++n}`;
  const name = `held-attempt-worker-${n}`;
  const logDir = harnessTempDir(name);
  const proc = await startProcess({
    name,
    logDir,
    command: process.execPath,
    args: ['--import', 'tsx', path.join(REPO, 'test', 'fixtures', 'held-attempt-worker.ts')],
    cwd: REPO,
    env: { ...process.env, HELD_ADDRESS: env().address, HELD_NAMESPACE: env().namespace ?? 'default', HELD_TASK_QUEUE: taskQueue, HELD_IDENTITY: identity },
    ready: async () => /^ready$/m.test(tailFile(path.join(logDir, `${name}.log`))),
  });
  const handle = await env().client.workflow.start<typeof heldAttempt>('heldAttempt', { taskQueue, workflowId: taskQueue });
  await waitFor(
    async () => {
      const { raw } = await handle.describe();
      return raw.pendingActivities?.some((p) => p.state === PendingState.PENDING_ACTIVITY_STATE_STARTED && p.lastWorkerIdentity === identity);
    },
    { timeoutMs: 30_000, description: 'the attempt started by the worker process' },
  );
  await beforeKill?.(handle);
  const exited = proc.exited();
  proc.signal('SIGKILL');
  await exited;
  return { handle, taskQueue, killedAt: Date.now() };
}

/**
 * Runs `body` while the worker of the next boot (in this process, `identity`) polls `taskQueue`,
 * after releasing what its predecessors held: its attempt answers at once with who ran it.
 */
async function withNextBoot<T>(taskQueue: string, identity: string, body: (released: ReleaseResult) => Promise<T>): Promise<T> {
  const worker = await Worker.create({
    connection: env().nativeConnection,
    namespace: env().namespace,
    taskQueue,
    identity,
    workflowsPath: require.resolve('../fixtures/workflows/held-attempt'),
    activities: { hold: async () => ({ identity, attempt: Context.current().info.attempt }) },
  });
  const run = worker.run();
  try {
    return await body(await releasePredecessors(env().client, taskQueue, identity));
  } finally {
    worker.shutdown();
    await run;
  }
}

describe('identities', () => {
  test('an earlier boot of the same instance is a predecessor; this boot, another instance, or another instance sharing the prefix is not', () => {
    const self = workerIdentity('vmrollout-worker-7d9f-x2', 'b2');
    expect(self).toBe('vmrollout-worker-7d9f-x2/b2');
    expect(isPredecessor('vmrollout-worker-7d9f-x2/b1', self)).toBe(true);
    expect(isPredecessor(self, self)).toBe(false);
    expect(isPredecessor('vmrollout-worker-7d9f-x3/b1', self)).toBe(false);
    expect(isPredecessor('vmrollout-worker-7d9f/x2/b1', self)).toBe(false);
    expect(isPredecessor('123@host', self)).toBe(false);
    expect(isPredecessor('', self)).toBe(false);
  });

  test('only started and cancel-requested attempts of a predecessor are released', () => {
    const pending = (state: number, lastWorkerIdentity: string) => ({
      activityId: `${state}-${lastWorkerIdentity}`,
      activityType: 'watchQueue',
      state,
      lastWorkerIdentity,
    });
    const releases = predecessorReleases(
      [
        {
          workflowId: 'w',
          runId: 'r',
          pending: [
            pending(PendingState.PENDING_ACTIVITY_STATE_STARTED, 'i/old'),
            pending(PendingState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED, 'i/old'),
            pending(PendingState.PENDING_ACTIVITY_STATE_SCHEDULED, 'i/old'),
            pending(PendingState.PENDING_ACTIVITY_STATE_STARTED, 'j/old'),
            pending(PendingState.PENDING_ACTIVITY_STATE_STARTED, 'i/new'),
          ],
        },
      ],
      'i/new',
    );
    expect(releases.map((r) => [r.activityId, r.action])).toEqual([
      [`${PendingState.PENDING_ACTIVITY_STATE_STARTED}-i/old`, 'fail'],
      [`${PendingState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED}-i/old`, 'cancelled'],
    ]);
  });
});

describe('a restarted worker releases what its killed predecessor held (real dev server)', () => {
  test('a started attempt is retried at once on the new boot, not after the heartbeat timeout', async () => {
    const { handle, taskQueue, killedAt } = await killedMidAttempt('pod-a/boot1');
    await withNextBoot(taskQueue, 'pod-a/boot2', async (released) => {
      expect(released.errors).toEqual([]);
      expect(released.released).toEqual([expect.objectContaining({ workflowId: handle.workflowId, activityType: 'hold', action: 'fail' })]);
      const result = await handle.result();
      expect(result).toEqual({ identity: 'pod-a/boot2', attempt: 2 });
      // Far below the 20 s heartbeat timeout the attempt would otherwise wait out.
      expect(Date.now() - killedAt).toBeLessThan(10_000);
    });
  });

  test('a cancel asked for while the killed worker held the attempt completes at once', async () => {
    // Cancelled while the worker lives: its attempt, busy, has not acknowledged yet when it is killed.
    const { handle, taskQueue, killedAt } = await killedMidAttempt('pod-b/boot1', async (h) => {
      await h.cancel();
      await waitFor(async () => (await h.describe()).raw.pendingActivities?.[0]?.state === PendingState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED, {
        timeoutMs: 10_000,
        description: 'the attempt cancel-requested',
      });
    });
    await withNextBoot(taskQueue, 'pod-b/boot2', async (released) => {
      expect(released.released.map((r) => r.action)).toEqual(['cancelled']);
      const err = await handle.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      expect(Date.now() - killedAt).toBeLessThan(10_000);
    });
  });

  test('negative control: a worker of another instance releases nothing; the attempt waits out its heartbeat timeout', async () => {
    const { handle, taskQueue, killedAt } = await killedMidAttempt('pod-c/boot1');
    await withNextBoot(taskQueue, 'pod-d/boot1', async (released) => {
      expect(released.released).toEqual([]);
      const result = await handle.result();
      expect(result).toEqual({ identity: 'pod-d/boot1', attempt: 2 });
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(15_000);
    });
  });
});
