/**
 * The chaos campaign's oracle: judges a rollout from what the kube-apiserver really received (its
 * audit log, ./audit-log.ts: the writes, their objects and times), plus what the campaign sampled
 * outside (reads through vmauth, vmagent's queues as its own scrapes saw them, ./queue-watch.ts),
 * never from the workflow's own memory nor from what the worker says of itself (the workflow ids
 * and generations in its route records and applied-fields annotations). Pure: no I/O, no clock.
 *
 * The invariants of docs/design.md, as seen from outside the workflow:
 *   a. [I1] at most one zone out of reads at any time (replaying the route objects' targetRefs);
 *   b. [I2] a zone rejoins only after the operator reported its VMCluster operational at the generation
 *      vmrollout's patch produced, and (when queue observations are given) after its queues were seen
 *      drained for queueDrainedFor without a break; a VMCluster never changes while it is in read
 *      rotation;
 *   c. [I3] one actor per object at a time, never an older generation after a newer one: each worker
 *      write acts for the rollout generation its content shows (a VMCluster changed to the spec of
 *      generation g, from the VMDistributedCluster's spec writes; a status reporting
 *      observedGeneration g): none acts for a generation older than one that already acted, nor for
 *      one not yet written;
 *   d. [I4] every route edit is exactly undone: each removal is undoable from its record, each restore
 *      is that undo, and every route ends as it began (but for zones the final status reports out);
 *   e. [I5] every status write names exactly the zones out (with a message why), but for a zone it
 *      announces leaving (LeavingReads, the edit next); the zones recorded on a route are exactly the
 *      zones missing from it;
 *   f. [I2] each VMCluster is changed exactly once per rollout generation that needed its upgrade, to
 *      that generation's spec (no-op re-applies are retries, counted apart);
 *   g. [I6] no failed and no stale read, and no read whose series has a hole longer than the stale
 *      threshold.
 *
 * `crossCheck` is a second opinion: the same events as test/infra/oracle/invariants.ts's action log,
 * judged by its `checkInvariants`. It is stricter on e (it wants the status to name a zone already
 * when the zone's removal lands, which holds when the workflow announces LeavingReads first) and
 * cannot judge c (the audit log shows no take-over).
 */
import {
  parseRecords,
  OUT_OF_ROTATION_ANNOTATION,
  type OutOfRotationRecord,
  type RouteRecords,
  type RouteRef,
  type RouteRemoval,
} from '../../../api/route-records';
import type { JsonObject, JsonValue, VMDistributedClusterStatus } from '../../../api/types';
import { routeTargetRefs } from '../../../api/route-targets';
import type { KubeObject } from '../../../kube/custom-objects';
import { jsonEqual } from '../../../api/json-value';
import { routeReferencesCluster } from '../../../api/route-targets';
import { undoRemoval } from '../../../api/route-edits';
import { checkInvariants, type Action, type Breach as InvariantBreach, type InvariantOptions } from '../oracle/invariants';
import { isWrite, responseGeneration, succeeded, type AuditEvent } from './audit-log';
import type { QueueObservation } from './queue-watch';

export type CheckId = 'a' | 'b' | 'c' | 'd' | 'e' | 'f' | 'g';

/** What each check stands for, and the invariant of docs/design.md it checks, by id. */
export const CHECKS: Record<CheckId, { invariant: `I${number}`; title: string }> = {
  a: { invariant: 'I1', title: 'at most one zone out of reads' },
  b: { invariant: 'I2', title: 'rejoin only when operational at the patched generation and drained' },
  c: { invariant: 'I3', title: 'one generation acts at a time, never an older one after a newer one' },
  d: { invariant: 'I4', title: 'every route edit exactly undone' },
  e: { invariant: 'I5', title: 'the status names every zone out of reads' },
  f: { invariant: 'I2', title: 'one VMCluster change per rollout generation' },
  g: { invariant: 'I6', title: 'no failed and no stale read' },
};

export interface Breach {
  check: CheckId;
  message: string;
  /** The audit event(s) that show it (empty for read samples and end-of-run checks). */
  events: AuditEvent[];
}

