// The six steps of one zone (docs/design.md#the-six-steps-of-a-zone), one function
// each, each taking only what it uses of the zone's context. Every step is idempotent: a resumed
// zone runs its failed step again as is.
import type { RouteRemoval } from '../api/route-records';
import { applyRemoval } from '../api/route-edits';
import { condition } from '@temporalio/workflow';
import type { Strategy, ZoneSpec, ZoneStep } from '../api/types';
import type { ApplyObjectInput, ReadHealthInput, RouteSnapshot } from './activity-types';
import { baselineCandidates, concludeAnalysis, measurementInterval, recordMeasurement, startAnalysis } from './analysis';
import type { Boundary } from './boundary';
import { judgeCapacity } from './capacity';
import { checkComplete } from './completeness';
import { FailureType, stepFailure } from './failures';
import { clusterApplyFor } from './managed-objects';
import type { EditedRoutes, ReadSwitch } from './read-switch';
import { stopRefused } from './rollout-end';
import { RoutePlanError, computeRemovals } from './routes';
import { routeReferencesCluster } from '../api/route-targets';
import { queueTarget, routesToRead, type RunContext } from './run-context';
import type { RolloutSignals } from './signals';
import { removedAnything, type RolloutState, type ZoneState } from './state';
import type { StatusReport } from './status-report';
import { namedStorage, STORAGE, storageObject, storageOf, storageRef, zoneStorage } from '../api/storage';

/** What the steps of one zone work with: the run's parts, the zone's state and spec, and what its route edit changed. */
export interface ZoneContext {
  readonly ctx: RunContext;
  readonly state: RolloutState;
  readonly z: ZoneState;
  readonly zs: ZoneSpec;
  readonly edited: EditedRoutes;
  readonly report: StatusReport;
  readonly reads: ReadSwitch;
  readonly signals: RolloutSignals;
  readonly boundary: Boundary;
}

type StepHandler = (c: ZoneContext) => Promise<void>;

/** One handler per step: a step added to ZONE_STEPS without a handler does not compile. */
export type ZoneStepHandlers = { readonly [S in ZoneStep]: StepHandler };

/** The zone's VMCluster apply: the desired spec (zone full spec, global overlay, zone overlay, clusterVersion). */
export function clusterApply(ctx: RunContext, zs: ZoneSpec): ApplyObjectInput {
  return clusterApplyFor(ctx.object, ctx.spec, zs);
}

/** What taking the zone out of the managed routes removes, from the routes as they are now (and those routes). */
async function planRemovals(ctx: RunContext, zs: ZoneSpec): Promise<{ removals: RouteRemoval[]; snaps: RouteSnapshot[] }> {
  const snaps = await ctx.acts.short.readRoutes(routesToRead(ctx));
  try {
    return { removals: computeRemovals(snaps, storageRef(zs, ctx.ns)), snaps };
  } catch (e) {
    throw e instanceof RoutePlanError ? stepFailure(e.type, e.message) : e;
  }
}

/**
 * Before the zone leaves: the other zones that the managed routes will still send reads to must be
 * operational with empty vmagent backlogs (a lagging carrier serves stale reads); wait, saying so.
 */
async function waitForCarriers({ ctx, z, zs, report }: Pick<ZoneContext, 'ctx' | 'z' | 'zs' | 'report'>): Promise<void> {
  const { removals, snaps } = await planRemovals(ctx, zs);
  const carriers = ctx.spec.zones.filter((o) => {
    if (o.name === zs.name) return false;
    const vmc = storageRef(o, ctx.ns);
    return snaps.some((snap) => {
      const r = removals.find((x) => x.route.kind === snap.route.kind && x.route.name === snap.route.name);
      return routeReferencesCluster(r ? applyRemoval(snap.targetRefs, r) : snap.targetRefs, vmc);
    });
  });
  if (carriers.length === 0) return;
  z.note = { kind: 'waiting-for-carriers', carriers: carriers.map((c) => c.name) };
  await report.write();
  await ctx.acts.wait.waitCarriersReady({
    namespace: ctx.ns,
    carriers: carriers.map((c) => ({ zone: c.name, ...namedStorage(c), queue: queueTarget(ctx, c) })),
    pollIntervalMs: ctx.st.pollIntervalMs,
  });
}

