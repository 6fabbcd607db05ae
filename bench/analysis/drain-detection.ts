// How late the rollout's queue wait decided, against the earliest moment it could have: the backlog
// truly gone (vmagent-backlog.ts) and then seen empty for queueDrainedFor.
import { mean } from './stats';

/** ms and pollIntervals after the target; negative: a decision before it. */
export function drainDetectionLatency(decisionAt: number, backlogGone: number, queueDrainedForMs: number, pollIntervalMs: number) {
  const latencyMs = decisionAt - backlogGone - queueDrainedForMs;
  return { latencyMs, overPoll: latencyMs / pollIntervalMs };
}

/** The target is per zone (every zone within one poll), so the max counts; the mean is reported beside it. NaN when there is no zone. */
export function drainLatencyOverZones(overPoll: readonly number[]) {
  return { mean: mean(overPoll), max: overPoll.length ? Math.max(...overPoll) : NaN };
}
