// Read routes: the VMAuth's spec.unauthorizedUserAccessSpec.targetRefs and VMUsers' spec.targetRefs.
// Edits are set-to-desired: a fresh GET, the pure transform from workflows/routes.ts applied to what
// is there now, a JSON merge patch carrying metadata.resourceVersion (409 on a concurrent write →
// read again and recompute), so a retried activity is harmless and nobody's edit is lost.
//
// The route objects themselves carry the record of what was taken out (api/route-records.ts): the
// patch that removes a zone's entries writes the record, the patch that puts them back deletes it,
// both under the same resourceVersion precondition.
//
// The route objects of one call are independent objects (each its own read-modify-write under its
// own resourceVersion): they are edited at once (settleAll), and every read around the edits is made
// at once too.
import type { JsonObject, JsonValue } from '../api/types';
import {
  formatRecords,
  OUT_OF_ROTATION_ANNOTATION,
  recordKey,
  UnreadableRecordsError,
  type OutOfRotationRecord,
  type RecordedZone,
  type RecordOwner,
  type RemovedRef,
  type RouteRef,
  type RouteRemoval,
} from '../api/route-records';
import type { RouteSnapshot } from '../workflows/activity-types';
import { computeRemoval, hasReadBackend } from '../workflows/routes';
import { applyRemoval, undoRemoval } from '../api/route-edits';
import { jsonEqual } from '../api/json-value';
import { readModifyWrite } from '../kube/read-modify-write';
import { listRouteRecords, recordedZones, routeObjectRecords, type ListOptions } from '../kube/route-records';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../kube/request-timeout';
import { FailureType } from '../workflows/failures';
import { nonRetryable } from './errors';
import { settleAll, settled } from './at-once';
import { vmKind, type KubeObject, type KubeObjects } from './kube-objects';

export const MAX_CONFLICT_RETRIES = 10;

function asObject(v: JsonValue | undefined): JsonObject | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
}

/** The targetRefs of a route object (missing → []). */
export function routeTargetRefs(kind: RouteRef['kind'], obj: KubeObject): JsonObject[] {
  const spec = asObject(obj.spec);
  const holder = kind === 'VMAuth' ? asObject(spec?.unauthorizedUserAccessSpec) : spec;
  const refs = holder?.targetRefs;
  return Array.isArray(refs) ? (refs.filter((r) => asObject(r) !== undefined) as JsonObject[]) : [];
}

/** A merge patch that sets the route's targetRefs (lists replace) under a resourceVersion precondition. */
export function routePatch(kind: RouteRef['kind'], resourceVersion: string | undefined, targetRefs: JsonObject[]): JsonObject {
  const spec: JsonObject = kind === 'VMAuth' ? { unauthorizedUserAccessSpec: { targetRefs } } : { targetRefs };
  return resourceVersion ? { metadata: { resourceVersion }, spec } : { spec };
}

export const routeLabel = (r: RouteRef): string => `${r.kind} ${r.name}`;

function notFound(namespace: string, r: RouteRef) {
  return nonRetryable(FailureType.ObjectNotFound, `${routeLabel(r)} not found in namespace ${namespace}`, { route: r });
}

export async function readRoutes(kube: KubeObjects, input: { namespace: string; routes: RouteRef[] }): Promise<RouteSnapshot[]> {
  return settleAll(input.routes, async (route): Promise<RouteSnapshot> => {
    const obj = await kube.get(vmKind(route.kind), input.namespace, route.name);
    if (!obj) throw notFound(input.namespace, route);
    return { route: { kind: route.kind, name: route.name }, targetRefs: routeTargetRefs(route.kind, obj) };
  });
}

function groupByRoute(removals: RouteRemoval[]): Array<[RouteRef, RouteRemoval[]]> {
  const groups = new Map<string, [RouteRef, RouteRemoval[]]>();
  for (const r of removals) {
    const key = `${r.route.kind}/${r.route.name}`;
    const g = groups.get(key) ?? [r.route, []];
    g[1].push(r);
    groups.set(key, g);
  }
  return [...groups.values()];
}

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
}

