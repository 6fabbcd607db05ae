// What the activities report to the worker's /metrics. The worker implements it with prom-client
// (worker/metrics.ts); tests and scripts may pass nothing (noopMetrics).
import type { ZonePhase } from '../api/types';
import type { QueueSample } from '../api/rollout-contract';
import type { QueueTarget } from '../workflows/activity-types';

export interface QueueLabels {
  namespace: string;
  name: string;
  zone: string;
}

export interface ActivityMetrics {
  /** Last seen pending bytes of one zone (summed over readable vmagent pods). */
  queuePendingBytes(labels: QueueLabels, bytes: number): void;
  /** The activity of this worker that sampled that zone's queue has ended: its series goes. */
  queueWatchEnded(labels: QueueLabels): void;
  /** An activity attempt failed; `type` is the ApplicationFailure type or the error class. */
  activityError(activity: string, type: string): void;
  /** A zone of the object spent `seconds` in `step` (a zone phase) before moving on. */
  zoneStepDuration(object: { namespace: string; name: string }, step: ZonePhase, seconds: number): void;
  /** The route records of one VMDistributedCluster not acted on, as counted by the last read of them. */
  unverifiedRecords(labels: { namespace: string; name: string }, count: number): void;
  /** One notification (spec.notifications) sent, or not: `result` ok or failed. */
  notification(type: string, result: 'ok' | 'failed'): void;
}

export const noopMetrics: ActivityMetrics = {
  queuePendingBytes() {},
  queueWatchEnded() {},
  activityError() {},
  zoneStepDuration() {},
  unverifiedRecords() {},
  notification() {},
};

export type QueueSampler = (target: QueueTarget) => Promise<QueueSample>;

/**
 * Runs one activity with a sampler that reports each zone's pending bytes; when the activity ends,
 * whatever the outcome, the zones it sampled lose their series. So a zone's series exists only
 * while a wait of this worker watches it (the next wait may run on another replica): summed over
 * the replicas, it is the one live value, never a stale one.
 */
export async function reportingQueues<T>(metrics: ActivityMetrics, sample: QueueSampler, run: (sample: QueueSampler) => Promise<T>): Promise<T> {
  const sampled = new Map<string, QueueLabels>();
  try {
    return await run(async (target) => {
      const labels = { namespace: target.namespace, name: target.objectName ?? target.vmagentName, zone: target.zone ?? target.vmclusterName };
      sampled.set(`${labels.namespace}/${labels.name}/${labels.zone}`, labels);
      const s = await sample(target);
      metrics.queuePendingBytes(labels, s.pendingBytes);
      return s;
    });
  } finally {
    for (const labels of sampled.values()) metrics.queueWatchEnded(labels);
  }
}
