// When does an object's status tell how the rollout of its current spec ended? Pure.
import { parseWorkflowId } from '../api/rollout-contract';
import type { Phase } from '../api/types';
import type { VmdcObject } from '../kube/vmdc-object';
import { ENDED_PHASES } from './exit-codes';

/**
 * Whether the status describes the object's current generation. Right after a spec change the
 * status still shows the previous rollout's phase (often Succeeded): the trigger first records the
 * new generation (observedGeneration, status.workflow) and only then does the new workflow write
 * its phase, with its generation in the Ready condition. A generation that changed `spec.paused`
 * only is adopted by the running workflow, which keeps its own id and generation.
 */
export function statusIsCurrent(obj: VmdcObject): boolean {
  const generation = obj.metadata?.generation;
  const st = obj.status;
  if (generation === undefined || st?.observedGeneration !== generation) return false;
  if (st.phase === 'Invalid') return true;
  if (!st.workflow) return false;
  const own = parseWorkflowId(st.workflow.id)?.generation === generation;
  return !own || st.conditions?.find((c) => c.type === 'Ready')?.observedGeneration === generation;
}

/** The phase the current spec's rollout ended with, or undefined while it runs (or has not started). */
export function endedPhase(obj: VmdcObject): Phase | undefined {
  const phase = obj.status?.phase;
  return phase && ENDED_PHASES.includes(phase) && statusIsCurrent(obj) ? phase : undefined;
}