/**
 * One route's read-modify-write (kube/read-modify-write.ts): a fresh GET, `plan` decides from what
 * is there now (a patch to send, or a result without writing), a merge patch under the
 * resourceVersion the GET returned.
 */
async function rewriteRoute<T>(
  kube: KubeObjects,
  namespace: string,
  route: RouteRef,
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
          await kube.mergePatch(k, namespace, route.name, step.patch);
          await hooks.afterWrite?.(route);
        },
        result: step.result,
        ...('ifGone' in step ? { ifGone: step.ifGone } : {}),
      };
    },
    {
      maxAttempts: MAX_CONFLICT_RETRIES,
      // Retryable: Temporal retries the whole activity with backoff.
      exhausted: (n) => Object.assign(new Error(`${routeLabel(route)}: still conflicting after ${n} attempts`), { name: FailureType.RouteConflict }),
    },
  );
}

/**
 * Takes the zone of `input.record` out of the routes of `input.removals`, or puts it back, each
 * route's edit carrying its record (see the top of this file).
 */
export async function editRoutes(
  kube: KubeObjects,
  input: { namespace: string; vmauthName: string; removals: RouteRemoval[]; direction: 'remove' | 'restore'; record: RecordOwner },
  hooks: EditRoutesHooks = {},
): Promise<EditRoutesResult> {
  const { namespace, record: owner } = input;
  const written: RouteRef[] = [];
  let edited: RouteRef[];
  if (input.direction === 'remove') {
    const routes = removalRoutes(input.removals);
    const key = recordKey(owner.vmdc.uid, owner.zone);
    // Refuse before touching anything: check every route first against a fresh read (read at once).
    await settleAll(routes, async ({ route, vmcluster }) => {
      const obj = await kube.get(vmKind(route.kind), namespace, route.name);
      if (!obj) throw notFound(namespace, route);
      if (recordsOn(route, namespace, obj)[key]) return;
      const current = routeTargetRefs(route.kind, obj);
      const removal = freshRemoval(route, current, vmcluster);
      if (removal.removed.length > 0 && !hasReadBackend(applyRemoval(current, removal))) throw emptyRoute(route, vmcluster);
    });
    // Every route at once. Each write carries its own record, and settleAll returns (or throws the
    // first failure in edit order) only once every edit has landed or failed: the records the
    // workflow reads after a failed edit (resyncRecorded) are exactly what landed.
    const wrote = await settleAll(routes, ({ route, vmcluster }) => removeRecorded(kube, namespace, route, vmcluster, owner, hooks));
    routes.forEach(({ route }, i) => wrote[i] && written.push(route));
    edited = routes.map((r) => r.route);
  } else {
    // What is put back comes from the records alone; `removals` only add VMUsers to report (a
    // retried restore whose first attempt already deleted the records finds none of them).
    const restored = await restoreRecordedZone(kube, { namespace, uid: owner.vmdc.uid, zone: owner.zone }, hooks);
    for (const r of restored) if (r.record) written.push(r.route);
    edited = [...restored.map((r) => r.route), ...input.removals.map((r) => r.route)];
  }
  // Both read after every edit settled, at once; an unreadable record is reported before a missing route.
  const [recordedRead, gensRead] = await Promise.allSettled([
    readRecords(kube, { namespace, uid: owner.vmdc.uid }),
    generations(kube, namespace, input.vmauthName, edited, { skipMissingVMUsers: input.direction === 'restore' }),
  ]);
  const recorded = settled(recordedRead);
  return { ...settled(gensRead), written, recorded };
}

export interface EditRoutesResult {
  vmauthGeneration: number;
  vmuserGenerations: Record<string, number>;
  /** The routes this call wrote. */
  written: RouteRef[];
  /** The zones of its VMDistributedCluster recorded out of reads after the edit. */
  recorded: RecordedZone[];
}

