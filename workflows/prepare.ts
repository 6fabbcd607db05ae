// Before any zone: bring up what the zones need and apply the spec's other objects, each waited for
// until operational. A failure holds the rollout like a zone's.
//
// In the order a greenfield namespace needs: every object is
// first sent as a dry run (a conflict, an object not owned, a spec the API server refuses: the
// rollout fails here, before any zone leaves reads); then the VMAgent, then the VMClusters that do
// not exist yet (created from their full specs), then the VMAuth and the VMUsers that route to them.
// Route objects are not applied while a zone is out of reads (their targetRefs would put it back):
// then they are applied once every zone is done. A zone its trafficMode holds out of reads is left
// out of them instead: they are applied without its VMCluster.
import type { ManagedObject } from '../api/types';
import type { VMKind } from '../api/constants';
import type { ApplyObjectInput } from './activity-types';
import type { Outcome } from './failure-hold';
import { agentApplies, objectApplyFor } from './managed-objects';
import type { RolloutRun } from './rollout-run';
import type { RunContext } from './run-context';
import type { RolloutState } from './state';
import { heldMode } from '../api/traffic-mode';
import { clusterApply } from './zone-steps';
import { refOf } from '../api/storage';

/** The apply of a VMAgent, VMUser or VMAuth of the spec, or undefined when the spec names none. */
function objectApply(ctx: RunContext, kind: VMKind, obj: ManagedObject | undefined, specPath: string): ApplyObjectInput | undefined {
  return objectApplyFor(ctx.object, ctx.spec, kind, obj, specPath);
}

const defined = <T>(x: T | undefined): x is T => x !== undefined;

/**
 * The VMAuth before the VMUsers: a VMUser's status is written by the reconcile of a VMAuth that
 * selects it (the operator's StatusForChildObjects), so a VMUser awaited before its VMAuth exists
 * would never become operational. Without the VMClusters of the held zones out of reads.
 */
function routeApplies(ctx: RunContext, state: RolloutState): ApplyObjectInput[] {
  const without = state.zones.filter((z) => z.held && z.outOfRotation).map((z) => refOf(ctx.ns, z));
  return [objectApply(ctx, 'VMAuth', ctx.spec.vmauth, 'vmauth'), ...ctx.spec.zones.map((zs, i) => objectApply(ctx, 'VMUser', zs.vmuser, `zones[${i}].vmuser`))]
    .filter(defined)
    .map((it) => (without.length ? { ...it, without } : it));
}

async function applyAndWait(ctx: RunContext, items: readonly ApplyObjectInput[]): Promise<void> {
  const { short, wait } = ctx.acts;
  for (const it of items) {
    const r = await short.applyObject(it);
    await wait.waitOperational({ kind: it.kind, namespace: ctx.ns, name: it.name, generation: r.generation, pollIntervalMs: ctx.st.pollIntervalMs });
  }
}

type PrepareParts = Pick<RolloutRun, 'ctx' | 'state' | 'report' | 'hold'>;

export function prepare({ ctx, state, report, hold }: PrepareParts): Promise<Outcome> {
  state.currentStep = 'Preparing';
  return hold.run(async () => {
    state.run = { kind: 'preparing' };
    await report.write();
    const { short } = ctx.acts;
    const creates: ApplyObjectInput[] = [];
    // A VMCluster in maintenance is left alone: not created either.
    for (const zs of ctx.spec.zones.filter((z) => heldMode(z) !== 'maintenance')) {
      const it = clusterApply(ctx, zs);
      if ((await short.applyObject({ ...it, dryRun: true })).created) creates.push(it);
    }
    const agents = agentApplies(ctx.object, ctx.spec);
    const routes = routeApplies(ctx, state);
    for (const it of [...agents, ...routes]) await short.applyObject({ ...it, dryRun: true });
    await applyAndWait(ctx, [...agents, ...creates]);
    state.routesDeferred = state.zones.some((z) => z.outOfRotation && !z.held);
    if (!state.routesDeferred) await applyAndWait(ctx, routes);
    return 'done';
  });
}

/** The route objects prepare left while zones were out of reads, applied once every zone is done. */
export function applyDeferredRoutes({ ctx, state, report, hold }: PrepareParts): Promise<Outcome> {
  state.currentStep = 'Preparing';
  return hold.run(async () => {
    state.run = { kind: 'applying-deferred-routes' };
    await report.write();
    await applyAndWait(ctx, routeApplies(ctx, state));
    state.routesDeferred = false;
    return 'done';
  });
}
