// The worker process of bench/stack/scale.ts: ONE Temporal worker (prebuilt workflow bundle, as the
// production image runs it) whose activities are fast in-memory fakes, one FakeCluster
// (test/workflow/fake-cluster.ts, built as test/workflow/setup.ts makeFake builds it) per
// VMDistributedCluster, chosen by the calling workflow's id. Run as a child process (fork with IPC)
// so that its RSS is its own; the fakes live in the parent, each activity a call over IPC, as a real
// activity is a call to the API server: what they record (every object, route edit and status of
// 200 rollouts, 130 MB by the end) is the test bed's memory, not the worker's.
//   env: SCALE_TEMPORAL_ADDRESS, SCALE_NAMESPACE, SCALE_TASK_QUEUE, SCALE_BUNDLE (a bundle file),
//        SCALE_HOLD_MS: how long the two long waits of a zone (its VMCluster's waitOperational after
//        the upgrade, and watchQueue) hold their activity slot, heartbeating, before the fake answers
//        (the real ones last minutes; the fake answers at once otherwise),
//        SCALE_MAX_CACHED_WORKFLOWS (optional: the worker's maxCachedWorkflows; default the SDK's)
// IPC in:  { type: 'reset' } | { type: 'stats' } | { type: 'shutdown' } | FakeReply
// IPC out: { type: 'ready' } | { type: 'stats', stats: WorkerStats } | { type: 'error', message } | FakeCall
import * as v8 from 'node:v8';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { RolloutActivities } from '../../workflows/activity-types';
import { installQuietRuntime } from '../../test/infra/harness/temporal';
import { makeFake } from '../../test/workflow/setup';

/** An activity call for the fakes in the parent process, and its answer. */
export interface FakeCall {
  type: 'call';
  id: number;
  workflowId: string;
  name: string;
  arg: unknown;
}
export interface FakeReply {
  type: 'reply';
  id: number;
  value?: unknown;
  failure?: { message: string; type?: string; nonRetryable: boolean };
}

export interface WorkerStats {
  /** Activity executions in flight at once, counted around every fake activity call. */
  activitiesInFlightPeak: number;
  /** The SDK's own view (worker.getStatus(), sampled every 50 ms). */
  sdkActivitiesInFlightPeak: number;
  sdkWorkflowActivationsInFlightPeak: number;
  sdkCachedWorkflowsPeak: number;
  activityCalls: number;
  heapUsedPeakMB: number;
  /** V8's heap limit: the SDK sizes its workflow cache from it (maxCachedWorkflows ≈ (limit − 200 MiB) × 600/1024). */
  heapLimitMB: number;
  /** process.memoryUsage() (MB) at the highest RSS seen by the 50 ms sampler: how much of it V8 holds. */
  atRssPeakMB: { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
  maxCachedWorkflows: number | 'default';
}

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

async function main(): Promise<void> {
  installQuietRuntime('ERROR');
  const replies = new Map<number, (r: FakeReply) => void>();
  let lastCall = 0;
  const callFake = (name: string, arg: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++lastCall;
      replies.set(id, (r) => (r.failure ? reject(ApplicationFailure.create({ ...r.failure })) : resolve(r.value)));
      const call: FakeCall = { type: 'call', id, workflowId: Context.current().info.workflowExecution?.workflowId ?? '', name, arg };
      process.send?.(call);
    });

  const maxCached = process.env.SCALE_MAX_CACHED_WORKFLOWS ? Number(process.env.SCALE_MAX_CACHED_WORKFLOWS) : undefined;
  let inFlight = 0;
  const fresh = (): WorkerStats => ({
    activitiesInFlightPeak: 0,
    sdkActivitiesInFlightPeak: 0,
    sdkWorkflowActivationsInFlightPeak: 0,
    sdkCachedWorkflowsPeak: 0,
    activityCalls: 0,
    heapUsedPeakMB: 0,
    heapLimitMB: Math.round(v8.getHeapStatistics().heap_size_limit / 2 ** 20),
    atRssPeakMB: { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 },
    maxCachedWorkflows: maxCached ?? 'default',
  });
  let stats = fresh();

  const holdMs = Number(process.env.SCALE_HOLD_MS ?? 0);
  const holds = (name: string, arg: unknown) =>
    holdMs > 0 && (name === 'watchQueue' || (name === 'waitOperational' && (arg as { kind?: string }).kind === 'VMCluster'));
  const hold = async () => {
    const ctx = Context.current();
    for (let left = holdMs; left > 0; left -= 1000) {
      ctx.heartbeat();
      await ctx.sleep(Math.min(1000, left));
    }
  };

  const names = Object.keys(makeFake().activities()) as Array<keyof RolloutActivities>;
  const activities: Record<string, (arg: unknown) => Promise<unknown>> = {};
  for (const name of names) {
    activities[name] = async (arg: unknown) => {
      inFlight++;
      stats.activityCalls++;
      stats.activitiesInFlightPeak = Math.max(stats.activitiesInFlightPeak, inFlight);
      try {
        if (holds(name, arg)) await hold();
        return await callFake(name, arg);
      } finally {
        inFlight--;
      }
    };
  }

  const connection = await NativeConnection.connect({ address: env('SCALE_TEMPORAL_ADDRESS') });
  // Production options (worker/main.ts): the SDK defaults but for the activity slots, which the
  // chart leaves at the SDK default too (MAX_CONCURRENT_ACTIVITIES unset).
  const worker = await Worker.create({
    connection,
    namespace: env('SCALE_NAMESPACE'),
    taskQueue: env('SCALE_TASK_QUEUE'),
    workflowBundle: { codePath: env('SCALE_BUNDLE') },
    activities,
    ...(maxCached !== undefined ? { maxCachedWorkflows: maxCached } : {}),
  });

  const sampler = setInterval(() => {
    const s = worker.getStatus();
    stats.sdkActivitiesInFlightPeak = Math.max(stats.sdkActivitiesInFlightPeak, s.numInFlightNonLocalActivities);
    stats.sdkWorkflowActivationsInFlightPeak = Math.max(stats.sdkWorkflowActivationsInFlightPeak, s.numInFlightWorkflowActivations);
    stats.sdkCachedWorkflowsPeak = Math.max(stats.sdkCachedWorkflowsPeak, s.numCachedWorkflows);
    const m = process.memoryUsage();
    const mb = (n: number) => Math.round(n / 2 ** 20);
    stats.heapUsedPeakMB = Math.max(stats.heapUsedPeakMB, m.heapUsed / 2 ** 20);
    if (mb(m.rss) > stats.atRssPeakMB.rss) {
      stats.atRssPeakMB = { rss: mb(m.rss), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers) };
    }
  }, 50);
  sampler.unref();

  const send = (m: unknown) => process.send?.(m);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    if (worker.getState() === 'RUNNING' || worker.getState() === 'INITIALIZED') worker.shutdown();
  };
  process.on('message', (m: { type?: string } | FakeReply) => {
    if (m.type === 'reply') {
      const r = m as FakeReply;
      replies.get(r.id)?.(r);
      replies.delete(r.id);
    } else if (m.type === 'reset') stats = fresh();
    else if (m.type === 'stats') send({ type: 'stats', stats });
    else if (m.type === 'shutdown') stop();
  });
  // The parent went away: stop too.
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);

  const running = worker.run();
  send({ type: 'ready' });
  await running;
  clearInterval(sampler);
  await connection.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    process.stderr.write(`scale-worker: ${message}\n`);
    process.send?.({ type: 'error', message });
    process.exit(1);
  },
);
