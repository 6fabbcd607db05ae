// The exact, idempotent edits of a read route's targetRefs that a route record (api/route-records.ts)
// describes: take the recorded entries out (applyRemoval), put them back (undoRemoval). Pure: the
// workflow, the activities and `kubectl vmdc release-zone` (kube/route-objects.ts) share them.
import { jsonEqual } from './json-value';
import type { RemovedRef, RouteRemoval } from './route-records';
import { READ_REF_KINDS, STORAGE } from './storage';
import type { JsonObject, JsonValue } from './types';

export function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

export function asObject(v: JsonValue | undefined): JsonObject | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
}

export function crdOf(tr: JsonObject | undefined): JsonObject | undefined {
  return asObject(tr?.crd);
}

/** A targetRef sending reads to a zone's storage (VMCluster/vmselect or VMSingle). */
export function isReadRef(tr: JsonObject | undefined): boolean {
  return READ_REF_KINDS.includes(crdOf(tr)?.kind as string);
}

/** Both read refs of the same kind: a recorded entry goes back only into a targetRef of its own kind. */
const sameKind = (tr: JsonObject, recorded: JsonObject | undefined): boolean =>
  isReadRef(tr) && crdOf(tr)!.kind === (crdOf(recorded)?.kind ?? STORAGE.VMCluster.readRefKind);

export function objectsOf(tr: JsonObject | undefined): JsonObject[] | undefined {
  const o = crdOf(tr)?.objects;
  return Array.isArray(o) ? (o as JsonObject[]) : undefined;
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
  return sameKind(tr, r.targetRef) && crd!.name === r.name && crd!.namespace === r.namespace;
}

/** A targetRef whose crd.name/crd.namespace a `crdName` removal emptied. */
function isBlanked(tr: JsonObject, r: CrdNameRef): boolean {
  const crd = crdOf(tr);
  return sameKind(tr, r.targetRef) && crd!.name === '' && crd!.namespace === '';
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
    const ci = findNear(out, r.index, (tr) => sameKind(tr, r.targetRef) && (objectsOf(tr) ?? []).some((o) => jsonEqual(o, r.object)));
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
  const whole = removal.removed.filter((r): r is Extract<RemovedRef, { type: 'targetRef' }> => r.type === 'targetRef').sort((a, b) => b.index - a.index);
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
  if (here && isBlanked(here, r) && jsonEqual(here, remainder)) ci = r.index;
  if (ci < 0) ci = findNear(out, r.index, (tr) => isBlanked(tr, r) && jsonEqual(tr, remainder));
  // Restored before, and moved since (the container as it was, objects put back or not).
  const restored = withoutRemovedObjects(r.targetRef, removed, r.index);
  if (ci < 0 && findNear(out, r.index, (tr) => jsonEqual(tr, restored) || jsonEqual(tr, r.targetRef)) >= 0) return;
  if (ci < 0 && here && isBlanked(here, r)) ci = r.index; // changed in place by the user
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
  const whole = removal.removed.filter((r): r is Extract<RemovedRef, { type: 'targetRef' }> => r.type === 'targetRef').sort((a, b) => a.index - b.index);
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
    const isContainer = (tr: JsonObject) => sameKind(tr, r.targetRef) && objectsOf(tr) !== undefined;
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
      const base = r.targetRef ? clone(r.targetRef) : { crd: { kind: STORAGE.VMCluster.readRefKind } };
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
