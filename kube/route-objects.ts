// The read routes as Kubernetes objects: the VMAuth's spec.unauthorizedUserAccessSpec.targetRefs and
// VMUsers' spec.targetRefs, and the records of what was taken out of them (api/route-records.ts),
// kept on the same objects. Each edit is a read-modify-write: a fresh GET, a pure edit
// (api/route-edits.ts) of what is there now, a JSON merge patch carrying metadata.resourceVersion
// (409 on a concurrent write: read again and recompute), so a retried edit is harmless and nobody's
// edit is lost. Putting a recorded zone back is shared by the workflow's rejoin (activities/routes/edit-routes.ts)
// and a person's release (`kubectl vmdc release-zone`).
import { jsonEqual } from '../api/json-value';
import { undoRemoval } from '../api/route-edits';
import {
  formatRecords,
  parseRecords,
  recordKey,
  OUT_OF_ROTATION_ANNOTATION,
  UnreadableRecordsError,
  type OutOfRotationRecord,
  type RemovedRef,
  type RouteRef,
} from '../api/route-records';
import { restoreIssue, type RecordExpectation } from '../api/record-verification';
import { routeTargetRefs } from '../api/route-targets';
import type { JsonObject } from '../api/types';
import { settleAll } from './at-once';
import { vmKind, type KubeObject, type KubeObjects } from './custom-objects';
import { routeFieldManager } from './field-managers';
import { readModifyWrite } from './read-modify-write';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from './request-timeout';
import { listRouteViews, routeObjectRecords, type ListOptions } from './route-records';

export const MAX_CONFLICT_RETRIES = 10;

/** A merge patch that sets the route's targetRefs (lists replace) under a resourceVersion precondition. */
export function routePatch(kind: RouteRef['kind'], resourceVersion: string | undefined, targetRefs: JsonObject[]): JsonObject {
  const spec: JsonObject = kind === 'VMAuth' ? { unauthorizedUserAccessSpec: { targetRefs } } : { targetRefs };
  return resourceVersion ? { metadata: { resourceVersion }, spec } : { spec };
}

export const routeLabel = (r: RouteRef): string => `${r.kind} ${r.name}`;

export interface EditRoutesHooks {
  /** Called between the read and the write of each attempt (tests inject a concurrent edit here). */
  beforeWrite?(route: RouteRef, attempt: number): Promise<void> | void;
  /** Called on every attempt (activities heartbeat here). */
  onAttempt?(route: RouteRef, attempt: number): void;
  /**
   * Called after a route was written (tests inject edits here). The routes are edited at once:
   * another route's read may come before or after this call.
   */
  afterWrite?(route: RouteRef): Promise<void> | void;
  /** The error when a route kept changing under every attempt (the activities raise their retryable RouteConflict). */
  conflict?(route: RouteRef, attempts: number): Error;
}

/**
 * One route's read-modify-write (kube/read-modify-write.ts) for the VMDistributedCluster of `uid`: a
 * fresh GET, `plan` decides from what is there now (a patch to send, or a result without writing), a
 * merge patch under the resourceVersion the GET returned, as that VMDistributedCluster's route field
 * manager (kube/field-managers.ts).
 */
export async function rewriteRoute<T>(
  kube: KubeObjects,
  namespace: string,
  route: RouteRef,
  uid: string,
  hooks: EditRoutesHooks,
  plan: (obj: KubeObject | undefined) => { done: T } | { patch: JsonObject; result: T; ifGone?: T },
): Promise<T> {
  const k = vmKind(route.kind);
  return readModifyWrite<T>(
    async (attempt) => {
      hooks.onAttempt?.(route, attempt);
      const step = plan(await kube.get(k, namespace, route.name));
      if ('done' in step) return step;
      await hooks.beforeWrite?.(route, attempt);
      return {
        write: async () => {
          await kube.mergePatch(k, namespace, route.name, step.patch, { fieldManager: routeFieldManager(uid) });
          await hooks.afterWrite?.(route);
        },
        result: step.result,
        ...('ifGone' in step ? { ifGone: step.ifGone } : {}),
      };
    },
    {
      maxAttempts: MAX_CONFLICT_RETRIES,
      exhausted: (n) => hooks.conflict?.(route, n) ?? new Error(`${routeLabel(route)}: still conflicting after ${n} attempts`),
    },
  );
}

export const LIST_TIMEOUT: ListOptions = withRequestTimeout(REQUEST_TIMEOUT_MS);

