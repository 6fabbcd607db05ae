// strategy.dryRun: the rollout of this generation, planned into status.plan, nothing changed. Each
// zone is judged as the rollout would judge it at its turn, on the objects as they are now: out of
// reads by an earlier generation's records (taken first), up to date (the apply's server-side dry
// run leaves the generation alone, and operational: skipped), failing in reads (a dry run the API
// server refuses, a route left without a backend, a queue that cannot hold the downtime), or
// upgraded, with the route entries its leaving would remove, its queue headroom and the gates
// before it. Reads only: the bounded `cleanup` calls, so an API server or vmagent away is said in the
// plan rather than waited for.
import type { HeldMode } from '../api/traffic-mode';
import type { PlannedZoneStatus, QueueHeadroom, ZoneSpec } from '../api/types';
import { failureMessage, isStepFailure } from './failures';
import { gatesBefore, isCanaryZone } from './gates';
import { isUpToDate } from './plan';
import { syncRecorded } from './read-switch';
import { finish } from './rollout-end';
import type { RolloutRun } from './rollout-run';
import { RoutePlanError, computeRemovals } from './routes';
import { now, queueTarget, routesToRead, zoneSpec, type RunContext } from './run-context';
import { zoneState } from './state';
import type { RolloutResult } from '../api/rollout-contract';
import { clusterApply, headroomHorizonMs } from './zone-steps';
import { storageObject, storageRef } from '../api/storage';

type Judged = Omit<PlannedZoneStatus, 'zone' | 'gates'>;

/** A read that fails for good becomes the zone's `fail` reason; anything else (a bug, a cancel) is thrown. */
async function orFail<T>(read: () => Promise<T>): Promise<T | { failed: string }> {
  try {
    return await read();
  } catch (err) {
    if (!isStepFailure(err)) throw err;
    return { failed: failureMessage(err) };
  }
}
const failed = (x: unknown): x is { failed: string } => typeof x === 'object' && x !== null && 'failed' in x;

/** Whether the zone's VMCluster is up to date, or why the rollout would fail at it. */
async function judgeCluster(ctx: RunContext, zs: ZoneSpec): Promise<boolean | { failed: string }> {
  const { cleanup: acts } = ctx.acts;
  const cur = await orFail(() => acts.readObject(storageObject(zs, ctx.ns)));
  if (failed(cur)) return cur;
  const dry = await orFail(() => acts.applyObject({ ...clusterApply(ctx, zs), dryRun: true }));
  if (failed(dry)) return { failed: `the apply's server-side dry run is refused: ${dry.failed}` };
  return isUpToDate(cur, dry.changed);
}

/**
 * A zone its trafficMode holds: out of reads already (recorded) or leaving for good, as an upgraded
 * zone leaves; write-only and not up to date, upgraded out of reads; maintenance, left alone.
 */
async function judgeHeld(run: RolloutRun, name: string, held: HeldMode, out: boolean): Promise<Judged> {
  const { ctx } = run;
  const none = { routes: [], removedRefs: 0 };
  const upToDate = held === 'maintenance' ? true : await judgeCluster(ctx, zoneSpec(ctx, name));
  if (failed(upToDate)) return { ...none, would: 'fail', reason: upToDate.failed };
  const upgrade = held === 'maintenance' ? 'its VMCluster left alone' : upToDate ? 'already up to date' : 'upgraded out of reads';
  if (out) return { ...none, would: 'hold', reason: `trafficMode ${held}: out of reads already (recorded), stays out; ${upgrade}` };
  const leaving = await judgeZone(run, name, true);
  if (leaving.would === 'fail') return leaving;
  return { ...leaving, would: 'hold', reason: `trafficMode ${held}: would leave reads for good; ${upgrade}` };
}

