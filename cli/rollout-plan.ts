// What `kubectl vmdc plan` predicts of a rollout of the object's current spec: the zone order, which
// zones would be skipped, what each other zone's leaving reads would remove from the read routes,
// where gates and pauseBetweenZones would wait, and how long it might take. Pure: the workflow's own
// functions (workflows/plan.ts, routes.ts, gates.ts) on what cli/verbs/plan.ts read. Everything read
// is hostile: a route object that cannot be parsed is said in the plan, never thrown.
import { OPERATIONAL } from '../api/constants';
import { isPlainObject } from '../api/json-value';
import type { RemovedRef, RouteRef, RouteRemoval } from '../api/route-records';
import { routeTargetRefs } from '../api/route-targets';
import { heldMode, type HeldMode } from '../api/traffic-mode';
import type { Gate, JsonObject, NormalizedSpec, ZoneOrder, ZoneSpec } from '../api/types';
import { storageRef } from '../api/storage';
import { gatesBefore, isCanaryZone } from '../workflows/gates';
import { isOperationalAt, planZoneOrder, shuffleSeed } from '../workflows/plan';
import { computeRemovals, RoutePlanError } from '../workflows/routes';
import type { ActionDocument } from './output';

/** One read route as the API server gave it: the object, absent (404), or why it could not be read. */
export type RouteRead = { route: RouteRef; obj: unknown } | { route: RouteRef; missing: true } | { route: RouteRef; error: string };

/** One zone's VMCluster as found and as the dry run of its apply would leave it (cli/zone-dry-run.ts). */
export interface ZoneFinding {
  zone: string;
  vmcluster: string;
  current?: unknown;
  /** Undefined: missing, and the spec names it without a full spec (nothing to apply). */
  after?: unknown;
}

export interface PlanInput {
  object: { namespace: string; name: string; uid: string; generation: number };
  spec: NormalizedSpec;
  zones: readonly ZoneFinding[];
  routes: readonly RouteRead[];
  /** The object's status (unvalidated): its zones' times are the past rollout the duration is predicted from. */
  status: unknown;
}

/** hold: its trafficMode holds it out of reads (it leaves, never rejoins; maintenance: not upgraded). */
export type ZoneAction = 'skip' | 'upgrade' | 'hold' | 'fail';

export interface PlannedRemoval {
  route: RouteRef;
  removed: Array<{ ref: string; what: string }>;
}

export interface PlannedZone {
  zone: string;
  /** The zone's storage object: a VMCluster, or the VMSingle storageKind says. */
  vmcluster: string;
  storageKind?: 'VMSingle';
  would: ZoneAction;
  reason: string;
  /** The gates that would hold before the zone starts. */
  gates: Gate[];
  /** pauseBetweenZones after the zone (0: none). */
  pauseAfterMs: number;
  /** It would be the canary (strategy.canary): analysed this long before it rejoins reads. */
  canaryBakeMs?: number;
  /** What leaving reads would remove, route by route (none for a skipped zone). */
  removals: PlannedRemoval[];
  /** Routes whose removals cannot be predicted (unreadable): the reason each. */
  unknownRoutes: Array<{ route: RouteRef; reason: string }>;
}

export interface PlannedRoute {
  route: RouteRef;
  readable: boolean;
  reason?: string;
}

export interface DurationPrediction {
  /** null: no number can be given (no past rollout, or nothing to upgrade). */
  predictedMs: number | null;
  meanZoneMs: number | null;
  /** Upgraded zones of the last rollout recorded in the status, the mean's basis. */
  pastZones: number;
  zonesToUpgrade: number;
  pauses: number;
  pauseBetweenZonesMs: number;
  /** Gates hold somewhere: their waits (a person's promote) come on top, unbounded. */
  plusGateWaits: boolean;
  /** The canary's bake, on top of the zones' mean (0: no canary). */
  canaryBakeMs: number;
}

