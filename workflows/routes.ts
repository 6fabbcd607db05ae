// Read-route editing: which targetRefs take a zone out of reads, and the exact, idempotent
// transforms that remove and restore them. Pure: the workflow computes removals with it, and the
// activities import applyRemoval / undoRemoval / hasReadBackend for the actual edit.
import type { JsonObject, JsonValue } from '../api/types';
import type { RemovedRef, RouteRef, RouteRemoval } from '../api/route-records';
import type { RouteSnapshot } from './activity-types';
import { FailureType } from './failures';
import { jsonEqual } from './merge';

export const VMSELECT_KIND = 'VMCluster/vmselect';

export interface VMClusterRef {
  name: string;
  namespace: string;
}

/** The zone cannot be taken out of reads as the routes are: nothing may be edited. */
export abstract class RoutePlanError extends Error {
  abstract readonly type: FailureType;
}

/** Removing a zone would leave these routes with no read backend. */
export class EmptyRouteError extends RoutePlanError {
  override readonly name = 'EmptyRouteError';
  readonly type = FailureType.EmptyRoute;
  constructor(readonly routes: RouteRef[], readonly vmcluster: VMClusterRef) {
    super(
      `removing VMCluster ${vmcluster.namespace}/${vmcluster.name} from reads would leave ` +
        routes.map((r) => `${r.kind} ${r.name}`).join(', ') +
        ' with no backend',
    );
  }
}

/** A targetRef names the zone in a way vmrollout cannot take apart (crd.name is the zone AND crd.objects lists others). */
export class RouteShapeError extends RoutePlanError {
  override readonly name = 'RouteShapeError';
  readonly type = FailureType.RouteShape;
  constructor(readonly route: RouteRef, readonly index: number, readonly vmcluster: VMClusterRef) {
    super(
      `${route.kind} ${route.name} targetRefs[${index}] names VMCluster ${vmcluster.name} in crd.name and other ` +
        'clusters in crd.objects; split it into separate targetRefs',
    );
  }
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function asObject(v: JsonValue | undefined): JsonObject | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
}

function crdOf(tr: JsonObject | undefined): JsonObject | undefined {
  return asObject(tr?.crd);
}

function isVmselect(tr: JsonObject | undefined): boolean {
  return crdOf(tr)?.kind === VMSELECT_KIND;
}

function objectsOf(tr: JsonObject | undefined): JsonObject[] | undefined {
  const o = crdOf(tr)?.objects;
  return Array.isArray(o) ? (o as JsonObject[]) : undefined;
}

/** `{name, namespace?}` names this VMCluster; a missing namespace means the route's (= the object's) namespace. */
export function namesCluster(entry: JsonObject | undefined, vmc: VMClusterRef): boolean {
  if (!entry || entry.name !== vmc.name) return false;
  const ns = entry.namespace;
  return ns === undefined || ns === null || ns === '' || ns === vmc.namespace;
}

/** True when some VMCluster/vmselect targetRef still sends reads to this VMCluster. */
export function routeReferencesCluster(targetRefs: readonly JsonObject[], vmc: VMClusterRef): boolean {
  return targetRefs.some((tr) => {
    if (!isVmselect(tr)) return false;
    const crd = crdOf(tr)!;
    if (namesCluster(crd, vmc)) return true;
    return (objectsOf(tr) ?? []).some((o) => namesCluster(asObject(o), vmc));
  });
}

const NON_READ_KINDS = new Set(['VMCluster/vminsert', 'VMAgent']);

/** Whether a route still has at least one backend that can serve reads. */
export function hasReadBackend(targetRefs: readonly JsonObject[]): boolean {
  return targetRefs.some((tr) => {
    const st = asObject(tr.static);
    if (st) {
      const urls = st.urls;
      return (typeof st.url === 'string' && st.url !== '') || (Array.isArray(urls) && urls.length > 0);
    }
    const crd = crdOf(tr);
    if (!crd) return false;
    if (crd.kind === VMSELECT_KIND) return (typeof crd.name === 'string' && crd.name !== '') || (objectsOf(tr)?.length ?? 0) > 0;
    return typeof crd.kind === 'string' && !NON_READ_KINDS.has(crd.kind);
  });
}

/**
 * What taking `vmc` out of one route removes: every VMCluster/vmselect targetRef naming only this
 * cluster (crd.name, or crd.objects whose entries all name it) as a whole, and this cluster's
 * entries of crd.objects of the others. Does not check emptiness (see computeRemovals).
 */
export function computeRemoval(snapshot: RouteSnapshot, vmc: VMClusterRef): RouteRemoval {
  const removed: RemovedRef[] = [];
  snapshot.targetRefs.forEach((tr, index) => {
    if (!isVmselect(tr)) return;
    const crd = crdOf(tr)!;
    const hasName = typeof crd.name === 'string' && crd.name !== '';
    const nameIsZone = hasName && namesCluster(crd, vmc);
    const objects = objectsOf(tr) ?? [];
    const hits = objects.map((o, j) => (namesCluster(asObject(o), vmc) ? j : -1)).filter((j) => j >= 0);
    const onlyZone =
      (nameIsZone || !hasName) && (objects.length === 0 ? nameIsZone : hits.length === objects.length);
    if (onlyZone) {
      removed.push({ type: 'targetRef', index, targetRef: clone(tr) });
    } else if (nameIsZone) {
      throw new RouteShapeError(snapshot.route, index, vmc);
    } else {
      for (const objectIndex of hits) {
        removed.push({ type: 'object', index, objectIndex, object: clone(objects[objectIndex]!), targetRef: clone(tr) });
      }
    }
  });
  return { route: snapshot.route, vmcluster: { ...vmc }, removed };
}

