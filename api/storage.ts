// A zone's storage: a VMCluster (zones[].vmcluster) or a VMSingle (zones[].vmsingle). What differs
// between the two is declared here once, by the VictoriaMetrics operator's rules (v0.74.x): the
// names it derives, the paths reads and writes go to, the pods that serve them and where
// the version goes. Pure: the workflow, the activities and the CLI share it.
import type { JsonObject, ManagedObject, NormalizedSpec, ZoneSpec } from './types';

export const STORAGE_KINDS = ['VMCluster', 'VMSingle'] as const;
export type StorageKind = (typeof STORAGE_KINDS)[number];

/**
 * A zone's storage object in a namespace, as route records and activity inputs carry it. `kind`
 * is absent for a VMCluster: records written before VMSingle zones read (and hash) as they did.
 */
export interface StorageRef {
  name: string;
  namespace: string;
  kind?: 'VMSingle';
}

export const kindOf = (ref: Pick<StorageRef, 'kind'>): StorageKind => ref.kind ?? 'VMCluster';

/** `VMSingle ns/x`, `VMCluster ns/x`: how messages name a storage object. */
export const describeStorage = (ref: StorageRef): string => `${kindOf(ref)} ${ref.namespace}/${ref.name}`;

/** The zone's storage object and its kind (the schema guarantees exactly one of the two). */
export function zoneStorage(zone: Pick<ZoneSpec, 'vmcluster' | 'vmsingle'>): { kind: StorageKind; object: ManagedObject } {
  return zone.vmsingle ? { kind: 'VMSingle', object: zone.vmsingle } : { kind: 'VMCluster', object: zone.vmcluster! };
}

export function storageRef(zone: Pick<ZoneSpec, 'vmcluster' | 'vmsingle'>, namespace: string): StorageRef {
  return refOf(namespace, namedStorage(zone));
}

/** The spec field the zone's storage is under (`vmcluster`, `vmsingle`), for paths in messages. */
export const storageField = (kind: StorageKind): 'vmcluster' | 'vmsingle' => (kind === 'VMSingle' ? 'vmsingle' : 'vmcluster');

/** A copy of the ref with exactly its fields (a record carries nothing else). */
export const copyRef = (ref: StorageRef): StorageRef =>
  ref.kind ? { name: ref.name, namespace: ref.namespace, kind: ref.kind } : { name: ref.name, namespace: ref.namespace };

export const sameStorage = (a: StorageRef, b: StorageRef): boolean => a.name === b.name && a.namespace === b.namespace && kindOf(a) === kindOf(b);

/**
 * What serves a kind's reads and takes its writes: the operator's Service names (PrefixedName) and
 * the targetRef kind a read route names it by, the path prefix of a tenant's Prometheus API,
 * the workload behind the read service, the label its pods carry (app.kubernetes.io/name), and the
 * path prefix its request counters give queries (`vm_http_requests_total{path}`).
 */
interface StorageShape {
  /** crd.kind of a read route's targetRef. */
  readRefKind: string;
  readServicePrefix: string;
  writeServicePrefix: string;
  /** The read Service's workload kind (pods are verified against it). */
  readWorkload: 'StatefulSet' | 'Deployment';
  /** How messages name a pod serving reads. */
  readPodName: 'vmselect' | 'vmsingle';
  /** The prefix of a tenant's Prometheus querying API on the read service. */
  queryPrefix: (tenant: string) => string;
  /** Whether a `vm_http_requests_total` path label counts a read. */
  countsRead: (path: string) => boolean;
  /** The JSON merge patch that sets the version. */
  versionPatch: (version: string) => JsonObject;
  /** The version field, as server-side apply names it (another manager's value is taken, not a conflict). */
  versionField: string;
  /** Reads the version of an object of this kind (undefined: unset). */
  versionOf: (spec: JsonObject | undefined) => unknown;
}

