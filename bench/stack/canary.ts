// What the canary analysis costs the rollout beyond the bake it is asked for (issue 31: "analysis
// adds no more than one poll per step"). On the e2e stack (test/e2e/support.ts: real Temporal dev
// server, kube-apiserver, VictoriaMetrics zones behind their vmselect fronts, vmagent, vmauth,
// worker and trigger), pairs of 3-zone rollouts one after the other: one without strategy.canary,
// one with a canary baked BAKE_MS (a measurement every INTERVAL_MS: the spec's queries, the
// baseline's recent ones, the freshness query, on both zones' real vmselect).
//
// From each workflow's Temporal history (event times are the server's):
// - measureMs: each measureCanary activity, scheduled → completed: one measurement's cost;
// - overrunMs: the Analyzing step beyond its bake, the first measurement scheduled → the last one
//   completed, minus BAKE_MS: what the analysis adds to the step it adds;
// - net rollout per zone: with the canary, minus BAKE_MS, against the rollout without, in polls
//   (noisier: two rollouts, not one).
// Prints ONE JSON document (also .tmp/bench/canary.json); never asserts a time.
// Run: npx tsx bench/stack/canary.ts [--quick]   (quick: one pair; full: three)
import { temporal } from '@temporalio/proto';
import { DEMO_CLUSTERS, mergePatch, waitVmdcPhase, type E2EStack } from '../../test/e2e/support';
import { minMaxMean, quantile, round } from '../analysis/stats';
import { eventTimeMs, fullHistory, type HistoryEvent } from '../support/history';
import { provenance } from '../support/provenance';
import { runBench, writeBenchDocument } from '../support/document';
import { PAIRED_NS, pairedRollouts } from '../support/paired-rollouts';

const NS = PAIRED_NS;
const VMDC = 'canary';
const POLL_MS = 250;
const BAKE_MS = 10_000;
const INTERVAL_MS = 2_000;
const ANALYSIS = {
  interval: `${INTERVAL_MS / 1000}s`,
  queries: ['count_over_time(vmrollout_e2e_heartbeat[2m])', 'max(vmrollout_e2e_heartbeat)'],
  recentQueries: 3,
  freshnessSelector: 'vmrollout_e2e_heartbeat',
  maxIngestionLag: '10s',
};
const quick = process.argv.includes('--quick');
const PAIRS = quick ? 1 : 3;
const EventType = temporal.api.enums.v1.EventType;
const t0 = Date.now();
const progress = (m: string) => process.stderr.write(`[bench canary +${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}\n`);

/** Each measureCanary activity: its scheduled and completed times. */
function measurements(events: HistoryEvent[]): Array<{ scheduledAt: number; completedAt: number }> {
  const scheduled = new Map<string, number>();
  const out: Array<{ scheduledAt: number; completedAt: number }> = [];
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name === 'measureCanary') scheduled.set(String(e.eventId), eventTimeMs(e));
    const c = e.activityTaskCompletedEventAttributes;
    const at = c ? scheduled.get(String(c.scheduledEventId)) : undefined;
    if (at !== undefined && e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) out.push({ scheduledAt: at, completedAt: eventTimeMs(e) });
  }
  return out;
}

interface Rollout {
  canary: boolean;
  rolloutMs: number;
  events: number;
  measureMs: number[];
  overrunMs?: number;
}

async function rollout(stack: E2EStack, version: string, canary: boolean): Promise<Rollout> {
  const generation = (
    await mergePatch(stack.kc, 'VMDistributedCluster', NS, VMDC, {
      spec: { clusterVersion: version, strategy: { canary: canary ? { bake: `${BAKE_MS / 1000}s`, analysis: ANALYSIS } : null } },
    })
  ).metadata.generation!;
  const done = await waitVmdcPhase(stack.kc, NS, VMDC, generation, ['Succeeded', 'Failed'], { timeoutMs: 5 * 60_000 });
  if (done.phase !== 'Succeeded') throw new Error(`generation ${generation} did not succeed: ${done.phase} ${done.message ?? ''}`);
  const { events } = await fullHistory(stack.client, done.workflow!.id, done.workflow!.runId);
  const ms = measurements(events);
  const result: Rollout = {
    canary,
    rolloutMs: eventTimeMs(events.at(-1)!) - eventTimeMs(events[0]!),
    events: events.length,
    measureMs: ms.map((m) => m.completedAt - m.scheduledAt),
  };
  if (canary) {
    if (ms.length === 0) throw new Error(`generation ${generation}: no measureCanary in its history`);
    result.overrunMs = ms.at(-1)!.completedAt - ms[0]!.scheduledAt - BAKE_MS;
  }
  return result;
}

async function main(): Promise<void> {
  const runInfo = provenance();
  const runs = await pairedRollouts(
    { name: 'canary', vmdc: VMDC, pairs: PAIRS, pollMs: POLL_MS, progress, label: (on) => (on ? 'canary' : 'no canary') },
    rollout,
  );
  const withCanary = runs.filter((r) => r.canary);
  const without = runs.filter((r) => !r.canary);
  const zones = DEMO_CLUSTERS.length;
  const polls = (ms: number) => round(ms / POLL_MS);
  const measure = withCanary.flatMap((r) => r.measureMs);
  const overrun = withCanary.map((r) => r.overrunMs!);
  const netPerZone = withCanary.map((r, i) => (r.rolloutMs - BAKE_MS - without[i]!.rolloutMs) / zones);
  const doc = {
    benchmark: 'canary',
    what: 'bench/stack/canary.ts: pairs of 3-zone rollouts on the e2e stack, without then with strategy.canary (bake 10s, a measurement every 2s); what the analysis adds beyond the bake, in polls',
    ...runInfo,
    pollIntervalMs: POLL_MS,
    bakeMs: BAKE_MS,
    intervalMs: INTERVAL_MS,
    analysis: ANALYSIS,
    runs,
    summary: {
      /** One measurement (2 spec queries, up to 3 recent ones, the freshness query, on both zones). Target: at most one poll. */
      measurement: { ms: minMaxMean(measure), p50Ms: round(quantile(measure, 0.5)), maxPolls: polls(Math.max(...measure)), count: measure.length },
      /** The Analyzing step beyond its bake. Target: at most one poll. */
      overrunPolls: { values: overrun.map(polls), max: polls(Math.max(...overrun)) },
      netRolloutPerZonePolls: { values: netPerZone.map(polls), max: polls(Math.max(...netPerZone)) },
      eventsPerZone: {
        withCanary: round(minMaxMean(withCanary.map((r) => r.events)).mean / zones),
        without: round(minMaxMean(without.map((r) => r.events)).mean / zones),
      },
    },
  };
  writeBenchDocument('canary', doc);
}

runBench(main);