/** The zone at its turn; `leaving`: it leaves whatever its VMCluster (judged by the caller). */
async function judgeZone({ ctx }: RolloutRun, name: string, leaving = false): Promise<Judged> {
  const zs = zoneSpec(ctx, name);
  const { cleanup: acts } = ctx.acts;
  const none = { routes: [], removedRefs: 0 };
  if (!leaving) {
    const upToDate = await judgeCluster(ctx, zs);
    if (failed(upToDate)) return { ...none, would: 'fail', reason: upToDate.failed };
    if (upToDate) return { ...none, would: 'skip', reason: 'already up to date and operational' };
  }
  const snaps = await orFail(() => acts.readRoutes(routesToRead(ctx)));
  if (failed(snaps)) return { ...none, would: 'fail', reason: `the read routes cannot be read: ${snaps.failed}` };
  let removals;
  try {
    removals = computeRemovals(snaps, storageRef(zs, ctx.ns));
  } catch (e) {
    if (e instanceof RoutePlanError) return { ...none, would: 'fail', reason: e.message };
    throw e;
  }
  const edited = removals.filter((r) => r.removed.length > 0);
  const routes = { routes: edited.map((r) => `${r.route.kind}/${r.route.name}`), removedRefs: edited.reduce((n, r) => n + r.removed.length, 0) };
  const horizon = headroomHorizonMs(ctx.st);
  if (horizon === undefined) return { ...routes, would: 'upgrade', reason: 'would leave reads and be upgraded (queue headroom not checked: Off)' };
  const headroom = await orFail<QueueHeadroom>(async () => (await acts.readVmagent({ ...queueTarget(ctx, zs), headroomHorizonMs: horizon })).headroom!);
  if (failed(headroom))
    return { ...routes, would: 'upgrade', reason: `would leave reads and be upgraded; the queue headroom cannot be read now: ${headroom.failed}` };
  if (!headroom.fits) return { ...routes, queueHeadroom: headroom, would: 'fail', reason: `would stay in reads (InsufficientHeadroom): ${headroom.message}` };
  return { ...routes, queueHeadroom: headroom, would: 'upgrade', reason: 'would leave reads and be upgraded' };
}

/** Plans every zone in rollout order, writes the plan into the status, ends the run Planned. */
export async function planOnly(run: RolloutRun): Promise<RolloutResult> {
  const { ctx, state } = run;
  const recorded = await ctx.acts.cleanup.readRecords({ namespace: ctx.ns, uid: ctx.object.uid });
  // The status says what is out of reads, dry run or not.
  syncRecorded(state, recorded);
  const out = new Map(recorded.map((r) => [r.zone, r]));
  // Taken first, as adoptRecordedZones orders them: the zones out of reads that no trafficMode holds.
  const first = (n: string) => out.has(n) && !zoneState(state, n).held;
  const order = [...state.order.filter(first), ...state.order.filter((n) => !first(n))];
  const zones: PlannedZoneStatus[] = [];
  let upgrades = 0;
  for (const name of order) {
    const r = out.get(name);
    const held = zoneState(state, name).held;
    const judged: Judged = held
      ? await judgeHeld(run, name, held, !!r)
      : r
        ? {
            routes: r.removals.map((x) => `${x.route.kind}/${x.route.name}`),
            removedRefs: r.removals.reduce((n, x) => n + x.removed.length, 0),
            would: 'adopt',
            reason: `out of reads since ${r.since} (left by generation ${r.generation}): taken first, upgraded, rejoins once drained`,
          }
        : await judgeZone(run, name);
    const upgrade = judged.would === 'upgrade';
    const gates = upgrade ? gatesBefore(ctx.st.gates, upgrades) : [];
    const canary = upgrade && isCanaryZone(ctx.st.canary, name, upgrades);
    if (upgrade) upgrades++;
    zones.push({ zone: name, gates, ...judged, ...(canary ? { canary: true as const } : {}) });
  }
  state.plan = { generation: ctx.object.generation, at: now(), order, zones };
  const count = (w: PlannedZoneStatus['would']) => zones.filter((z) => z.would === w).length;
  return finish(run, { kind: 'planned', upgrade: count('upgrade'), skip: count('skip'), adopt: count('adopt'), hold: count('hold'), fail: count('fail') });
}
