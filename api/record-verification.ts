// Route records are claims, not commands. Anyone who may write a VMUser's or VMAuth's annotations
// can write an out-of-rotation record (api/route-records.ts), and acting on one uses vmrollout's
// rights: adopting it upgrades the zone it names, restoring it writes the targetRefs it holds. So
// a record counts only when it is bound to the VMDistributedCluster it names (uid), to the object
// carrying it (kind, name, uid), puts back nothing but references to its own VMCluster of that
// namespace, and, to be adopted, says what the live route shows: its VMCluster is missing there,
// on a route the VMDistributedCluster manages, for a zone of its spec with that VMCluster. A record
// that fails is reported (docs/security.md#route-records-are-claims) and never acted on; it fails
// no rollout. Pure.
import { selects } from './label-selector';
import { crdOf } from './route-edits';
import { parseRecords, UnreadableRecordsError, type OutOfRotationRecord, type RecordedRoute, type RemovedRef, type RouteRef } from './route-records';
import { computeRemoval, crdNameNamesCluster, managedRoutes, objectNamesCluster } from './route-targets';
import { describeStorage, kindOf, STORAGE, storageRef, type StorageKind, type StorageRef } from './storage';
import { validateSpec } from './validate';
import type { JsonObject } from './types';

/** A route object as read now: what it is, its targetRefs and its records annotation (raw). */
export interface RouteObjectView {
  route: RouteRef;
  uid: string;
  namespace: string;
  targetRefs: readonly JsonObject[];
  annotation: string | undefined;
  /** metadata.labels as read (any shape: others' input). */
  labels?: unknown;
}

/** The VMDistributedCluster records are checked for; `spec` while the object exists. */
export interface RecordExpectation {
  namespace: string;
  uid: string;
  spec?: RecordSpec;
}

/** What of a VMDistributedCluster's spec a record is checked against. */
export interface RecordSpec {
  zones: ReadonlyArray<{ name: string; storage: StorageRef }>;
  /** The routes it names (its VMAuth, its zones' VMUsers). */
  routes: readonly RouteRef[];
  /** spec.vmuserSelector: the VMUsers whose labels match are managed too. */
  vmuserSelector?: string;
}

/** Whether the spec manages the route: one it names, or a VMUser whose labels spec.vmuserSelector selects. */
export function managesRoute(spec: RecordSpec, route: RouteRef, labels: unknown): boolean {
  if (spec.routes.some((m) => sameRoute(m, route))) return true;
  return route.kind === 'VMUser' && spec.vmuserSelector !== undefined && selects(spec.vmuserSelector, labels);
}

/** A record (or an annotation) that is not acted on, and why. */
export interface UnverifiedRecord {
  route: RouteRef;
  zone?: string;
  reason: string;
}

export interface RecordListing {
  verified: RecordedRoute[];
  unverified: UnverifiedRecord[];
}

/**
 * The expectation for the records of `uid` in `namespace`, given the VMDistributedCluster read now
 * (`live`, undefined when gone): while it is that uid with a valid spec, its spec counts too (a
 * record only on a route it manages, for its zone's own VMCluster); otherwise only each record's
 * bindings and the live route (its cleanup, a person's release, once it is gone).
 */
export function recordExpectation(namespace: string, uid: string, live: { metadata?: { uid?: unknown }; spec?: unknown } | undefined): RecordExpectation {
  const expect: RecordExpectation = { namespace, uid };
  if (!live || live.metadata?.uid !== uid) return expect;
  const v = validateSpec(live.spec);
  if (!v.success) return expect;
  return {
    ...expect,
    spec: {
      zones: v.spec.zones.map((z) => ({ name: z.name, storage: storageRef(z, namespace) })),
      routes: managedRoutes(v.spec),
      ...(v.spec.vmuserSelector !== undefined ? { vmuserSelector: v.spec.vmuserSelector } : {}),
    },
  };
}

const sameRoute = (a: RouteRef, b: RouteRef): boolean => a.kind === b.kind && a.name === b.name;

/** Why `targetRef` could route anywhere but `vmc` once put back (undefined: it cannot). */
function containerIssue(targetRef: JsonObject | undefined, vmc: StorageRef, what: string): string | undefined {
  if (targetRef === undefined) return undefined;
  const kind: StorageKind = kindOf(vmc);
  if (crdOf(targetRef)?.kind !== STORAGE[kind].readRefKind) return `${what} is not a ${STORAGE[kind].readRefKind} reference`;
  if ('static' in targetRef) return `${what} carries a static URL`;
  return undefined;
}

const OBJECT_KEYS: readonly string[] = ['name', 'namespace'];

