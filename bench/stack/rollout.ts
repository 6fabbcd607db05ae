// Rollout overhead, drain detection and query latency on the real e2e bed (issue 13, items 1, 2, 5).
// Prints ONE JSON document on stdout (also written to .tmp/bench/rollout.json); compares ratios within
// one run, never asserts timings. Progress goes to stderr.
//
// Run: npx tsx bench/stack/rollout.ts [--quick]
//   --quick: a 30 s baseline, one rollout (3 zones), 10 s baseline after; full: a 45 s baseline, two
//   rollouts (clusterVersion bumped twice: six zones), 30 s baseline after (the drift check).
//
// The bed is startE2EStack (test/e2e/support.ts): kube-apiserver, Temporal dev server, three real
// VictoriaMetrics zones, vmagent, two vmauth pods with the demo's 3 s Secret propagation delay, the
// zone simulator playing the VM operator, the real worker and trigger in this process, and the read
// traffic. The strategy is the demo's (examples/demo/05-vmdistributedcluster.yaml), the zone downtime
// the demo's (test/e2e/demo-stack.ts DEMO_ZONE_DOWNTIME_MS).
//
// 1. Orchestration overhead per zone = the zone's time (status startedAt → finishedAt, as the workflow
//    wrote it) ÷ the waits nobody can avoid, each measured from the processes themselves
//    (bench/analysis/zone-overhead.ts):
//      leave reload   the config Secret without the zone written → every vmauth pod serves it (simulator)
//      reads quiet    the quiet the zone's vmselects showed (waitReadsDrained's run); the strategy's
//                     readDrainDelay, only the longest this may take, was counted in its place before:
//                     that ratio is reported beside it (overheadMeanCountingReadDrainDelay)
//      downtime       the zone process down → back (simulator restart startedAt → finishedAt)
//      backlog        zone back → vmagent's backlog for it truly gone (vmagent's own series, scraped
//                     here every 100 ms: pending bytes at 0 for good, and the last re-send of a block
//                     a worker held, outside the pending bytes, after a failed send; see
//                     bench/analysis/vmagent-backlog.ts)
//      queueDrainedFor the strategy's: how long the queue must be seen empty
//      rejoin reload  the config Secret with the zone again written → every vmauth pod serves it
//    and where the rest goes: a contiguous timeline of the zone (each interval ideal or overhead), and the
//    critical path from the workflow history (workflow task round trips, activity schedule-to-start,
//    status writes, other activities, waits) with each wait's lateness against what it waits for.
// 2. Drain detection latency: backlog truly gone → the rollout's decision (the last watchQueue
//    activity completing), minus queueDrainedFor, in pollIntervals, split by the streak the activity
//    returned (its start after the backlog was gone, its overshoot, the completion; also measured from
//    the pending bytes alone: drainLatencyOverPollPendingOnly); the target is per zone (the max);
//    against the VM operator's VMDistributed queue wait replayed on the same recorded series
//    (bench/analysis/operator-model.ts; the ratio averages over the phase of its 5 s readiness poll).
// 3. Read latency through vmauth (the stack's readers) during the rollouts vs a baseline of the same
//    load without a rollout, measured first; also from readers in a separate process (the stack's
//    readers share this process's event loop with the worker, trigger and simulator), with each
//    window's event-loop delay and load average, and a baseline after the rollouts as a drift check.
//
// Also written: .tmp/bench/rollout-trace.json, per zone every activity (workflow task, scheduled,
// started, closed), config Secret write, pod reload, restart, status and vmagent queue change, in ms
// after the zone's startedAt.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { readZoneQueues } from '../../activities/vmagent/match';
import { queueDirName, type RemoteWriteQueue } from '../../activities/vmagent/url';
import * as k8s from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION } from '../../api/constants';
import type { DrainHeartbeat } from '../../api/rollout-contract';
import { validateSpec } from '../../api/validate';
import { ZONE_STEPS, type Strategy, type VMDistributedClusterStatus } from '../../api/types';
import { EncryptionCodec } from '../../process/payload-codec';
import { DEMO_CONFIG_PROPAGATION_DELAY_MS, DEMO_VMAUTH_PODS, DEMO_ZONE_DOWNTIME_MS } from '../../test/e2e/demo-stack';
import {
  DEMO_CLUSTERS,
  DEMO_MANIFESTS_DIR,
  DEMO_TOKENS,
  loadManifests,
  mergePatch,
  READ_PATH,
  REPO_ROOT,
  startE2EStack,
  waitVmdcPhase,
  writeUrlVar,
  type E2EStack,
} from '../../test/e2e/support';
import { httpRequest } from '../../test/infra/harness/processes';
import type { RenderedConfigRecord } from '../../test/infra/simulator/simulator';
import type { ServedConfigRecord } from '../../test/infra/simulator/vmauth-pod';
import { criticalPath, estimateLocalStarts, localActivityTimes, type ActivityCall, type CriticalPath } from '../analysis/critical-path';
import { drainDetectionLatency, drainLatencyOverZones } from '../analysis/drain-detection';
import { OPERATOR_METRICS_CHECK_INTERVAL_MS, OPERATOR_VM_WAIT_READY_INTERVAL_MS, replayOperator, replayOperatorPhases } from '../analysis/operator-model';
import { mean, quantile, round, sum } from '../analysis/stats';
import { trulyDrainedAt, type QueuePoint } from '../analysis/vmagent-backlog';
import {
  overheadOverZones,
  unavoidableWaits,
  zoneOverhead,
  zoneTimeline,
  type TimelineSegment,
  type UnavoidableWaits,
  type ZoneInstants,
  type ZoneOverhead,
} from '../analysis/zone-overhead';
import { provenance } from '../support/provenance';

const quick = process.argv.includes('--quick');
const NS = 'default';
const VMDC = 'bench';
const VERSIONS = ['v1.150.0-cluster', 'v1.151.0-cluster', 'v1.152.0-cluster'];
const ROLLOUTS = quick ? 1 : 2;
const SCRAPE_INTERVAL_MS = 100;

/**
 * stdout carries the JSON document only. The processes the harness starts inherit fd 1 (the Temporal
 * dev server prints its banner there), so the bench runs in a child whose fd 1 is our stderr and which
 * hands the document back on fd 3.
 */
