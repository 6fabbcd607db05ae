// Wait until a VM operator object reports the generation we changed as applied and operational.
import { FAILED, OPERATIONAL, type VMKind } from '../../api/constants';
import type { ObjectState } from '../../workflows/activity-types';
import { FailureType } from '../../workflows/failures';
import { nonRetryable } from '../errors';
import { vmKind, type KubeObjects } from '../../kube/custom-objects';
import { objectState } from './object-state';
import { sleepHeartbeating, type PollContext } from '../activity-context';

export type OperationalVerdict = { done: true } | { done: false; failed: boolean; message: string };

/** Pure: what an ObjectState means for a wait on `generation`. */
export function operationalVerdict(state: ObjectState, generation: number): OperationalVerdict {
  if (!state.exists) return { done: false, failed: false, message: 'object does not exist (yet)' };
  const observed = state.observedGeneration;
  const caughtUp = observed !== undefined && observed >= generation;
  if (state.updateStatus === FAILED && (caughtUp || observed === undefined)) {
    return { done: false, failed: true, message: `updateStatus failed${state.reason ? `: ${state.reason}` : ''}` };
  }
  if (caughtUp && state.updateStatus === OPERATIONAL) return { done: true };
  return {
    done: false,
    failed: false,
    message: `observedGeneration ${observed ?? '-'} (want >= ${generation}), updateStatus ${state.updateStatus ?? '-'}`,
  };
}

export async function waitOperational(
  kube: KubeObjects,
  ctx: PollContext,
  input: { kind: VMKind; namespace: string; name: string; generation: number; pollIntervalMs: number },
): Promise<ObjectState> {
  const label = `${input.kind} ${input.namespace}/${input.name}`;
  for (;;) {
    const state = objectState(await kube.get(vmKind(input.kind), input.namespace, input.name));
    const v = operationalVerdict(state, input.generation);
    if (v.done) return state;
    if (v.failed) {
      throw nonRetryable(FailureType.ObjectFailed, `${label}: ${v.message}`, { kind: input.kind, name: input.name, reason: state.reason ?? '' });
    }
    const details = { state, message: v.message };
    ctx.heartbeat(details);
    await sleepHeartbeating(ctx, Math.max(100, input.pollIntervalMs), details);
  }
}
