// Checks invariants [I1]–[I5] of docs/design.md over a recorded action log (from a test double or
// a real environment's recorder). Pure: no Temporal imports.
import type { JsonObject, VMDistributedClusterStatus } from '../../../api/types';
import type { RouteRemoval } from '../../../api/route-records';
import { jsonEqual } from '../../../api/json-value';
import { routeReferencesCluster } from '../../../api/route-targets';
import { undoRemoval } from '../../../api/route-edits';

interface Base {
  seq: number;
  /** Workflow id of the acting workflow ('' for the user / the operator). */
  actor: string;
  /** Generation the actor works for. */
  actorGeneration: number;
}

export type Action = Base &
  (
    | { type: 'takeOver'; stale: boolean }
    /** vmrollout edited routes: full targetRefs of each edited route before and after. */
    | {
        type: 'routes';
        direction: 'remove' | 'restore';
        vmcluster: string;
        removals: RouteRemoval[];
        before: Record<string, JsonObject[]>;
        after: Record<string, JsonObject[]>;
        /** From the route-records version on: the zones recorded on the routes after this edit. */
        recorded?: string[];
      }
    /** Someone else replaced a route's targetRefs (the rollout must keep exactly that). */
    | { type: 'userSet'; route: string; targetRefs: JsonObject[] }
    /** Someone else appended a targetRef to a route (must survive every vmrollout edit). */
    | { type: 'userAppend'; route: string; targetRef: JsonObject }
    | { type: 'patch'; kind: string; name: string; generation: number; changed: boolean }
    /** The workflow was told this object is operational at `generation`. */
    | { type: 'operational'; kind: string; name: string; generation: number }
    /** The workflow was told this VMCluster's queues stayed empty for `emptyForMs`. */
    | { type: 'drained'; vmcluster: string; emptyForMs: number }
    | { type: 'status'; written: boolean; status: VMDistributedClusterStatus }
    /** The workflow was told every vmauth pod runs a config without (absent) / with (present) the VMCluster. */
    | { type: 'switch-confirmed'; vmcluster: string; expect: 'absent' | 'present' }
    /** The workflow was told the zones that carry the reads are healthy. */
    | { type: 'carriers-ready'; vmclusters: string[] }
    /** The workflow was told the VMCluster's vmselects are quiet. */
    | { type: 'reads-drained'; vmcluster: string }
  );

export interface InvariantOptions {
  /** Route key (e.g. 'VMAuth/vm-global') -> targetRefs before the scenario. */
  initialRoutes: Record<string, JsonObject[]>;
  /** VMCluster name -> zone name. */
  zoneOf: Record<string, string>;
  queueDrainedForMs: number;
  /** Namespace of the object (and of its VMClusters and routes). */
  namespace: string;
  /** Check the final state too (every edit undone except for zones the final status reports out). */
  final?: boolean;
  /** From the real-operator version on: a VMCluster changes only after its leaving was confirmed in the vmauth pods. */
  switchConfirmed?: boolean;
  /** VMClusters of zones a trafficMode holds out of reads: [I1] counts the others. */
  held?: readonly string[];
}

export interface Breach {
  /** n of the invariant In of docs/design.md: [I1] to [I5]. */
  invariant: 1 | 2 | 3 | 4 | 5;
  seq: number;
  message: string;
}