/** A read through vmauth (test/e2e/support.ts ReadRecord is one). */
export interface ReadSample {
  at: number;
  route?: string;
  /** Set when the read failed (non-200, empty result, transport error). */
  error?: string;
  /** Age of the newest sample the read returned, ms. */
  ageMs?: number;
  /** Longest time between two consecutive samples of the series the read returned, ms. */
  gapMs?: number;
}

export interface JudgeInput {
  /** The audit events, in log order (readAuditLog / followAuditLog). */
  events: readonly AuditEvent[];
  /** Namespace of the VMDistributedCluster, its VMClusters and its routes. */
  namespace: string;
  /** The VMDistributedCluster: `uid` limits the route records read to its own. */
  vmdc: { name: string; uid?: string };
  /** VMCluster name → zone name. */
  zoneOf: Record<string, string>;
  /** Route key (`VMAuth/<name>`, `VMUser/<name>`) → its targetRefs before the run. */
  initialRoutes: Record<string, JsonObject[]>;
  /** VMCluster name → metadata.generation before the run; without it a VMCluster's first write counts as a change. */
  initialGenerations?: Record<string, number>;
  /** Whether an audit user is vmrollout's worker. Default: a ServiceAccount whose name ends in `vmrollout-worker`. */
  isWorker?: (user: string) => boolean;
  /** Whether an audit user plays the VM operator (writes VMCluster status). Default: anyone but the worker. */
  isOperator?: (user: string) => boolean;
  /** Zone name → the campaign's own looks at vmagent's queues for the zone, in time order (./queue-watch.ts). */
  queues?: Record<string, QueueObservation[]>;
  /** The rollouts' strategy.queueDrainedFor, ms (with `queues`). */
  queueDrainedForMs?: number;
  /** Rollout generation → the VMClusters that needed an upgrade in it. Without it, f only flags a second change. */
  upgrades?: Record<number, string[]>;
  /** Reads through vmauth (g). */
  reads?: readonly ReadSample[];
  /** A read is stale above this age (default 9000 ms, test/e2e/support.ts STALE_AFTER_MS). */
  staleAfterMs?: number;
  /** The status at the end (default: the last VMDistributedCluster status write's response). */
  finalStatus?: VMDistributedClusterStatus;
}

export interface PatchCount {
  /** Writes that raised metadata.generation. */
  changed: number;
  /** Writes that left it as it was (re-applies, retries). */
  retries: number;
}

export interface Verdict {
  breaches: Breach[];
  counts: {
    /** Audit events considered (successful, not dry-run writes in the namespace). */
    writes: number;
    /** Successful writes to the route objects that changed their targetRefs. */
    routeEdits: number;
    /** Route edits that took a zone out of some route / put it back. */
    removals: number;
    restores: number;
    /** The worker's VMDistributedCluster status writes. */
    statusWrites: number;
    /** The operator's VMCluster status writes reporting `operational`. */
    operationalReports: number;
    /** The worker's VMCluster spec writes, by VMCluster (all generations). */
    vmclusterPatches: Record<string, PatchCount>;
    /** The same by VMCluster and rollout generation (`<vmcluster>@g<generation>`). */
    vmclusterPatchesByGeneration: Record<string, PatchCount>;
    /** Most zones seen out of reads at once. */
    maxZonesOut: number;
    reads: number;
    failedReads: number;
    staleReads: number;
    /** Reads whose series had a hole longer than the stale threshold. */
    gappyReads: number;
    /** Each rejoin judged against the queue looks: its restore (audit seq) and how long its queues had been seen drained without a break, ms. */
    rejoins: Array<{ zone: string; seq: number; drainedForMs: number }>;
  };
}

const DEFAULT_STALE_AFTER_MS = 9_000;
/** A look at a queue older than this is no look: the time between counts as not drained. */
export const maxUnwatchedMs = (queueDrainedForMs: number): number => queueDrainedForMs / 2;
const VM_GROUP = 'operator.victoriametrics.com';
const VMDC_GROUP = 'vmrollout.io';
const ROUTE_KINDS: Record<string, RouteRef['kind']> = { vmauths: 'VMAuth', vmusers: 'VMUser' };

