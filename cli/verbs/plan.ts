// `kubectl vmdc plan NAME`: what a rollout of the object's current spec would do, without changing
// anything: the order, the zones it would skip (the dry run `diff` sends, cli/zone-dry-run.ts),
// what each other zone's leaving reads would remove from the VMAuth and VMUsers as they are now,
// where gates and pauseBetweenZones would wait, and a duration from the last rollout recorded.
// Reads only, with the person's credentials; the dry run needs `patch` on vmclusters as for `diff`.
import { MAX_SELECTED_VMUSERS } from '../../api/label-selector';
import { selectedVmusers } from '../../kube/selected-vmusers';
import { managedRoutes } from '../../api/route-targets';
import { describeError } from '../../kube/errors';
import { KubeObjects, vmKind } from '../../kube/custom-objects';
import type { Command } from '../args';
import { EXIT, Refused } from '../exit-codes';
import type { Io } from '../io';
import { getVmdc, loadKube } from '../kube';
import { actionPrinter } from '../output';
import { renderPlan } from '../render-plan';
import { planDocument, planRollout, type RouteRead } from '../rollout-plan';
import { zoneApplies } from '../zone-applies';
import { dryRunZones } from '../zone-dry-run';

type PlanCommand = Extract<Command, { verb: 'plan' }>;

export async function plan(cmd: PlanCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const out = actionPrinter(cmd.output, io.print);
  const obj = await getVmdc(kube, cmd.name);
  const applies = zoneApplies(obj);
  if (!applies.ok) throw new Refused(`cannot plan: ${applies.reason}`);
  const m = obj.metadata ?? {};
  const objects = new KubeObjects(kube.kc);
  const routes = await Promise.all(
    managedRoutes(applies.spec).map(async (route): Promise<RouteRead> => {
      try {
        const o = await objects.get(vmKind(route.kind), kube.namespace, route.name);
        return o === undefined ? { route, missing: true } : { route, obj: o };
      } catch (err) {
        return { route, error: describeError(err) };
      }
    }),
  );
  const selector = applies.spec.vmuserSelector;
  if (selector !== undefined) routes.push(...(await selectedRoutes(objects, kube.namespace, selector, routes)));
  const zones = (await dryRunZones(kube, applies.applies)).map((d) => ({ zone: d.apply.zone, vmcluster: d.apply.name, current: d.current, after: d.after }));
  const p = planRollout({
    object: { namespace: kube.namespace, name: cmd.name, uid: m.uid ?? '', generation: m.generation ?? 0 },
    spec: applies.spec,
    zones,
    routes,
    status: obj.status,
  });
  for (const l of renderPlan(p)) out.line(l);
  out.document(planDocument(p));
  return EXIT.ok;
}

/** The VMUsers spec.vmuserSelector selects now, beside the named routes (as the worker reads them before each zone leaves). */
async function selectedRoutes(objects: KubeObjects, namespace: string, selector: string, named: readonly RouteRead[]): Promise<RouteRead[]> {
  const route = { kind: 'VMUser' as const, name: `(spec.vmuserSelector ${selector})` };
  try {
    const selected = await selectedVmusers(
      objects,
      namespace,
      selector,
      named.map((r) => r.route),
    );
    if (selected.tooMany) return [{ route, error: `more than ${MAX_SELECTED_VMUSERS} VMUsers match: every zone would fail (SelectorTooBroad)` }];
    return selected.users.map(({ name, obj }): RouteRead => ({ route: { kind: 'VMUser', name }, obj }));
  } catch (err) {
    return [{ route, error: describeError(err) }];
  }
}