const CHILD_ENV = 'VMROLLOUT_BENCH_ROLLOUT_CHILD';
const RESULT_FD = 3;
const isChild = process.env[CHILD_ENV] === '1';
const t0 = Date.now();
const progress = (m: string) => process.stderr.write(`[bench rollout +${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// vmagent's own pending bytes per zone, scraped every 100 ms

function startVmagentRecorder(vmagentURL: string, queues: Record<string, RemoteWriteQueue>) {
  const series: Record<string, QueuePoint[]> = Object.fromEntries(Object.keys(queues).map((z) => [z, []]));
  const scrapeMs: number[] = [];
  let errors = 0;
  let stopped = false;
  const loop = (async () => {
    let next = Date.now();
    while (!stopped) {
      const start = Date.now();
      try {
        const text = (await httpRequest('GET', `${vmagentURL}/metrics`, { timeoutMs: 2000 })).body;
        const end = Date.now();
        scrapeMs.push(end - start);
        const at = Math.round((start + end) / 2);
        for (const [zone, q] of Object.entries(queues)) {
          const r = readZoneQueues(text, [q]);
          if (r.ok) series[zone]!.push({ at, bytes: r.bytes, retries: r.retries ?? 0 });
          else errors++;
        }
      } catch {
        errors++;
      }
      next += SCRAPE_INTERVAL_MS;
      const now = Date.now();
      if (next < now) next = now;
      await sleep(next - now);
    }
  })();
  return {
    series,
    scrapeMs,
    get errors() {
      return errors;
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// the workflow history: every activity with its scheduled / started / completed times and input

type StatusWrite = { at: number; status: VMDistributedClusterStatus };

/** Every status of the VMDistributedCluster as the API server serves it (a watch), timed on arrival. */
async function startStatusRecorder(stack: E2EStack): Promise<{ writes: StatusWrite[]; stop(): void }> {
  const writes: StatusWrite[] = [];
  const { namespace, name } = stack.vmdc.metadata as { namespace: string; name: string };
  const req = await new k8s.Watch(stack.kc).watch(
    `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL}`,
    { fieldSelector: `metadata.name=${name}` },
    (_type: string, obj: { status?: VMDistributedClusterStatus }) => {
      if (obj?.status) writes.push({ at: Date.now(), status: obj.status });
    },
    () => {},
  );
  return { writes, stop: () => req.abort() };
}

interface RunHistory {
  workflowId: string;
  input: { spec?: { strategy?: Strategy; zones?: Array<{ name: string; vmcluster: { name: string } }> } };
  activities: ActivityCall[];
  statusWrites: Array<{ at: number; status: VMDistributedClusterStatus }>;
  workflowTasks: number;
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : typeof v === 'number' ? v : Number(String(v)));
const tsMs = (t: temporal.api.history.v1.IHistoryEvent['eventTime']): number => num(t?.seconds) * 1000 + Math.floor(num(t?.nanos) / 1e6);

async function decodePayload(codec: EncryptionCodec, p: temporal.api.common.v1.IPayload | undefined | null): Promise<unknown> {
  if (!p) return undefined;
  const [d] = await codec.decode([p as Payload]);
  return defaultPayloadConverter.fromPayload(d!);
}

/**
 * The run's activities from its history (local activities from their markers), and its status writes
 * as the API server saw them (`statuses`: local activities' inputs are not in the history).
 */
async function readHistory(stack: E2EStack, workflowId: string, statuses: readonly StatusWrite[]): Promise<RunHistory> {
  const codec = new EncryptionCodec(stack.payloadKeys);
  const E = temporal.api.enums.v1.EventType;
  // Every run of the workflow (continue-as-new), oldest first.
  const runs: temporal.api.history.v1.IHistoryEvent[][] = [];
  let runId: string | undefined;
  for (let i = 0; i < 20; i++) {
    const h = await stack.client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = h.events ?? [];
    runs.unshift(events);
    const prev = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!prev) break;
    runId = prev;
  }
  const statusWrites = statuses.filter((w) => w.status.workflow?.id === workflowId);
  const out: RunHistory = { workflowId, input: {}, activities: [], statusWrites, workflowTasks: 0 };
  for (const events of runs) {
    const byId = new Map<number, ActivityCall>();
    const wftScheduled = new Map<number, number>();
    const wftStarted = new Map<number, number>();
    const wftCompleted = new Map<number, { scheduled: number; started: number; completed: number }>();
    for (const e of events) {
      const at = tsMs(e.eventTime);
      const id = num(e.eventId);
      switch (e.eventType) {
        case E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
          if (!out.input.spec)
            out.input = ((await decodePayload(codec, e.workflowExecutionStartedEventAttributes?.input?.payloads?.[0])) ?? {}) as RunHistory['input'];
          break;
        case E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
          wftScheduled.set(id, at);
          break;
        case E.EVENT_TYPE_WORKFLOW_TASK_STARTED:
          wftStarted.set(id, at);
          break;
        case E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED: {
          const a = e.workflowTaskCompletedEventAttributes!;
          wftCompleted.set(id, {
            scheduled: wftScheduled.get(num(a.scheduledEventId)) ?? at,
            started: wftStarted.get(num(a.startedEventId)) ?? at,
            completed: at,
          });
          out.workflowTasks++;
          break;
        }
        case E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
          const a = e.activityTaskScheduledEventAttributes!;
          const call: ActivityCall = {
            id,
            type: a.activityType?.name ?? '?',
            input: await decodePayload(codec, a.input?.payloads?.[0]),
            scheduled: at,
            wft: wftCompleted.get(num(a.workflowTaskCompletedEventId)),
          };
          byId.set(id, call);
          out.activities.push(call);
          break;
        }
        case E.EVENT_TYPE_MARKER_RECORDED: {
          const m = e.markerRecordedEventAttributes!;
          if (m.markerName !== 'core_local_activity') break;
          // The marker's `data` is the SDK core's own JSON (never through the data converter).
          const raw = m.details?.data?.payloads?.[0]?.data;
          const d = raw
            ? (JSON.parse(Buffer.from(raw).toString('utf8')) as {
                activity_type: string;
                original_schedule_time?: { seconds: number; nanos: number };
                complete_time?: { seconds: number; nanos: number };
              })
            : undefined;
          if (!d) break;
          const t = (x: { seconds: number; nanos: number } | undefined) => (x ? x.seconds * 1000 + Math.floor(x.nanos / 1e6) : undefined);
          out.activities.push({
            id,
            type: d.activity_type,
            input: undefined,
            ...localActivityTimes(t(d.original_schedule_time), t(d.complete_time) ?? at),
            outcome: 'completed',
            local: true,
            wft: wftCompleted.get(num(m.workflowTaskCompletedEventId)),
          });
          break;
        }
        case E.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
          const c = byId.get(num(e.activityTaskStartedEventAttributes?.scheduledEventId));
          if (c) c.started = at;
          break;
        }
        case E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        case E.EVENT_TYPE_ACTIVITY_TASK_FAILED:
        case E.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        case E.EVENT_TYPE_ACTIVITY_TASK_CANCELED: {
          const sid =
            e.activityTaskCompletedEventAttributes?.scheduledEventId ??
            e.activityTaskFailedEventAttributes?.scheduledEventId ??
            e.activityTaskTimedOutEventAttributes?.scheduledEventId ??
            e.activityTaskCanceledEventAttributes?.scheduledEventId;
          const c = byId.get(num(sid));
          if (c && (c.type === 'watchQueue' || c.type === 'waitQueueDrained'))
            c.result = await decodePayload(codec, e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]);
          if (c) {
            c.closed = at;
            c.outcome =
              e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
                ? 'completed'
                : e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_FAILED
                  ? 'failed'
                  : e.eventType === E.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT
                    ? 'timedOut'
                    : 'canceled';
          }
          break;
        }
        default:
          break;
      }
    }
  }
  estimateLocalStarts(out.activities);
  // Which zone and step each activity ran for: the context of the latest status write at or before it
  // (a status write itself: the one it made, the first write seen after it was scheduled).
  out.activities.sort((a, b) => a.scheduled - b.scheduled);
  let zone: string | undefined;
  let step: string | undefined;
  let w = 0;
  for (const a of out.activities) {
    const upTo = a.type === 'writeStatus' ? (a.closed ?? a.scheduled) + 50 : a.scheduled;
    for (; w < statusWrites.length && statusWrites[w]!.at <= upTo; w++) {
      const st = statusWrites[w]!.status;
      zone = st.currentZone ?? zone;
      step = st.zones?.find((z) => z.name === zone)?.phase;
    }
    a.zone = zone;
    a.step = step;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// per zone analysis

type Interval = { from: number; to: number };
const dur = (i: Interval | undefined) => (i ? i.to - i.from : NaN);

interface ZoneTimes {
  startedAt: number;
  finishedAt: number;
}

/** The zone's startedAt / finishedAt as the workflow last wrote them. */
function zoneTimes(h: RunHistory, zone: string): ZoneTimes | undefined {
  let started: string | undefined;
  let finished: string | undefined;
  for (const w of h.statusWrites) {
    const z = w.status.zones?.find((x) => x.name === zone);
    if (z?.startedAt) started = z.startedAt;
    if (z?.finishedAt) finished = z.finishedAt;
  }
  if (!started || !finished) return undefined;
  return { startedAt: Date.parse(started), finishedAt: Date.parse(finished) };
}

const absentEverywhere = (routes: Record<string, string[]>, vmc: string) => Object.values(routes).every((zs) => !zs.includes(vmc));
const presentEverywhere = (routes: Record<string, string[]>, baseline: Record<string, string[]>, vmc: string) =>
  Object.entries(baseline).every(([rt, zs]) => !zs.includes(vmc) || (routes[rt] ?? []).includes(vmc));

/** The config Secret write that completed a switch, and when every vmauth pod served such a config. */
function switchReload(
  configs: RenderedConfigRecord[],
  pods: ServedConfigRecord[][],
  since: number,
  done: (routes: Record<string, string[]>) => boolean,
): { written: number; firstWrite: number; served: number } | undefined {
  const writes = configs.filter((c) => c.at >= since);
  const w = writes.find((c) => done(c.routes));
  if (!w || writes.length === 0) return undefined;
  const servedPerPod = pods.map((served) => served.find((s) => s.at >= since && done(s.routes))?.at);
  if (servedPerPod.some((x) => x === undefined)) return undefined;
  return { written: w.at, firstWrite: writes[0]!.at, served: Math.max(...(servedPerPod as number[])) };
}

interface ZoneFigures extends ZoneOverhead {
  rollout: number;
  zone: string;
  vmcluster: string;
  ideal: UnavoidableWaits;
  timeline: TimelineSegment[];
  /** How late each wait ended after what it waits for happened. */
  waitLateness: Record<string, number>;
  drain: {
    backlogPeakBytes: number;
    trulyDrainedAfterZoneUpMs: number;
    decisionLatencyMs: number;
    decisionLatencyOverPoll: number;
    watchQueueCalls: number;
    /** The rollout's own streak: its first empty sample after the backlog was truly gone, its last sample past queueDrainedFor, the activity's completion. */
    streak?: {
      startAfterDrainedMs: number;
      overshootMs: number;
      completionAfterLastSampleMs: number;
      firstZeroSampleAfterPendingZeroMs?: number;
      streakStartAfterFirstZeroSampleMs?: number;
      nonZeroSamplesAfterDrained: number;
    };
    /** The brief's first definition, pending bytes alone (ignores the block a worker still retries). */
    pendingOnly: { pendingZeroAfterZoneUpMs: number; lastRetryAfterZoneUpMs?: number; decisionLatencyMs: number; decisionLatencyOverPoll: number };
    operator:
      | {
          decisionLatencyMs: number;
          overPoll: number;
          readyDetectedAfterOperationalMs: number;
          polls: number;
          extrapolated: boolean;
          acceptedBeforeDrained: boolean;
        }
      | undefined;
    operatorPhases: ReturnType<typeof replayOperatorPhases>;
  };
  criticalPath: CriticalPath;
  /** Everything that happened in the zone's time, ms after startedAt (for .tmp/bench/rollout-trace.json). */
  trace: Array<[number, string]>;
}

/** What an activity's input says that matters for reading a trace. */
function describeCall(a: ActivityCall): string {
  const i = (a.input ?? {}) as Record<string, unknown>;
  if (a.type === 'waitOperational' || a.type === 'readObject' || a.type === 'applyObject')
    return `${a.type} ${String(i.kind)}/${String(i.name)}${i.dryRun ? ' (dry run)' : ''}`;
  if (a.type === 'confirmSwitch') return `confirmSwitch ${String(i.expect)}`;
  if (a.type === 'editRoutes') return `editRoutes ${String(i.direction)}`;
  if (a.type === 'writeStatus') {
    const st = (i.status ?? {}) as VMDistributedClusterStatus;
    const z = st.zones?.find((x) => x.name === st.currentZone);
    return `writeStatus ${z?.phase ?? ''}: ${(z?.message ?? st.message ?? '').slice(0, 90)}`;
  }
  return a.type;
}

function analyzeZone(stack: E2EStack, h: RunHistory, rollout: number, zone: string, vmc: string, st: Strategy, series: QueuePoint[]): ZoneFigures {
  const times = zoneTimes(h, zone);
  if (!times) throw new Error(`zone ${zone}: no startedAt/finishedAt in the status writes of ${h.workflowId}`);
  const acts = h.activities.filter((a) => a.zone === zone && a.scheduled >= times.startedAt - 1 && (a.closed ?? a.scheduled) <= times.finishedAt + 1);
  const inStep = (step: string, type: string, pred: (a: ActivityCall) => boolean = () => true) =>
    acts.filter((a) => a.step === step && a.type === type && pred(a));
  const one = (what: string, xs: ActivityCall[], which: 'first' | 'last' = 'last') => {
    const a = which === 'first' ? xs[0] : xs[xs.length - 1];
    if (!a || a.started === undefined || a.closed === undefined) throw new Error(`zone ${zone}: no ${what} in the history`);
    return a as ActivityCall & { started: number; closed: number };
  };
  const editRemove = one('editRoutes (remove)', inStep('LeavingReads', 'editRoutes'));
  // The switch confirmation: its own activity, or (local-calls on) the end of the switch's one awaitSwitch.
  const confirms = (step: string, expect: string) => [
    ...inStep(step, 'confirmSwitch', (a) => (a.input as { expect?: string }).expect === expect),
    ...inStep(step, 'awaitSwitch', (a) => (a.input as { confirm?: { expect?: string } }).confirm?.expect === expect),
  ];
  const confirmAbsent = one('confirmSwitch (absent)', confirms('WaitingForSwitch', 'absent'));
  const readsDrained = one('waitReadsDrained', inStep('WaitingForSwitch', 'waitReadsDrained'));
  const apply = one('applyObject (Upgrading)', inStep('Upgrading', 'applyObject'));
  const waitOp = one('waitOperational (VMCluster)', inStep('WaitingOperational', 'waitOperational'));
  const watches = acts.filter((a) => a.step === 'WaitingForQueue' && (a.type === 'watchQueue' || a.type === 'waitQueueDrained'));
  const decision = one('watchQueue', watches);
  const editRestore = one('editRoutes (restore)', inStep('RejoiningReads', 'editRoutes'));
  const confirmPresent = one('confirmSwitch (present, rejoin)', confirms('RejoiningReads', 'present'));

  const sim = stack.vm.simulator;
  const pods = stack.vm.vmauthPods.map((p) => p.served);
  const baselineRoutes = stack.baseline.config.routes;
  const leave = switchReload(sim.configs, pods, editRemove.started, (r) => absentEverywhere(r, vmc));
  const back = switchReload(sim.configs, pods, editRestore.started, (r) => presentEverywhere(r, baselineRoutes, vmc));
  if (!leave || !back) throw new Error(`zone ${zone}: the config switches were not found in the simulator's records`);
  const restart = sim.restarts.find((r) => r.zone === vmc && r.startedAt >= apply.started - 50 && r.finishedAt !== undefined);
  if (!restart) throw new Error(`zone ${zone}: no restart of ${vmc} after the patch`);
  const operational = sim.statuses.find((s) => s.kind === 'VMCluster' && s.name === vmc && s.updateStatus === 'operational' && s.at >= restart.finishedAt!);
  if (!operational) throw new Error(`zone ${zone}: no operational status of ${vmc} after its restart`);
  const drained = trulyDrainedAt(series, restart.startedAt, decision.closed);
  if (!drained) throw new Error(`zone ${zone}: no vmagent backlog seen for ${vmc} between its restart and the rollout's decision`);

  const instants: ZoneInstants = {
    startedAt: times.startedAt,
    finishedAt: times.finishedAt,
    leaveWritten: leave.written,
    leaveServed: leave.served,
    readsQuietFrom: readsDrained.started,
    readsQuietTo: readsDrained.closed,
    zoneDown: restart.startedAt,
    zoneUp: restart.finishedAt!,
    backlogGone: drained.at,
    decisionAt: decision.closed,
    rejoinWritten: back.written,
    rejoinServed: back.served,
  };
  const ideal = unavoidableWaits(instants, st.queueDrainedForMs);
  const detection = drainDetectionLatency(decision.closed, drained.at, st.queueDrainedForMs, st.pollIntervalMs);
  const pendingOnly = drainDetectionLatency(decision.closed, drained.pendingZeroAt, st.queueDrainedForMs, st.pollIntervalMs);

  const op = replayOperator(series, apply.closed, operational.at);
  // watchQueue returns the streak that completed the wait (waitQueueDrained, the cleanup's, only its last sample).
  const streak = decision.type === 'watchQueue' ? (decision.result as DrainHeartbeat | undefined) : undefined;
  const emptySince = streak?.emptySince ? Date.parse(streak.emptySince) : NaN;
  const lastAt = streak?.last?.at ? Date.parse(streak.last.at) : NaN;
  // The rollout's own samples (the worker's metrics callback): its first 0 after the backlog was gone.
  const firstZero = stack.queueSamples.find((q) => q.zone === zone && q.at >= drained.pendingZeroAt && q.at <= decision.closed && q.bytes === 0)?.at;
  return {
    rollout,
    zone,
    vmcluster: vmc,
    ...zoneOverhead(instants, ideal, st.readDrainDelayMs),
    ideal,
    timeline: zoneTimeline(instants, st.queueDrainedForMs),
    waitLateness: {
      confirmSwitchLeaveAfterPodsServed: confirmAbsent.closed - leave.served,
      leaveSecretAfterEditStarted: leave.written - editRemove.started,
      leaveFirstSecretWriteToCompletingWrite: leave.written - leave.firstWrite,
      waitReadsDrainedVsReadDrainDelay: dur({ from: readsDrained.started, to: readsDrained.closed }) - st.readDrainDelayMs,
      restartAfterPatch: restart.startedAt - apply.closed,
      waitOperationalAfterOperationalStatus: waitOp.closed - operational.at,
      operationalStatusAfterZoneUp: operational.at - restart.finishedAt!,
      watchQueueStartAfterBacklogGone: (watches[0]!.started ?? watches[0]!.scheduled) - drained.at,
      watchQueueDecisionAfterTarget: detection.latencyMs,
      rejoinSecretAfterEditStarted: back.written - editRestore.started,
      rejoinFirstSecretWriteToCompletingWrite: back.written - back.firstWrite,
      confirmSwitchRejoinAfterPodsServed: confirmPresent.closed - back.served,
    },
    drain: {
      backlogPeakBytes: drained.peakBytes,
      trulyDrainedAfterZoneUpMs: drained.at - restart.finishedAt!,
      decisionLatencyMs: detection.latencyMs,
      decisionLatencyOverPoll: detection.overPoll,
      watchQueueCalls: watches.length,
      ...(Number.isFinite(emptySince) && Number.isFinite(lastAt)
        ? {
            streak: {
              startAfterDrainedMs: emptySince - drained.at,
              overshootMs: lastAt - emptySince - st.queueDrainedForMs,
              completionAfterLastSampleMs: decision.closed - lastAt,
              ...(firstZero !== undefined
                ? { firstZeroSampleAfterPendingZeroMs: firstZero - drained.pendingZeroAt, streakStartAfterFirstZeroSampleMs: emptySince - firstZero }
                : {}),
              // The rollout's own samples that read pending bytes after the backlog was gone (a blip between this bench's scrapes).
              nonZeroSamplesAfterDrained: stack.queueSamples.filter((q) => q.zone === zone && q.at > drained.at && q.at <= decision.closed && q.bytes > 0)
                .length,
            },
          }
        : {}),
      pendingOnly: {
        pendingZeroAfterZoneUpMs: drained.pendingZeroAt - restart.finishedAt!,
        ...(drained.lastRetryAt !== undefined ? { lastRetryAfterZoneUpMs: drained.lastRetryAt - restart.finishedAt! } : {}),
        decisionLatencyMs: pendingOnly.latencyMs,
        decisionLatencyOverPoll: pendingOnly.overPoll,
      },
      operatorPhases: replayOperatorPhases(series, operational.at, drained.at, drained.pendingZeroAt),
      operator: op && {
        decisionLatencyMs: op.decisionAt - drained.at,
        overPoll: (op.decisionAt - drained.at) / st.pollIntervalMs,
        readyDetectedAfterOperationalMs: op.readyDetectedAt - operational.at,
        polls: op.polls,
        extrapolated: op.extrapolated,
        acceptedBeforeDrained: op.decisionAt < drained.at,
      },
    },
    criticalPath: criticalPath(acts, times),
    trace: zoneTrace(stack, acts, times, zone, vmc, series),
  };
}