export interface RolloutPlan {
  object: PlanInput['object'];
  clusterVersion: string;
  order: { mode: ZoneOrder; seed: string; zones: string[] };
  zones: PlannedZone[];
  routes: PlannedRoute[];
  duration: DurationPrediction;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Whether the workflow would skip the zone (workflows/zone-runner.ts skipIfUpToDate): the VMCluster
 * exists, the dry run of its apply leaves its generation alone, and it is operational at it.
 */
export function zoneWould(f: Pick<ZoneFinding, 'current' | 'after'>): { would: ZoneAction; reason: string } {
  if (f.after === undefined) return { would: 'fail', reason: 'not found, and the spec names it without a full spec: the rollout would fail at this zone' };
  if (!isPlainObject(f.current)) return { would: 'upgrade', reason: "absent: created from the zone's full spec" };
  const meta = isPlainObject(f.current.metadata) ? f.current.metadata : {};
  const afterMeta = isPlainObject(f.after) && isPlainObject(f.after.metadata) ? f.after.metadata : {};
  const generation = num(meta.generation);
  if (generation === undefined || num(afterMeta.generation) !== generation)
    return { would: 'upgrade', reason: 'its spec would change (`kubectl vmdc diff` shows how)' };
  const status = isPlainObject(f.current.status) ? f.current.status : {};
  const state = { exists: true, generation, observedGeneration: num(status.observedGeneration), updateStatus: str(status.updateStatus) };
  if (isOperationalAt(state, generation)) return { would: 'skip', reason: 'already at the desired spec and operational' };
  return {
    would: 'upgrade',
    reason: `at the desired spec but not ${OPERATIONAL} (updateStatus ${state.updateStatus ?? '-'}, observedGeneration ${state.observedGeneration ?? '-'} of ${generation}): the rollout runs it`,
  };
}

/** A route's targetRefs as the workflow reads them (api/route-targets.ts routeTargetRefs), or why they cannot be. */
export function routeSnapshot(r: RouteRead): { ok: true; targetRefs: JsonObject[] } | { ok: false; reason: string } {
  if ('error' in r) return { ok: false, reason: `could not be read: ${r.error}` };
  if ('missing' in r) return { ok: false, reason: 'not found: the rollout would fail at the first zone it takes out of reads' };
  if (!isPlainObject(r.obj))
    return {
      ok: false,
      reason: `could not be parsed: the API server answered ${Array.isArray(r.obj) ? 'a list' : r.obj === null ? 'null' : `a ${typeof r.obj}`}, not an object`,
    };
  const spec = r.obj.spec;
  if (spec !== undefined && !isPlainObject(spec)) return { ok: false, reason: 'could not be parsed: its spec is not an object' };
  const holder = r.route.kind === 'VMAuth' ? spec?.unauthorizedUserAccessSpec : spec;
  if (holder !== undefined && !isPlainObject(holder)) return { ok: false, reason: 'could not be parsed: spec.unauthorizedUserAccessSpec is not an object' };
  const refs = isPlainObject(holder) ? holder.targetRefs : undefined;
  if (refs !== undefined && !Array.isArray(refs)) return { ok: false, reason: 'could not be parsed: its targetRefs is not a list' };
  return { ok: true, targetRefs: routeTargetRefs(r.route.kind, r.obj) };
}

function describeRemoved(r: RemovedRef): { ref: string; what: string } {
  const at = `targetRefs[${r.index}]`;
  switch (r.type) {
    case 'targetRef':
      return { ref: at, what: 'the whole targetRef (it routes only here)' };
    case 'crdName':
      return { ref: `${at}.crd.name`, what: `crd.name ${r.name} and crd.namespace emptied (the targetRef routes elsewhere too)` };
    case 'object':
      return { ref: `${at}.crd.objects[${r.objectIndex}]`, what: 'the entry naming this zone' };
  }
}

const describeRemovals = (removals: readonly RouteRemoval[]): PlannedRemoval[] =>
  removals.filter((r) => r.removed.length > 0).map((r) => ({ route: { ...r.route }, removed: r.removed.map(describeRemoved) }));

/** The mean duration of the zones the status records as upgraded (phase Done, both times valid), and how many. */
export function pastZoneDurations(status: unknown): { meanMs: number | null; zones: number } {
  const zones = isPlainObject(status) && Array.isArray(status.zones) ? status.zones : [];
  const ms: number[] = [];
  for (const z of zones) {
    if (!isPlainObject(z) || z.phase !== 'Done' || typeof z.startedAt !== 'string' || typeof z.finishedAt !== 'string') continue;
    const d = Date.parse(z.finishedAt) - Date.parse(z.startedAt);
    if (Number.isFinite(d) && d >= 0) ms.push(d);
  }
  return { meanMs: ms.length ? Math.round(ms.reduce((a, b) => a + b, 0) / ms.length) : null, zones: ms.length };
}

export function predictDuration(status: unknown, zones: readonly PlannedZone[], pauseBetweenZonesMs: number): DurationPrediction {
  const past = pastZoneDurations(status);
  const zonesToUpgrade = zones.filter((z) => z.would !== 'skip').length;
  const pauses = zones.filter((z) => z.pauseAfterMs > 0).length;
  const canaryBakeMs = zones.find((z) => z.canaryBakeMs !== undefined)?.canaryBakeMs ?? 0;
  const predictedMs = past.meanMs === null || zonesToUpgrade === 0 ? null : past.meanMs * zonesToUpgrade + pauses * pauseBetweenZonesMs + canaryBakeMs;
  return {
    predictedMs,
    meanZoneMs: past.meanMs,
    pastZones: past.zones,
    zonesToUpgrade,
    pauses,
    pauseBetweenZonesMs,
    plusGateWaits: zones.some((z) => z.gates.length > 0),
    canaryBakeMs,
  };
}

/**
 * A zone its trafficMode holds: taken out of every route still reading from it (none: out already),
 * and, write-only, upgraded when its spec would change; no gate, never the canary, never back.
 */
function heldZone(
  name: string,
  zs: ZoneSpec,
  f: ZoneFinding,
  held: HeldMode,
  snapshots: Parameters<typeof computeRemovals>[0],
  namespace: string,
  unknownRoutes: PlannedZone['unknownRoutes'],
): PlannedZone {
  const base = { zone: name, ...plannedStorage(zs, f), gates: [], pauseAfterMs: 0, unknownRoutes };
  let removals: PlannedRemoval[];
  try {
    removals = describeRemovals(computeRemovals(snapshots, storageRef(zs, namespace)));
  } catch (e) {
    if (!(e instanceof RoutePlanError)) throw e;
    return { ...base, would: 'fail', reason: `trafficMode ${held}: the rollout would fail at this zone: ${e.message}`, removals: [] };
  }
  const leaves = removals.length ? 'taken out of reads for good' : 'out of reads already';
  if (held === 'maintenance') return { ...base, would: 'hold', reason: `trafficMode maintenance: ${leaves}; its VMCluster is left alone`, removals };
  const w = zoneWould(f);
  const upgrade = w.would === 'skip' ? 'not upgraded: already at the desired spec' : `upgraded out of reads (${w.reason})`;
  return { ...base, would: w.would === 'fail' ? 'fail' : 'hold', reason: `trafficMode write-only: ${leaves}; ${upgrade}`, removals };
}

const plannedStorage = (zs: ZoneSpec, f: ZoneFinding): Pick<PlannedZone, 'vmcluster' | 'storageKind'> => ({
  vmcluster: f.vmcluster,
  ...(zs.vmsingle ? { storageKind: 'VMSingle' as const } : {}),
});

export function planRollout(input: PlanInput): RolloutPlan {
  const { object, spec } = input;
  const st = spec.strategy;
  const seed = shuffleSeed(object);
  const order = planZoneOrder(
    spec.zones.map((z) => z.name),
    st.order,
    seed,
    st.canary?.zone,
  );
  const reads = input.routes.map((r) => ({ route: r.route, snap: routeSnapshot(r) }));
  const snapshots = reads.flatMap((r) => (r.snap.ok ? [{ route: { ...r.route }, targetRefs: r.snap.targetRefs }] : []));
  const unknownRoutes = reads.flatMap((r) => (r.snap.ok ? [] : [{ route: { ...r.route }, reason: r.snap.reason }]));
  let upgraded = 0;
  const zones = order.map((name, i): PlannedZone => {
    const finding = input.zones.find((z) => z.zone === name)!;
    const held = heldMode(spec.zones.find((z) => z.name === name)!);
    const zs = spec.zones.find((z) => z.name === name)!;
    if (held) return heldZone(name, zs, finding, held, snapshots, object.namespace, unknownRoutes);
    let { would, reason } = zoneWould(finding);
    if (would === 'skip') return { zone: name, ...plannedStorage(zs, finding), would, reason, gates: [], pauseAfterMs: 0, removals: [], unknownRoutes: [] };
    const gates = gatesBefore(st.gates, upgraded);
    const canary = isCanaryZone(st.canary, name, upgraded) ? { canaryBakeMs: st.canary!.bakeMs } : {};
    upgraded++;
    let removals: PlannedRemoval[] = [];
    try {
      removals = describeRemovals(computeRemovals(snapshots, storageRef(zs, object.namespace)));
    } catch (e) {
      if (!(e instanceof RoutePlanError)) throw e;
      if (would !== 'fail') reason = `${reason}; the rollout would fail at this zone: ${e.message}`;
      would = 'fail';
    }
    const pauseAfterMs = i < order.length - 1 ? st.pauseBetweenZonesMs : 0;
    return { zone: name, ...plannedStorage(zs, finding), would, reason, gates, pauseAfterMs, ...canary, removals, unknownRoutes };
  });
  return {
    object,
    clusterVersion: spec.clusterVersion,
    order: { mode: st.order, seed, zones: order },
    zones,
    routes: reads.map((r) => ({ route: { ...r.route }, readable: r.snap.ok, ...(r.snap.ok ? {} : { reason: r.snap.reason }) })),
    duration: predictDuration(input.status, zones, st.pauseBetweenZonesMs),
  };
}

/** The plan as `-o json|yaml`'s one document. */
export function planDocument(p: RolloutPlan): ActionDocument {
  const { namespace, name, uid, generation } = p.object;
  return {
    verb: 'plan',
    namespace,
    name,
    uid,
    result: 'planned',
    generation,
    clusterVersion: p.clusterVersion,
    order: p.order,
    zones: p.zones,
    routes: p.routes,
    duration: p.duration,
  };
}
