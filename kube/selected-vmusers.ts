// The VMUsers spec.vmuserSelector selects now, beyond the routes a spec names: read the same way by
// the worker before each zone leaves (activities/routes/edit-routes.ts readRoutes) and by
// `kubectl vmdc plan`. The API server filters by the selector; each object's labels are checked again
// (its filter is its word), and more than MAX_SELECTED_VMUSERS is a selector that selects too much.
import { MAX_SELECTED_VMUSERS, selects } from '../api/label-selector';
import type { RouteRef } from '../api/route-records';
import { vmKind, type KubeObject, type KubeObjects } from './custom-objects';

export type SelectedVmusers = { tooMany: true } | { tooMany: false; users: Array<{ name: string; obj: KubeObject }> };

/** The selected VMUsers of `namespace`, those in `named` left out. */
export async function selectedVmusers(objects: KubeObjects, namespace: string, selector: string, named: readonly RouteRef[]): Promise<SelectedVmusers> {
  const listed = await objects.listSelected(vmKind('VMUser'), namespace, selector, MAX_SELECTED_VMUSERS);
  if (listed.more) return { tooMany: true };
  const users: Array<{ name: string; obj: KubeObject }> = [];
  for (const obj of listed.items) {
    const name = obj.metadata?.name;
    if (typeof name !== 'string' || !selects(selector, obj.metadata?.labels)) continue;
    if (named.some((r) => r.kind === 'VMUser' && r.name === name)) continue;
    users.push({ name, obj });
  }
  return { tooMany: false, users };
}