function zoneTrace(stack: E2EStack, acts: ActivityCall[], times: ZoneTimes, zone: string, vmc: string, series: QueuePoint[]): Array<[number, string]> {
  const rows: Array<[number, string]> = [];
  const inWin = (t: number) => t >= times.startedAt - 1000 && t <= times.finishedAt + 1000;
  const rel = (t: number) => t - times.startedAt;
  for (const a of acts) {
    if (a.wft) rows.push([rel(a.wft.started), `  workflow task (scheduled ${rel(a.wft.scheduled)}, completed ${rel(a.wft.completed)})`]);
    rows.push([rel(a.scheduled), `scheduled ${describeCall(a)}`]);
    if (a.started !== undefined) rows.push([rel(a.started), `started   ${a.type}`]);
    if (a.closed !== undefined) rows.push([rel(a.closed), `${a.outcome ?? 'closed'} ${a.type} (ran ${(a.closed - (a.started ?? a.scheduled)).toString()} ms)`]);
  }
  const sim = stack.vm.simulator;
  for (const c of sim.configs) if (inWin(c.at)) rows.push([rel(c.at), `sim: config Secret written ${JSON.stringify(c.routes)}`]);
  for (const p of stack.vm.vmauthPods)
    for (const r of p.served) if (inWin(r.at)) rows.push([rel(r.at), `sim: pod ${r.pod} serves ${JSON.stringify(r.routes)}`]);
  for (const r of sim.restarts) {
    if (r.zone !== vmc) continue;
    if (inWin(r.startedAt)) rows.push([rel(r.startedAt), `sim: zone ${vmc} stops`]);
    if (r.finishedAt && inWin(r.finishedAt)) rows.push([rel(r.finishedAt), `sim: zone ${vmc} back up`]);
  }
  for (const st of sim.statuses)
    if (inWin(st.at)) rows.push([rel(st.at), `sim: ${st.kind}/${st.name} status ${st.updateStatus} (generation ${st.generation})`]);
  for (const q of stack.queueSamples) if (q.zone === zone && inWin(q.at)) rows.push([rel(q.at), `rollout's queue sample ${zone}: pending ${q.bytes} B`]);
  let prev: QueuePoint | undefined;
  for (const p of series) {
    if (!inWin(p.at)) continue;
    if (!prev || prev.bytes !== p.bytes || prev.retries !== p.retries) rows.push([rel(p.at), `vmagent ${vmc}: pending ${p.bytes} B, retries ${p.retries}`]);
    prev = p;
  }
  return rows.sort((a, b) => a[0] - b[0]);
}

