// The six steps of one zone (DESIGN.md "One upgrade workflow per generation"), one function each.
// Every step is idempotent: a resumed zone runs its failed step again as is.
import { isCancellation } from '@temporalio/workflow';
import type { Strategy, ZoneSpec, ZoneStep } from '../api/types';
import type { ApplyObjectInput, RouteSnapshot } from './activity-types';
import { stepFailure } from './failures';
import { desiredClusterPatch } from './merge';
import type { RouteRemoval } from '../api/route-records';
import { RoutePlanError, computeRemovals, routeReferencesCluster } from './routes';
import { applyRemoval } from '../api/route-edits';
import type { EditedRoutes, RolloutRun } from './rollout-run';
import { removedAnything, type ZoneState } from './state';

/** What a step works on: the run, the zone's state and spec, and what its route edit changed. */
export interface ZoneContext {
  run: RolloutRun;
  z: ZoneState;
  zs: ZoneSpec;
  edited: EditedRoutes;
}

type StepHandler = (c: ZoneContext) => Promise<void>;

/** One handler per step: a step added to ZONE_STEPS without a handler does not compile. */
export type ZoneStepHandlers = { readonly [S in ZoneStep]: StepHandler };

/** The zone's VMCluster apply: the desired spec (zone full spec, global overlay, zone overlay, clusterVersion). */
export function clusterApply(run: RolloutRun, zs: ZoneSpec): ApplyObjectInput {
  return run.applyInput('VMCluster', zs.vmcluster, desiredClusterPatch(run.spec, zs), `zones[${run.spec.zones.indexOf(zs)}].vmcluster`);
}

/** What taking the zone out of the managed routes removes, from the routes as they are now. */
async function planRemovals(run: RolloutRun, zs: ZoneSpec): Promise<RouteRemoval[]> {
  return (await planWithRoutes(run, zs)).removals;
}

async function planWithRoutes(run: RolloutRun, zs: ZoneSpec): Promise<{ removals: RouteRemoval[]; snaps: RouteSnapshot[] }> {
  const snaps = await run.acts.short.readRoutes({ namespace: run.ns, routes: run.routes });
  try {
    return { removals: computeRemovals(snaps, { name: zs.vmcluster.name, namespace: run.ns }), snaps };
  } catch (e) {
    throw e instanceof RoutePlanError ? stepFailure(e.type, e.message) : e;
  }
}

/**
 * Before the zone leaves: the other zones that the managed routes will still send reads to must be
 * operational with empty vmagent backlogs (a lagging carrier serves stale reads); wait, saying so.
 */
async function waitForCarriers(run: RolloutRun, z: ZoneState, zs: ZoneSpec): Promise<void> {
  const { removals, snaps } = await planWithRoutes(run, zs);
  const carriers = run.spec.zones.filter((o) => {
    if (o.name === zs.name) return false;
    const vmc = { name: o.vmcluster.name, namespace: run.ns };
    return snaps.some((snap) => {
      const r = removals.find((x) => x.route.kind === snap.route.kind && x.route.name === snap.route.name);
      return routeReferencesCluster(r ? applyRemoval(snap.targetRefs, r) : snap.targetRefs, vmc);
    });
  });
  if (carriers.length === 0) return;
  z.message = `waiting until the zones that will carry its reads (${carriers.map((c) => c.name).join(', ')}) are operational with empty vmagent backlogs`;
  await run.writeStatus();
  await run.acts.wait.waitCarriersReady({
    namespace: run.ns,
    carriers: carriers.map((c) => ({ zone: c.name, vmcluster: c.vmcluster.name, queue: run.queueTarget(c) })),
    pollIntervalMs: run.st.pollIntervalMs,
  });
}

/**
 * 1. Take the zone out of every managed read route, announced in the status first. Planned afresh
 * from the routes as they are (a resumed zone finishes what a failed edit left); each route's edit
 * writes, in the same API call, the record of what it removed, and `z.removals` is only ever what
 * the records say; a refused announcement stops the run before any route is touched; after a failed
 * edit the records say what landed.
 */
