// The one check every write activity makes before it writes (applyObject, editRoutes, writeStatus,
// and the queue wait's status reports): the write must belong to the calling workflow's
// VMDistributedCluster, as write-binding.ts decides against the object read now. A refusal is the
// non-retryable InputRefused failure, before anything is written.
import type { TrustPolicy } from '../../api/trust-policy';
import { FailureType } from '../../workflows/failures';
import { activityLog, callingWorkflowId } from '../activity-context';
import { nonRetryable } from '../errors';
import { claimedObject, decideWrite, needsLiveObject, type LiveVmdc, type Write } from './write-binding';

export interface WriteGuard {
  /** Resolves when `write` is the calling workflow's to make; throws the refusal otherwise. */
  check(write: Write): Promise<void>;
}

export function writeGuard(deps: { vmdcs: { get(namespace: string, name: string): Promise<LiveVmdc | undefined> }; policy: TrustPolicy }): WriteGuard {
  return {
    async check(write) {
      const callerId = callingWorkflowId();
      const claimed = claimedObject(write);
      const live = needsLiveObject(write) ? await deps.vmdcs.get(claimed.namespace, claimed.name) : undefined;
      const v = decideWrite(write, callerId, live, deps.policy);
      if (v.allowed) return;
      activityLog('warn', v.message, { namespace: claimed.namespace, name: claimed.name, generation: claimed.generation, caller: callerId });
      throw nonRetryable(FailureType.InputRefused, v.message);
    },
  };
}