/** The horizon of the queue headroom preflight (strategy.expectedDowntime, or zoneTimeout), or undefined when Off. */
export function headroomHorizonMs(st: Strategy): number | undefined {
  return st.queueHeadroom === 'Off' ? undefined : (st.expectedDowntimeMs ?? st.zoneTimeoutMs);
}

/**
 * Before the zone leaves, one reading of vmagent's pages: every pod's queue for the zone must hold
 * what it takes in over the expected downtime (strategy.queueHeadroom), or the zone fails here, still
 * in reads, with the numbers; and the drop counters are counted from here (strategy.dataCompleteness):
 * what vmagent drops for the zone from now on is its window's.
 */
async function readVmagentBeforeLeaving({ ctx, z, zs }: Pick<ZoneContext, 'ctx' | 'z' | 'zs'>): Promise<void> {
  const horizon = headroomHorizonMs(ctx.st);
  const drops = ctx.st.dataCompleteness !== 'Off' && z.dropBaseline === undefined;
  if (horizon === undefined && !drops) return;
  const r = await ctx.acts.short.readVmagent({ ...queueTarget(ctx, zs), ...(horizon !== undefined ? { headroomHorizonMs: horizon } : {}), drops });
  if (r.drops) z.dropBaseline = r.drops;
  if (!r.headroom) return;
  z.queueHeadroom = r.headroom;
  if (!r.headroom.fits) {
    throw stepFailure(
      FailureType.InsufficientHeadroom,
      `${r.headroom.message}; the zone stays in reads: give the queue room (-remoteWrite.maxDiskUsagePerURL, disk), shorten strategy.expectedDowntime, or set strategy.queueHeadroom: Off, then resume`,
    );
  }
}

/** Whom the capacity guard reads: every vmauth pod, and the vmselect pods of the zones still in reads. */
function healthInput({ ctx, state, z }: Pick<ZoneContext, 'ctx' | 'state' | 'z'>): ReadHealthInput {
  const carriers = state.zones.filter((o) => o.name !== z.name && !o.outOfRotation).map(storageOf);
  return { namespace: ctx.ns, vmauthName: ctx.spec.vmauth.name, carriers };
}

/**
 * strategy.capacityGuard, before the zone leaves: how the reads are served now, the baseline its
 * window is judged against (vmauth's mean latency) and the start of its first window.
 */
async function readHealthBeforeLeaving(c: Pick<ZoneContext, 'ctx' | 'state' | 'z'>): Promise<void> {
  if (!c.ctx.st.capacityGuard) return;
  const r = await c.ctx.acts.short.readReadHealth(healthInput(c));
  c.z.healthBaseline = c.z.healthLast = r;
}

/**
 * strategy.capacityGuard, before each step of a zone that is out: how the other zones served the
 * reads since the last look. A breach (or reads that cannot be measured) waits for a person, the zone
 * still out: promote goes on, abort fails the zone. The next window starts at this look.
 */
export async function guardCapacity(c: Pick<ZoneContext, 'ctx' | 'state' | 'z' | 'report' | 'signals' | 'boundary'>): Promise<void> {
  const { ctx, z, report, signals, boundary } = c;
  const bounds = ctx.st.capacityGuard;
  if (!bounds || !z.outOfRotation || !z.healthBaseline || !z.healthLast) return;
  const now = await ctx.acts.short.readReadHealth(healthInput(c));
  const check = (z.capacity = judgeCapacity(z.healthBaseline, z.healthLast, now, bounds));
  if (!now.unreadable) z.healthLast = now;
  if (!check.breached) return;
  const end = signals.superseded() ? { kind: 'superseded' as const } : await boundary.capacity(z.name, check.message, () => report.write());
  if (end.kind !== 'aborted') return;
  throw stepFailure(
    FailureType.CapacityBreached,
    `capacity guard: ${check.message}; aborted by a person${end.note.reason ? ` (${end.note.reason})` : ''}: the zone stays out of reads; resume goes on from here`,
  );
}

/**
 * 1. Take the zone out of every managed read route, announced in the status first. Planned afresh
 * from the routes as they are (a resumed zone finishes what a failed edit left); each route's edit
 * writes, in the same API call, the record of what it removed, and `z.removals` is only ever what
 * the records say; a refused announcement stops the run before any route is touched; after a failed
 * edit the records say what landed.
 */
