// The route activities: read the routes, take a zone out of them or put it back (the route
// objects' I/O and records: kube/route-objects.ts), read the records. The patch that removes a
// zone's entries writes the record, the patch that puts them back deletes it, both under the same
// resourceVersion precondition.
//
// The route objects of one call are independent objects (each its own read-modify-write under its
// own resourceVersion): they are edited at once (settleAll), and every read around the edits is made
// at once too.
import { dataObject } from '../../api/data-object';
import { managesRoute, type RecordExpectation, type RecordListing, type RecordSpec } from '../../api/record-verification';
import { applyRemoval } from '../../api/route-edits';
import {
  formatRecords,
  recordKey,
  UnreadableRecordsError,
  OUT_OF_ROTATION_ANNOTATION,
  RELEASE_COMMAND,
  type OutOfRotationRecord,
  type RecordedZone,
  type RecordOwner,
  type RouteRef,
  type RouteRemoval,
} from '../../api/route-records';
import type { JsonObject } from '../../api/types';
import { settleAll, settled } from '../../kube/at-once';
import { vmKind, type KubeObjects } from '../../kube/custom-objects';
import { LIST_TIMEOUT, recordedPatch, recordsOn, restoreRecordedZone, rewriteRoute, routeLabel, type EditRoutesHooks } from '../../kube/route-objects';
import { listRouteRecords, recordedZones } from '../../kube/route-records';
import type { ReadRoutesInput, RouteSnapshot } from '../../workflows/activity-types';
import { FailureType } from '../../workflows/failures';
import { computeRemoval, hasReadBackend, routeTargetRefs } from '../../api/route-targets';
import { MAX_SELECTED_VMUSERS } from '../../api/label-selector';
import { selectedVmusers } from '../../kube/selected-vmusers';
import { nonRetryable } from '../errors';
import { copyRef, describeStorage } from '../../api/storage';

/** A route kept changing under every attempt: retryable (Temporal retries the whole activity with backoff). */
const routeConflict = (route: RouteRef, attempts: number): Error =>
  Object.assign(new Error(`${routeLabel(route)}: still conflicting after ${attempts} attempts`), { name: FailureType.RouteConflict });

function notFound(namespace: string, r: RouteRef) {
  return nonRetryable(FailureType.ObjectNotFound, `${routeLabel(r)} not found in namespace ${namespace}`, { route: r });
}

/**
 * The routes, read fresh: the spec's, and every VMUser of the namespace that spec.vmuserSelector
 * selects now (kube/selected-vmusers.ts).
 */
