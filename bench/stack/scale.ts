// Scale of one worker, and Temporal history events per zone (issue 13 item 4, worker part).
//
// 1. Many rollouts at once on ONE worker: a real Temporal dev server, one worker process
//    (bench/stack/scale-worker.ts, a child process so that its RSS is its own) running the real
//    workflow bundle with fast in-memory activities (one FakeCluster of test/workflow/fake-cluster.ts
//    per VMDistributedCluster: zones operational at once, queues drained at the first sample), short
//    strategy durations; only each zone's two long waits (its VMCluster's waitOperational after the
//    upgrade, and watchQueue) hold their activity slot for --hold-ms (default 5 s), heartbeating, as
//    the real waits hold one for minutes. Measures the time of N rollouts of 3 zones at once
//    against one rollout alone, the worker's peak RSS, the activity slots in use, workflow-task
//    latency, and the history events per zone of every rollout.
// 2. History events per zone against the length of the queue wait (step 5): the time-skipping test
//    server, the FakeCluster with a queue whose backlog lasts (virtual time) so that the wait takes
//    1 min or 30 min per zone, polled by the real watchQueue loop of activities/vmagent/drain.ts
//    (its slicing or reporting is what decides the number of activities).
//
// Prints ONE JSON document on stdout (also written to .tmp/bench/scale.json; the work runs in a child
// process whose stdout is our stderr); compares within one run, never asserts timings. Run: npx tsx bench/stack/scale.ts [--quick] [--hold-ms=5000]
// The worker runs with the chart's glibc malloc settings (charts/vmrollout/values.yaml worker.malloc).
// Variants of the worker: [--max-cached=N] [--malloc=default] (glibc's own) [--preload=none] (output .tmp/bench/scale-<variant>.json).
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ServiceError, type WorkflowHandle, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { MockActivityEnvironment, type TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowIdFor, type RolloutInput, type DrainHeartbeat, type QueueSample, type RolloutResult } from '../../api/rollout-contract';
import type { NormalizedSpec } from '../../api/types';
import { watchQueue as realWatchQueue } from '../../activities/vmagent/drain';
import type { PollContext } from '../../activities/activity-context';
import { failureConverterPath } from '../../process/payload-codec';
import { workflowBundleOptions } from '../../process/workflow-bundle';
import { freePort } from '../../test/infra/harness/ports';
import { guardPid } from '../../test/infra/harness/processes';
import { startTemporalDevEnv } from '../../test/infra/harness/temporal';
import { NS, ZONES, createEnv, inputOf, makeFake, makeSpec, withWorker } from '../../test/workflow/setup';
import type { FakeCluster } from '../../test/workflow/fake-cluster';
import type { RolloutActivities } from '../../workflows/activity-types';
import { queueProgressMessage } from '../../workflows/status';
import { minMaxMean, round } from '../analysis/stats';
import { CHART_MALLOC } from '../support/chart-worker';
import { eventTypeCounts, fullHistory, type HistoryEvent } from '../support/history';
import { procMemoryMB } from '../support/proc-memory';
import { provenance } from '../support/provenance';
import type { FakeCall, FakeReply, WorkerStats } from './scale-worker';

const quick = process.argv.includes('--quick');
const ROLLOUTS = quick ? 20 : 200;
/** How long each zone's two long waits (upgrade's waitOperational, watchQueue) hold an activity slot. */
const flag = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
/** Worker variants (to find what its RSS is made of): its maxCachedWorkflows, glibc's malloc as it comes. */
const MAX_CACHED = flag('max-cached');
const GLIBC_MALLOC = flag('malloc') === 'default';
/** --preload=none: the bundle without its shared modules (each workflow evaluates every module again). */
const NO_PRELOAD = flag('preload') === 'none';
const HOLD_MS = Number(/^--hold-ms=(\d+)$/.exec(process.argv.find((a) => a.startsWith('--hold-ms=')) ?? '')?.[1] ?? 5_000);
const TARGETS = { workerRssMB: 500, eventsPerZone: 100 } as const;
const REPO = path.resolve(__dirname, '..', '..');
const OUT_DIR = path.join(REPO, '.tmp', 'bench');

const log = (msg: string) => process.stderr.write(`[scale] ${msg}\n`);

// ---- helpers -------------------------------------------------------------------------------------

