// The VMDistributedCluster status, written through the status subresource, only while the object
// is still the same object (uid) and either at the workflow's generation or still naming the calling
// workflow in status.workflow (the trigger adopted a paused-only generation for it).
import { Context } from '@temporalio/activity';
import type { Condition, JsonObject, ObjectGeneration, VMDistributedClusterStatus, ZonePhase } from '../api/types';
import { isConflict, isNotFound } from './errors';
import { VMDC_KIND, type KubeObjects } from './kube-objects';
import { noopMetrics, type ActivityMetrics } from './metrics';

/** Fields the rollout owns and clears when its status leaves them out (the trigger owns observedGeneration, workflow). */
const CLEARED_WHEN_ABSENT = ['message', 'currentZone', 'zonesOutOfRotation'] as const;

/**
 * Pure: the conditions to write. A merge patch replaces the whole list, so the conditions the
 * rollout does not own (the trigger's `Valid`) are carried over from the current status.
 */
export function mergeConditions(current: Condition[] | undefined, mine: Condition[] | undefined): Condition[] | undefined {
  if (!mine) return undefined;
  const kept = (current ?? []).filter((c) => !mine.some((m) => m.type === c.type));
  return [...kept, ...mine];
}

/** Pure: the status merge patch body (absent rollout-owned fields are deleted with null). */
export function statusPatch(status: VMDistributedClusterStatus, resourceVersion?: string, currentConditions?: Condition[]): JsonObject {
  const conditions = mergeConditions(currentConditions, status.conditions);
  const s = JSON.parse(JSON.stringify(conditions ? { ...status, conditions } : status)) as JsonObject;
  for (const k of CLEARED_WHEN_ABSENT) if (!(k in s)) s[k] = null;
  return resourceVersion ? { metadata: { resourceVersion }, status: s } : { status: s };
}

/** Pure: is `current` (its metadata) the same object (uid) at the workflow's generation? */
export function sameGeneration(current: { uid?: unknown; generation?: unknown } | undefined, object: ObjectGeneration): boolean {
  if (!current) return false;
  if (object.uid && current.uid !== object.uid) return false;
  return current.generation === object.generation;
}

/**
 * Pure: may the workflow `workflowId` of `object` write the status of `current`? Same uid, and either
 * the object is at the workflow's generation, or its status.workflow still names this workflow (a
 * later generation changed only spec.paused and the trigger kept this workflow in charge). A
 * superseded workflow has lost status.workflow to the new one, so it can no longer write.
 */
export function mayWriteStatus(
  current: { metadata?: { uid?: unknown; generation?: unknown }; status?: unknown } | undefined,
  object: ObjectGeneration,
  workflowId: string | undefined,
): boolean {
  if (!current?.metadata) return false;
  if (object.uid && current.metadata.uid !== object.uid) return false;
  if (current.metadata.generation === object.generation) return true;
  const named = (current.status as { workflow?: { id?: unknown } } | undefined)?.workflow?.id;
  return !!workflowId && named === workflowId;
}

/** The calling workflow's id: from the activity Context, else from the status it writes. */
function callerWorkflowId(status: VMDistributedClusterStatus): string | undefined {
  try {
    return Context.current().info.workflowExecution?.workflowId ?? status.workflow?.id;
  } catch {
    return status.workflow?.id;
  }
}

/**
 * Tracks zone phase transitions (per object, in this process) to observe how long each step took.
 * Approximate by nature (a restarted worker forgets): it feeds a histogram, nothing decides on it.
 */
export class StepTimer {
  private readonly zones = new Map<string, { phase: ZonePhase; since: number }>();

  observe(object: ObjectGeneration, status: VMDistributedClusterStatus, now: number, metrics: ActivityMetrics): void {
    for (const z of status.zones ?? []) {
      const key = `${object.namespace}/${object.name}/${object.uid}/${object.generation}/${z.name}`;
      const prev = this.zones.get(key);
      if (prev && prev.phase === z.phase) continue;
      if (prev) metrics.zoneStepDuration(prev.phase, Math.max(0, (now - prev.since) / 1000));
      this.zones.set(key, { phase: z.phase, since: now });
    }
    if (this.zones.size > 10_000) this.zones.clear();
  }
}

export async function writeStatus(
  kube: KubeObjects,
  input: { object: ObjectGeneration; status: VMDistributedClusterStatus },
  opts: { metrics?: ActivityMetrics; stepTimer?: StepTimer; maxAttempts?: number } = {},
): Promise<{ written: boolean }> {
  const { object } = input;
  const workflowId = callerWorkflowId(input.status);
  const attempts = opts.maxAttempts ?? 5;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const current = await kube.get(VMDC_KIND, object.namespace, object.name);
    if (!current || !mayWriteStatus(current, object, workflowId)) return { written: false };
    // Adopted (the object is at a later generation): observedGeneration and workflow are the
    // trigger's; never move them back to the workflow's own generation.
    let status = input.status;
    if (!sameGeneration(current.metadata, object)) {
      const { observedGeneration: _g, workflow: _w, ...rest } = input.status;
      status = rest;
    }
    try {
      const currentConditions = (current.status as VMDistributedClusterStatus | undefined)?.conditions;
      await kube.mergePatchStatus(VMDC_KIND, object.namespace, object.name, statusPatch(status, current.metadata.resourceVersion, currentConditions));
    } catch (err) {
      if (isConflict(err)) continue; // changed between GET and PATCH: check the generation again
      if (isNotFound(err)) return { written: false };
      throw err;
    }
    opts.metrics?.rolloutPhase(object, input.status.phase);
    opts.stepTimer?.observe(object, input.status, Date.now(), opts.metrics ?? noopMetrics);
    return { written: true };
  }
  throw new Error(`status of ${object.namespace}/${object.name}: still conflicting after ${attempts} attempts`);
}