/** The chart's worker ServiceAccount (`<release>-vmrollout-worker`). */
export const defaultIsWorker = (user: string): boolean => /^system:serviceaccount:[^:]+:.*vmrollout-worker$/.test(user);

const isObject = (v: JsonValue | undefined): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** `#12 20:41:03.120 admin patch vmclusters/vm-az-a` — for messages. */
export function describeEvent(e: AuditEvent): string {
  const t = Number.isFinite(e.at) ? new Date(e.at).toISOString().slice(11, 23) : '?';
  return `#${e.seq} ${t} ${e.user} ${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''}/${e.name}`;
}

/**
 * How long before `t` a zone's queues had been seen drained without a break: `t` minus the latest
 * look before it that was not drained (or the first look, when none was: unwatched time proves
 * nothing). A stretch of more than `maxGapMs` without a look, up to `t` included, breaks it too.
 */
export function seenDrainedFor(observations: readonly QueueObservation[], t: number, maxGapMs: number): number {
  const before = observations.filter((o) => o.at <= t).sort((a, b) => a.at - b.at);
  if (before.length === 0 || t - before.at(-1)!.at > maxGapMs) return 0;
  let since = before[0]!.at;
  for (const [i, o] of before.entries()) {
    if (!o.drained) since = Math.max(since, o.at);
    else if (i > 0 && o.at - before[i - 1]!.at > maxGapMs) since = Math.max(since, o.at);
  }
  return t - since;
}

function annotationOf(obj: JsonObject | undefined, key: string): string | undefined {
  const md = obj?.metadata;
  const ann = isObject(md) ? md.annotations : undefined;
  const v = isObject(ann) ? ann[key] : undefined;
  return typeof v === 'string' ? v : undefined;
}

function statusOf(obj: JsonObject | undefined): JsonObject | undefined {
  const s = obj?.status;
  return isObject(s) ? s : undefined;
}

/**
 * `e` as a write that stored one of `routes` (by route key): the route's targetRefs and records
 * after it. Unreadable records leave the route's `records` as they were (`unreadable` says why).
 */
function routeWrite(
  e: AuditEvent,
  routes: Record<string, JsonObject[]>,
  records: Record<string, RouteRecords>,
  uid: string | undefined,
): { rk: string; after: JsonObject[]; recAfter: RouteRecords; unreadable?: Error } | undefined {
  const kind = e.group === VM_GROUP && e.subresource === '' ? ROUTE_KINDS[e.resource] : undefined;
  if (!kind) return undefined;
  const rk = `${kind}/${e.name}`;
  if (!(rk in routes) || !e.responseObject || e.verb === 'delete') return undefined;
  const after = routeTargetRefs(kind, e.responseObject as unknown as KubeObject);
  try {
    return { rk, after, recAfter: parseRecords(annotationOf(e.responseObject, OUT_OF_ROTATION_ANNOTATION), uid) };
  } catch (err) {
    return { rk, after, recAfter: records[rk]!, unreadable: err as Error };
  }
}

