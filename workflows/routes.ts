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

// What a targetRef routes to, by the VictoriaMetrics operator's rules (v0.74.1,
// vmauth/vmusers_config.go updateCRDObjURLs): crd.name routes to a cluster only when crd.name and
// crd.namespace are both non-empty, and a crd.objects entry only by its exact name and namespace (an
// empty namespace finds nothing). Taking a zone named in crd.name out of a targetRef that also lists
// others in crd.objects empties crd.name and crd.namespace (a `crdName` removal).
const nonEmpty = (v: JsonValue | undefined): v is string => typeof v === 'string' && v !== '';

/** Operator rule: crd.name names this VMCluster only with crd.namespace, both non-empty and equal to the cluster's. */
export function crdNameNamesCluster(crd: JsonObject | undefined, vmc: VMClusterRef): boolean {
  return !!crd && nonEmpty(crd.name) && nonEmpty(crd.namespace) && crd.name === vmc.name && crd.namespace === vmc.namespace;
}

/** Operator rule: a crd.objects entry names this VMCluster only by its exact name and namespace. */
export function objectNamesCluster(entry: JsonObject | undefined, vmc: VMClusterRef): boolean {
  return !!entry && nonEmpty(entry.name) && nonEmpty(entry.namespace) && entry.name === vmc.name && entry.namespace === vmc.namespace;
}

/** True when some VMCluster/vmselect targetRef still sends reads to this VMCluster. */
export function routeReferencesCluster(targetRefs: readonly JsonObject[], vmc: VMClusterRef): boolean {
  return targetRefs.some((tr) => {
    if (!isVmselect(tr)) return false;
    const crd = crdOf(tr)!;
    if (crdNameNamesCluster(crd, vmc)) return true;
    return (objectsOf(tr) ?? []).some((o) => objectNamesCluster(asObject(o), vmc));
  });
}

// An array, not a Set: this module is shared frozen between workflows (process/workflow-bundle.ts).
const NON_READ_KINDS: readonly string[] = ['VMCluster/vminsert', 'VMAgent'];

/** Whether crd.name (with crd.namespace) routes anywhere. */
const nameRoutes = (crd: JsonObject): boolean => nonEmpty(crd.name) && nonEmpty(crd.namespace);

/**
 * Whether a route still has at least one backend that can serve reads: a crd counts only with a
 * routing crd.name (name and namespace non-empty) or a non-empty crd.objects.
 */
export function hasReadBackend(targetRefs: readonly JsonObject[]): boolean {
  return targetRefs.some((tr) => {
    const st = asObject(tr.static);
    if (st) {
      const urls = st.urls;
      return (typeof st.url === 'string' && st.url !== '') || (Array.isArray(urls) && urls.length > 0);
    }
    const crd = crdOf(tr);
    if (!crd) return false;
    if (typeof crd.kind !== 'string' || NON_READ_KINDS.includes(crd.kind)) return false;
    return nameRoutes(crd) || (objectsOf(tr)?.length ?? 0) > 0;
  });
}

/**
 * What taking `vmc` out of one route removes: every VMCluster/vmselect targetRef naming only this
 * cluster (crd.name, or crd.objects whose entries all name it) as a whole, and this cluster's
 * entries of crd.objects of the others. A crd.name naming this cluster in a targetRef that routes
 * elsewhere too is emptied (a `crdName` entry). Does not check emptiness (see computeRemovals).
 */
