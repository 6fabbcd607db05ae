// The field managers vmrollout writes VM operator objects as. Server-side applies are one manager
// for every VMDistributedCluster; route edits are one manager per VMDistributedCluster, so a
// conflict on a route list tells whose route edit it was (activities/objects/conflict-verdict.ts):
// two VMDistributedClusters may share a VMAuth or a VMUser, and one's apply must not take what the
// other took out of reads for its own edit. Pure.

/** Server-side applies of the specs (and the status writes of the VMDistributedCluster). */
export const FIELD_MANAGER = 'vmrollout';
/** Holds the fields vmrollout stopped managing without removing them (activities/objects/apply-object.ts). */
export const RELEASED_FIELD_MANAGER = 'vmrollout-released';

const ROUTE_MANAGER_PREFIX = 'vmrollout-routes-';

/**
 * The manager of the route edits (merge patches, operation Update) made for the VMDistributedCluster
 * of `uid`, whoever writes them (its workflows, `kubectl vmdc release-zone`). The whole uid, not a
 * prefix: two VMDistributedClusters never share it. A uid the API server assigns is 36 characters,
 * so the name (53) stays within the 128 Kubernetes allows a field manager.
 */
export const routeFieldManager = (uid: string): string => `${ROUTE_MANAGER_PREFIX}${uid}`;

/**
 * Unreleased builds before 1.0.0-rc.1 (the first release) wrote route edits as FIELD_MANAGER
 * (operation Update), one name for every VMDistributedCluster: whose edit such an entry was cannot
 * be told. Understood, not migrated (activities/objects/conflict-verdict.ts).
 */
export const UNATTRIBUTED_ROUTE_EDIT = Symbol('unattributed route edit');

/**
 * Whose route edit a conflicting manager (as the API server names it in a conflict) is: the uid of a
 * VMDistributedCluster, UNATTRIBUTED_ROUTE_EDIT, or undefined when it is no route edit of vmrollout.
 * FIELD_MANAGER can only be an Update entry here (an apply never conflicts with its own manager's
 * Apply entry), and the only Update writes of VM operator objects ever made as FIELD_MANAGER are
 * those older route edits.
 */
export function routeEditor(manager: string): string | typeof UNATTRIBUTED_ROUTE_EDIT | undefined {
  if (manager === FIELD_MANAGER) return UNATTRIBUTED_ROUTE_EDIT;
  return manager.startsWith(ROUTE_MANAGER_PREFIX) ? manager.slice(ROUTE_MANAGER_PREFIX.length) : undefined;
}