async function leaveReads(c: Pick<ZoneContext, 'ctx' | 'state' | 'z' | 'zs' | 'edited' | 'report' | 'reads' | 'signals'>): Promise<void> {
  const { ctx, state, z, zs, edited, report, reads, signals } = c;
  // A patch the API server refuses fails the zone here, while it is still in reads (a zone only
  // taken out is not patched: a VMCluster in maintenance is not even sent as a dry run).
  if (!z.leaveOnly) await ctx.acts.short.applyObject({ ...clusterApply(ctx, zs), dryRun: true });
  await readVmagentBeforeLeaving(c);
  await waitForCarriers(c);
  await readHealthBeforeLeaving(c);
  // Planned from a fresh read: the routes may have changed while the carriers were awaited.
  const { removals: plan } = await planRemovals(ctx, zs);
  // The switch must be confirmable before the zone leaves: the operator's config Secret exists and
  // routes the zone now, and every ready vmauth pod runs it. Otherwise (no Secret, no access to it,
  // a pod stuck on an older config) the zone waits, and fails, while still in reads.
  if (plan.some((r) => r.removed.length > 0)) await reads.confirm(z, plan, 'present');
  z.outOfRotation = true;
  z.outSince = new Date().toISOString();
  z.note = { kind: 'leaving' };
  if (!(await report.write()).written) {
    z.outOfRotation = removedAnything(z);
    stopRefused(state, signals, ctx.object.generation);
    return;
  }
  if (!plan.some((r) => r.removed.length > 0)) return;
  await reads.leave(z, plan, edited);
}