// ---------------------------------------------------------------------------------------------
// reads

interface ReadSample {
  at: number;
  latencyMs: number;
  failed: boolean;
}

/**
 * A second set of readers in its own process: the stack's readers run in this process, next to the
 * worker, the trigger and the simulator, so their latencies also carry this process's event-loop
 * stalls. Same query, same pods in turn, one read every 100 ms per route (anonymous and one VMUser).
 */
function startExternalReaders(vmauthURLs: string[], token: string) {
  const script = `
const http = require('node:http');
const [urls, readPath, token] = JSON.parse(process.argv[1]);
const q = readPath + '?query=' + encodeURIComponent('max(vmrollout_e2e_heartbeat)');
let n = 0;
const once = (headers) => new Promise((resolve) => {
  const at = Date.now();
  const t = process.hrtime.bigint();
  const req = http.get(urls[n++ % urls.length] + q, { agent: false, headers, timeout: 3000 }, (res) => {
    res.resume();
    res.on('end', () => resolve([at, Number(process.hrtime.bigint() - t) / 1e6, res.statusCode === 200 ? 0 : 1]));
  });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', () => resolve([at, Number(process.hrtime.bigint() - t) / 1e6, 1]));
});
for (const headers of [{}, { authorization: 'Bearer ' + token }]) {
  (async () => { for (;;) { const r = await once(headers); process.stdout.write(r.join(',') + '\\n'); await new Promise((s) => setTimeout(s, 100)); } })();
}`;
  const child = spawn(process.execPath, ['-e', script, JSON.stringify([vmauthURLs, READ_PATH, token])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const samples: ReadSample[] = [];
  let rest = '';
  child.stdout.on('data', (c: Buffer) => {
    const lines = (rest + c.toString('utf8')).split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) {
      const [at, lat, bad] = l.split(',').map(Number);
      if (Number.isFinite(at) && Number.isFinite(lat)) samples.push({ at: at!, latencyMs: lat!, failed: bad === 1 });
    }
  });
  return {
    samples,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Per window: this process's event-loop delay and the machine's 1-minute load average. */
function startWindowMonitor() {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const load: Array<{ at: number; load1: number }> = [];
  const timer = setInterval(() => load.push({ at: Date.now(), load1: os.loadavg()[0]! }), 1000);
  return {
    /** Starts a window: the event-loop histogram from now. */
    begin: () => loop.reset(),
    /** Ends a window: its event-loop delay percentiles (ms) and mean load average. */
    end(w: Interval) {
      const inW = load.filter((l) => l.at >= w.from && l.at <= w.to).map((l) => l.load1);
      return {
        eventLoopDelayP50Ms: round(loop.percentile(50) / 1e6, 1),
        eventLoopDelayP99Ms: round(loop.percentile(99) / 1e6, 1),
        eventLoopDelayMaxMs: round(loop.max / 1e6, 1),
        loadAvg1Mean: round(mean(inW), 2),
      };
    },
    stop() {
      clearInterval(timer);
      loop.disable();
    },
  };
}

type WindowMachine = ReturnType<ReturnType<typeof startWindowMonitor>['end']>;

function latencyStats(samples: ReadSample[], windows: Interval[]) {
  const mine = samples.filter((r) => windows.some((w) => r.at >= w.from && r.at <= w.to));
  const lat = mine.map((r) => r.latencyMs);
  return {
    reads: mine.length,
    failed: mine.filter((r) => r.failed).length,
    p50Ms: round(quantile(lat, 0.5), 2),
    p90Ms: round(quantile(lat, 0.9), 2),
    p99Ms: round(quantile(lat, 0.99), 2),
    maxMs: round(Math.max(...lat), 1),
  };
}

function readStats(stack: E2EStack, windows: Interval[]) {
  const reads = stack.traffic.reads.filter((r) => r.latencyMs !== undefined && windows.some((w) => r.at >= w.from && r.at <= w.to));
  const lat = reads.map((r) => r.latencyMs!);
  return {
    reads: reads.length,
    failed: reads.filter((r) => r.error !== undefined).length,
    durationMs: sum(windows.map(dur)),
    p50Ms: round(quantile(lat, 0.5), 2),
    p90Ms: round(quantile(lat, 0.9), 2),
    p99Ms: round(quantile(lat, 0.99), 2),
    maxMs: Math.max(...lat),
  };
}

function zoneNames(): { zone: string; vmcluster: string }[] {
  // The demo's zones: az-a → vm-az-a ... (examples/demo/05-vmdistributedcluster.yaml).
  return DEMO_CLUSTERS.map((c) => ({ zone: c.replace(/^vm-/, ''), vmcluster: c }));
}

/** The demo's strategy, as written and normalized. */
function demoStrategy(): { raw: Record<string, unknown>; normalized: Strategy } {
  const vars: Record<string, string> = { NAMESPACE: NS, INITIAL_VERSION: VERSIONS[0]! };
  for (const [i, c] of DEMO_CLUSTERS.entries()) vars[writeUrlVar(c)] = `http://127.0.0.1:${18_000 + i}/api/v1/write`;
  const vmdc = loadManifests(DEMO_MANIFESTS_DIR, vars).find((o) => o.kind === 'VMDistributedCluster')!;
  const v = validateSpec(vmdc.spec);
  if (!v.success) throw new Error(`the demo's VMDistributedCluster does not validate: ${JSON.stringify(v.issues)}`);
  return { raw: vmdc.spec!.strategy as Record<string, unknown>, normalized: v.spec.strategy };
}

async function main(): Promise<void> {
  const runInfo = provenance();
  const strategy = demoStrategy();
  const st0 = strategy.normalized;
  // Percentiles, not counts, are compared: the baseline is shorter than the rollouts (~100 s each)
  // to keep the full run near 6 minutes; with 4 readers at ~9 reads/s each, 60 s is ~2000 reads.
  // A short second baseline after the rollouts only checks that the machine's load did not drift.
  const baselineMs = quick ? 30_000 : 45_000;
  const baselineAfterMs = quick ? 10_000 : 30_000;
  progress(
    `starting the e2e stack (${quick ? 'quick' : 'full'}: baseline ${baselineMs / 1000} s, ${ROLLOUTS} rollout(s), baseline after ${baselineAfterMs / 1000} s)`,
  );
  const stack = await startE2EStack({
    namespace: NS,
    vmdcName: VMDC,
    clusters: DEMO_CLUSTERS,
    tokens: DEMO_TOKENS,
    initialVersion: VERSIONS[0]!,
    zoneDowntimeMs: DEMO_ZONE_DOWNTIME_MS,
    strategy: strategy.raw,
    vmauthPods: DEMO_VMAUTH_PODS,
    configPropagationDelayMs: DEMO_CONFIG_PROPAGATION_DELAY_MS,
    taskQueue: `vmrollout-bench-${process.pid}`,
  });
  let failed = false;
  try {
    progress('stack up, generation 1 Succeeded');
    const queues: Record<string, RemoteWriteQueue> = {};
    for (const [i, c] of DEMO_CLUSTERS.entries()) {
      const url = stack.vm.remoteWriteURLs[c]!;
      queues[c] = { index: i, url, dirName: await queueDirName(i, url) };
    }
    const recorder = startVmagentRecorder(stack.vm.vmagent.url, queues);
    const statuses = await startStatusRecorder(stack);
    const external = startExternalReaders(
      stack.vm.vmauthPods.map((p) => p.vmauth.url),
      DEMO_TOKENS[0]!,
    );
    const monitor = startWindowMonitor();
    await sleep(2_000);

    // The baseline: the same readers, writer, probes and scraper, no rollout.
    const baseline: Interval = { from: Date.now(), to: 0 };
    monitor.begin();
    progress(`baseline: ${baselineMs / 1000} s of reads without a rollout`);
    await sleep(baselineMs);
    baseline.to = Date.now();
    const baselineWindow = monitor.end(baseline);

    const rollouts: Array<{ generation: number; window: Interval; workflowId: string; machine: WindowMachine }> = [];
    for (let r = 1; r <= ROLLOUTS; r++) {
      const generation = r + 1;
      const from = Date.now();
      monitor.begin();
      await mergePatch(stack.kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: VERSIONS[r]! } });
      progress(`rollout ${r}: clusterVersion → ${VERSIONS[r]} (generation ${generation})`);
      const status = await waitVmdcPhase(stack.kc, NS, VMDC, generation, ['Succeeded', 'Failed', 'Cancelled', 'Superseded', 'Invalid'], {
        timeoutMs: 6 * 60_000,
      });
      const to = Date.now();
      if (status.phase !== 'Succeeded') throw new Error(`rollout ${r} ended ${status.phase}: ${status.message}`);
      progress(`rollout ${r}: Succeeded in ${((to - from) / 1000).toFixed(1)} s`);
      rollouts.push({ generation, window: { from, to }, workflowId: status.workflow!.id, machine: monitor.end({ from, to }) });
    }
    // The drift check: the same load again, no rollout.
    await sleep(1_000);
    const after: Interval = { from: Date.now(), to: 0 };
    monitor.begin();
    progress(`baseline after: ${baselineAfterMs / 1000} s`);
    await sleep(baselineAfterMs);
    after.to = Date.now();
    const afterWindow = monitor.end(after);
    monitor.stop();
    await recorder.stop();
    statuses.stop();
    await external.stop();

    // ------------------------------------------------------------------ analysis
    const zones: ZoneFigures[] = [];
    const traces: Record<string, string[]> = {};
    let st: Strategy = st0;
    for (const [i, r] of rollouts.entries()) {
      const h = await readHistory(stack, r.workflowId, statuses.writes);
      st = h.input.spec?.strategy ?? st0;
      const specZones = h.input.spec?.zones?.map((z) => ({ zone: z.name, vmcluster: z.vmcluster.name })) ?? zoneNames();
      for (const z of specZones) {
        const f = analyzeZone(stack, h, i + 1, z.zone, z.vmcluster, st, recorder.series[z.vmcluster] ?? []);
        zones.push(f);
        traces[`rollout ${i + 1} zone ${z.zone}`] = f.trace.map(([t, m]) => `${String(t).padStart(6)} ${m}`);
      }
    }

    const readsBaseline = readStats(stack, [baseline]);
    const readsDuring = readStats(
      stack,
      rollouts.map((r) => r.window),
    );
    const readsAfter = readStats(stack, [after]);
    const extBaseline = latencyStats(external.samples, [baseline]);
    const extDuring = latencyStats(
      external.samples,
      rollouts.map((r) => r.window),
    );
    const extAfter = latencyStats(external.samples, [after]);

    // Where the rest goes, over every zone.
    const segmentNames = zones[0]!.timeline.map((s) => s.what);
    const bySegment = segmentNames.map((what, i) => ({
      what,
      ideal: zones[0]!.timeline[i]!.ideal === true,
      meanMs: round(mean(zones.map((z) => z.timeline[i]!.ms))),
    }));
    const cps = zones.map((z) => z.criticalPath);
    const meanOf = (f: (c: CriticalPath) => number) => round(mean(cps.map(f)));
    const types = [...new Set(cps.flatMap((c) => Object.keys(c.byType)))].sort();
    const steps = [...ZONE_STEPS];
    const latenessKeys = Object.keys(zones[0]!.waitLateness);
    const scrape = recorder.scrapeMs;
    const steadyNonZero = Object.fromEntries(
      Object.entries(recorder.series).map(([z, pts]) => {
        const inBase = pts.filter((p) => p.at >= baseline.from && p.at <= baseline.to);
        return [z, round(inBase.filter((p) => p.bytes > 0).length / Math.max(1, inBase.length), 4)];
      }),
    );

    const drainLatency = drainLatencyOverZones(zones.map((z) => z.drain.decisionLatencyOverPoll));
    const ratios = {
      // The headline: the reads-drain wait counted as the quiet the vmselects showed; then as first published, counting readDrainDelay.
      ...overheadOverZones(zones),
      drainLatencyOverPoll: drainLatency.mean,
      drainLatencyOverPollMax: drainLatency.max,
      drainLatencyOverPollPendingOnly: mean(zones.map((z) => z.drain.pendingOnly.decisionLatencyOverPoll)),
      operatorDrainLatencyOverPoll: mean(zones.map((z) => z.drain.operatorPhases.meanLatencyMs)) / st.pollIntervalMs,
      readP99DuringVsBaseline: readsDuring.p99Ms / readsBaseline.p99Ms,
      readP50DuringVsBaseline: readsDuring.p50Ms / readsBaseline.p50Ms,
    };
    const targets = {
      overheadMean: { target: '<= 1.05', met: ratios.overheadMean <= 1.05 },
      drainLatencyOverPollMax: { target: '<= 1 (one pollInterval after queueDrainedFor, every zone)', met: ratios.drainLatencyOverPollMax <= 1 },
      readP99DuringVsBaseline: { target: '<= 1.2', met: ratios.readP99DuringVsBaseline <= 1.2 },
    };
    // Not finite: a measurement is missing (exit 1). At or below 0: a decision before the target (reported).
    const problems = Object.entries(ratios)
      .filter(([, v]) => !Number.isFinite(v))
      .map(([k, v]) => `ratio ${k} is ${v}`);
    const notes = Object.entries(ratios)
      .filter(([, v]) => Number.isFinite(v) && v <= 0)
      .map(([k, v]) => `ratio ${k} is ${v}: the decision came before its target`);

    const result = {
      benchmark: 'rollout',
      mode: quick ? 'quick' : 'full',
      ...runInfo,
      loadavgAtEnd: os.loadavg().map((x) => round(x, 2)),
      setup: {
        zones: DEMO_CLUSTERS.length,
        rollouts: ROLLOUTS,
        strategy: strategy.raw,
        zoneDowntimeMs: DEMO_ZONE_DOWNTIME_MS,
        vmauthPods: DEMO_VMAUTH_PODS,
        configPropagationDelayMs: DEMO_CONFIG_PROPAGATION_DELAY_MS,
        scrapeIntervalMs: SCRAPE_INTERVAL_MS,
        scrapes: scrape.length,
        scrapeErrors: recorder.errors,
        scrapeP50Ms: round(quantile(scrape, 0.5), 2),
        scrapeP99Ms: round(quantile(scrape, 0.99), 2),
        rolloutDurationsMs: rollouts.map((r) => dur(r.window)),
        operatorModel: {
          source:
            'github.com/VictoriaMetrics/operator d0d258c8 (v0.74.1-31): internal/controller/operator/factory/vmdistributed/zone.go (upgrade, waitForEmptyPQ), vmdistributed.go (defaultMetricsCheckInterval 50s), reconcile/reconcile.go (waitForStatus, vmWaitReadyInterval 5s)',
          metricsCheckIntervalMs: OPERATOR_METRICS_CHECK_INTERVAL_MS,
          vmWaitReadyIntervalMs: OPERATOR_VM_WAIT_READY_INTERVAL_MS,
          rule: 'after the VMCluster patch: poll status immediately and every 5 s until operational; then poll each vmagent pod immediately and every 50 s, done at the first reading of 0 pending bytes for the zone (no streak, no retry check)',
          ratio:
            'operatorDrainLatencyOverPoll = mean over zones and over the phase of its 5 s readiness poll (0..5 s) of (decision - backlog truly gone) / pollInterval',
          asReplayedZonesAcceptedBeforeBacklogGone: zones.filter((z) => z.drain.operator?.acceptedBeforeDrained).length,
          phaseAveragedAcceptedBeforeBacklogGoneFraction: round(mean(zones.map((z) => z.drain.operatorPhases.acceptedBeforeDrainedFraction)), 3),
          phaseAveragedAcceptedOnTransientZeroFraction: round(mean(zones.map((z) => z.drain.operatorPhases.acceptedBeforePendingZeroFraction)), 3),
          phaseAveragedWaitedOneMorePollFraction: round(mean(zones.map((z) => z.drain.operatorPhases.waitedOneMorePollFraction)), 3),
          zonesExtrapolated: zones.filter((z) => z.drain.operator?.extrapolated).length,
        },
      },
      zones: zones.map((z) => ({
        rollout: z.rollout,
        zone: z.zone,
        actualMs: z.actualMs,
        idealMs: z.idealMs,
        orchestrationMs: z.orchestrationMs,
        overhead: round(z.overhead, 3),
        overheadCountingReadDrainDelay: round(z.overheadCountingReadDrainDelay, 3),
        ideal: z.ideal,
        drain: {
          ...z.drain,
          decisionLatencyOverPoll: round(z.drain.decisionLatencyOverPoll, 2),
          operator: z.drain.operator && { ...z.drain.operator, overPoll: round(z.drain.operator.overPoll, 1) },
        },
        waitLateness: z.waitLateness,
        timeline: z.timeline,
        criticalPath: {
          activities: z.criticalPath.activities,
          workflowTasks: z.criticalPath.workflowTasks,
          statusWrites: z.criticalPath.statusWrites,
          statusWritesMs: z.criticalPath.statusWritesMs,
          wftRoundTripsMs: z.criticalPath.wftScheduleToStartMs + z.criticalPath.wftProcessingMs + z.criticalPath.serverOtherMs,
          activityScheduleToStartMs: z.criticalPath.activityScheduleToStartMs,
          shortActivitiesMs: z.criticalPath.shortActivitiesMs,
          waitsMs: z.criticalPath.waitsMs,
        },
      })),
      reads: {
        note: 'stack readers: startTraffic in this process (4 routes); outOfProcess: 2 routes read by a separate node process (no event-loop stalls of this process in its latencies). The ratios use the first baseline; baselineAfter is the drift check.',
        stackReaders: { baseline: readsBaseline, duringRollouts: readsDuring, baselineAfter: readsAfter },
        outOfProcess: { baseline: extBaseline, duringRollouts: extDuring, baselineAfter: extAfter },
        ratiosOutOfProcess: {
          p99DuringVsBaseline: round(extDuring.p99Ms / extBaseline.p99Ms, 3),
          p50DuringVsBaseline: round(extDuring.p50Ms / extBaseline.p50Ms, 3),
        },
        ratiosVsBothBaselines: (() => {
          const both = readStats(stack, [baseline, after]);
          const ext = latencyStats(external.samples, [baseline, after]);
          return {
            stackP99: round(readsDuring.p99Ms / both.p99Ms, 3),
            stackP50: round(readsDuring.p50Ms / both.p50Ms, 3),
            outOfProcessP99: round(extDuring.p99Ms / ext.p99Ms, 3),
            outOfProcessP50: round(extDuring.p50Ms / ext.p50Ms, 3),
          };
        })(),
        driftAfterVsBaseline: { stackP99: round(readsAfter.p99Ms / readsBaseline.p99Ms, 3), outOfProcessP99: round(extAfter.p99Ms / extBaseline.p99Ms, 3) },
        machine: { baseline: baselineWindow, rollouts: rollouts.map((r) => r.machine), baselineAfter: afterWindow },
      },
      ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, round(v, 3)])),
      breakdown: {
        meanZoneMs: round(mean(zones.map((z) => z.actualMs))),
        meanIdealMs: round(mean(zones.map((z) => z.idealMs))),
        meanOrchestrationMs: round(mean(zones.map((z) => z.orchestrationMs))),
        meanUnavoidableMs: Object.fromEntries(
          Object.keys(zones[0]!.ideal).map((k) => [k, round(mean(zones.map((z) => z.ideal[k as keyof UnavoidableWaits])))]),
        ),
        readDrainDelayMs: st.readDrainDelayMs,
        timelineMeanMs: bySegment,
        criticalPathMeanMs: {
          note: 'the zone time = round trips + schedule-to-start + activity run times + tail, activities being sequential',
          workflowTaskScheduleToStart: meanOf((c) => c.wftScheduleToStartMs),
          workflowTaskProcessing: meanOf((c) => c.wftProcessingMs),
          serverBetweenActivities: meanOf((c) => c.serverOtherMs),
          activityScheduleToStart: meanOf((c) => c.activityScheduleToStartMs),
          statusWrites: meanOf((c) => c.statusWritesMs),
          statusWritesCount: meanOf((c) => c.statusWrites),
          shortActivities: meanOf((c) => c.shortActivitiesMs),
          waits: meanOf((c) => c.waitsMs),
          tail: meanOf((c) => c.tailMs),
          activities: meanOf((c) => c.activities),
          workflowTasks: meanOf((c) => c.workflowTasks),
        },
        byActivityTypeMeanPerZone: Object.fromEntries(
          types.map((t) => {
            const of = (f: (x: CriticalPath['byType'][string]) => number) => round(mean(cps.map((c) => (c.byType[t] ? f(c.byType[t]) : 0))));
            return [
              t,
              {
                count: of((x) => x.count),
                runMs: of((x) => x.runMs),
                scheduleToStartMs: of((x) => x.scheduleToStartMs),
                roundTripBeforeMs: of((x) => x.roundTripBeforeMs),
              },
            ];
          }),
        ),
        byStepMeanPerZone: Object.fromEntries(
          steps.map((s) => {
            const of = (f: (x: CriticalPath['byStep'][string]) => number) => round(mean(cps.map((c) => (c.byStep[s] ? f(c.byStep[s]) : 0))));
            return [
              s,
              {
                ms: of((x) => x.ms),
                activities: of((x) => x.activities),
                statusWrites: of((x) => x.statusWrites),
                statusWritesMs: of((x) => x.statusWritesMs),
                roundTripsMs: of((x) => x.roundTripsMs),
                scheduleToStartMs: of((x) => x.scheduleToStartMs),
                waitsMs: of((x) => x.waitsMs),
              },
            ];
          }),
        ),
        drainDetectionMeanMs: {
          note: 'drain detection latency = streak start after the backlog was gone (sampling phase, scrape) + streak overshoot past queueDrainedFor + activity completion',
          latency: round(mean(zones.map((z) => z.drain.decisionLatencyMs))),
          streakStartAfterDrained: round(mean(zones.map((z) => z.drain.streak?.startAfterDrainedMs ?? NaN))),
          streakOvershoot: round(mean(zones.map((z) => z.drain.streak?.overshootMs ?? NaN))),
          lastRetryAfterPendingZero: round(mean(zones.map((z) => z.drain.pendingOnly.lastRetryAfterZoneUpMs! - z.drain.pendingOnly.pendingZeroAfterZoneUpMs))),
          firstZeroSampleAfterPendingZero: round(mean(zones.map((z) => z.drain.streak?.firstZeroSampleAfterPendingZeroMs ?? NaN))),
          streakStartAfterFirstZeroSample: round(mean(zones.map((z) => z.drain.streak?.streakStartAfterFirstZeroSampleMs ?? NaN))),
          pendingOnlyLatency: round(mean(zones.map((z) => z.drain.pendingOnly.decisionLatencyMs))),
          completionAfterLastSample: round(mean(zones.map((z) => z.drain.streak?.completionAfterLastSampleMs ?? NaN))),
        },
        waitLatenessMeanMs: Object.fromEntries(latenessKeys.map((k) => [k, round(mean(zones.map((z) => z.waitLateness[k]!)))])),
        pollIntervalMs: st.pollIntervalMs,
        steadyStatePendingNonZeroFraction: steadyNonZero,
      },
      targets,
      ...(problems.length ? { problems } : {}),
      ...(notes.length ? { notes } : {}),
    };
    const text = JSON.stringify(result, null, 2);
    const out = path.join(REPO_ROOT, '.tmp', 'bench', 'rollout.json');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${text}\n`);
    fs.writeFileSync(path.join(REPO_ROOT, '.tmp', 'bench', 'rollout-trace.json'), `${JSON.stringify(traces, null, 1)}\n`);
    fs.writeSync(RESULT_FD, `${text}\n`);
    if (problems.length) {
      progress(`problems: ${problems.join('; ')}`);
      failed = true;
    }
  } catch (err) {
    failed = true;
    progress(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    progress('stopping the stack');
    await stack.stop().catch((err: unknown) => progress(`stop: ${String(err)}`));
  }
  process.exit(failed ? 1 : 0);
}

/** The parent: runs the bench in a child (fd 1 → our stderr) and prints the document it hands back. */
function runChild(): void {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['ignore', 2, 'inherit', 'pipe'],
    env: { ...process.env, [CHILD_ENV]: '1' },
  });
  const chunks: Buffer[] = [];
  (child.stdio[RESULT_FD] as NodeJS.ReadableStream).on('data', (c: Buffer) => chunks.push(c));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => {
    const text = Buffer.concat(chunks).toString('utf8');
    if (text) process.stdout.write(text);
    process.exitCode = code ?? (signal ? 1 : 0);
  });
}

if (isChild) {
  main().catch((err: unknown) => {
    progress(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  });
} else runChild();