/** Returns every breach of checks a–g, and what was counted. */
export function judge(input: JudgeInput): Verdict {
  const ns = input.namespace;
  const isWorker = input.isWorker ?? defaultIsWorker;
  const isOperator = input.isOperator ?? ((u: string) => !isWorker(u));
  const breaches: Breach[] = [];
  const breach = (check: CheckId, message: string, ...events: AuditEvent[]) => breaches.push({ check, message, events });
  const clusters = Object.keys(input.zoneOf);
  const zone = (c: string) => input.zoneOf[c] ?? c;
  const counts: Verdict['counts'] = {
    writes: 0,
    routeEdits: 0,
    removals: 0,
    restores: 0,
    statusWrites: 0,
    operationalReports: 0,
    vmclusterPatches: {},
    vmclusterPatchesByGeneration: {},
    maxZonesOut: 0,
    reads: 0,
    failedReads: 0,
    staleReads: 0,
    gappyReads: 0,
    rejoins: [],
  };

  const routes: Record<string, JsonObject[]> = clone(input.initialRoutes);
  const records: Record<string, RouteRecords> = Object.fromEntries(Object.keys(routes).map((k) => [k, {}]));
  const vmc = (name: string) => ({ name, namespace: ns });
  /** VMClusters some initial route reaches but the given route (or every route) no longer does. */
  const missingFrom = (rk: string): string[] =>
    clusters.filter((c) => routeReferencesCluster(input.initialRoutes[rk]!, vmc(c)) && !routeReferencesCluster(routes[rk] ?? [], vmc(c)));
  const outNow = (): string[] => clusters.filter((c) => Object.keys(routes).some((rk) => missingFrom(rk).includes(c)));
  const inSomeRoute = (c: string) => Object.values(input.initialRoutes).some((t) => routeReferencesCluster(t, vmc(c)));

  /** Per VMCluster, since it last left reads. */
  const cycles = new Map<string, { out: AuditEvent; patch?: AuditEvent; patchGen?: number; operational?: AuditEvent }>();
  const vmcGen: Record<string, number> = { ...(input.initialGenerations ?? {}) };
  let newestGeneration = 0;
  let newestBy: AuditEvent | undefined;
  let lastStatus: VMDistributedClusterStatus | undefined;
  const patchCount = (key: string, table: Record<string, PatchCount>) => (table[key] ??= { changed: 0, retries: 0 });
  /** The VMDistributedCluster's spec at each of its generations, as its writes stored it; the latest generation. */
  const specs = new Map<number, JsonObject>();
  let vmdcGeneration = 0;
  /** The newest generation written whose spec asks for this VMCluster spec (its clusterVersion). */
  const generationAsking = (vmclusterSpec: JsonValue | undefined): number | undefined => {
    const version = isObject(vmclusterSpec) ? vmclusterSpec.clusterVersion : undefined;
    let found: number | undefined;
    for (const [g, spec] of specs) if (version !== undefined && spec.clusterVersion === version && (found === undefined || g > found)) found = g;
    return found;
  };

  /** c: a write acting for `generation` comes after a newer generation acted, or before the user wrote it. */
  const checkGeneration = (e: AuditEvent, generation: number, what: string) => {
    if (generation > vmdcGeneration) {
      breach('c', `${what} for generation ${generation} before the VMDistributedCluster reached it (at generation ${vmdcGeneration})`, e);
    }
    if (generation < newestGeneration) {
      breach(
        'c',
        `${what} by generation ${generation} after generation ${newestGeneration} began (${newestBy ? describeEvent(newestBy) : '?'})`,
        e,
        ...(newestBy ? [newestBy] : []),
      );
    } else if (generation > newestGeneration) {
      newestGeneration = generation;
      newestBy = e;
    }
  };

  for (const e of input.events) {
    if (!succeeded(e) || !isWrite(e) || e.dryRun || e.namespace !== ns) continue;
    counts.writes++;
    const worker = isWorker(e.user);

    // ---- the VMDistributedCluster's spec, as written (by the user: the generations to roll out)
    if (e.group === VMDC_GROUP && e.resource === 'vmdistributedclusters' && e.subresource === '' && e.name === input.vmdc.name && e.verb !== 'delete') {
      const gen = responseGeneration(e);
      const spec = e.responseObject?.spec;
      if (gen !== undefined && isObject(spec)) {
        specs.set(gen, spec);
        vmdcGeneration = Math.max(vmdcGeneration, gen);
      }
      continue;
    }

    // ---- the route objects
    const routeWritten = routeWrite(e, routes, records, input.vmdc.uid);
    if (routeWritten) {
      const { rk, after, recAfter, unreadable } = routeWritten;
      const before = routes[rk]!;
      const recBefore = records[rk]!;
      if (unreadable) breach('d', `${rk}: unreadable ${OUT_OF_ROTATION_ANNOTATION}: ${unreadable.message}`, e);
      const wasOut = outNow();
      const added = Object.entries(recAfter).filter(
        ([k, r]) => recBefore[k]?.workflowId !== r.workflowId || !jsonEqual(recBefore[k]?.removed as unknown as JsonValue, r.removed as unknown as JsonValue),
      );
      const dropped = Object.entries(recBefore).filter(([k]) => !(k in recAfter));

      // d: each removal exactly undoable from its record; each restore exactly that undo
      if (!jsonEqual(before, after)) {
        for (const [key, r] of added) {
          if (recBefore[key]) continue;
          if (!jsonEqual(undoRemoval(after, r), before))
            breach(
              'd',
              `${rk}: removing zone ${r.zone} is not exactly undoable from its record: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`,
              e,
            );
        }
        if (dropped.length === 1 && added.length === 0) {
          const [, r] = dropped[0]!;
          const expected = undoRemoval(before, r);
          if (!jsonEqual(after, expected))
            breach(
              'd',
              `${rk}: restore of zone ${r.zone} is not the exact undo of its record: got ${JSON.stringify(after)}, expected ${JSON.stringify(expected)}`,
              e,
            );
        }
      }

      routes[rk] = clone(after);
      records[rk] = recAfter;
      const nowOut = outNow();
      if (!jsonEqual(before, after)) {
        counts.routeEdits++;
        if (added.length > 0 || nowOut.some((c) => !wasOut.includes(c))) counts.removals++;
        if (dropped.length > 0 || wasOut.some((c) => !nowOut.includes(c))) counts.restores++;
      }
      counts.maxZonesOut = Math.max(counts.maxZonesOut, nowOut.length);

      // a (once per zone that goes out while another is out)
      if (nowOut.length > 1 && nowOut.some((c) => !wasOut.includes(c)))
        breach('a', `${nowOut.length} zones out of reads at once: ${nowOut.map(zone).join(', ')}`, e);

      // e: the zones recorded on this route are exactly the zones missing from it (after the worker's edits)
      const missing = missingFrom(rk).map(zone).sort();
      const recorded = [...new Set(Object.values(recAfter).map((r) => r.zone))].sort();
      if (worker && JSON.stringify(missing) !== JSON.stringify(recorded)) {
        breach(
          'e',
          `${rk}: zones missing from the route (${missing.join(', ') || 'none'}) differ from the zones recorded on it (${recorded.join(', ') || 'none'})`,
          e,
        );
      }

      for (const c of nowOut) if (!wasOut.includes(c)) cycles.set(c, { out: e });
      // b: a zone back in reads
      for (const c of wasOut) {
        if (nowOut.includes(c)) continue;
        const cyc = cycles.get(c);
        cycles.delete(c);
        if (!cyc || cyc.patchGen === undefined) continue;
        if (!cyc.operational) {
          breach(
            'b',
            `zone ${zone(c)} rejoined reads before the operator reported VMCluster ${c} operational at generation ${cyc.patchGen} (patched by ${describeEvent(cyc.patch!)})`,
            e,
            cyc.patch!,
          );
          continue;
        }
        const looks = input.queues?.[zone(c)];
        if (looks && input.queueDrainedForMs !== undefined) {
          // The restore was sent no earlier than the API server received it.
          const drainedFor = seenDrainedFor(looks, e.receivedAt, maxUnwatchedMs(input.queueDrainedForMs));
          counts.rejoins.push({ zone: zone(c), seq: e.seq, drainedForMs: drainedFor });
          if (drainedFor < input.queueDrainedForMs) {
            breach(
              'b',
              `zone ${zone(c)} rejoined reads after its queues were seen drained for ${drainedFor} ms only (queueDrainedFor ${input.queueDrainedForMs} ms)`,
              e,
            );
          }
        }
      }
      continue;
    }

    // ---- a zone's VMCluster
    if (e.group === VM_GROUP && e.resource === 'vmclusters' && e.name in input.zoneOf) {
      const gen = responseGeneration(e);
      if (e.subresource === 'status') {
        const st = statusOf(e.responseObject);
        const cyc = cycles.get(e.name);
        if (isOperator(e.user) && st?.updateStatus === 'operational') {
          counts.operationalReports++;
          if (cyc?.patchGen !== undefined && typeof st.observedGeneration === 'number' && st.observedGeneration >= cyc.patchGen) cyc.operational ??= e;
        }
        if (gen !== undefined) vmcGen[e.name] = gen;
        continue;
      }
      if (e.subresource !== '' || gen === undefined) continue;
      const prev = vmcGen[e.name];
      vmcGen[e.name] = gen;
      if (!worker) continue;
      const changed = prev === undefined || gen > prev;
      const asking = generationAsking(e.responseObject?.spec);
      const rolloutGen = asking ?? newestGeneration;
      const field = changed ? 'changed' : 'retries';
      patchCount(e.name, counts.vmclusterPatches)[field]++;
      patchCount(`${e.name}@g${rolloutGen}`, counts.vmclusterPatchesByGeneration)[field]++;
      if (!changed) continue;
      if (asking === undefined)
        breach(
          'f',
          `VMCluster ${e.name} changed to a spec no generation of ${input.vmdc.name} asks for (${JSON.stringify(e.responseObject?.spec ?? null).slice(0, 200)})`,
          e,
        );
      // A zone an OLDER generation left out (cancelled, failed or superseded) is the newer one's to
      // adopt and upgrade ([I3]); a change for an older generation after a newer one acted is not.
      else checkGeneration(e, asking, `VMCluster ${e.name} changed`);
      if (!outNow().includes(e.name) && inSomeRoute(e.name))
        breach('b', `VMCluster ${e.name} changed (generation ${prev ?? '?'} → ${gen}) while zone ${zone(e.name)} is in read rotation`, e);
      const cyc = cycles.get(e.name);
      if (cyc) Object.assign(cyc, { patch: e, patchGen: gen, operational: undefined });
      continue;
    }

    // ---- the VMDistributedCluster status
    if (e.group === VMDC_GROUP && e.resource === 'vmdistributedclusters' && e.subresource === 'status' && e.name === input.vmdc.name && worker) {
      counts.statusWrites++;
      const st = (statusOf(e.responseObject) ?? {}) as VMDistributedClusterStatus;
      lastStatus = st;
      if (typeof st.observedGeneration === 'number') checkGeneration(e, st.observedGeneration, 'status write');
      const out = outNow();
      for (const z of st.zonesOutOfRotation ?? []) {
        if (out.some((c) => zone(c) === z) || st.zones?.find((x) => x.name === z)?.phase === 'LeavingReads') continue;
        breach('e', `status written naming zone ${z} out of reads (${JSON.stringify(st.zonesOutOfRotation)}) while every route has it`, e);
      }
      for (const c of out) {
        const z = zone(c);
        if (!st.zonesOutOfRotation?.includes(z)) {
          const cyc = cycles.get(c);
          breach(
            'e',
            `status written while zone ${z} is out of reads (since ${cyc ? describeEvent(cyc.out) : '?'}) does not name it in zonesOutOfRotation (${JSON.stringify(st.zonesOutOfRotation ?? [])})`,
            e,
            ...(cyc ? [cyc.out] : []),
          );
        } else if (!st.zones?.find((x) => x.name === z)?.message) {
          breach('e', `status names zone ${z} out of reads without a message why`, e);
        }
      }
    }
  }

  // ---- at the end
  const final = input.finalStatus ?? lastStatus;
  const reportedOut = new Set(final?.zonesOutOfRotation ?? []);
  for (const c of outNow()) if (!reportedOut.has(zone(c))) breach('e', `zone ${zone(c)} ends out of reads but the final status does not say so`);
  for (const [rk, initial] of Object.entries(input.initialRoutes)) {
    let now = routes[rk]!;
    for (const r of Object.values(records[rk]!)) if (reportedOut.has(r.zone)) now = undoRemoval(now, r);
    if (!jsonEqual(now, initial)) {
      breach(
        'd',
        `${rk} does not end as it began (but for zones reported out: ${[...reportedOut].join(', ') || 'none'}): ${JSON.stringify(routes[rk])} vs ${JSON.stringify(initial)}`,
      );
    }
  }

  // f
  if (input.upgrades) {
    const expected = new Set(Object.entries(input.upgrades).flatMap(([g, cs]) => cs.map((c) => `${c}@g${g}`)));
    for (const key of expected) {
      const n = counts.vmclusterPatchesByGeneration[key]?.changed ?? 0;
      if (n !== 1) breach('f', `${key.replace('@g', ' in generation ')}: ${n} changes, expected exactly 1`);
    }
    for (const [key, pc] of Object.entries(counts.vmclusterPatchesByGeneration)) {
      if (!expected.has(key) && pc.changed > 0) breach('f', `${key.replace('@g', ' in generation ')}: ${pc.changed} change(s), but it needed no upgrade`);
    }
  } else {
    for (const [key, pc] of Object.entries(counts.vmclusterPatchesByGeneration)) {
      if (pc.changed > 1) breach('f', `${key.replace('@g', ' in generation ')}: ${pc.changed} changes, expected at most 1`);
    }
  }

  // g
  const reads = input.reads ?? [];
  const staleAfter = input.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  const failed = reads.filter((r) => r.error !== undefined);
  const stale = reads.filter((r) => r.error === undefined && r.ageMs !== undefined && r.ageMs > staleAfter);
  const gappy = reads.filter((r) => r.error === undefined && r.gapMs !== undefined && r.gapMs > staleAfter);
  counts.reads = reads.length;
  counts.failedReads = failed.length;
  counts.staleReads = stale.length;
  counts.gappyReads = gappy.length;
  if (failed.length) breach('g', `${failed.length} failed read(s), first: ${JSON.stringify(failed.slice(0, 3))}`);
  if (stale.length) breach('g', `${stale.length} stale read(s) (older than ${staleAfter} ms), first: ${JSON.stringify(stale.slice(0, 3))}`);
  if (gappy.length) breach('g', `${gappy.length} read(s) with a hole in the series longer than ${staleAfter} ms, first: ${JSON.stringify(gappy.slice(0, 3))}`);

  return { breaches, counts };
}