function tsMs(t: HistoryEvent['eventTime']): number {
  if (!t) return NaN;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

function pct(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Scheduled→started latencies (ms) of workflow tasks and of activity tasks in one history. */
const WAITS = new Set(['waitOperational', 'confirmSwitch', 'waitCarriersReady', 'waitReadsDrained', 'watchQueue', 'waitQueueDrained']);

function taskLatencies(events: HistoryEvent[]): { workflowTask: number[]; activity: number[]; waitActivity: number[]; activityNames: Record<string, number> } {
  const byId = new Map<number, HistoryEvent>();
  for (const e of events) byId.set(Number(e.eventId), e);
  const workflowTask: number[] = [];
  const activity: number[] = [];
  const waitActivity: number[] = [];
  const activityNames: Record<string, number> = {};
  for (const e of events) {
    const wft = e.workflowTaskStartedEventAttributes;
    if (wft) {
      const s = byId.get(Number(wft.scheduledEventId));
      if (s) workflowTask.push(tsMs(e.eventTime) - tsMs(s.eventTime));
    }
    const at = e.activityTaskStartedEventAttributes;
    if (at) {
      const s = byId.get(Number(at.scheduledEventId));
      if (s) {
        const d = tsMs(e.eventTime) - tsMs(s.eventTime);
        if (WAITS.has(s.activityTaskScheduledEventAttributes?.activityType?.name ?? '')) waitActivity.push(d);
        else activity.push(d);
      }
    }
    const sched = e.activityTaskScheduledEventAttributes;
    if (sched) {
      const n = sched.activityType?.name ?? '?';
      activityNames[n] = (activityNames[n] ?? 0) + 1;
    }
  }
  return { workflowTask, activity, waitActivity, activityNames };
}

// ---- 1. many rollouts on one worker (dev server) ---------------------------------------------------

/** The workflow's result; a long poll the overloaded server drops (ServiceError) is asked again. */
async function resultOf(h: WorkflowHandle): Promise<RolloutResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await h.result()) as RolloutResult;
    } catch (err) {
      if (!(err instanceof ServiceError) || attempt >= 5) throw err;
      log(`result of ${h.workflowId}: ${err.message}; asking again`);
    }
  }
}

/** The spec of the scale runs: the workflow tests' 3 zones, strategy durations short. */
function fastSpec(): NormalizedSpec {
  const spec = makeSpec();
  return {
    ...spec,
    strategy: { ...spec.strategy, readDrainDelayMs: 1_000, queueDrainedForMs: 1_000, pollIntervalMs: 200, zoneTimeoutMs: 10 * 60_000, pauseBetweenZonesMs: 0 },
  };
}

function rolloutInput(i: number): RolloutInput {
  // generation 1: the fake cluster's object generation (its status writes are for that generation).
  return { object: { namespace: NS, name: `vmdc-${i}`, uid: randomUUID(), generation: 1 }, spec: fastSpec(), previousWorkflowIds: [] };
}

class WorkerChild {
  readonly proc: ChildProcess;
  private readonly release: () => void;
  private readonly waiting = new Map<string, Array<(m: { type: string; stats?: WorkerStats; message?: string }) => void>>();
  readonly exited: Promise<number | null>;