/** The VMAuth's generation and those of the VMUsers among `routes`, read fresh. */
async function generations(
  kube: KubeObjects,
  namespace: string,
  vmauthName: string,
  routes: RouteRef[],
  opts: { skipMissingVMUsers?: boolean } = {},
): Promise<{ vmauthGeneration: number; vmuserGenerations: Record<string, number> }> {
  const generationOf = async (route: RouteRef, missing?: 'skip'): Promise<number | undefined> => {
    const obj = await kube.get(vmKind(route.kind), namespace, route.name);
    if (!obj) {
      if (missing === 'skip') return undefined;
      throw notFound(namespace, route);
    }
    return typeof obj.metadata.generation === 'number' ? obj.metadata.generation : 0;
  };
  const users = [...new Set(routes.filter((r) => r.kind === 'VMUser').map((r) => r.name))];
  // Read at once; the VMUsers' failures first, then the VMAuth's, as when read one after another.
  const [vmauthGeneration, ...userGenerations] = await settleAll([{ kind: 'VMAuth' as const, name: vmauthName }, ...users.map((name) => ({ kind: 'VMUser' as const, name }))], (route) =>
    generationOf(route, route.kind === 'VMUser' && opts.skipMissingVMUsers ? 'skip' : undefined),
    { failureOrder: (i) => (i === 0 ? Number.MAX_SAFE_INTEGER : i) },
  );
  const vmuserGenerations: Record<string, number> = {};
  users.forEach((name, i) => {
    const g = userGenerations[i];
    if (g !== undefined) vmuserGenerations[name] = g;
  });
  return { vmauthGeneration: vmauthGeneration!, vmuserGenerations };
}

const LIST_TIMEOUT: ListOptions = withRequestTimeout(REQUEST_TIMEOUT_MS);

/** The non-retryable failure for an annotation vmrollout cannot read: a person must fix it; it is never overwritten. */
function recordsUnreadable(err: UnreadableRecordsError): Error {
  return nonRetryable(
    FailureType.RecordsUnreadable,
    `${err.message}; fix or remove the ${OUT_OF_ROTATION_ANNOTATION} annotation by hand (vmrollout never overwrites it)`,
  );
}

/** Runs `fn`, turning UnreadableRecordsError into the non-retryable RecordsUnreadable failure. */
export async function withReadableRecords<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof UnreadableRecordsError) throw recordsUnreadable(err);
    throw err;
  }
}

/** The records on a freshly read route object (strict: unreadable → UnreadableRecordsError naming it). */
function recordsOn(route: RouteRef, namespace: string, obj: KubeObject) {
  return routeObjectRecords(route, namespace, obj.metadata.annotations as Record<string, string> | undefined);
}

/** One merge patch: the route's targetRefs (when given) and the annotation, under the resourceVersion precondition. */
function recordedPatch(kind: RouteRef['kind'], resourceVersion: string | undefined, targetRefs: JsonObject[] | undefined, annotation: string | null): JsonObject {
  const patch = targetRefs ? routePatch(kind, resourceVersion, targetRefs) : resourceVersion ? { metadata: { resourceVersion } } : {};
  const metadata = (patch.metadata ?? {}) as JsonObject;
  metadata.annotations = { [OUT_OF_ROTATION_ANNOTATION]: annotation };
  return { ...patch, metadata };
}

/** The removal of `vmcluster` from the route as it is now. */
function freshRemoval(route: RouteRef, current: JsonObject[], vmcluster: RouteRemoval['vmcluster']): RouteRemoval {
  return computeRemoval({ route, targetRefs: current }, vmcluster);
}

function emptyRoute(route: RouteRef, vmcluster: RouteRemoval['vmcluster']): Error {
  return nonRetryable(
    FailureType.EmptyRoute,
    `refusing to edit ${routeLabel(route)}: removing VMCluster ${vmcluster.namespace}/${vmcluster.name} would leave it with no read backend`,
    { route },
  );
}

/** The routes of `removals` in edit order (the VMAuth first), each with its VMCluster. */
function removalRoutes(removals: RouteRemoval[]): Array<{ route: RouteRef; vmcluster: RouteRemoval['vmcluster'] }> {
  const all = groupByRoute(removals).map(([route, rs]) => ({ route, vmcluster: rs[0]!.vmcluster }));
  return [...all.filter((r) => r.route.kind === 'VMAuth'), ...all.filter((r) => r.route.kind !== 'VMAuth')];
}