/**
 * The same audit events as the action log of test/infra/oracle/invariants.ts, so that its checker
 * (`checkInvariants`) judges them too, as a second opinion on checks a, b, d and e ([I1], [I2],
 * [I4], [I5]). Every route write becomes a `routes` action (a worker's: its removals are the records
 * the write added, or dropped for a restore; anyone else's: a `userSet`), every worker VMCluster
 * spec write a `patch`, every operator report of `operational` an `operational`, every drain time a
 * `drained`, every worker status write a `status`. The actor is left empty: who acts ([I3],
 * check c) cannot be told from the audit log the way the test doubles record it (no takeOver).
 * `events` maps an action's seq to the audit event it comes from (drain times have none).
 */
export function auditActions(input: JudgeInput): { actions: Action[]; options: InvariantOptions; events: Map<number, AuditEvent> } {
  const ns = input.namespace;
  const isWorker = input.isWorker ?? defaultIsWorker;
  const isOperator = input.isOperator ?? ((u: string) => !isWorker(u));
  const actions: Action[] = [];
  const events = new Map<number, AuditEvent>();
  const base = (e?: AuditEvent) => {
    const seq = actions.length;
    if (e) events.set(seq, e);
    return { seq, actor: '', actorGeneration: 0 };
  };
  const routes: Record<string, JsonObject[]> = clone(input.initialRoutes);
  const records: Record<string, RouteRecords> = Object.fromEntries(Object.keys(routes).map((k) => [k, {}]));
  const vmcGen: Record<string, number> = { ...(input.initialGenerations ?? {}) };
  const drainedFor = input.queueDrainedForMs ?? 0;
  const drains = Object.entries(input.queues ?? {})
    .flatMap(([z, looks]) =>
      looks
        .filter((o) => o.drained)
        .map((o) => ({
          at: o.at,
          vmcluster: Object.keys(input.zoneOf).find((c) => input.zoneOf[c] === z) ?? z,
          emptyForMs: seenDrainedFor(looks, o.at, maxUnwatchedMs(drainedFor)),
        })),
    )
    .sort((a, b) => a.at - b.at);
  const drainUntil = (t: number) => {
    while (drains.length && drains[0]!.at <= t) {
      const { vmcluster, emptyForMs } = drains.shift()!;
      actions.push({ ...base(), type: 'drained', vmcluster, emptyForMs });
    }
  };
  const removalOf = (rk: string, r: OutOfRotationRecord): RouteRemoval => {
    const [kind, name] = rk.split('/') as [RouteRef['kind'], string];
    return { route: { kind, name }, vmcluster: r.vmcluster, removed: r.removed };
  };

  for (const e of input.events) {
    if (!succeeded(e) || !isWrite(e) || e.dryRun || e.namespace !== ns) continue;
    drainUntil(e.receivedAt);
    const worker = isWorker(e.user);
    const routeWritten = routeWrite(e, routes, records, input.vmdc.uid);
    if (routeWritten) {
      const { rk, after, recAfter } = routeWritten;
      const before = routes[rk]!;
      const recBefore = records[rk]!;
      routes[rk] = clone(after);
      records[rk] = recAfter;
      if (!worker) {
        actions.push({ ...base(e), type: 'userSet', route: rk, targetRefs: clone(after) });
        continue;
      }
      const added = Object.entries(recAfter).filter(([k]) => !(k in recBefore));
      const dropped = Object.entries(recBefore).filter(([k]) => !(k in recAfter));
      const direction = added.length > 0 || dropped.length === 0 ? 'remove' : 'restore';
      const moved = direction === 'remove' ? added : dropped;
      const recorded = [...new Set(Object.values(records).flatMap((rs) => Object.values(rs).map((r) => r.zone)))];
      actions.push({
        ...base(e),
        type: 'routes',
        direction,
        vmcluster: moved[0]?.[1].vmcluster.name ?? '',
        removals: moved.map(([, r]) => removalOf(rk, r)),
        before: { [rk]: clone(before) },
        after: { [rk]: clone(after) },
        recorded,
      });
      continue;
    }
    if (e.group === VM_GROUP && e.resource === 'vmclusters' && e.name in input.zoneOf) {
      const gen = responseGeneration(e);
      if (e.subresource === 'status') {
        const st = statusOf(e.responseObject);
        if (isOperator(e.user) && st?.updateStatus === 'operational' && typeof st.observedGeneration === 'number') {
          actions.push({ ...base(e), type: 'operational', kind: 'VMCluster', name: e.name, generation: st.observedGeneration });
        }
        continue;
      }
      if (e.subresource !== '' || gen === undefined) continue;
      const prev = vmcGen[e.name];
      vmcGen[e.name] = gen;
      if (worker) actions.push({ ...base(e), type: 'patch', kind: 'VMCluster', name: e.name, generation: gen, changed: prev === undefined || gen > prev });
      continue;
    }
    if (e.group === VMDC_GROUP && e.resource === 'vmdistributedclusters' && e.subresource === 'status' && e.name === input.vmdc.name && worker) {
      actions.push({ ...base(e), type: 'status', written: true, status: clone((statusOf(e.responseObject) ?? {}) as VMDistributedClusterStatus) });
    }
  }
  drainUntil(Infinity);
  if (input.finalStatus) actions.push({ ...base(), type: 'status', written: true, status: clone(input.finalStatus) });
  return {
    actions,
    events,
    options: { initialRoutes: input.initialRoutes, zoneOf: input.zoneOf, queueDrainedForMs: drainedFor, namespace: ns, final: true },
  };
}