// Single-node VictoriaMetrics strips a leading /prometheus before it counts a request
// (app/vmselect/main.go RequestHandler), so a query counts as `path="/api/v1/query"` whichever way
// it came in; writes count under /api/v1/write and /api/v1/import*, and must not read as reads (a zone
// out of reads is still written). The cluster's vmselect counts `/select/{}/prometheus/...`.
const SINGLE_READ = /^\/(api\/v1\/(query|query_range|series|labels|label\/|export|status\/|metadata|query_exemplars)|federate)/;

export const STORAGE: Record<StorageKind, StorageShape> = {
  VMCluster: {
    readRefKind: 'VMCluster/vmselect',
    readServicePrefix: 'vmselect-',
    writeServicePrefix: 'vminsert-',
    readWorkload: 'StatefulSet',
    readPodName: 'vmselect',
    queryPrefix: (tenant) => `/select/${tenant}/prometheus`,
    countsRead: (path) => path.startsWith('/select/'),
    versionPatch: (version) => ({ clusterVersion: version }),
    versionField: '.spec.clusterVersion',
    versionOf: (spec) => spec?.clusterVersion,
  },
  VMSingle: {
    readRefKind: 'VMSingle',
    readServicePrefix: 'vmsingle-',
    writeServicePrefix: 'vmsingle-',
    readWorkload: 'Deployment',
    readPodName: 'vmsingle',
    queryPrefix: () => '/prometheus',
    countsRead: (path) => SINGLE_READ.test(path),
    versionPatch: (version) => ({ image: { tag: version } }),
    versionField: '.spec.image.tag',
    versionOf: (spec) => {
      const image = spec?.image;
      return image !== null && typeof image === 'object' && !Array.isArray(image) ? image.tag : undefined;
    },
  },
};

/** The targetRef kinds that send reads to a zone's storage. */
export const READ_REF_KINDS: readonly string[] = STORAGE_KINDS.map((k) => STORAGE[k].readRefKind);

/** The storage kind a targetRef's crd.kind routes reads to, if any. */
export function readRefStorage(crdKind: unknown): StorageKind | undefined {
  return STORAGE_KINDS.find((k) => STORAGE[k].readRefKind === crdKind);
}

export const readServiceName = (ref: Pick<StorageRef, 'kind' | 'name'>): string => `${STORAGE[kindOf(ref)].readServicePrefix}${ref.name}`;
export const writeServiceName = (ref: Pick<StorageRef, 'kind' | 'name'>): string => `${STORAGE[kindOf(ref)].writeServicePrefix}${ref.name}`;

/** The version a zone's storage gets: spec.clusterVersion for a VMCluster, spec.singleVersion for a VMSingle. */
export function versionFor(spec: Pick<NormalizedSpec, 'clusterVersion' | 'singleVersion'>, kind: StorageKind): string {
  return kind === 'VMSingle' ? spec.singleVersion! : spec.clusterVersion;
}

/**
 * A zone's storage object as activity inputs and the progress query name it, beside a namespace.
 * `vmcluster` keeps the name it had before VMSingle zones (inputs and progress of running rollouts
 * read the same); `storageKind` is absent for a VMCluster.
 */
export interface NamedStorage {
  vmcluster: string;
  storageKind?: 'VMSingle';
}

export function namedStorage(zone: Pick<ZoneSpec, 'vmcluster' | 'vmsingle'>): NamedStorage {
  return zone.vmsingle ? { vmcluster: zone.vmsingle.name, storageKind: 'VMSingle' } : { vmcluster: zone.vmcluster!.name };
}

/** The NamedStorage of anything carrying one (a zone's progress), without the rest. */
export function storageOf(s: NamedStorage): NamedStorage {
  return s.storageKind ? { vmcluster: s.vmcluster, storageKind: s.storageKind } : { vmcluster: s.vmcluster };
}

export function refOf(namespace: string, s: NamedStorage): StorageRef {
  return copyRef({ name: s.vmcluster, namespace, ...(s.storageKind ? { kind: s.storageKind } : {}) });
}

/** The zone's storage object as readObject and waitOperational name it. */
export function storageObject(zone: Pick<ZoneSpec, 'vmcluster' | 'vmsingle'>, namespace: string): { kind: StorageKind; namespace: string; name: string } {
  const { kind, object } = zoneStorage(zone);
  return { kind, namespace, name: object.name };
}
