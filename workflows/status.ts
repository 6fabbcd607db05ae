// Builds the VMDistributedCluster status from the workflow state. Pure.
import type { Condition, ObjectGeneration, VMDistributedClusterStatus, WorkflowRef, ZoneStatus } from '../api/types';
import type { RolloutState } from './state';
import { zonesOutOfRotation } from './state';

type CondType = Condition['type'];

/** The desired Ready / Progressing / Paused conditions for a state (without times). */
export function desiredConditions(state: RolloutState): Array<Omit<Condition, 'lastTransitionTime'>> {
  const p = state.phase;
  const ready: Omit<Condition, 'lastTransitionTime'> =
    p === 'Succeeded'
      ? { type: 'Ready', status: 'True', reason: 'Succeeded', message: state.message }
      : { type: 'Ready', status: 'False', reason: p, message: state.message };
  const progressing: Omit<Condition, 'lastTransitionTime'> =
    p === 'Progressing' || p === 'Pending'
      ? { type: 'Progressing', status: 'True', reason: p, message: state.message }
      : { type: 'Progressing', status: 'False', reason: p, message: state.message };
  const paused: Omit<Condition, 'lastTransitionTime'> = state.paused
    ? { type: 'Paused', status: 'True', reason: 'PauseRequested', message: state.message }
    : { type: 'Paused', status: 'False', reason: 'NotPaused', message: '' };
  return [ready, progressing, paused];
}

/**
 * Merge desired conditions into the previous ones: `lastTransitionTime` changes only when a
 * condition's status changes (metav1.Condition semantics). Conditions of other types are kept.
 */
export function mergeConditions(
  prev: readonly Condition[],
  next: ReadonlyArray<Omit<Condition, 'lastTransitionTime'>>,
  now: string,
  observedGeneration?: number,
): Condition[] {
  const out: Condition[] = prev.filter((c) => !next.some((n) => n.type === c.type)).map((c) => ({ ...c }));
  for (const n of next) {
    const old = prev.find((c) => c.type === n.type);
    out.push({
      ...n,
      lastTransitionTime: old && old.status === n.status ? old.lastTransitionTime : now,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    });
  }
  const order: CondType[] = ['Ready', 'Progressing', 'Paused', 'Valid'];
  return out.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
}

function zoneStatus(z: RolloutState['zones'][number]): ZoneStatus {
  const s: ZoneStatus = { name: z.name, phase: z.phase };
  if (z.vmclusterGeneration !== undefined) s.vmclusterGeneration = z.vmclusterGeneration;
  if (z.startedAt) s.startedAt = z.startedAt;
  if (z.finishedAt) s.finishedAt = z.finishedAt;
  let message = z.message;
  if (z.outOfRotation && !message) message = `out of read rotation: ${z.phase}`;
  if (message) s.message = message;
  return s;
}

/**
 * The CR status for `state`. Also updates `state.conditions` (keeping transition times).
 * Zones are listed in rollout order. Every zone out of rotation carries a message saying why.
 */
export function buildStatus(
  state: RolloutState,
  object: ObjectGeneration,
  workflow: WorkflowRef,
  now: string,
): VMDistributedClusterStatus {
  state.conditions = mergeConditions(state.conditions, desiredConditions(state), now, object.generation);
  const byName = new Map(state.zones.map((z) => [z.name, z]));
  const ordered = state.order.map((n) => byName.get(n)!).filter(Boolean);
  const status: VMDistributedClusterStatus = {
    observedGeneration: object.generation,
    phase: state.phase,
    message: state.message,
    workflow: { ...workflow },
    zonesOutOfRotation: zonesOutOfRotation(state),
    zones: ordered.map(zoneStatus),
    conditions: state.conditions.map((c) => ({ ...c })),
  };
  if (state.currentZone) status.currentZone = state.currentZone;
  return status;
}
