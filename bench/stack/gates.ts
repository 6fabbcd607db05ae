// What a gate costs the rollout beyond the person's wait (issue 31: "gates add no more than one poll
// per step"). On the e2e stack (test/e2e/support.ts: real Temporal dev server, kube-apiserver,
// VictoriaMetrics zones, vmagent, vmauth, worker and trigger), pairs of 3-zone rollouts one after
// the other: one without gates, one with BeforeEachZone, promoted by this process as soon as the
// status shows the gate (polled every 50 ms).
//
// From each workflow's Temporal history (event times are the server's):
// - promoteToNextActivityMs: at each gate, the promote sent by this process → the next activity
//   scheduled (the zone's first step): what a gate adds once it is passed;
// - stepTransitionMs: without gates, every activity completion → the next activity scheduled (the
//   workflow's own cost of moving from one step to the next), the baseline;
// - net rollout time: with gates, the rollout's time minus the time the gates waited for the
//   promote (the awaiting status written → the Update accepted), against the rollout without gates,
//   per zone, in polls (noisier: two rollouts, not one).
// Prints ONE JSON document (also .tmp/bench/gates.json); never asserts a time.
// Run: npx tsx bench/stack/gates.ts [--quick]   (quick: one pair; full: three)
import { temporal } from '@temporalio/proto';
import type { VMDistributedClusterStatus } from '../../api/types';
import { DEMO_CLUSTERS, getObject, mergePatch, type E2EStack } from '../../test/e2e/support';
import { minMaxMean, quantile, round } from '../analysis/stats';
import { eventTimeMs, fullHistory, type HistoryEvent } from '../support/history';
import { provenance } from '../support/provenance';
import { runBench, writeBenchDocument } from '../support/document';
import { PAIRED_NS, pairedRollouts } from '../support/paired-rollouts';

const NS = PAIRED_NS;
const VMDC = 'gates';
const POLL_MS = 250;
const quick = process.argv.includes('--quick');
const PAIRS = quick ? 1 : 3;
const EventType = temporal.api.enums.v1.EventType;
const t0 = Date.now();
const progress = (m: string) => process.stderr.write(`[bench gates +${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}\n`);

const at = eventTimeMs;
const is = (e: HistoryEvent, t: temporal.api.enums.v1.EventType) => e.eventType === t;

/** For each event of kind `from`, the time of the first ACTIVITY_TASK_SCHEDULED after it. */
function afterEach(events: HistoryEvent[], from: temporal.api.enums.v1.EventType): number[] {
  const out: number[] = [];
  events.forEach((e, i) => {
    if (!is(e, from)) return;
    const next = events.slice(i + 1).find((x) => is(x, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED));
    if (next) out.push(at(next));
  });
  return out;
}

/** ms from each event of kind `from` to the first ACTIVITY_TASK_SCHEDULED after it. */
function toNextActivity(events: HistoryEvent[], from: temporal.api.enums.v1.EventType): number[] {
  const froms = events.filter((e) => is(e, from));
  return afterEach(events, from).map((t, i) => t - at(froms[i]!));
}

interface Rollout {
  gates: boolean;
  rolloutMs: number;
  /** With gates: the time the gates waited for the promote (awaiting written → Update accepted). */
  waitedMs: number;
  events: number;
  promoteToNextActivityMs: number[];
  stepTransitionMs: number[];
}

async function rollout(stack: E2EStack, version: string, gates: boolean): Promise<Rollout> {
  const generation = (
    await mergePatch(stack.kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: version, strategy: { gates: gates ? ['BeforeEachZone'] : [] } } })
  ).metadata.generation!;
  const promoted = new Set<string>();
  const sentAt: number[] = [];
  let waitedMs = 0;
  let done: VMDistributedClusterStatus | undefined;
  // The previous generation's phase stays until this one's workflow writes its own: only an end seen
  // after an active phase of this generation counts (as waitVmdcPhase does).
  let active = false;
  for (const deadline = Date.now() + 5 * 60_000; !done && Date.now() < deadline;) {
    const st = ((await getObject(stack.kc, 'VMDistributedCluster', NS, VMDC)).status ?? {}) as VMDistributedClusterStatus;
    const ours = st.observedGeneration === generation && !!st.workflow?.id.includes(`/g${generation}-`);
    if (ours && st.awaiting && !promoted.has(st.awaiting.since)) {
      promoted.add(st.awaiting.since);
      sentAt.push(Date.now());
      await stack.client.workflow.getHandle(st.workflow!.id).executeUpdate('promote');
      waitedMs += Date.now() - Date.parse(st.awaiting.since);
    }
    if (ours && (st.phase === 'Pending' || st.phase === 'Progressing')) active = true;
    if (ours && active && (st.phase === 'Succeeded' || st.phase === 'Failed')) done = st;
    else await new Promise((r) => setTimeout(r, 50));
  }
  if (done?.phase !== 'Succeeded') throw new Error(`generation ${generation} did not succeed: ${done?.phase ?? 'timed out'} ${done?.message ?? ''}`);
  const { events } = await fullHistory(stack.client, done.workflow!.id, done.workflow!.runId);
  return {
    gates,
    rolloutMs: at(events.at(-1)!) - at(events[0]!),
    waitedMs,
    events: events.length,
    // The Update's completion and the activity it lets run share a workflow task: measured from
    // when this process sent it (the same machine's clock as the server's event times).
    promoteToNextActivityMs: afterEach(events, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED).map((t, i) => t - sentAt[i]!),
    stepTransitionMs: toNextActivity(events, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
  };
}

async function main(): Promise<void> {
  const runInfo = provenance();
  const runs = await pairedRollouts(
    { name: 'gates', vmdc: VMDC, pairs: PAIRS, pollMs: POLL_MS, progress, label: (on) => (on ? 'gates' : 'no gates') },
    rollout,
  );
  const withGates = runs.filter((r) => r.gates);
  const without = runs.filter((r) => !r.gates);
  const polls = (ms: number) => round(ms / POLL_MS);
  const promote = withGates.flatMap((r) => r.promoteToNextActivityMs);
  const transitions = without.flatMap((r) => r.stepTransitionMs);
  const zones = DEMO_CLUSTERS.length;
  const netPerZone = withGates.map((r, i) => (r.rolloutMs - r.waitedMs - without[i]!.rolloutMs) / zones);
  const doc = {
    benchmark: 'gates',
    what: 'bench/stack/gates.ts: pairs of 3-zone rollouts on the e2e stack, without gates and with BeforeEachZone promoted at once; what a gate adds beyond the wait for a person, in polls',
    ...runInfo,
    pollIntervalMs: POLL_MS,
    runs,
    summary: {
      promoteToNextActivity: { ms: minMaxMean(promote), p50Ms: round(quantile(promote, 0.5)), maxPolls: polls(Math.max(...promote)) },
      stepTransitionWithoutGates: { ms: minMaxMean(transitions), p50Ms: round(quantile(transitions, 0.5)), maxPolls: polls(Math.max(...transitions)) },
      /** A passed gate's cost over an ordinary step transition, in polls (target ≤ 1). */
      gateOverPlainStepPolls: polls(Math.max(...promote) - quantile(transitions, 0.5)),
      netRolloutPerZonePolls: { values: netPerZone.map(polls), max: polls(Math.max(...netPerZone)) },
      eventsPerZone: {
        withGates: round(minMaxMean(withGates.map((r) => r.events)).mean / zones),
        without: round(minMaxMean(without.map((r) => r.events)).mean / zones),
      },
    },
  };
  writeBenchDocument('gates', doc);
}

runBench(main);
