// The out-of-rotation records (api/route-records.ts) as they are on the route objects of a
// namespace: every VMAuth and VMUser is listed and its annotation read. Shared by the activities
// (readRecords, editRoutes' restore), the trigger and `kubectl vmdc release-zone`.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { VM_GROUP, VM_KINDS, VM_VERSION } from '../api/constants';
import {
  OUT_OF_ROTATION_ANNOTATION,
  parseRecords,
  UnreadableRecordsError,
  type OutOfRotationRecord,
  type RecordedZone,
  type RouteRecords,
  type RouteRef,
} from '../api/route-records';

/** One record and the route object that carries it. */
export interface RecordedRoute {
  route: RouteRef;
  record: OutOfRotationRecord;
}

/** Request options of every list call (e.g. a timeout from kube/request-timeout.ts). */
export type ListOptions = Parameters<CustomObjectsApi['listNamespacedCustomObject']>[1];

/** The route kinds, in the order routes are edited and reported: the VMAuth first, then VMUsers. */
export const ROUTE_KINDS: ReadonlyArray<RouteRef['kind']> = ['VMAuth', 'VMUser'];

interface ListedObject {
  metadata?: { name?: string; annotations?: Record<string, string> };
}

const PAGE = 500;

async function listAll(api: CustomObjectsApi, namespace: string, kind: RouteRef['kind'], options?: ListOptions): Promise<ListedObject[]> {
  const out: ListedObject[] = [];
  let cont: string | undefined;
  do {
    const page = (await api.listNamespacedCustomObject(
      { group: VM_GROUP, version: VM_VERSION, namespace, plural: VM_KINDS[kind], limit: PAGE, ...(cont ? { _continue: cont } : {}) },
      options,
    )) as { items?: ListedObject[]; metadata?: { _continue?: string; continue?: string } };
    out.push(...(page.items ?? []));
    cont = page.metadata?.continue ?? page.metadata?._continue;
  } while (cont);
  return out;
}

/** `VMAuth ns/name` — how errors and the release script name a route object. */
export const routeObjectLabel = (route: RouteRef, namespace: string): string => `${route.kind} ${namespace}/${route.name}`;

/**
 * The records on one route object — of one uid when given — (strict: an annotation vmrollout
 * cannot read throws UnreadableRecordsError naming the object). For code that WRITES the
 * annotation: it is never overwritten when unreadable.
 */
export function routeObjectRecords(route: RouteRef, namespace: string, annotations: Record<string, string> | undefined | null, uid?: string): RouteRecords {
  try {
    return parseRecords(annotations?.[OUT_OF_ROTATION_ANNOTATION], uid);
  } catch (err) {
    if (err instanceof UnreadableRecordsError) throw new UnreadableRecordsError(`${routeObjectLabel(route, namespace)}: ${err.message}`);
    throw err;
  }
}

function compareRoutes(a: RouteRef, b: RouteRef): number {
  return ROUTE_KINDS.indexOf(a.kind) - ROUTE_KINDS.indexOf(b.kind) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

async function scan(api: CustomObjectsApi, namespace: string, uid: string | undefined, options?: ListOptions): Promise<RecordedRoute[]> {
  const out: RecordedRoute[] = [];
  for (const kind of ROUTE_KINDS) {
    for (const obj of await listAll(api, namespace, kind, options)) {
      const name = obj.metadata?.name;
      if (!name) continue;
      const route: RouteRef = { kind, name };
      for (const record of Object.values(routeObjectRecords(route, namespace, obj.metadata?.annotations, uid))) out.push({ route, record });
    }
  }
  return out.sort((a, b) => compareRoutes(a.route, b.route) || (a.record.zone < b.record.zone ? -1 : a.record.zone > b.record.zone ? 1 : 0));
}

/**
 * The records of one VMDistributedCluster (by uid) on the VMAuths and VMUsers of `namespace`, the
 * VMAuths first, then by name. Throws UnreadableRecordsError naming the object (`VMAuth ns/name:
 * ...`) when an annotation that could hold a record of this uid cannot be read.
 */
export async function listRouteRecords(api: CustomObjectsApi, namespace: string, uid: string, options?: ListOptions): Promise<RecordedRoute[]> {
  return scan(api, namespace, uid, options);
}

/** Every record on the namespace's VMAuths and VMUsers, whatever its uid (strict: any unreadable annotation throws). */
export async function listAllRouteRecords(api: CustomObjectsApi, namespace: string, options?: ListOptions): Promise<RecordedRoute[]> {
  return scan(api, namespace, undefined, options);
}

/**
 * Pure: the zones these records (of ONE VMDistributedCluster) show out of reads, sorted by zone:
 * per zone, one removal per route carrying a record (VMAuth first), the earliest `since` and the
 * generation (and VMCluster) of that earliest record.
 */
export function recordedZones(routes: readonly RecordedRoute[]): RecordedZone[] {
  const byZone = new Map<string, RecordedRoute[]>();
  for (const r of routes) {
    const list = byZone.get(r.record.zone) ?? [];
    list.push(r);
    byZone.set(r.record.zone, list);
  }
  const time = (s: string) => {
    const t = Date.parse(s);
    return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
  };
  const zones: RecordedZone[] = [];
  for (const [zone, list] of byZone) {
    const sorted = [...list].sort((a, b) => compareRoutes(a.route, b.route));
    const earliest = sorted.reduce((e, r) => (time(r.record.since) < time(e.record.since) ? r : e));
    zones.push({
      zone,
      vmcluster: { ...earliest.record.vmcluster },
      removals: sorted.map((r) => ({ route: { kind: r.route.kind, name: r.route.name }, vmcluster: { ...r.record.vmcluster }, removed: r.record.removed })),
      since: earliest.record.since,
      generation: earliest.record.generation,
    });
  }
  return zones.sort((a, b) => (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0));
}