/** The records on a freshly read route object (strict: unreadable → UnreadableRecordsError naming it). */
export function recordsOn(route: RouteRef, namespace: string, obj: KubeObject) {
  return routeObjectRecords(route, namespace, obj.metadata.annotations as Record<string, string> | undefined);
}

/** One merge patch: the route's targetRefs (when given) and the annotation, under the resourceVersion precondition. */
export function recordedPatch(
  kind: RouteRef['kind'],
  resourceVersion: string | undefined,
  targetRefs: JsonObject[] | undefined,
  annotation: string | null,
): JsonObject {
  const patch = targetRefs ? routePatch(kind, resourceVersion, targetRefs) : resourceVersion ? { metadata: { resourceVersion } } : {};
  const metadata = (patch.metadata ?? {}) as JsonObject;
  metadata.annotations = { [OUT_OF_ROTATION_ANNOTATION]: annotation };
  return { ...patch, metadata };
}

/** What one route got back from its record. */
export interface RestoredRoute {
  route: RouteRef;
  /** The record that was deleted (undefined: the route no longer carried it, nothing written). */
  record?: OutOfRotationRecord;
  /** Whether the targetRefs changed (false: everything recorded was already there; the record was still deleted). */
  changed: boolean;
  /** Why its record was not restored (api/record-verification.ts restoreIssue): nothing was written. */
  refused?: string;
}

/** Puts back what the route's record of (uid, zone) says and deletes the record, in one patch. */
function restoreRecorded(kube: KubeObjects, route: RouteRef, expect: RecordExpectation, zone: string, hooks: EditRoutesHooks): Promise<RestoredRoute> {
  const { namespace, uid } = expect;
  const untouched: RestoredRoute = { route, changed: false };
  const key = recordKey(uid, zone);
  return rewriteRoute<RestoredRoute>(kube, namespace, route, uid, hooks, (obj) => {
    if (!obj) return { done: untouched }; // gone, and its record with it
    const records = recordsOn(route, namespace, obj);
    const record = records[key];
    if (!record) return { done: untouched }; // restored before
    const refused = restoreIssue(record, { route, uid: obj.metadata.uid ?? '', namespace }, expect);
    if (refused) return { done: { ...untouched, refused: `record of zone ${zone} ${refused}` } };
    const current = routeTargetRefs(route.kind, obj);
    const desired = undoRemoval(current, { removed: record.removed });
    const changed = !jsonEqual(desired, current);
    const rest = { ...records };
    delete rest[key];
    return {
      patch: recordedPatch(route.kind, obj.metadata.resourceVersion, changed ? desired : undefined, formatRecords(rest)),
      result: { route, record, changed },
      ifGone: untouched,
    };
  });
}

/** Whether the annotation holds a record of (uid, zone); an unreadable one holds none that can be restored. */
function carries(annotation: string | undefined, uid: string, zone: string): boolean {
  try {
    return recordKey(uid, zone) in parseRecords(annotation, uid);
  } catch (err) {
    if (err instanceof UnreadableRecordsError) return false;
    throw err;
  }
}

/**
 * Puts a zone of one VMDistributedCluster (by uid) back into every route of the namespace that
 * carries its record, exactly as the records say, deleting each record in the same patch. No
 * safety check of the reads: the caller decided (the workflow's rejoin, or a person's release).
 * A record that is not the uid's to restore (restoreIssue) is left as it is, reported in `refused`.
 */
export async function restoreRecordedZone(kube: KubeObjects, expect: RecordExpectation, zone: string, hooks: EditRoutesHooks = {}): Promise<RestoredRoute[]> {
  const carrying = (await listRouteViews(kube.api, expect.namespace, LIST_TIMEOUT)).filter((v) => carries(v.annotation, expect.uid, zone));
  // Each route object at once; results in the listing's order.
  return settleAll(carrying, ({ route }) => restoreRecorded(kube, route, expect, zone, hooks));
}

/** One line per removed entry: where it was and what it is. */
export function describeRemoved(r: RemovedRef): string {
  switch (r.type) {
    case 'targetRef':
      return `targetRefs[${r.index}] ${JSON.stringify(r.targetRef)}`;
    case 'object':
      return `targetRefs[${r.index}].crd.objects[${r.objectIndex}] ${JSON.stringify(r.object)}`;
    case 'crdName':
      return `targetRefs[${r.index}].crd name/namespace ${JSON.stringify({ name: r.name, namespace: r.namespace })} (emptied)`;
  }
}