  constructor(envVars: Record<string, string>) {
    this.proc = fork(path.join(__dirname, 'scale-worker.ts'), [], {
      cwd: REPO,
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...envVars },
      // The child's stdout goes to our stderr: stdout carries only the JSON document.
      stdio: ['ignore', 2, 2, 'ipc'],
    });
    this.release = guardPid(this.proc.pid!, 'scale-worker');
    this.exited = new Promise((resolve) => this.proc.once('exit', (code) => resolve(code)));
    this.proc.on('message', (m: { type: string; message?: string } | FakeCall) => {
      if (m.type === 'call') {
        void this.answer(m as FakeCall);
        return;
      }
      if (m.type === 'error') log(`worker error: ${(m as { message?: string }).message}`);
      const q = this.waiting.get(m.type);
      const fn = q?.shift();
      fn?.(m);
    });
  }

  /** The fakes (one FakeCluster per VMDistributedCluster) live here, outside the measured worker. */
  private readonly fakes = new Map<string, RolloutActivities>();

  private async answer(call: FakeCall): Promise<void> {
    let fake = this.fakes.get(call.workflowId);
    if (!fake) this.fakes.set(call.workflowId, (fake = makeFake().activities()));
    let reply: FakeReply;
    try {
      // Inside an activity context of the calling workflow, as the real activities run: the queue
      // wait's progress reporter reads the workflow it reports to from it.
      const context = new MockActivityEnvironment({ workflowExecution: { workflowId: call.workflowId, runId: '' } });
      const activity = fake[call.name as keyof RolloutActivities] as (a: unknown) => Promise<unknown>;
      reply = { type: 'reply', id: call.id, value: await context.run(activity, call.arg) };
    } catch (err) {
      const f = err instanceof ApplicationFailure ? err : undefined;
      reply = {
        type: 'reply',
        id: call.id,
        failure: { message: err instanceof Error ? err.message : String(err), type: f?.type ?? undefined, nonRetryable: f?.nonRetryable ?? false },
      };
    }
    if (this.proc.connected) this.proc.send(reply);
  }

  next(type: string, timeoutMs = 180_000): Promise<{ type: string; stats?: WorkerStats }> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`worker: no '${type}' message within ${timeoutMs} ms`)), timeoutMs);
      const q = this.waiting.get(type) ?? [];
      q.push((m) => {
        clearTimeout(t);
        resolve(m);
      });
      this.waiting.set(type, q);
      void this.exited.then((code) => reject(new Error(`worker exited (${code}) before '${type}'`)));
    });
  }

  send(type: string): void {
    this.proc.send({ type });
  }

  async stats(): Promise<WorkerStats> {
    const p = this.next('stats', 10_000);
    this.send('stats');
    return (await p).stats!;
  }

  /** VmRSS and VmHWM (peak) of the worker process, in MB. */
  memory(): { rssMB: number; hwmMB: number } {
    return procMemoryMB(this.proc.pid!);
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.send('shutdown');
      const t = setTimeout(() => this.proc.kill('SIGKILL'), 20_000);
      await this.exited;
      clearTimeout(t);
    }
    this.release();
  }
}

interface ScaleResult {
  rollouts: number;
  totalMs: number;
  startAllMs: number;
  singleMs: number;
  workerRssIdleMB: number;
  workerRssPeakMB: number;
  workerRssSamplePeakMB: number;
  worker: WorkerStats;
  eventsPerZone: { min: number; max: number; mean: number };
  singleEventsPerZone: number;
  singleEventTypes: Record<string, number>;
  singleActivitiesPerZone: Record<string, number>;
  continuedAsNew: number;
  workflowTaskScheduleToStartMs: { p50: number; p95: number; max: number };
  activityScheduleToStartMs: { p50: number; p95: number; max: number };
  waitActivityScheduleToStartMs: { p50: number; p95: number; max: number };
}