/** 2. Wait until the vmauth pods serve the routes without the zone, then for in-flight reads. */
async function waitForSwitch({ ctx, z, edited, report, reads }: Pick<ZoneContext, 'ctx' | 'z' | 'edited' | 'report' | 'reads'>): Promise<void> {
  if (!removedAnything(z)) return;
  await reads.await(z, z.removals!, edited, 'absent');
  const { st } = ctx;
  if (st.readDrainDelayMs <= 0) return;
  z.note = { kind: 'draining-reads', quietMs: readQuietMs(st) };
  await report.write();
  const d = await ctx.acts.wait.waitReadsDrained({
    namespace: ctx.ns,
    ...storageOf(z),
    quietMs: readQuietMs(st),
    maxMs: st.readDrainDelayMs,
    pollIntervalMs: st.pollIntervalMs,
  });
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
async function upgrade({ ctx, z, zs }: Pick<ZoneContext, 'ctx' | 'z' | 'zs'>): Promise<void> {
  z.patchAttempted = true;
  z.drainedConfirmed = false;
  const r = await ctx.acts.step.applyObject(clusterApply(ctx, zs));
  z.vmclusterGeneration = r.generation;
}

/** 4. Wait until the VMCluster is operational at that generation (`failed` fails the step). */
async function waitOperational({ ctx, z, zs }: Pick<ZoneContext, 'ctx' | 'z' | 'zs'>): Promise<void> {
  await ctx.acts.wait.waitOperational({
    ...storageObject(zs, ctx.ns),
    generation: z.vmclusterGeneration ?? 0,
    pollIntervalMs: ctx.st.pollIntervalMs,
  });
}

/** How often the queue wait shows its latest sample in the status and the progress query. */
const QUEUE_REPORT_INTERVAL_MS = 10_000;

/**
 * 5. Wait until every vmagent pod's backlog for the zone stayed empty for queueDrainedFor, in one
 * heartbeating activity that writes its latest sample into the status as it goes (a long drain
 * costs heartbeats, not history events), bounded by zoneTimeout.
 */
async function waitForQueue({ ctx, state, z, zs, report }: Pick<ZoneContext, 'ctx' | 'state' | 'z' | 'zs' | 'report'>): Promise<void> {
  const { st } = ctx;
  const queueReport = { object: ctx.object, status: report.status(), zone: z.name, everyMs: QUEUE_REPORT_INTERVAL_MS };
  const streak = await ctx.acts.wait.watchQueue({
    ...queueTarget(ctx, zs),
    queueDrainedForMs: st.queueDrainedForMs,
    pollIntervalMs: st.pollIntervalMs,
    report: queueReport,
  });
  state.lastQueueSample = { ...streak.last, zone: z.name, ...(streak.emptySince ? { emptySince: streak.emptySince } : {}) };
  await checkComplete(ctx, state, z, zs, ctx.acts.short);
  z.drainedConfirmed = true;
}

/**
 * The zone the canary is compared with: the first candidate (baselineCandidates) whose VMCluster does
 * not run the clusterVersion this rollout applies; none: nothing to compare with (Inconclusive).
 */
async function baselineZone(ctx: RunContext, state: RolloutState, canary: string): Promise<ZoneState | undefined> {
  for (const candidate of baselineCandidates(state.zones, state.order, canary)) {
    const zs = ctx.spec.zones.find((x) => x.name === candidate.name)!;
    const { kind } = zoneStorage(zs);
    const desired = STORAGE[kind].versionOf(clusterApply(ctx, zs).patch);
    const cur = await ctx.acts.short.readObject(storageObject(zs, ctx.ns));
    if (cur.exists && STORAGE[kind].versionOf(cur.spec) !== desired) return candidate;
  }
  return undefined;
}

/**
 * 5b. The canary only (strategy.canary), upgraded, drained and still out of reads: measured against a
 * zone at the previous version every interval for the bake. Failed: the step fails, the canary stays
 * out. Inconclusive (nothing comparable, or the bake cut short by a newer generation): a person
 * decides — promote, it rejoins; abort, the step fails. No automatic rollback (docs/design.md).
 */
async function analyze({
  ctx,
  state,
  z,
  report,
  signals,
  boundary,
}: Pick<ZoneContext, 'ctx' | 'state' | 'z' | 'report' | 'signals' | 'boundary'>): Promise<void> {
  const canary = ctx.st.canary!;
  const every = measurementInterval(canary.bakeMs, canary.analysis.intervalMs);
  const started = Date.now();
  const base = await baselineZone(ctx, state, z.name);
  let a = (z.analysis = startAnalysis(new Date(started).toISOString(), canary.bakeMs, base?.name));
  await report.write();
  let cutShort: string | undefined;
  while (base) {
    const m = await ctx.acts.wait.measureCanary({
      namespace: ctx.ns,
      canary: { zone: z.name, ...storageOf(z) },
      baseline: { zone: base.name, ...storageOf(base) },
      analysis: canary.analysis,
    });
    a = z.analysis = recordMeasurement(a, m);
    // The last measurement at the end of the bake.
    const left = canary.bakeMs - (Date.now() - started);
    if (m.verdict === 'Failed' || left <= 0) break;
    await report.write();
    if (await condition(() => signals.superseded(), Math.min(every, left))) {
      cutShort = `the bake cut short by generation ${signals.supersededBy}`;
      break;
    }
  }
  a = z.analysis = concludeAnalysis(a, cutShort);
  if (a.verdict === 'Successful') return;
  const stays = 'the canary stays out of reads: look at it, then resume (analysed again), or roll back';
  if (a.verdict === 'Failed') throw stepFailure(FailureType.AnalysisFailed, `${a.message}; ${stays}`);
  const end = signals.superseded() ? { kind: 'superseded' as const } : await boundary.canary(z.name, () => report.write());
  if (end.kind === 'promoted') {
    z.analysis = { ...a, promoted: true, message: `${a.message}; promoted by a person` };
    return;
  }
  const how = end.kind === 'aborted' ? `aborted by a person${end.note.reason ? ` (${end.note.reason})` : ''}` : 'superseded before a person decided';
  throw stepFailure(FailureType.AnalysisFailed, `${a.message}; ${how}: ${stays}`);
}

/** 6. Put back exactly what step 1 removed and wait for the switch. */
async function rejoinReads({ ctx, z, reads }: Pick<ZoneContext, 'ctx' | 'z' | 'reads'>): Promise<void> {
  await reads.rejoin(z, ctx.acts.step);
}

export const ZONE_STEP_HANDLERS: ZoneStepHandlers = {
  LeavingReads: leaveReads,
  WaitingForSwitch: waitForSwitch,
  Upgrading: upgrade,
  WaitingOperational: waitOperational,
  WaitingForQueue: waitForQueue,
  Analyzing: analyze,
  RejoiningReads: rejoinReads,
};