/**
 * The removals that take `vmc` out of every route (routes not referencing it are left out).
 * Throws EmptyRouteError when any route would be left with no read backend (nothing is edited then).
 */
export function computeRemovals(snapshots: readonly RouteSnapshot[], vmc: VMClusterRef): RouteRemoval[] {
  const out: RouteRemoval[] = [];
  const empty: RouteRef[] = [];
  for (const snap of snapshots) {
    const r = computeRemoval(snap, vmc);
    if (r.removed.length === 0) continue;
    if (!hasReadBackend(applyRemoval(snap.targetRefs, r))) empty.push(snap.route);
    out.push(r);
  }
  if (empty.length > 0) throw new EmptyRouteError(empty, vmc);
  return out;
}

/** Indices ordered by distance from `near` (ties: lower first). */
function byDistance(n: number, near: number): number[] {
  return Array.from({ length: n }, (_, i) => i).sort((a, b) => Math.abs(a - near) - Math.abs(b - near) || a - b);
}

function findNear<T>(arr: readonly T[], near: number, pred: (x: T) => boolean): number {
  for (const i of byDistance(arr.length, near)) if (pred(arr[i]!)) return i;
  return -1;
}

/**
 * Take the recorded entries out of `targetRefs` (a fresh read). Matches by content, preferring the
 * recorded positions, so it is idempotent (a second application finds nothing to remove) and keeps
 * whatever else the user changed. Returns a new array; the input is not mutated.
 */
export function applyRemoval(targetRefs: readonly JsonObject[], removal: Pick<RouteRemoval, 'removed'>): JsonObject[] {
  const out = clone(targetRefs) as JsonObject[];
  // crd.objects entries first: they do not change targetRefs' length, so indices stay valid.
  for (const r of removal.removed) {
    if (r.type !== 'object') continue;
    const ci = findNear(out, r.index, (tr) => isVmselect(tr) && (objectsOf(tr) ?? []).some((o) => jsonEqual(o, r.object)));
    if (ci < 0) continue;
    const objs = objectsOf(out[ci])!;
    const oi = findNear(objs, r.objectIndex, (o) => jsonEqual(o, r.object));
    objs.splice(oi, 1);
  }
  const whole = removal.removed
    .filter((r): r is Extract<RemovedRef, { type: 'targetRef' }> => r.type === 'targetRef')
    .sort((a, b) => b.index - a.index);
  for (const r of whole) {
    const i = findNear(out, r.index, (tr) => jsonEqual(tr, r.targetRef));
    if (i >= 0) out.splice(i, 1);
  }
  return out;
}

function withoutRemovedObjects(container: JsonObject, removed: readonly RemovedRef[], index: number): JsonObject {
  const c = clone(container);
  const objs = objectsOf(c);
  if (!objs) return c;
  const drop = removed
    .filter((r): r is Extract<RemovedRef, { type: 'object' }> => r.type === 'object' && r.index === index)
    .map((r) => r.objectIndex)
    .sort((a, b) => b - a);
  for (const j of drop) objs.splice(j, 1);
  return c;
}

/**
 * Put back exactly what `removal` took out, at the recorded positions (clamped), into `targetRefs`
 * (a fresh read). Idempotent: entries already present are not added twice. Anything the user added
 * or changed meanwhile is kept. Returns a new array; the input is not mutated.
 */
export function undoRemoval(targetRefs: readonly JsonObject[], removal: Pick<RouteRemoval, 'removed'>): JsonObject[] {
  const out = clone(targetRefs) as JsonObject[];
  const whole = removal.removed
    .filter((r): r is Extract<RemovedRef, { type: 'targetRef' }> => r.type === 'targetRef')
    .sort((a, b) => a.index - b.index);
  for (const r of whole) {
    const needed = whole.filter((w) => jsonEqual(w.targetRef, r.targetRef)).length;
    const present = out.filter((tr) => jsonEqual(tr, r.targetRef)).length;
    if (present >= needed) continue;
    out.splice(Math.min(r.index, out.length), 0, clone(r.targetRef));
  }
  const objs = removal.removed
    .filter((r): r is Extract<RemovedRef, { type: 'object' }> => r.type === 'object')
    .sort((a, b) => a.index - b.index || a.objectIndex - b.objectIndex);
  for (const r of objs) {
    const isContainer = (tr: JsonObject) => isVmselect(tr) && objectsOf(tr) !== undefined;
    const contains = (tr: JsonObject) => isContainer(tr) && objectsOf(tr)!.some((o) => jsonEqual(o, r.object));
    const remainder = r.targetRef ? withoutRemovedObjects(r.targetRef, removal.removed, r.index) : undefined;
    let ci = -1;
    // already restored?
    const here = out[r.index];
    if (here && contains(here)) continue;
    if (here && isContainer(here) && (!remainder || jsonEqual(here, remainder))) ci = r.index;
    if (ci < 0 && remainder) ci = findNear(out, r.index, (tr) => isContainer(tr) && jsonEqual(tr, remainder));
    if (ci < 0 && findNear(out, r.index, contains) >= 0) continue;
    if (ci < 0 && here && isContainer(here)) ci = r.index;
    if (ci < 0) {
      // The container is gone: put the cluster back in a targetRef of its own.
      const base = r.targetRef ? clone(r.targetRef) : { crd: { kind: VMSELECT_KIND } };
      const crd = crdOf(base)!;
      crd.objects = [clone(r.object)];
      out.splice(Math.min(r.index, out.length), 0, base);
      continue;
    }
    const list = objectsOf(out[ci])!;
    list.splice(Math.min(r.objectIndex, list.length), 0, clone(r.object));
  }
  return out;
}
