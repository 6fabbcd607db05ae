// The VM operator's VMDistributed upgrade of one zone, replayed on the vmagent series the rollout
// benchmark recorded: when would the operator have let the zone rejoin? Source: VictoriaMetrics/operator
// (master, d0d258c8, v0.74.1-31), internal/controller/operator/factory/vmdistributed/zone.go
// `(*zones).upgrade` and `waitForEmptyPQ`, vmdistributed.go `defaultMetricsCheckInterval = 50 * time.Second`,
// reconcile/vmcluster.go + reconcile.go `waitForStatus` (vmWaitReadyInterval, config default 5 s):
//   - reconcile.VMCluster updates the VMCluster (here: when vmrollout's patch landed), then
//     wait.PollUntilContextCancel(5 s, immediate) until updateStatus operational at that generation;
//   - reconcile.VMAgent (nothing changed: returns at once);
//   - waitForEmptyPQ: per vmagent pod, wait.PollUntilContextCancel(50 s, immediate=true) over
//     vmagent_remotewrite_pending_data_bytes of the zone's url: the first poll where it reads 0 ends
//     that pod's wait (no streak, send retries not looked at); the zone rejoins vmauth when every
//     pod's wait ended. (The operator matches the `url` label to the backend URL exactly, so it sees
//     the series only with -remoteWrite.showURL=true; without it no series matches and the wait ends
//     at the first poll. The replay gives it the series, as vmrollout's attribution finds it.)
// One vmagent pod here.
import { mean, quantile, round } from './stats';
import { valueAt, type QueuePoint } from './vmagent-backlog';

export const OPERATOR_METRICS_CHECK_INTERVAL_MS = 50_000;
export const OPERATOR_VM_WAIT_READY_INTERVAL_MS = 5_000;
/** The replay gives up after this many queue polls (the series is never that long). */
const MAX_QUEUE_POLLS = 100;
/** Step of the readiness poll's phase in replayOperatorPhases. */
const PHASE_STEP_MS = 100;

/** waitForEmptyPQ from readyAt: its first poll reading 0 pending bytes; undefined if the series starts later or never reads 0. */
export function firstEmptyPoll(points: readonly QueuePoint[], readyAt: number): { at: number; polls: number; extrapolated: boolean } | undefined {
  for (let i = 0; i < MAX_QUEUE_POLLS; i++) {
    const at = readyAt + i * OPERATOR_METRICS_CHECK_INTERVAL_MS;
    const v = valueAt(points, at);
    if (!v) return undefined;
    if (v.bytes <= 0) return { at, polls: i + 1, extrapolated: v.extrapolated };
  }
  return undefined;
}

/** The operator's decision for one zone: readiness polled every 5 s from the patch, then waitForEmptyPQ. */
export function replayOperator(
  points: readonly QueuePoint[],
  patchedAt: number,
  operationalAt: number,
): { decisionAt: number; readyDetectedAt: number; polls: number; extrapolated: boolean } | undefined {
  const k = Math.max(0, Math.ceil((operationalAt - patchedAt) / OPERATOR_VM_WAIT_READY_INTERVAL_MS));
  const readyDetectedAt = patchedAt + k * OPERATOR_VM_WAIT_READY_INTERVAL_MS;
  const poll = firstEmptyPoll(points, readyDetectedAt);
  return poll && { decisionAt: poll.at, readyDetectedAt, polls: poll.polls, extrapolated: poll.extrapolated };
}

/**
 * The same algorithm over every phase of the operator's 5 s readiness poll relative to the moment the
 * VMCluster became operational (0 .. 5 s in 100 ms steps): the phase is set by how long the zone's
 * restart took, effectively random. Latency is measured from the backlog truly gone (negative: the
 * operator accepted a 0 reading while blocks were still being retried or the queue refilled). A phase
 * whose replay never reads 0 is left out (`phases` counts those that decided); none deciding gives NaN.
 */
export function replayOperatorPhases(points: readonly QueuePoint[], operationalAt: number, drainedAt: number, pendingZeroAt: number) {
  const latencies: number[] = [];
  let beforePendingZero = 0;
  let extrapolated = 0;
  for (let phase = 0; phase < OPERATOR_VM_WAIT_READY_INTERVAL_MS; phase += PHASE_STEP_MS) {
    const poll = firstEmptyPoll(points, operationalAt + phase);
    if (!poll) continue;
    latencies.push(poll.at - drainedAt);
    if (poll.at < pendingZeroAt) beforePendingZero++;
    if (poll.extrapolated) extrapolated++;
  }
  const fraction = (n: number) => (latencies.length ? round(n / latencies.length, 3) : NaN);
  return {
    phases: latencies.length,
    meanLatencyMs: round(mean(latencies)),
    p50LatencyMs: round(quantile(latencies, 0.5)),
    maxLatencyMs: latencies.length ? Math.max(...latencies) : NaN,
    /** Accepted before the backlog was truly gone (mostly: pending 0 while a worker still retried a block). */
    acceptedBeforeDrainedFraction: fraction(latencies.filter((l) => l < 0).length),
    /** Accepted on a transient 0 of the pending bytes. */
    acceptedBeforePendingZeroFraction: fraction(beforePendingZero),
    waitedOneMorePollFraction: fraction(latencies.filter((l) => l >= OPERATOR_METRICS_CHECK_INTERVAL_MS - OPERATOR_VM_WAIT_READY_INTERVAL_MS).length),
    extrapolatedFraction: fraction(extrapolated),
  };
}
