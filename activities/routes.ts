// Read routes: the VMAuth's spec.unauthorizedUserAccessSpec.targetRefs and VMUsers' spec.targetRefs.
// Edits are set-to-desired: a fresh GET, the pure transform from workflows/routes.ts applied to what
// is there now, a JSON merge patch carrying metadata.resourceVersion (409 on a concurrent write →
// read again and recompute), so a retried activity is harmless and nobody's edit is lost.
import type { JsonObject, JsonValue } from '../api/types';
import type { RouteRef, RouteRemoval, RouteSnapshot } from '../workflows/activity-types';
import { applyRemoval, hasReadBackend, undoRemoval } from '../workflows/routes';
import { jsonEqual } from '../workflows/merge';
import { isConflict } from '../kube/errors';
import { FailureType } from '../workflows/failures';
import { nonRetryable } from './errors';
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
  const out: RouteSnapshot[] = [];
  for (const route of input.routes) {
    const obj = await kube.get(vmKind(route.kind), input.namespace, route.name);
    if (!obj) throw notFound(input.namespace, route);
    out.push({ route: { kind: route.kind, name: route.name }, targetRefs: routeTargetRefs(route.kind, obj) });
  }
  return out;
}

/** The desired targetRefs of one route: all its removals applied (remove), or undone in reverse (restore). */
export function desiredTargetRefs(current: JsonObject[], removals: RouteRemoval[], direction: 'remove' | 'restore'): JsonObject[] {
  if (direction === 'remove') return removals.reduce<JsonObject[]>((refs, r) => applyRemoval(refs, r), current);
  return [...removals].reverse().reduce<JsonObject[]>((refs, r) => undoRemoval(refs, r), current);
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
}

/** Edits one route to the desired state; returns whether it wrote. */
async function editRoute(
  kube: KubeObjects,
  namespace: string,
  route: RouteRef,
  removals: RouteRemoval[],
  direction: 'remove' | 'restore',
  hooks: EditRoutesHooks,
): Promise<boolean> {
  const k = vmKind(route.kind);
  for (let attempt = 1; attempt <= MAX_CONFLICT_RETRIES; attempt++) {
    hooks.onAttempt?.(route, attempt);
    const obj = await kube.get(k, namespace, route.name);
    if (!obj) throw notFound(namespace, route);
    const current = routeTargetRefs(route.kind, obj);
    const desired = desiredTargetRefs(current, removals, direction);
    if (jsonEqual(desired, current)) return false;
    if (direction === 'remove' && !hasReadBackend(desired)) {
      throw nonRetryable(
        FailureType.EmptyRoute,
        `refusing to edit ${routeLabel(route)}: removing ${removals.map((r) => `VMCluster ${r.vmcluster.namespace}/${r.vmcluster.name}`).join(', ')} would leave it with no read backend`,
        { route },
      );
    }
    await hooks.beforeWrite?.(route, attempt);
    try {
      await kube.mergePatch(k, namespace, route.name, routePatch(route.kind, obj.metadata.resourceVersion, desired));
      return true;
    } catch (err) {
      if (isConflict(err)) continue;
      throw err;
    }
  }
  // Retryable: Temporal retries the whole activity with backoff.
  throw Object.assign(new Error(`${routeLabel(route)}: still conflicting after ${MAX_CONFLICT_RETRIES} attempts`), { name: FailureType.RouteConflict });
}

/**
 * Applies (or undoes) every removal, route by route. Routes whose desired state is already there are
 * not written. Returns the VMAuth's generation after the edit (read fresh).
 */
export async function editRoutes(
  kube: KubeObjects,
  input: { namespace: string; vmauthName: string; removals: RouteRemoval[]; direction: 'remove' | 'restore' },
  hooks: EditRoutesHooks = {},
): Promise<{ vmauthGeneration: number; vmuserGenerations: Record<string, number>; written: RouteRef[] }> {
  const groups = groupByRoute(input.removals);
  if (input.direction === 'remove') {
    // Refuse before touching anything: check every route first against a fresh read.
    for (const [route, removals] of groups) {
      const obj = await kube.get(vmKind(route.kind), input.namespace, route.name);
      if (!obj) throw notFound(input.namespace, route);
      const current = routeTargetRefs(route.kind, obj);
      const desired = desiredTargetRefs(current, removals, 'remove');
      if (!jsonEqual(desired, current) && !hasReadBackend(desired)) {
        throw nonRetryable(FailureType.EmptyRoute, `refusing to edit ${routeLabel(route)}: the removal would leave it with no read backend`, { route });
      }
    }
  }
  const written: RouteRef[] = [];
  for (const [route, removals] of groups) {
    if (await editRoute(kube, input.namespace, route, removals, input.direction, hooks)) written.push(route);
  }
  const generationOf = async (route: RouteRef): Promise<number> => {
    const obj = await kube.get(vmKind(route.kind), input.namespace, route.name);
    if (!obj) throw notFound(input.namespace, route);
    return typeof obj.metadata.generation === 'number' ? obj.metadata.generation : 0;
  };
  const vmuserGenerations: Record<string, number> = {};
  for (const [route] of groups) {
    if (route.kind === 'VMUser') vmuserGenerations[route.name] = await generationOf(route);
  }
  return { vmauthGeneration: await generationOf({ kind: 'VMAuth', name: input.vmauthName }), vmuserGenerations, written };
}