async function runScale(): Promise<ScaleResult> {
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const bundlePath = path.join(OUT_DIR, 'scale-workflow-bundle.js');
  log('bundling the workflows (as scripts/bundle-workflows.ts does for the image)');
  const options = workflowBundleOptions(failureConverterPath());
  const { code } = await bundleWorkflowCode(NO_PRELOAD ? { ...options, preloadModules: [] } : options);
  fs.writeFileSync(bundlePath, code);

  const port = await freePort();
  log('starting the Temporal dev server');
  const env = await startTemporalDevEnv({ port });
  const taskQueue = `scale-${randomUUID()}`;
  const child = new WorkerChild({
    SCALE_TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    SCALE_NAMESPACE: env.namespace ?? 'default',
    SCALE_TASK_QUEUE: taskQueue,
    SCALE_BUNDLE: bundlePath,
    SCALE_HOLD_MS: String(HOLD_MS),
    ...(MAX_CACHED ? { SCALE_MAX_CACHED_WORKFLOWS: MAX_CACHED } : {}),
    ...(GLIBC_MALLOC ? {} : CHART_MALLOC),
  });
  try {
    await child.next('ready');
    const client = env.client;
    const run = async (
      inputs: RolloutInput[],
    ): Promise<{ ms: number; startMs: number; handles: Array<{ id: string; runId: string; result: RolloutResult }> }> => {
      const t0 = performance.now();
      const handles = await Promise.all(
        inputs.map((input) => client.workflow.start('rolloutWorkflow', { taskQueue, workflowId: workflowIdFor(input.object), args: [input] })),
      );
      const startMs = performance.now() - t0;
      const results = await Promise.all(handles.map((h) => resultOf(h)));
      const ms = performance.now() - t0;
      for (const r of results) if (r.phase !== 'Succeeded') throw new Error(`a rollout ended ${r.phase}: ${JSON.stringify(r)}`);
      return { ms, startMs, handles: handles.map((h, i) => ({ id: h.workflowId, runId: h.firstExecutionRunId, result: results[i]! })) };
    };

    log('warm-up rollout');
    await run([rolloutInput(-1)]);
    log('one rollout alone');
    const single = await run([rolloutInput(0)]);
    const singleHistory = await fullHistory(client, single.handles[0]!.id, single.handles[0]!.runId);
    const idle = child.memory();

    log(`${ROLLOUTS} rollouts at once`);
    child.send('reset');
    let samplePeak = 0;
    const sampler = setInterval(() => {
      const m = child.memory().rssMB;
      if (Number.isFinite(m)) samplePeak = Math.max(samplePeak, m);
    }, 100);
    let batch: Awaited<ReturnType<typeof run>>;
    try {
      batch = await run(Array.from({ length: ROLLOUTS }, (_, i) => rolloutInput(i + 1)));
    } finally {
      clearInterval(sampler);
    }
    const worker = await child.stats();
    const mem = child.memory();
    log(`done in ${Math.round(batch.ms)} ms; reading ${ROLLOUTS} histories`);

    const perZone: number[] = [];
    const wft: number[] = [];
    const act: number[] = [];
    const waitAct: number[] = [];
    let continuedAsNew = 0;
    for (const h of batch.handles) {
      const { events, runs } = await fullHistory(client, h.id, h.runId);
      continuedAsNew += runs - 1;
      perZone.push(events.length / ZONES.length);
      const l = taskLatencies(events);
      wft.push(...l.workflowTask);
      act.push(...l.activity);
      waitAct.push(...l.waitActivity);
    }
    const singleLat = taskLatencies(singleHistory.events);
    return {
      rollouts: ROLLOUTS,
      totalMs: Math.round(batch.ms),
      startAllMs: Math.round(batch.startMs),
      singleMs: Math.round(single.ms),
      workerRssIdleMB: round(idle.rssMB),
      workerRssPeakMB: round(Math.max(samplePeak, mem.hwmMB)),
      workerRssSamplePeakMB: round(samplePeak),
      worker: { ...worker, heapUsedPeakMB: round(worker.heapUsedPeakMB) },
      eventsPerZone: minMaxMean(perZone),
      singleEventsPerZone: round(singleHistory.events.length / ZONES.length),
      singleEventTypes: eventTypeCounts(singleHistory.events),
      singleActivitiesPerZone: Object.fromEntries(Object.entries(singleLat.activityNames).map(([k, v]) => [k, round(v / ZONES.length, 2)])),
      continuedAsNew,
      workflowTaskScheduleToStartMs: { p50: round(pct(wft, 50)), p95: round(pct(wft, 95)), max: round(Math.max(0, ...wft)) },
      activityScheduleToStartMs: { p50: round(pct(act, 50)), p95: round(pct(act, 95)), max: round(Math.max(0, ...act)) },
      waitActivityScheduleToStartMs: { p50: round(pct(waitAct, 50)), p95: round(pct(waitAct, 95)), max: round(Math.max(0, ...waitAct)) },
    };
  } finally {
    await child.stop().catch((e: unknown) => log(`worker stop: ${String(e)}`));
    await env.teardown();
  }
}

// ---- 2. events per zone against the length of the queue wait (time-skipping server) ---------------

/**
 * The fake's watchQueue replaced by the real loop (activities/vmagent/drain.ts watchQueue) over a
 * virtual clock per zone: each zone's vmagent backlog lasts `backlogMs` from its first sample, then
 * the queues are empty; sleeps advance the clock without waiting. So the wait takes
 * backlogMs + queueDrainedFor of (virtual) time in as many activities as the real loop would use;
 * the reports the loop writes itself (queue-heartbeats version) go through the fake's writeStatus.
 */