/** Why putting `r` back could route reads anywhere but `vmc` (undefined: it routes only there). */
function removedIssue(r: RemovedRef, vmc: StorageRef): string | undefined {
  const at = `removed targetRefs[${r.index}]`;
  switch (r.type) {
    case 'targetRef': {
      const only = computeRemoval({ route: { kind: 'VMUser', name: '' }, targetRefs: [r.targetRef] }, vmc).removed;
      if (only.length !== 1 || only[0]!.type !== 'targetRef') return `${at} routes elsewhere than ${describeStorage(vmc)}`;
      return containerIssue(r.targetRef, vmc, at);
    }
    case 'object':
      if (!objectNamesCluster(r.object, vmc) || Object.keys(r.object).some((k) => !OBJECT_KEYS.includes(k))) {
        return `${at}.crd.objects[${r.objectIndex}] is not exactly ${describeStorage(vmc)}`;
      }
      return containerIssue(r.targetRef, vmc, at);
    case 'crdName':
      if (r.name !== vmc.name || r.namespace !== vmc.namespace || !crdNameNamesCluster(crdOf(r.targetRef), vmc)) {
        return `${at}.crd names another ${kindOf(vmc)} than ${describeStorage(vmc)}`;
      }
      return containerIssue(r.targetRef, vmc, at);
  }
}

/**
 * Why the record may not be put back by the VMDistributedCluster of `expect.uid` (undefined: it
 * may): it must name that uid and the object carrying it, what it holds must route only to its own
 * VMCluster in the route's namespace, and, with the spec, that is its zone's VMCluster. What a
 * restore (the workflow's rejoin, a person's release) checks: it may restore a record whose zone is
 * back in reads already (nothing is added then), or on a route the spec no longer manages.
 */
export function restoreIssue(
  record: OutOfRotationRecord,
  carrier: Pick<RouteObjectView, 'route' | 'uid' | 'namespace'>,
  expect: RecordExpectation,
): string | undefined {
  const { uid } = expect;
  if (record.vmdc.uid !== uid) return `names VMDistributedCluster uid ${record.vmdc.uid}, not ${uid}`;
  if (record.vmdc.namespace !== carrier.namespace) return `names a VMDistributedCluster of namespace ${record.vmdc.namespace}, not ${carrier.namespace}`;
  const r = record.route;
  if (r.kind !== carrier.route.kind || r.name !== carrier.route.name || r.uid !== carrier.uid) {
    return `was written for ${r.kind} ${r.name} (uid ${r.uid}), not this ${carrier.route.kind} ${carrier.route.name} (uid ${carrier.uid})`;
  }
  if (record.vmcluster.namespace !== carrier.namespace) return `names ${describeStorage(record.vmcluster)} of another namespace`;
  for (const removed of record.removed) {
    const issue = removedIssue(removed, record.vmcluster);
    if (issue) return issue;
  }
  const zone = expect.spec?.zones.find((z) => z.name === record.zone);
  if (zone && (zone.storage.name !== record.vmcluster.name || kindOf(zone.storage) !== kindOf(record.vmcluster)))
    return `names ${kindOf(record.vmcluster)} ${record.vmcluster.name}, but zone ${record.zone} is ${kindOf(zone.storage)} ${zone.storage.name}`;
  return undefined;
}

/**
 * Why the record may not be adopted as a zone out of reads (undefined: it may): restoreIssue, and
 * the live route must not route to its VMCluster (what it says was removed is missing); with the
 * spec, the route is one it manages.
 */
export function adoptionIssue(record: OutOfRotationRecord, carrier: RouteObjectView, expect: RecordExpectation): string | undefined {
  const issue = restoreIssue(record, carrier, expect);
  if (issue) return issue;
  if (computeRemoval({ route: carrier.route, targetRefs: carrier.targetRefs }, record.vmcluster).removed.length > 0) {
    return `says ${kindOf(record.vmcluster)} ${record.vmcluster.name} was taken out, but the route still sends it reads`;
  }
  if (expect.spec && !managesRoute(expect.spec, carrier.route, carrier.labels)) return `is on a route its VMDistributedCluster does not manage`;
  return undefined;
}

/**
 * The records of `expect.uid` on these route objects, each verified (adoptionIssue): those that
 * pass, and what does not (an annotation that cannot be read is reported when it could hold one
 * of them, i.e. on a route the VMDistributedCluster manages or, without the spec, on any).
 */
export function verifyRecords(views: readonly RouteObjectView[], expect: RecordExpectation): RecordListing {
  const out: RecordListing = { verified: [], unverified: [] };
  for (const view of views) {
    let records;
    try {
      records = parseRecords(view.annotation, expect.uid);
    } catch (err) {
      if (!(err instanceof UnreadableRecordsError)) throw err;
      const ours = !expect.spec || managesRoute(expect.spec, view.route, view.labels);
      if (ours) out.unverified.push({ route: view.route, reason: err.message });
      continue;
    }
    for (const record of Object.values(records)) {
      const issue = adoptionIssue(record, view, expect);
      if (issue) out.unverified.push({ route: view.route, zone: record.zone, reason: `record of zone ${record.zone} ${issue}` });
      else out.verified.push({ route: view.route, record });
    }
  }
  return out;
}

/** One line per unverified record: where, and why it is not acted on. */
export function describeUnverified(u: UnverifiedRecord): string {
  return `${u.route.kind} ${u.route.name}: ${u.reason}`;
}
