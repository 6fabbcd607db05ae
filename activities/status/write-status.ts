// The VMDistributedCluster status as the rollout writes it (through the shared writer,
// kube/status-writer.ts), only while the object is still the same object (uid) and either at the
// workflow's generation or still naming the calling workflow in status.workflow (the trigger
// adopted a paused-only generation for it).
import type { KubeConfig } from '@kubernetes/client-node';
import { Context } from '@temporalio/activity';
import { mergeConditions } from '../../api/conditions';
import { recordsCondition } from '../../api/recorded-status';
import type { Condition, JsonObject, ObjectGeneration, VMDistributedClusterStatus, ZonePhase } from '../../api/types';
import { describeError, isNotFound, refusedForGood, statusCode } from '../../kube/errors';
import type { CreateEvent } from '../../kube/events';
import { vmdcStatusClient, writeVmdcStatus, type VmdcStatusClient } from '../../kube/status-writer';
import { fleetWorkflowId } from '../../api/fleet-contract';
import { FailureType } from '../../workflows/failures';
import { activityAttempt, activityLog } from '../activity-context';
import { nonRetryable } from '../errors';
import { FIELD_MANAGER } from '../../kube/field-managers';
import { noopMetrics, type ActivityMetrics } from '../metrics';
import { statusEvents, type StatusEvent } from './events';
import { started } from '../notify/messages';
import type { Notifier } from '../notify/send';

/** Fields the rollout owns and clears when its status leaves them out (the trigger owns observedGeneration, workflow). */
const CLEARED_WHEN_ABSENT = ['message', 'currentZone', 'zonesOutOfRotation', 'awaiting', 'plan'] as const;

/**
 * Pure: the status part of the merge patch. Absent rollout-owned fields are deleted with null; a
 * merge patch replaces the whole conditions list, so the conditions the rollout does not own (the
 * trigger's `Valid`) are carried over from `currentConditions`.
 */
export function statusPatch(status: VMDistributedClusterStatus, currentConditions?: Condition[]): JsonObject {
  const conditions = status.conditions ? mergeConditions(currentConditions, status.conditions) : undefined;
  const s = JSON.parse(JSON.stringify(conditions ? { ...status, conditions } : status)) as JsonObject;
  for (const k of CLEARED_WHEN_ABSENT) if (!(k in s)) s[k] = null;
  return s;
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

/**
 * Pure: may the fleet workflow `callerId` report the generation it queued as `workflowId` (never
 * started) in the status of `current`? The same object at that generation, whose spec names the
 * caller's fleet and whose status still names that child (the trigger recorded it when handing it
 * over). Anyone can start a workflow with a fleet's id; only the fleet the object itself names counts.
 */
export function mayReportQueued(current: CurrentObject | undefined, object: ObjectGeneration, workflowId: string, callerId: string): boolean {
  if (!current?.metadata || current.metadata.uid !== object.uid || current.metadata.generation !== object.generation) return false;
  const fleet = (current.spec as { fleet?: { name?: unknown } } | undefined)?.fleet?.name;
  const named = (current.status as { workflow?: { id?: unknown } } | undefined)?.workflow?.id;
  return typeof fleet === 'string' && callerId === fleetWorkflowId(object.namespace, fleet) && named === workflowId;
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
      if (prev) metrics.zoneStepDuration({ namespace: object.namespace, name: object.name }, prev.phase, Math.max(0, (now - prev.since) / 1000));
      this.zones.set(key, { phase: z.phase, since: now });
    }
    if (this.zones.size > 10_000) this.zones.clear();
  }
}

/** The VMDistributedCluster, as much of it as writeStatus reads. */
export type CurrentObject = { metadata?: { uid?: unknown; generation?: unknown; resourceVersion?: string }; spec?: unknown; status?: unknown };

/** The client writeStatus writes through: the shared status writer's, with the activities' field manager. */
export function statusClient(kc: KubeConfig): VmdcStatusClient<CurrentObject> {
  return vmdcStatusClient<CurrentObject>(kc, { fieldManager: FIELD_MANAGER });
}