export async function readRoutes(kube: KubeObjects, input: ReadRoutesInput): Promise<RouteSnapshot[]> {
  const named = settleAll(input.routes, async (route): Promise<RouteSnapshot> => {
    const obj = await kube.get(vmKind(route.kind), input.namespace, route.name);
    if (!obj) throw notFound(input.namespace, route);
    return { route: { kind: route.kind, name: route.name }, targetRefs: routeTargetRefs(route.kind, obj) };
  });
  const selector = input.vmuserSelector;
  if (selector === undefined) return named;
  // Read at once, both awaited: neither failure is left unhandled.
  const [snaps, selected] = await Promise.all([named, selectedVmusers(kube, input.namespace, selector, input.routes)]);
  if (selected.tooMany) {
    throw nonRetryable(FailureType.SelectorTooBroad, `more than ${MAX_SELECTED_VMUSERS} VMUsers match spec.vmuserSelector ${selector}: narrow it`);
  }
  for (const { name, obj } of selected.users) snaps.push({ route: { kind: 'VMUser', name }, targetRefs: routeTargetRefs('VMUser', obj) });
  return snaps;
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

/**
 * Takes the zone of `input.record` out of the routes of `input.removals`, or puts it back, each
 * route's edit carrying its record (see the top of this file).
 */
export async function editRoutes(
  kube: KubeObjects,
  input: { namespace: string; vmauthName: string; removals: RouteRemoval[]; direction: 'remove' | 'restore'; record: RecordOwner },
  callerHooks: EditRoutesHooks = {},
  spec?: RecordSpec,
): Promise<EditRoutesResult> {
  const hooks: EditRoutesHooks = { ...callerHooks, conflict: routeConflict };
  const { namespace, record: owner } = input;
  const written: RouteRef[] = [];
  let edited: RouteRef[];
  if (input.direction === 'remove') {
    const routes = removalRoutes(input.removals);
    // Refuse before touching anything: check every route first against a fresh read (read at once).
    await settleAll(routes, async ({ route, vmcluster }) => {
      const obj = await kube.get(vmKind(route.kind), namespace, route.name);
      if (!obj) throw notFound(namespace, route);
      recordsOn(route, namespace, obj); // an annotation that cannot be read is refused here, before any edit
      if (spec && !managesRoute(spec, route, obj.metadata?.labels)) {
        throw nonRetryable(
          FailureType.NotOwned,
          `${routeLabel(route)} is not a read route of the VMDistributedCluster now (not named in its spec, and spec.vmuserSelector does not select its labels)`,
        );
      }
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
    const restored = await restoreRecordedZone(kube, { namespace, uid: owner.vmdc.uid, spec }, owner.zone, hooks);
    for (const r of restored) if (r.record) written.push(r.route);
    // A record of the zone that is not acted on may be what holds it out of that route: the zone
    // is not reported back in reads (its status keeps it out); a person looks at the record.
    const refused = restored.filter((r) => r.refused);
    if (refused.length > 0) {
      throw nonRetryable(
        FailureType.RecordsUnreadable,
        `zone ${owner.zone} not put back on ${refused.map((r) => `${routeLabel(r.route)} (${r.refused})`).join('; ')}: it may still be out of reads there; look at the record, then ${RELEASE_COMMAND}`,
      );
    }
    edited = [...restored.map((r) => r.route), ...input.removals.map((r) => r.route)];
  }
  // Both read after every edit settled, at once; an unreadable record is reported before a missing route.
  const [recordedRead, gensRead] = await Promise.allSettled([
    readRecords(kube, { namespace, uid: owner.vmdc.uid, spec }),
    generations(kube, namespace, input.vmauthName, edited, { skipMissingVMUsers: input.direction === 'restore' }),
  ]);
  const recorded = recordedZones(settled(recordedRead).verified);
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
  const [vmauthGeneration, ...userGenerations] = await settleAll(
    [{ kind: 'VMAuth' as const, name: vmauthName }, ...users.map((name) => ({ kind: 'VMUser' as const, name }))],
    (route) => generationOf(route, route.kind === 'VMUser' && opts.skipMissingVMUsers ? 'skip' : undefined),
    { failureOrder: (i) => (i === 0 ? Number.MAX_SAFE_INTEGER : i) },
  );
  const vmuserGenerations = dataObject<number>();
  users.forEach((name, i) => {
    const g = userGenerations[i];
    if (g !== undefined) vmuserGenerations[name] = g;
  });
  return { vmauthGeneration: vmauthGeneration!, vmuserGenerations };
}

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

/** The removal of `vmcluster` from the route as it is now. */
function freshRemoval(route: RouteRef, current: JsonObject[], vmcluster: RouteRemoval['vmcluster']): RouteRemoval {
  return computeRemoval({ route, targetRefs: current }, vmcluster);
}

function emptyRoute(route: RouteRef, vmcluster: RouteRemoval['vmcluster']): Error {
  return nonRetryable(
    FailureType.EmptyRoute,
    `refusing to edit ${routeLabel(route)}: removing ${describeStorage(vmcluster)} would leave it with no read backend`,
    { route },
  );
}

/** The routes of `removals` in edit order (the VMAuth first), each with its zone's storage. */
function removalRoutes(removals: RouteRemoval[]): Array<{ route: RouteRef; vmcluster: RouteRemoval['vmcluster'] }> {
  const all = groupByRoute(removals).map(([route, rs]) => ({ route, vmcluster: rs[0]!.vmcluster }));
  return [...all.filter((r) => r.route.kind === 'VMAuth'), ...all.filter((r) => r.route.kind !== 'VMAuth')];
}

/**
 * Takes `vmcluster` out of one route and writes the record of exactly what was taken, in one patch.
 * A route where nothing is left to remove is not written (the removal landed before). A record of
 * the zone already there while the route still sends the cluster reads claims what is not so
 * (forged, or the zone put back by hand): it is replaced by the record of this removal. Returns
 * whether it wrote.
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
  return rewriteRoute<boolean>(kube, namespace, route, owner.vmdc.uid, hooks, (obj) => {
    if (!obj) throw notFound(namespace, route);
    const records = recordsOn(route, namespace, obj);
    const current = routeTargetRefs(route.kind, obj);
    const removal = freshRemoval(route, current, vmcluster);
    if (removal.removed.length === 0) return { done: false };
    const desired = applyRemoval(current, removal);
    if (!hasReadBackend(desired)) throw emptyRoute(route, vmcluster);
    const record: OutOfRotationRecord = {
      vmdc: { namespace: owner.vmdc.namespace, name: owner.vmdc.name, uid: owner.vmdc.uid },
      route: { kind: route.kind, name: route.name, uid: obj.metadata.uid ?? '' },
      zone: owner.zone,
      workflowId: owner.workflowId,
      generation: owner.generation,
      vmcluster: copyRef(vmcluster),
      removed: removal.removed,
      since: new Date().toISOString(),
    };
    return { patch: recordedPatch(route.kind, obj.metadata.resourceVersion, desired, formatRecords({ ...records, [key]: record })), result: true };
  });
}

/** The records of one VMDistributedCluster on the namespace's routes: verified, and not (api/record-verification.ts). */
export function readRecords(kube: KubeObjects, expect: RecordExpectation): Promise<RecordListing> {
  return listRouteRecords(kube.api, expect.namespace, expect, LIST_TIMEOUT);
}