/** Returns every breach found (empty = all five invariants held). */
export function checkInvariants(log: readonly Action[], opts: InvariantOptions): Breach[] {
  const breaches: Breach[] = [];
  const breach = (invariant: Breach['invariant'], seq: number, message: string) => breaches.push({ invariant, seq, message });
  const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
  const actual: Record<string, JsonObject[]> = clone(opts.initialRoutes);
  const expected: Record<string, JsonObject[]> = clone(opts.initialRoutes);
  const clusters = Object.keys(opts.zoneOf);

  const outClusters = (): string[] =>
    clusters.filter((c) =>
      Object.keys(expected).some(
        (rk) =>
          routeReferencesCluster(expected[rk]!, { name: c, namespace: opts.namespace }) &&
          !routeReferencesCluster(actual[rk] ?? [], { name: c, namespace: opts.namespace }),
      ),
    );

  let owner: { actor: string; actorGeneration: number } | undefined;
  let lastStatus: VMDistributedClusterStatus | undefined;
  const lastRemoval = new Map<string, RouteRemoval[]>();
  /** When each cluster out now first left (its removals are undone last-out first). */
  const removedAt = new Map<string, number>();
  // per cluster, since it last left rotation
  const since = new Map<string, { patchSeq?: number; patchGen?: number; operationalSeq?: number; drainedOk?: boolean; switchConfirmed?: boolean }>();

  /** Zones that went back into the routes since the last status write: it may still name them until the next. */
  const backSinceStatus = new Set<string>();
  /** Each discrepancy once per status write (it lasts from one observation to the next). */
  const discrepancies = new Set<string>();
  let statusSeq = -1;
  const breachOnce = (seq: number, key: string, message: string) => {
    if (discrepancies.has(`${statusSeq}/${key}`)) return;
    discrepancies.add(`${statusSeq}/${key}`);
    breach(5, seq, message);
  };

  /**
   * [I5] at every observation: the last written status names exactly the zones out of the routes,
   * but for a zone it announces leaving (phase LeavingReads: the route edit comes next) and one
   * that went back in after it was written (the next status write drops it).
   */
  const checkStatusMatches = (seq: number) => {
    const out = outClusters().map((c) => opts.zoneOf[c]!);
    for (const zone of out) {
      if (!lastStatus?.zonesOutOfRotation?.includes(zone)) {
        breachOnce(seq, `missing/${zone}`, `zone ${zone} is out of read rotation but the last written status does not say so`);
      } else if (!lastStatus.zones?.find((z) => z.name === zone)?.message) {
        breachOnce(seq, `message/${zone}`, `zone ${zone} is out of read rotation but its status entry has no message saying why`);
      }
    }
    for (const zone of lastStatus?.zonesOutOfRotation ?? []) {
      if (out.includes(zone) || backSinceStatus.has(zone)) continue;
      if (lastStatus?.zones?.find((z) => z.name === zone)?.phase === 'LeavingReads') continue;
      breachOnce(seq, `extra/${zone}`, `the last written status names zone ${zone} out of read rotation but every route has it`);
    }
  };

  const mutating = (a: Action) => a.type === 'routes' || a.type === 'patch' || (a.type === 'status' && a.written);

  for (const a of log) {
    const outBefore = outClusters();
    if (a.actor && mutating(a)) {
      if (!owner) breach(3, a.seq, `${a.actor} acted (${a.type}) before taking over the object`);
      else if (owner.actor !== a.actor)
        breach(3, a.seq, `${a.actor} (g${a.actorGeneration}) acted (${a.type}) while ${owner.actor} (g${owner.actorGeneration}) owns the object`);
    }
    switch (a.type) {
      case 'takeOver':
        if (!a.stale) {
          if (owner && owner.actorGeneration > a.actorGeneration) breach(3, a.seq, `g${a.actorGeneration} took over from newer g${owner.actorGeneration}`);
          owner = { actor: a.actor, actorGeneration: a.actorGeneration };
        }
        break;
      case 'userSet':
        expected[a.route] = clone(a.targetRefs);
        actual[a.route] = clone(a.targetRefs);
        break;
      case 'userAppend':
        (expected[a.route] ??= []).push(clone(a.targetRef));
        (actual[a.route] ??= []).push(clone(a.targetRef));
        break;
      case 'routes': {
        const wasOut = new Set(outClusters());
        for (const [rk, before] of Object.entries(a.before)) {
          if (!jsonEqual(before, actual[rk] ?? [])) breach(4, a.seq, `route ${rk}: recorded 'before' differs from the tracked state`);
          const after = a.after[rk]!;
          const removal = a.removals.find((r) => `${r.route.kind}/${r.route.name}` === rk);
          if (removal) {
            if (a.direction === 'remove' && !jsonEqual(undoRemoval(after, removal), before)) {
              breach(4, a.seq, `route ${rk}: removing ${a.vmcluster} is not exactly undoable`);
            }
            if (a.direction === 'restore' && !jsonEqual(after, undoRemoval(before, removal))) {
              breach(4, a.seq, `route ${rk}: restore of ${a.vmcluster} is not the exact undo`);
            }
          }
          actual[rk] = clone(after);
        }
        if (a.direction === 'remove' && !removedAt.has(a.vmcluster)) removedAt.set(a.vmcluster, a.seq);
        if (a.direction === 'remove') lastRemoval.set(a.vmcluster, [...(a.recorded ? (lastRemoval.get(a.vmcluster) ?? []) : []), ...clone(a.removals)]);
        const nowOut = outClusters();
        if (a.recorded) {
          const missing = nowOut.map((c) => opts.zoneOf[c]!).sort();
          if (JSON.stringify(missing) !== JSON.stringify([...a.recorded].sort())) {
            breach(
              5,
              a.seq,
              `zones missing from the routes (${missing.join(', ') || 'none'}) differ from the zones recorded on them (${a.recorded.join(', ') || 'none'})`,
            );
          }
        }
        if (a.direction === 'restore' && !nowOut.includes(a.vmcluster)) {
          lastRemoval.delete(a.vmcluster);
          removedAt.delete(a.vmcluster);
        }
        const moving = nowOut.filter((c) => !opts.held?.includes(c));
        if (moving.length > 1) breach(1, a.seq, `${moving.length} zones out of read rotation: ${moving.map((c) => opts.zoneOf[c]).join(', ')}`);
        for (const c of nowOut) if (!wasOut.has(c)) since.set(c, {});
        for (const c of wasOut) {
          if (nowOut.includes(c)) continue;
          const s = since.get(c) ?? {};
          if (s.patchSeq !== undefined) {
            if (s.operationalSeq === undefined) breach(2, a.seq, `${c} rejoined reads without being operational at patched generation ${s.patchGen}`);
            else if (!s.drainedOk) breach(2, a.seq, `${c} rejoined reads without queues drained for ${opts.queueDrainedForMs}ms after becoming operational`);
          }
          since.delete(c);
        }
        break;
      }
      case 'patch': {
        if (a.kind !== 'VMCluster' || !a.changed) break;
        if (!outClusters().includes(a.name) && Object.values(expected).some((t) => routeReferencesCluster(t, { name: a.name, namespace: opts.namespace }))) {
          breach(2, a.seq, `VMCluster ${a.name} changed while in read rotation`);
        }
        const s = since.get(a.name) ?? {};
        if (opts.switchConfirmed && outClusters().includes(a.name) && !s.switchConfirmed) {
          breach(2, a.seq, `VMCluster ${a.name} changed before the vmauth pods were confirmed to run a config without it`);
        }
        since.set(a.name, { patchSeq: a.seq, patchGen: a.generation, switchConfirmed: s.switchConfirmed });
        break;
      }
      case 'switch-confirmed': {
        const s = since.get(a.vmcluster);
        if (a.expect === 'absent' && s) s.switchConfirmed = outClusters().includes(a.vmcluster);
        break;
      }
      case 'carriers-ready':
      case 'reads-drained':
        break;
      case 'operational': {
        const s = since.get(a.name);
        if (a.kind === 'VMCluster' && s?.patchGen !== undefined && a.generation >= s.patchGen) s.operationalSeq = a.seq;
        break;
      }
      case 'drained': {
        const s = since.get(a.vmcluster);
        if (s && s.operationalSeq !== undefined && a.emptyForMs >= opts.queueDrainedForMs) s.drainedOk = true;
        break;
      }
      case 'status':
        if (a.written) {
          lastStatus = clone(a.status);
          statusSeq = a.seq;
          backSinceStatus.clear();
        }
        break;
    }
    const outAfter = outClusters();
    for (const c of outBefore) if (!outAfter.includes(c)) backSinceStatus.add(opts.zoneOf[c]!);
    for (const c of outAfter) backSinceStatus.delete(opts.zoneOf[c]!);
    checkStatusMatches(a.seq);
  }

  if (opts.final) {
    const out = outClusters();
    const reported = new Set(lastStatus?.zonesOutOfRotation ?? []);
    const outZones = new Set(out.map((c) => opts.zoneOf[c]!));
    for (const z of reported) if (!outZones.has(z)) breach(5, Infinity, `final status reports ${z} out of rotation but it is in`);
    for (const z of outZones) if (!reported.has(z)) breach(5, Infinity, `zone ${z} ends out of rotation but the final status does not say so`);
    for (const rk of Object.keys(expected)) {
      let routesNow = clone(actual[rk] ?? []);
      // The last zone out first: each removal was made on the routes as the earlier ones left them.
      for (const c of [...out].sort((x, y) => (removedAt.get(y) ?? 0) - (removedAt.get(x) ?? 0))) {
        const rm = lastRemoval.get(c)?.find((r) => `${r.route.kind}/${r.route.name}` === rk);
        if (rm) routesNow = undoRemoval(routesNow, rm);
      }
      if (!jsonEqual(routesNow, expected[rk]!)) {
        breach(
          4,
          Infinity,
          `route ${rk} does not end as the user left it (modulo zones still out): ${JSON.stringify(actual[rk])} vs ${JSON.stringify(expected[rk])}`,
        );
      }
    }
  }
  return breaches;
}
