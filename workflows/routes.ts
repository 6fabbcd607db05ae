// Read-route planning: the removals that take a zone out of every route, refused when a route would
// be left with no backend (what one route's removal is: api/route-targets.ts; the edits themselves:
// api/route-edits.ts). Pure: the workflow computes removals with it.
import { applyRemoval } from '../api/route-edits';
import type { RouteRef, RouteRemoval } from '../api/route-records';
import { computeRemoval, hasReadBackend } from '../api/route-targets';
import { describeStorage, type StorageRef } from '../api/storage';
import type { RouteSnapshot } from './activity-types';
import { FailureType } from './failures';

/** The zone cannot be taken out of reads as the routes are: nothing may be edited. */
export abstract class RoutePlanError extends Error {
  abstract readonly type: FailureType;
}

/** Removing a zone would leave these routes with no read backend. */
export class EmptyRouteError extends RoutePlanError {
  override readonly name = 'EmptyRouteError';
  readonly type = FailureType.EmptyRoute;
  constructor(
    readonly routes: RouteRef[],
    readonly vmcluster: StorageRef,
  ) {
    super(`removing ${describeStorage(vmcluster)} from reads would leave ` + routes.map((r) => `${r.kind} ${r.name}`).join(', ') + ' with no backend');
  }
}

/**
 * The removals that take `vmc` out of every route (routes not referencing it are left out).
 * Throws EmptyRouteError when any route would be left with no read backend (nothing is edited then).
 */
export function computeRemovals(snapshots: readonly RouteSnapshot[], vmc: StorageRef): RouteRemoval[] {
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