function virtualQueue(fake: FakeCluster, backlogMs: number): { samples: number; selfReports: number } {
  const counts = { samples: 0, selfReports: 0 };
  const base = fake.activities.bind(fake);
  const clocks = new Map<string, { start: number; now: number }>();
  fake.activities = (): RolloutActivities => {
    const acts = base();
    const watchQueue = async (arg: Parameters<RolloutActivities['watchQueue']>[0]): Promise<DrainHeartbeat> => {
      const { report, ...input } = arg;
      fake.calls.push(`watchQueue:${input.vmclusterName}`);
      let clock = clocks.get(input.vmclusterName);
      if (!clock) {
        clock = { start: Date.now(), now: Date.now() };
        clocks.set(input.vmclusterName, clock);
      }
      const c = clock;
      const actx = Context.current();
      const ctx: PollContext = {
        heartbeat: (d) => actx.heartbeat(d),
        sleep: async (ms) => {
          c.now += ms;
        },
        heartbeatDetails: () => undefined,
        signal: actx.cancellationSignal,
      };
      const sample = async (): Promise<QueueSample> => {
        counts.samples++;
        const at = new Date(c.now).toISOString();
        if (c.now - c.start < backlogMs) {
          return {
            at,
            pendingBytes: 4096,
            unreadablePods: 0,
            totalPods: 2,
            drained: false,
            message: '4 KiB pending on 2/2 vmagent pods',
            podPendingBytes: { 'vmagent-0': 3072, 'vmagent-1': 1024 },
          };
        }
        return { at, pendingBytes: 0, unreadablePods: 0, totalPods: 2, drained: true, message: 'drained', podPendingBytes: { 'vmagent-0': 0, 'vmagent-1': 0 } };
      };
      const selfReport = {
        everyMs: report.everyMs,
        write: async (streak: DrainHeartbeat) => {
          counts.selfReports++;
          const zones = report.status.zones?.map((z) =>
            z.name === report.zone ? { ...z, message: queueProgressMessage(streak, input.queueDrainedForMs) } : z,
          );
          await acts.writeStatus({ object: report.object, status: { ...report.status, zones } });
        },
      };
      return realWatchQueue(ctx, sample, input, () => c.now, selfReport);
    };
    return { ...acts, watchQueue };
  };
  return counts;
}

interface DrainResult {
  /** Step 5's duration per zone (virtual): backlog, then queueDrainedFor of empty queues. */
  queueWaitMinutes: number;
  backlogMs: number;
  eventsPerZone: number;
  watchQueueCallsPerZone: number;
  statusWritesPerZone: number;
  selfReportsPerZone: number;
  samplesPerZone: number;
  runs: number;
  eventTypes: Record<string, number>;
}

async function runDrain(env: TestWorkflowEnvironment, queueWaitMs: number): Promise<DrainResult> {
  const spec = makeSpec();
  const backlogMs = Math.max(0, queueWaitMs - spec.strategy.queueDrainedForMs);
  const fake = makeFake();
  const counts = virtualQueue(fake, backlogMs);
  return withWorker(env, fake, async (r) => {
    const input = inputOf({ zoneTimeoutMs: 2 * 60 * 60_000 });
    const h = await r.start(input);
    const res = (await h.result()) as RolloutResult;
    if (res.phase !== 'Succeeded') throw new Error(`drain rollout ended ${res.phase}`);
    // Running.start returns what client.workflow.start does: a handle with its first run id.
    const { events, runs } = await fullHistory(env.client, h.workflowId, (h as WorkflowHandleWithFirstExecutionRunId).firstExecutionRunId);
    const z = ZONES.length;
    return {
      queueWaitMinutes: queueWaitMs / 60_000,
      backlogMs,
      eventsPerZone: round(events.length / z),
      watchQueueCallsPerZone: round(fake.calls.filter((c) => c.startsWith('watchQueue:')).length / z),
      statusWritesPerZone: round(fake.calls.filter((c) => c.startsWith('writeStatus:')).length / z),
      selfReportsPerZone: round(counts.selfReports / z),
      samplesPerZone: round(counts.samples / z),
      runs,
      eventTypes: eventTypeCounts(events),
    };
  });
}

async function runDrains(): Promise<{ oneMinute: DrainResult; thirtyMinutes: DrainResult }> {
  log('time-skipping server: queue waits of 1 min and 30 min per zone');
  const env = await createEnv();
  try {
    const oneMinute = await runDrain(env, 60_000);
    const thirtyMinutes = await runDrain(env, 30 * 60_000);
    return { oneMinute, thirtyMinutes };
  } finally {
    await env.teardown();
  }
}

