// What a step sees of a VM operator object: exists, generation, observed generation, update status.
import type { JsonObject } from '../../api/types';
import type { KubeObject } from '../../kube/custom-objects';
import type { ObjectState } from '../../workflows/activity-types';

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** ObjectState of a VM operator object (absent → exists: false). */
export function objectState(obj: KubeObject | undefined): ObjectState {
  if (!obj) return { exists: false };
  const status = (obj.status ?? {}) as JsonObject;
  const state: ObjectState = { exists: true };
  const generation = num(obj.metadata.generation);
  const observedGeneration = num(status.observedGeneration);
  const updateStatus = str(status.updateStatus);
  const reason = str(status.reason);
  if (generation !== undefined) state.generation = generation;
  if (observedGeneration !== undefined) state.observedGeneration = observedGeneration;
  if (updateStatus !== undefined) state.updateStatus = updateStatus;
  if (reason !== undefined) state.reason = reason;
  if (obj.spec && typeof obj.spec === 'object' && !Array.isArray(obj.spec)) state.spec = obj.spec as JsonObject;
  return state;
}
