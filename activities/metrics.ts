// What the activities report to the worker's /metrics. The worker implements it with prom-client
// (worker/metrics.ts); tests and scripts may pass nothing (noopMetrics).
import type { Phase, ZonePhase } from '../api/types';

export interface ActivityMetrics {
  /** Last seen pending bytes of one zone (summed over readable vmagent pods). */
  queuePendingBytes(labels: { namespace: string; name: string; zone: string }, bytes: number): void;
  /** An activity attempt failed; `type` is the ApplicationFailure type or the error class. */
  activityError(activity: string, type: string): void;
  /** The current phase of one VMDistributedCluster (as last written by writeStatus). */
  rolloutPhase(object: { namespace: string; name: string }, phase: Phase | undefined): void;
  /** A zone spent `seconds` in `step` (a zone phase) before moving on. */
  zoneStepDuration(step: ZonePhase, seconds: number): void;
}

export const noopMetrics: ActivityMetrics = {
  queuePendingBytes() {},
  activityError() {},
  rolloutPhase() {},
  zoneStepDuration() {},
};