export function computeRemoval(snapshot: RouteSnapshot, vmc: VMClusterRef): RouteRemoval {
  const removed: RemovedRef[] = [];
  snapshot.targetRefs.forEach((tr, index) => {
    if (!isVmselect(tr)) return;
    const crd = crdOf(tr)!;
    const nameIsZone = crdNameNamesCluster(crd, vmc);
    const objects = objectsOf(tr) ?? [];
    const hits = objects.map((o, j) => (objectNamesCluster(asObject(o), vmc) ? j : -1)).filter((j) => j >= 0);
    const onlyZone =
      (nameIsZone || !nameRoutes(crd)) && (objects.length === 0 ? nameIsZone : hits.length === objects.length);
    if (onlyZone) {
      removed.push({ type: 'targetRef', index, targetRef: clone(tr) });
      return;
    }
    if (nameIsZone) {
      removed.push({ type: 'crdName', index, name: crd.name as string, namespace: crd.namespace as string, targetRef: clone(tr) });
    }
    for (const objectIndex of hits) {
      removed.push({ type: 'object', index, objectIndex, object: clone(objects[objectIndex]!), targetRef: clone(tr) });
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

type CrdNameRef = Extract<RemovedRef, { type: 'crdName' }>;

/** Whether this targetRef's crd.name/crd.namespace are exactly the recorded ones. */
function hasCrdName(tr: JsonObject, r: CrdNameRef): boolean {
  const crd = crdOf(tr);
  return isVmselect(tr) && crd!.name === r.name && crd!.namespace === r.namespace;
}

/** A targetRef whose crd.name/crd.namespace a `crdName` removal emptied. */
function isBlanked(tr: JsonObject): boolean {
  const crd = crdOf(tr);
  return isVmselect(tr) && crd!.name === '' && crd!.namespace === '';
}

/**
 * Take the recorded entries out of `targetRefs` (a fresh read). Matches by content, preferring the
 * recorded positions, so it is idempotent (a second application finds nothing to remove) and keeps
 * whatever else the user changed. Returns a new array; the input is not mutated.
 */
export function applyRemoval(targetRefs: readonly JsonObject[], removal: Pick<RouteRemoval, 'removed'>): JsonObject[] {
  const out = clone(targetRefs) as JsonObject[];
  // crd.objects entries first, then crd.name: neither changes targetRefs' length, so indices stay valid.
  for (const r of removal.removed) {
    if (r.type !== 'object') continue;
    const ci = findNear(out, r.index, (tr) => isVmselect(tr) && (objectsOf(tr) ?? []).some((o) => jsonEqual(o, r.object)));
    if (ci < 0) continue;
    const objs = objectsOf(out[ci])!;
    const oi = findNear(objs, r.objectIndex, (o) => jsonEqual(o, r.object));
    objs.splice(oi, 1);
  }
  for (const r of removal.removed) {
    if (r.type !== 'crdName') continue;
    // The container as recorded less its removed objects, else any targetRef naming the zone there.
    const expected = withoutRemovedObjects(r.targetRef, removal.removed, r.index);
    let ci = findNear(out, r.index, (tr) => jsonEqual(tr, expected));
    if (ci < 0) ci = findNear(out, r.index, (tr) => hasCrdName(tr, r));
    if (ci < 0) continue;
    const crd = crdOf(out[ci])!;
    crd.name = '';
    crd.namespace = ''; // both keys kept: the operator's schema requires them
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

/** Puts back the crd.name/crd.namespace a `crdName` removal emptied (see undoRemoval). */
function undoCrdName(out: JsonObject[], r: CrdNameRef, removed: readonly RemovedRef[]): void {
  const here = out[r.index];
  if (here && hasCrdName(here, r)) return; // already restored
  // What the container looks like right after the removal (its objects entries of this removal taken out too).
  const remainder = withoutRemovedObjects(r.targetRef, removed, r.index);
  const rc = crdOf(remainder);
  if (rc) {
    rc.name = '';
    rc.namespace = '';
  }
  let ci = -1;
  if (here && isBlanked(here) && jsonEqual(here, remainder)) ci = r.index;
  if (ci < 0) ci = findNear(out, r.index, (tr) => isBlanked(tr) && jsonEqual(tr, remainder));
  // Restored before, and moved since (the container as it was, objects put back or not).
  const restored = withoutRemovedObjects(r.targetRef, removed, r.index);
  if (ci < 0 && findNear(out, r.index, (tr) => jsonEqual(tr, restored) || jsonEqual(tr, r.targetRef)) >= 0) return;
  if (ci < 0 && here && isBlanked(here)) ci = r.index; // changed in place by the user
  if (ci < 0) {
    // The container is gone (or names something else now): the cluster back in a targetRef of its own.
    const base = clone(r.targetRef);
    const crd = crdOf(base)!;
    crd.objects = [];
    out.splice(Math.min(r.index, out.length), 0, base);
    return;
  }
  const crd = crdOf(out[ci])!;
  crd.name = r.name;
  crd.namespace = r.namespace;
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
  // crd.name before crd.objects: an object entry finds its container as it was, crd.name included.
  const names = removal.removed.filter((r): r is CrdNameRef => r.type === 'crdName').sort((a, b) => a.index - b.index);
  for (const r of names) undoCrdName(out, r, removal.removed);
  const objs = removal.removed
    .filter((r): r is Extract<RemovedRef, { type: 'object' }> => r.type === 'object')
    .sort((a, b) => a.index - b.index || a.objectIndex - b.objectIndex);
  for (const r of objs) {
    const isContainer = (tr: JsonObject) => isVmselect(tr) && objectsOf(tr) !== undefined;
    const remainder = r.targetRef ? withoutRemovedObjects(r.targetRef, removal.removed, r.index) : undefined;
    let ci = -1;
    // already restored? (as many equal entries as were removed from this container)
    const here = out[r.index];
    const count = (tr: JsonObject) => objectsOf(tr)!.filter((o) => jsonEqual(o, r.object)).length;
    const needed = objs.filter((o) => o.index === r.index && jsonEqual(o.object, r.object)).length;
    if (here && isContainer(here) && count(here) >= needed) continue;
    if (here && isContainer(here) && (!remainder || jsonEqual(here, remainder))) ci = r.index;
    if (ci < 0 && remainder) ci = findNear(out, r.index, (tr) => isContainer(tr) && jsonEqual(tr, remainder));
    if (ci < 0 && findNear(out, r.index, (tr) => isContainer(tr) && count(tr) >= needed) >= 0) continue;
    if (ci < 0 && here && isContainer(here)) ci = r.index;
    if (ci < 0) {
      // The container is gone: put the cluster back in a targetRef of its own, routing to it alone
      // (crd.name and crd.namespace "", as the operator's CRD requires them).
      const base = r.targetRef ? clone(r.targetRef) : { crd: { kind: VMSELECT_KIND } };
      const crd = crdOf(base)!;
      crd.name = '';
      crd.namespace = '';
      crd.objects = [clone(r.object)];
      out.splice(Math.min(r.index, out.length), 0, base);
      continue;
    }
    const list = objectsOf(out[ci])!;
    list.splice(Math.min(r.objectIndex, list.length), 0, clone(r.object));
  }
  return out;
}