// ---- main ----------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const runInfo = provenance();
  const drains = await runDrains();
  const scale = await runScale();
  const eventsMax = Math.max(scale.eventsPerZone.max, drains.oneMinute.eventsPerZone, drains.thirtyMinutes.eventsPerZone);
  const result = {
    benchmark: 'scale',
    quick,
    ...runInfo,
    loadavgAtEnd: os.loadavg().map((x) => round(x, 2)),
    rollouts: scale.rollouts,
    zonesPerRollout: ZONES.length,
    totalMs: scale.totalMs,
    singleMs: scale.singleMs,
    startAllMs: scale.startAllMs,
    workerRssPeakMB: scale.workerRssPeakMB,
    workerRssIdleMB: scale.workerRssIdleMB,
    workerRssSamplePeakMB: scale.workerRssSamplePeakMB,
    activitySlotsPeak: scale.worker.activitiesInFlightPeak,
    activitySlotsConfigured: 100,
    worker: scale.worker,
    workflowTaskScheduleToStartMs: scale.workflowTaskScheduleToStartMs,
    activityScheduleToStartMs: scale.activityScheduleToStartMs,
    waitActivityScheduleToStartMs: scale.waitActivityScheduleToStartMs,
    holdMs: HOLD_MS,
    workerVariant: {
      maxCachedWorkflows: MAX_CACHED ? Number(MAX_CACHED) : 'default',
      malloc: GLIBC_MALLOC ? 'glibc default' : CHART_MALLOC,
      preloadModules: !NO_PRELOAD,
    },
    eventsPerZone: scale.eventsPerZone,
    continuedAsNew: scale.continuedAsNew,
    single: { eventsPerZone: scale.singleEventsPerZone, activitiesPerZone: scale.singleActivitiesPerZone, eventTypes: scale.singleEventTypes },
    drain: {
      oneMinute: drains.oneMinute.eventsPerZone,
      thirtyMinutes: drains.thirtyMinutes.eventsPerZone,
      details: drains,
    },
    ratios: {
      totalVsSingle: round(scale.totalMs / Math.max(1, scale.singleMs), 2),
      totalVsSingleSerial: round(scale.totalMs / Math.max(1, scale.singleMs * scale.rollouts), 3),
      rssOverTarget: round(scale.workerRssPeakMB / TARGETS.workerRssMB, 3),
      eventsPerZoneOverTarget: round(scale.eventsPerZone.max / TARGETS.eventsPerZone, 3),
      drain30VsDrain1: round(drains.thirtyMinutes.eventsPerZone / drains.oneMinute.eventsPerZone, 2),
      drain30OverTarget: round(drains.thirtyMinutes.eventsPerZone / TARGETS.eventsPerZone, 3),
      worstEventsPerZoneOverTarget: round(eventsMax / TARGETS.eventsPerZone, 3),
    },
    targets: TARGETS,
  };
  fs.mkdirSync(OUT_DIR, { recursive: true });
  fs.writeFileSync(resultFile(), JSON.stringify(result, null, 2) + '\n');
}

/** Where the JSON document of this invocation goes. */
function resultFile(): string {
  const variant = [MAX_CACHED && `max-cached-${MAX_CACHED}`, GLIBC_MALLOC && 'malloc-default', NO_PRELOAD && 'preload-none'].filter(Boolean).join('-');
  return path.join(OUT_DIR, variant ? `scale-${variant}.json` : 'scale.json');
}

/**
 * The benchmark runs in a child process whose stdout is our stderr: the SDK's Rust core logs and the
 * Temporal servers' banners write to file descriptor 1 directly, and stdout must carry only the JSON.
 */
async function outer(): Promise<number> {
  const file = resultFile();
  fs.rmSync(file, { force: true });
  const child = fork(__filename, process.argv.slice(2), {
    cwd: REPO,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, SCALE_INNER: '1' },
    stdio: ['ignore', 2, 2, 'ipc'],
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
  const code = await new Promise<number>((resolve) => child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  if (code !== 0) return code;
  process.stdout.write(fs.readFileSync(file, 'utf8'));
  return 0;
}

const fail = (err: unknown) => {
  process.stderr.write(`scale: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
};
if (process.env.SCALE_INNER === '1') {
  // The outer process went away: stop (the harness's watchdog ends the servers and the worker).
  process.on('disconnect', () => process.exit(1));
  main().then(() => process.exit(0), fail);
} else {
  outer().then((code) => process.exit(code), fail);
}