const CHECK_OF_INVARIANT: Record<InvariantBreach['invariant'], CheckId> = { 1: 'a', 2: 'b', 3: 'c', 4: 'd', 5: 'e' };

/**
 * test/infra/oracle/invariants.ts's `checkInvariants` over `auditActions(input)`: its breaches, as this
 * module's (invariant 1 → a, 2 → b, 4 → d, 5 → e), with the audit event of the action. Without
 * drain times for a zone, its drain is not checked (a drain is assumed once it is operational).
 */
export function crossCheck(input: JudgeInput): Breach[] {
  const { actions, options, events } = auditActions(input);
  // A zone without drain times: drained as soon as it is reported operational.
  const withDrains: Action[] = [];
  for (const a of actions) {
    withDrains.push(a);
    if (a.type === 'operational' && !input.queues?.[input.zoneOf[a.name] ?? '']) {
      withDrains.push({ seq: a.seq, actor: '', actorGeneration: 0, type: 'drained', vmcluster: a.name, emptyForMs: Number.MAX_SAFE_INTEGER });
    }
  }
  return checkInvariants(withDrains, options).map((b) => {
    const e = events.get(b.seq);
    return { check: CHECK_OF_INVARIANT[b.invariant], message: `invariants.ts: ${b.message}`, events: e ? [e] : [] };
  });
}