async function leaveReads({ run, z, zs, edited }: ZoneContext): Promise<void> {
  const { step, short } = run.acts;
  // A patch the API server refuses fails the zone here, while it is still in reads.
  await short.applyObject({ ...clusterApply(run, zs), dryRun: true });
  await waitForCarriers(run, z, zs);
  // Planned from a fresh read: the routes may have changed while the carriers were awaited.
  const plan = await planRemovals(run, zs);
  // The switch must be confirmable before the zone leaves: the operator's config Secret exists and
  // routes the zone now, and every ready vmauth pod runs it. Otherwise (no Secret, no access to it,
  // a pod stuck on an older config) the zone waits, and fails, while still in reads.
  if (plan.some((r) => r.removed.length > 0)) await run.confirmInPods(z, plan, 'present');
  z.outOfRotation = true;
  z.message = 'out of read rotation for the upgrade';
  if (!(await run.writeStatus()).written) {
    z.outOfRotation = removedAnything(z);
    run.stopRefused();
    return;
  }
  if (!plan.some((r) => r.removed.length > 0)) return;
  try {
    const r = await step.editRoutes({ namespace: run.ns, vmauthName: run.spec.vmauth.name, removals: plan, direction: 'remove', record: run.recordOwner(z) });
    Object.assign(edited, r);
    run.syncRecorded(r.recorded ?? []);
  } catch (e) {
    if (!isCancellation(e)) await run.resyncRecorded(step);
    throw e;
  }
}

/** 2. Wait until the vmauth pods serve the routes without the zone, then for in-flight reads. */
async function waitForSwitch({ run, z, edited }: ZoneContext): Promise<void> {
  if (!removedAnything(z)) return;
  await run.waitSwitch(z, z.removals!, edited, 'absent');
  const { st } = run;
  if (st.readDrainDelayMs <= 0) return;
  z.message = `${z.switchConfirmed}; waiting until VMCluster ${z.vmcluster}'s vmselects see no new /select/ request for ${readQuietMs(st) / 1000} s (at most readDrainDelay)`;
  await run.writeStatus();
  const d = await run.acts.wait.waitReadsDrained({ namespace: run.ns, vmcluster: z.vmcluster, quietMs: readQuietMs(st), maxMs: st.readDrainDelayMs, pollIntervalMs: st.pollIntervalMs });
  z.switchConfirmed = `${z.switchConfirmed}; ${d.message}`;
}

/** The quiet period that shows a zone's reads drained: two polls (at least 1 s), at most readDrainDelay. */
export function readQuietMs(st: Pick<Strategy, 'pollIntervalMs' | 'readDrainDelayMs'>): number {
  return Math.min(st.readDrainDelayMs, Math.max(2 * st.pollIntervalMs, 1000));
}

/**
 * 3. Apply the desired spec to the zone's VMCluster; remember the generation it produced. A regular
 * activity, not a local one: a cancel waits for it to finish, so the cleanup sees the patch.
 */
async function upgrade({ run, z, zs }: ZoneContext): Promise<void> {
  z.patchAttempted = true;
  z.drainedConfirmed = false;
  const r = await run.acts.step.applyObject(clusterApply(run, zs));
  z.vmclusterGeneration = r.generation;
}

/** 4. Wait until the VMCluster is operational at that generation (`failed` fails the step). */
async function waitOperational({ run, z, zs }: ZoneContext): Promise<void> {
  await run.acts.wait.waitOperational({ kind: 'VMCluster', namespace: run.ns, name: zs.vmcluster.name, generation: z.vmclusterGeneration ?? 0, pollIntervalMs: run.st.pollIntervalMs });
}

/** How often the queue wait shows its latest sample in the status and the progress query. */
const QUEUE_REPORT_INTERVAL_MS = 10_000;

/**
 * 5. Wait until every vmagent pod's backlog for the zone stayed empty for queueDrainedFor, in one
 * heartbeating activity that writes its latest sample into the status as it goes (a long drain
 * costs heartbeats, not history events), bounded by zoneTimeout.
 */
async function waitForQueue({ run, z, zs }: ZoneContext): Promise<void> {
  const { st } = run;
  const report = { object: run.object, status: run.status(), zone: z.name, everyMs: QUEUE_REPORT_INTERVAL_MS };
  const streak = await run.acts.wait.watchQueue({ ...run.queueTarget(zs), queueDrainedForMs: st.queueDrainedForMs, pollIntervalMs: st.pollIntervalMs, report });
  run.state.lastQueueSample = { ...streak.last, zone: z.name, ...(streak.emptySince ? { emptySince: streak.emptySince } : {}) };
  z.drainedConfirmed = true;
}

/** 6. Put back exactly what step 1 removed and wait for the switch. */
async function rejoinReads({ run, z }: ZoneContext): Promise<void> {
  await run.rejoin(z, run.acts.step);
}

export const ZONE_STEP_HANDLERS: ZoneStepHandlers = {
  LeavingReads: leaveReads,
  WaitingForSwitch: waitForSwitch,
  Upgrading: upgrade,
  WaitingOperational: waitOperational,
  WaitingForQueue: waitForQueue,
  RejoiningReads: rejoinReads,
};