/** Pure: a status write refused for good (e.g. 422: the CRD's schema refuses the status) at this attempt; 404 means "not written". */
export function isRejection(err: unknown, attempt?: number): boolean {
  return refusedForGood(err, attempt) && !isNotFound(err);
}

/** writeVmdcStatus, with a rejection turned into the non-retryable StatusRejected failure (logged at warn). */
async function writeOrReject(
  client: VmdcStatusClient<CurrentObject>,
  object: ObjectGeneration,
  compute: (fresh: CurrentObject) => object | undefined,
): Promise<boolean> {
  try {
    return await writeVmdcStatus(client, object, compute);
  } catch (err) {
    if (!isRejection(err, activityAttempt())) throw err;
    const message = `status of ${object.namespace}/${object.name} rejected by the API server: ${describeError(err)}`;
    activityLog('warn', message, { namespace: object.namespace, name: object.name, generation: object.generation, code: statusCode(err) });
    throw nonRetryable(FailureType.StatusRejected, message, { code: statusCode(err) });
  }
}

export async function writeStatus(
  client: VmdcStatusClient<CurrentObject>,
  input: { object: ObjectGeneration; status: VMDistributedClusterStatus },
  opts: {
    metrics?: ActivityMetrics;
    stepTimer?: StepTimer;
    createEvent?: CreateEvent;
    unverifiedRecords?: readonly string[];
    notifier?: Notifier;
    /** Who may write instead of mayWriteStatus (a fleet reporting a member it never started). */
    allowed?: (current: CurrentObject) => boolean;
  } = {},
): Promise<{ written: boolean }> {
  const { object } = input;
  const workflowId = callerWorkflowId(input.status);
  const allowed = opts.allowed ?? ((current: CurrentObject) => mayWriteStatus(current, object, workflowId));
  let before: VMDistributedClusterStatus | undefined;
  let after = input.status;
  let spec: unknown;
  const written = await writeOrReject(client, object, (current) => {
    if (!allowed(current)) return undefined;
    before = current.status as VMDistributedClusterStatus | undefined;
    spec = current.spec;
    // Adopted (the object is at a later generation): observedGeneration and workflow are the
    // trigger's; never move them back to the workflow's own generation.
    let status = input.status;
    if (!sameGeneration(current.metadata, object)) {
      const { observedGeneration: _g, workflow: _w, ...rest } = input.status;
      status = rest;
    }
    const currentConditions = before?.conditions;
    // The records' condition is the activity's own (read now), not the workflow's: merged here.
    const records = recordsCondition(opts.unverifiedRecords ?? [], currentConditions);
    if (records) status = { ...status, conditions: mergeConditions(status.conditions ?? currentConditions, [records], { now: new Date().toISOString() }) };
    after = status;
    return statusPatch(status, currentConditions);
  });
  if (!written) return { written: false };
  opts.stepTimer?.observe(object, input.status, Date.now(), opts.metrics ?? noopMetrics);
  const events = statusEvents(before, after);
  if (opts.createEvent) await raiseEvents(opts.createEvent, object, events);
  if (opts.notifier) {
    const start = started(before, after, (spec as { clusterVersion?: unknown } | undefined)?.clusterVersion);
    await opts.notifier.notify(object, spec, start ? [start, ...events] : events);
  }
  return { written: true };
}

/** An Event only tells: one that cannot be created is logged, and the status write stands. */
async function raiseEvents(createEvent: CreateEvent, object: ObjectGeneration, events: StatusEvent[]): Promise<void> {
  const involved = { metadata: { name: object.name, namespace: object.namespace, uid: object.uid } };
  for (const e of events) {
    await createEvent(involved, e.type, e.reason, e.message).catch((err: unknown) =>
      activityLog('warn', `could not create Event ${e.reason}: ${describeError(err)}`, { namespace: object.namespace, name: object.name }),
    );
  }
}
