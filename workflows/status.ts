// Builds the VMDistributedCluster status from the workflow state. Pure.
import { mergeConditions } from '../api/conditions';
import type { Condition, ObjectGeneration, VMDistributedClusterStatus, WorkflowRef, ZoneStatus } from '../api/types';
import type { DrainHeartbeat, QueueReport } from './activity-types';
import type { RolloutState } from './state';
import { zonesOutOfRotation } from './state';

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

function zoneStatus(z: RolloutState['zones'][number]): ZoneStatus {
  const s: ZoneStatus = { name: z.name, phase: z.phase };
  if (z.vmclusterGeneration !== undefined) s.vmclusterGeneration = z.vmclusterGeneration;
  if (z.startedAt) s.startedAt = z.startedAt;
  if (z.stepStartedAt) s.stepStartedAt = z.stepStartedAt;
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
  state.conditions = mergeConditions(state.conditions, desiredConditions(state), { now, observedGeneration: object.generation, order: 'canonical' });
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

/** What the queue wait writes while it waits (QueueReport): the status with the zone's message showing `streak`. */
export function queueReportStatus(report: QueueReport, streak: DrainHeartbeat, queueDrainedForMs: number): VMDistributedClusterStatus {
  const zones = report.status.zones?.map((z) => (z.name === report.zone ? { ...z, message: queueProgressMessage(streak, queueDrainedForMs) } : z));
  return { ...report.status, zones };
}

/** The zone's message while its queue wait goes on: pending bytes per vmagent pod, and the empty streak. */
export function queueProgressMessage(streak: DrainHeartbeat, queueDrainedForMs: number): string {
  const s = streak.last;
  const pods = Object.entries(s.podPendingBytes ?? {})
    .slice(0, 5)
    .map(([pod, bytes]) => `${pod} ${bytes} B`)
    .join(', ');
  const since = streak.emptySince
    ? `empty since ${streak.emptySince} (${Math.round((Date.parse(s.at) - Date.parse(streak.emptySince)) / 1000)} s of ${Math.round(queueDrainedForMs / 1000)} s)`
    : 'not empty';
  return `waiting for the vmagent backlog (sample at ${s.at}): ${s.message}${pods ? ` [${pods}]` : ''}; ${since}`.slice(0, 1000);
}

/**
 * The workflow's current details in the Temporal Web UI (markdown): the phase, which zone of how
 * many and its step, what is out of reads, and the latest message — what `kubectl get vmdc` says.
 */
export function currentDetails(status: VMDistributedClusterStatus): string {
  const zones = status.zones ?? [];
  const i = zones.findIndex((z) => z.name === status.currentZone);
  const current = i >= 0 ? `: zone ${i + 1} of ${zones.length}, \`${zones[i]!.name}\` ${zones[i]!.phase}` : '';
  const out = status.zonesOutOfRotation?.length ? status.zonesOutOfRotation.map((z) => `\`${z}\``).join(', ') : 'none';
  const lines = [`**${status.phase ?? 'Pending'}**${current}`, `out of reads: ${out}`];
  if (status.message) lines.push(status.message);
  return lines.join('\n\n');
}