/**
 * Takes `vmcluster` out of one route and writes the record of exactly what was taken, in one patch.
 * A route already carrying the zone's record is left alone; one where nothing is left to remove is
 * not written. Returns whether it wrote.
 */
function removeRecorded(
  kube: KubeObjects,
  namespace: string,
  route: RouteRef,
  vmcluster: RouteRemoval['vmcluster'],
  owner: RecordOwner,
  hooks: EditRoutesHooks,
): Promise<boolean> {
  const key = recordKey(owner.vmdc.uid, owner.zone);
  return rewriteRoute<boolean>(kube, namespace, route, hooks, (obj) => {
    if (!obj) throw notFound(namespace, route);
    const records = recordsOn(route, namespace, obj);
    if (records[key]) return { done: false }; // the removal landed before
    const current = routeTargetRefs(route.kind, obj);
    const removal = freshRemoval(route, current, vmcluster);
    if (removal.removed.length === 0) return { done: false };
    const desired = applyRemoval(current, removal);
    if (!hasReadBackend(desired)) throw emptyRoute(route, vmcluster);
    const record: OutOfRotationRecord = {
      vmdc: { namespace: owner.vmdc.namespace, name: owner.vmdc.name, uid: owner.vmdc.uid },
      zone: owner.zone,
      workflowId: owner.workflowId,
      generation: owner.generation,
      vmcluster: { name: vmcluster.name, namespace: vmcluster.namespace },
      removed: removal.removed,
      since: new Date().toISOString(),
    };
    return { patch: recordedPatch(route.kind, obj.metadata.resourceVersion, desired, formatRecords({ ...records, [key]: record })), result: true };
  });
}

/** What one route got back from its record. */
export interface RestoredRoute {
  route: RouteRef;
  /** The record that was deleted (undefined: the route no longer carried it, nothing written). */
  record?: OutOfRotationRecord;
  /** Whether the targetRefs changed (false: everything recorded was already there; the record was still deleted). */
  changed: boolean;
}

/** Puts back what the route's record of (uid, zone) says and deletes the record, in one patch. */
function restoreRecorded(kube: KubeObjects, namespace: string, route: RouteRef, key: string, hooks: EditRoutesHooks): Promise<RestoredRoute> {
  const untouched: RestoredRoute = { route, changed: false };
  return rewriteRoute<RestoredRoute>(kube, namespace, route, hooks, (obj) => {
    if (!obj) return { done: untouched }; // gone, and its record with it
    const records = recordsOn(route, namespace, obj);
    const record = records[key];
    if (!record) return { done: untouched }; // restored before
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

/**
 * Puts a zone of one VMDistributedCluster (by uid) back into every route of the namespace that
 * carries its record, exactly as the records say, deleting each record in the same patch. No
 * safety check: the caller decided (the workflow's rejoin, or a person's release). Throws
 * UnreadableRecordsError naming the object when an annotation cannot be read.
 */
export async function restoreRecordedZone(
  kube: KubeObjects,
  input: { namespace: string; uid: string; zone: string },
  hooks: EditRoutesHooks = {},
): Promise<RestoredRoute[]> {
  const key = recordKey(input.uid, input.zone);
  const carrying = (await listRouteRecords(kube.api, input.namespace, input.uid, LIST_TIMEOUT)).filter((r) => r.record.zone === input.zone);
  // Each route object at once; results in the listing's order.
  return settleAll(carrying, ({ route }) => restoreRecorded(kube, input.namespace, route, key, hooks));
}

/** The zones of one VMDistributedCluster recorded out of reads on the namespace's routes. */
export async function readRecords(kube: KubeObjects, input: { namespace: string; uid: string }): Promise<RecordedZone[]> {
  return recordedZones(await listRouteRecords(kube.api, input.namespace, input.uid, LIST_TIMEOUT));
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

