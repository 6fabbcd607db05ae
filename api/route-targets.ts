// What a read route's targetRefs route to, by the VictoriaMetrics operator's rules, and what taking
// one VMCluster out of a route removes. Pure: the workflow plans removals with it, the activities
// check a route keeps a backend, and a route record is verified against the live route with it
// (api/record-verification.ts).
import { applyRemoval, asObject, clone, crdOf, objectsOf } from './route-edits';
import type { JsonObject, JsonValue, NormalizedSpec } from './types';
import type { RemovedRef, RouteRef, RouteRemoval } from './route-records';
import { kindOf, readRefStorage, type StorageRef } from './storage';

// What a targetRef routes to, by the VictoriaMetrics operator's rules (v0.74.1,
// vmauth/vmusers_config.go updateCRDObjURLs): crd.name routes to a cluster only when crd.name and
// crd.namespace are both non-empty, and a crd.objects entry only by its exact name and namespace (an
// empty namespace finds nothing). Taking a zone named in crd.name out of a targetRef that also lists
// others in crd.objects empties crd.name and crd.namespace (a `crdName` removal).
const nonEmpty = (v: JsonValue | undefined): v is string => typeof v === 'string' && v !== '';

/** Whether a targetRef sends reads to objects of the ref's kind (VMCluster/vmselect for a VMCluster, VMSingle for a VMSingle). */
const routesKindOf = (tr: JsonObject, vmc: StorageRef): boolean => readRefStorage(crdOf(tr)?.kind) === kindOf(vmc);

/** Operator rule: crd.name names this object only with crd.namespace, both non-empty and equal to its. */
export function crdNameNamesCluster(crd: JsonObject | undefined, vmc: StorageRef): boolean {
  return !!crd && nonEmpty(crd.name) && nonEmpty(crd.namespace) && crd.name === vmc.name && crd.namespace === vmc.namespace;
}

/** Operator rule: a crd.objects entry names this VMCluster only by its exact name and namespace. */
export function objectNamesCluster(entry: JsonObject | undefined, vmc: StorageRef): boolean {
  return !!entry && nonEmpty(entry.name) && nonEmpty(entry.namespace) && entry.name === vmc.name && entry.namespace === vmc.namespace;
}

/** True when some targetRef of its kind still sends reads to this storage object. */
export function routeReferencesCluster(targetRefs: readonly JsonObject[], vmc: StorageRef): boolean {
  return targetRefs.some((tr) => {
    if (!routesKindOf(tr, vmc)) return false;
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
export function computeRemoval(snapshot: { route: RouteRef; targetRefs: readonly JsonObject[] }, vmc: StorageRef): RouteRemoval {
  const removed: RemovedRef[] = [];
  snapshot.targetRefs.forEach((tr, index) => {
    if (!routesKindOf(tr, vmc)) return;
    const crd = crdOf(tr)!;
    const nameIsZone = crdNameNamesCluster(crd, vmc);
    const objects = objectsOf(tr) ?? [];
    const hits = objects.map((o, j) => (objectNamesCluster(asObject(o), vmc) ? j : -1)).filter((j) => j >= 0);
    const onlyZone = (nameIsZone || !nameRoutes(crd)) && (objects.length === 0 ? nameIsZone : hits.length === objects.length);
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

/** The targetRefs of a route object (missing → []): the VMAuth's unauthorizedUserAccessSpec's, a VMUser's spec's. */
export function routeTargetRefs(kind: RouteRef['kind'], obj: Readonly<Record<string, unknown>>): JsonObject[] {
  const spec = asObject(obj.spec as JsonValue | undefined);
  const holder = kind === 'VMAuth' ? asObject(spec?.unauthorizedUserAccessSpec) : spec;
  const refs = holder?.targetRefs;
  return Array.isArray(refs) ? (refs.filter((r) => asObject(r) !== undefined) as JsonObject[]) : [];
}

/**
 * A route object's spec (an apply's patch) with `clusters` taken out of the targetRefs it sets, as
 * route edits take them out: the spec's routes name the zones a trafficMode holds out of reads, and
 * an apply must not put them back. Undefined when the route would be left with no read backend.
 */
export function specWithoutClusters(route: RouteRef, spec: JsonObject, clusters: readonly StorageRef[]): JsonObject | undefined {
  let refs = routeTargetRefs(route.kind, { spec });
  if (refs.length === 0) return spec;
  for (const vmc of clusters) refs = applyRemoval(refs, computeRemoval({ route, targetRefs: refs }, vmc));
  if (!hasReadBackend(refs)) return undefined;
  const out = clone(spec);
  if (route.kind === 'VMAuth') asObject(out.unauthorizedUserAccessSpec)!.targetRefs = refs;
  else out.targetRefs = refs;
  return out;
}

/** The read routes the spec manages: the VMAuth and every VMUser named in the spec, each once. */
export function managedRoutes(spec: NormalizedSpec): RouteRef[] {
  return [
    { kind: 'VMAuth' as const, name: spec.vmauth.name },
    ...spec.zones.filter((z) => z.vmuser).map((z) => ({ kind: 'VMUser' as const, name: z.vmuser!.name })),
  ].filter((r, i, all) => all.findIndex((x) => x.kind === r.kind && x.name === r.name) === i);
}
