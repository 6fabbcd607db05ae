// The out-of-rotation records (api/route-records.ts) as they are on the route objects of a
// namespace: every VMAuth and VMUser is listed, its annotation read and each record verified
// against the route (api/record-verification.ts). Shared by the activities (readRecords,
// editRoutes' restore), the trigger and `kubectl vmdc release-zone`.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { VM_GROUP, VM_KINDS, VM_VERSION } from '../api/constants';
import { verifyRecords, type RecordExpectation, type RecordListing, type RouteObjectView } from '../api/record-verification';
import {
  OUT_OF_ROTATION_ANNOTATION,
  parseRecords,
  UnreadableRecordsError,
  type RecordedRoute,
  type RecordedZone,
  type RouteRecords,
  type RouteRef,
} from '../api/route-records';
import type { JsonObject } from '../api/types';
import { routeTargetRefs } from '../api/route-targets';

/** Request options of every list call (e.g. a timeout from kube/request-timeout.ts). */
export type ListOptions = Parameters<CustomObjectsApi['listNamespacedCustomObject']>[1];

/** The route kinds, in the order routes are edited and reported: the VMAuth first, then VMUsers. */
export const ROUTE_KINDS: ReadonlyArray<RouteRef['kind']> = ['VMAuth', 'VMUser'];

interface ListedObject {
  metadata?: { name?: string; uid?: string; annotations?: Record<string, string>; labels?: unknown };
  spec?: JsonObject;
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

/** Every VMAuth and VMUser of `namespace` as read now (the VMAuths first, then by name). */
export async function listRouteViews(api: CustomObjectsApi, namespace: string, options?: ListOptions): Promise<RouteObjectView[]> {
  const out: RouteObjectView[] = [];
  for (const kind of ROUTE_KINDS) {
    for (const obj of await listAll(api, namespace, kind, options)) {
      const name = obj.metadata?.name;
      if (!name) continue;
      out.push({
        route: { kind, name },
        uid: obj.metadata?.uid ?? '',
        namespace,
        targetRefs: routeTargetRefs(kind, { spec: obj.spec }),
        annotation: obj.metadata?.annotations?.[OUT_OF_ROTATION_ANNOTATION],
        labels: obj.metadata?.labels,
      });
    }
  }
  return out.sort((a, b) => compareRoutes(a.route, b.route));
}

const byZone = (a: RecordedRoute, b: RecordedRoute) =>
  compareRoutes(a.route, b.route) || (a.record.zone < b.record.zone ? -1 : a.record.zone > b.record.zone ? 1 : 0);

/**
 * The records of one VMDistributedCluster (`expect.uid`) on the VMAuths and VMUsers of
 * `namespace`, verified against the routes as they are (api/record-verification.ts): those that
 * may be acted on, the VMAuths first, then by name; and those that may not, with the reason.
 */
export async function listRouteRecords(api: CustomObjectsApi, namespace: string, expect: RecordExpectation, options?: ListOptions): Promise<RecordListing> {
  const listing = verifyRecords(await listRouteViews(api, namespace, options), expect);
  return { verified: listing.verified.sort(byZone), unverified: listing.unverified };
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
