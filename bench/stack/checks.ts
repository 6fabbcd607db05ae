// What the checks around a zone's window cost the rollout (issue 31: "analysis adds no more than one
// poll per step"): the queue headroom preflight and the drop-counter readings before and after the
// zone's window (strategy.queueHeadroom, strategy.dataCompleteness), the count of its samples against
// a zone in reads before it rejoins (strategy.sampleParity), and the capacity guard's looks before the
// zone leaves and before each of its next steps (strategy.capacityGuard). On the e2e stack
// (test/e2e/support.ts: real Temporal dev server, kube-apiserver, VictoriaMetrics zones, vmagent,
// vmauth, worker and trigger), pairs of 3-zone rollouts one after the other: every check off, then
// every check on.
//
// From each workflow's Temporal history (event times are the server's):
// - checkMs: each check's local activity, as the workflow task that ran it (start → completion):
//   what the check holds its step up by;
// - events per zone, with and without the checks;
// - net rollout time per zone, Enforce against Off, in polls (noisier: two rollouts, not one).
// Prints ONE JSON document (also .tmp/bench/checks.json); never asserts a time.
// Run: npx tsx bench/stack/checks.ts [--quick]   (quick: one pair; full: three)
import { temporal } from '@temporalio/proto';
import { DEMO_CLUSTERS, mergePatch, waitVmdcPhase, type E2EStack } from '../../test/e2e/support';
import { minMaxMean, quantile, round } from '../analysis/stats';
import { eventTimeMs, fullHistory, type HistoryEvent } from '../support/history';
import { provenance } from '../support/provenance';
import { runBench, writeBenchDocument } from '../support/document';
import { PAIRED_NS, pairedRollouts } from '../support/paired-rollouts';

const NS = PAIRED_NS;
const VMDC = 'checks';
const POLL_MS = 250;
const CHECKS = ['readVmagent', 'readReadHealth', 'countSamples'];
const quick = process.argv.includes('--quick');
const PAIRS = quick ? 1 : 3;
const t0 = Date.now();
const progress = (m: string) => process.stderr.write(`[bench checks +${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}\n`);

const EventType = temporal.api.enums.v1.EventType;

/**
 * Each check's local activity, by its marker, and the workflow task that ran it (a local activity
 * runs inside the task whose completion records its marker): that task's start → completion, the
 * time the check held the workflow (its scrape included).
 */
function checkDurations(events: HistoryEvent[]): Check[] {
  const out: Check[] = [];
  events.forEach((e, i) => {
    const m = e.markerRecordedEventAttributes;
    const payload = m?.markerName === 'core_local_activity' ? m.details?.data?.payloads?.[0]?.data : undefined;
    if (!payload) return;
    const activity = (JSON.parse(Buffer.from(payload).toString('utf8')) as { activity_type?: string }).activity_type;
    if (!activity || !CHECKS.includes(activity)) return;
    const before = events.slice(0, i).reverse();
    const completed = before.find((x) => x.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    const started = before.find((x) => x.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
    if (completed && started) out.push({ activity, task: Number(completed.eventId ?? 0), taskMs: eventTimeMs(completed) - eventTimeMs(started) });
  });
  return out;
}

/** One check, and the workflow task it ran in (checks run at once share one: counted once). */
interface Check {
  activity: string;
  /** The event id of the task's completion. */
  task: number;
  taskMs: number;
}

/** The workflow tasks that ran checks, each once. */
const tasks = (checks: Check[]) => [...new Map(checks.map((c) => [c.task, c.taskMs])).values()];

interface Rollout {
  checks: boolean;
  rolloutMs: number;
  events: number;
  checkMs: Check[];
}

async function rollout(stack: E2EStack, version: string, checks: boolean): Promise<Rollout> {
  const mode = checks ? 'Enforce' : 'Off';
  const generation = (
    await mergePatch(stack.kc, 'VMDistributedCluster', NS, VMDC, {
      spec: {
        clusterVersion: version,
        strategy: {
          queueHeadroom: mode,
          dataCompleteness: mode,
          capacityGuard: checks ? {} : null,
          sampleParity: checks ? { lag: '5s', tolerance: 0.05 } : null,
        },
      },
    })
  ).metadata.generation!;
  const done = await waitVmdcPhase(stack.kc, NS, VMDC, generation, ['Succeeded', 'Failed'], { timeoutMs: 5 * 60_000 });
  if (done.phase !== 'Succeeded') throw new Error(`generation ${generation} did not succeed: ${done.phase} ${done.message ?? ''}`);
  const { events } = await fullHistory(stack.client, done.workflow!.id, done.workflow!.runId);
  return { checks, rolloutMs: eventTimeMs(events.at(-1)!) - eventTimeMs(events[0]!), events: events.length, checkMs: checkDurations(events) };
}

async function main(): Promise<void> {
  const runInfo = provenance();
  const runs = await pairedRollouts(
    { name: 'checks', vmdc: VMDC, pairs: PAIRS, pollMs: POLL_MS, progress, label: (on) => (on ? 'checks on' : 'checks off') },
    rollout,
  );
  const withChecks = runs.filter((r) => r.checks);
  const without = runs.filter((r) => !r.checks);
  const zones = DEMO_CLUSTERS.length;
  const polls = (ms: number) => round(ms / POLL_MS);
  const all = withChecks.flatMap((r) => tasks(r.checkMs));
  const perZone = withChecks.map((r) => tasks(r.checkMs).reduce((n, ms) => n + ms, 0) / zones);
  const netPerZone = withChecks.map((r, i) => (r.rolloutMs - without[i]!.rolloutMs) / zones);
  const doc = {
    benchmark: 'checks',
    what: 'bench/stack/checks.ts: pairs of 3-zone rollouts on the e2e stack, the checks (queueHeadroom, dataCompleteness, sampleParity, capacityGuard) off then on; what they add, in polls',
    ...runInfo,
    pollIntervalMs: POLL_MS,
    runs,
    summary: {
      /**
       * Per workflow task that ran checks: LeavingReads (the headroom preflight and the first
       * drop-counter reading, one readVmagent; the capacity guard's baseline), WaitingForQueue (the
       * second reading, then the sample count), and the guard's look before each step from Upgrading
       * on. Target: at most one poll each.
       */
      checkTask: { ms: minMaxMean(all), p50Ms: round(quantile(all, 0.5)), maxPolls: polls(Math.max(...all)) },
      /** Each check alone, by activity (checks in one task share its time). */
      byCheck: Object.fromEntries(
        CHECKS.map((a) => {
          const ms = withChecks.flatMap((r) => r.checkMs.filter((c) => c.activity === a).map((c) => c.taskMs));
          return [a, { n: ms.length, ms: minMaxMean(ms), maxPolls: polls(Math.max(...ms)) }];
        }),
      ),
      /** Both tasks of a zone together. */
      checksPerZonePolls: { values: perZone.map(polls), max: polls(Math.max(...perZone)) },
      netRolloutPerZonePolls: { values: netPerZone.map(polls), max: polls(Math.max(...netPerZone)) },
      eventsPerZone: {
        withChecks: round(minMaxMean(withChecks.map((r) => r.events)).mean / zones),
        without: round(minMaxMean(without.map((r) => r.events)).mean / zones),
      },
    },
  };
  writeBenchDocument('checks', doc);
}

runBench(main);
