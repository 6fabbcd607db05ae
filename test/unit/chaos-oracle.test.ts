import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OUT_OF_ROTATION_ANNOTATION, formatRecords, recordKey, type OutOfRotationRecord, type RouteRecords, type RouteRef } from '../../api/route-records';
import type { JsonObject, JsonValue, VMDistributedClusterStatus } from '../../api/types';
import { appliedRecord } from '../../kube/applied-fields';
import { computeRemoval } from '../../api/route-targets';
import { applyRemoval, undoRemoval } from '../../api/route-edits';
import { followAuditLog, parseAuditLine, readAuditLog, type AuditEvent } from '../infra/chaos/audit-log';
import { crossCheck, judge, seenDrainedFor, type Breach, type CheckId, type JudgeInput } from '../infra/chaos/oracle';
import type { QueueObservation } from '../infra/chaos/queue-watch';

const NS = 'ns';
const UID = 'uid-0001-abcd';
const WORKER = 'system:serviceaccount:vmrollout-system:rel-vmrollout-worker';
const OPERATOR = 'admin';
const CLUSTERS = ['vm-az-a', 'vm-az-b', 'vm-az-c'];
const ZONE_OF: Record<string, string> = { 'vm-az-a': 'az-a', 'vm-az-b': 'az-b', 'vm-az-c': 'az-c' };
const ROUTES: RouteRef[] = [
  { kind: 'VMAuth', name: 'vm-global' },
  { kind: 'VMUser', name: 'reads-all' },
];
const rkey = (r: RouteRef) => `${r.kind}/${r.name}`;
const wfId = (g: number) => `vmdc/${NS}/dc/g${g}-uid-0001`;
/** The rollouts' queueDrainedFor and pollInterval (test/infra/chaos/campaign.ts). */
const DRAINED_FOR_MS = 8_000;
const POLL_MS = 250;

const initialTargetRefs = (): JsonObject[] => [
  { crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: CLUSTERS.map((name) => ({ name, namespace: NS })) }, paths: ['/select/.*'] },
  { static: { url: 'http://user-backend:8481' }, paths: ['/other/.*'] },
];
const INITIAL_ROUTES: Record<string, JsonObject[]> = Object.fromEntries(ROUTES.map((r) => [rkey(r), initialTargetRefs()]));

/** Writes a synthetic audit log: the API server's view of a rollout, one write at a time. */
class Scenario {
  /** `upgraded`: the VMClusters generation 2 is expected to change (check f). The user has written generations 1 and 2. */
  constructor(private readonly upgraded: string[] = CLUSTERS) {
    this.specWrite(1);
    this.specWrite(2);
  }

  readonly events: AuditEvent[] = [];
  private t = Date.UTC(2026, 11, 1, 20, 0, 0);
  readonly routes: Record<string, JsonObject[]> = JSON.parse(JSON.stringify(INITIAL_ROUTES)) as Record<string, JsonObject[]>;
  readonly records: Record<string, RouteRecords> = Object.fromEntries(ROUTES.map((r) => [rkey(r), {}]));
  private readonly gen: Record<string, number> = Object.fromEntries(CLUSTERS.map((c) => [c, 1]));
  readonly queues: Record<string, QueueObservation[]> = {};

  now(): number {
    return this.t;
  }

  private push(e: Partial<AuditEvent> & Pick<AuditEvent, 'user' | 'group' | 'resource' | 'name'>): AuditEvent {
    this.t += 100;
    const ev: AuditEvent = {
      seq: this.events.length,
      at: this.t,
      receivedAt: this.t - 5,
      auditID: `id-${this.events.length}`,
      verb: 'patch',
      version: 'v1',
      subresource: '',
      namespace: NS,
      code: 200,
      requestURI: '',
      dryRun: false,
      ...e,
    };
    this.events.push(ev);
    return ev;
  }

  private routeObject(r: RouteRef): JsonObject {
    const targetRefs = this.routes[rkey(r)]!;
    const value = formatRecords(this.records[rkey(r)]!);
    return {
      metadata: { name: r.name, namespace: NS, generation: 1, ...(value ? { annotations: { [OUT_OF_ROTATION_ANNOTATION]: value } } : {}) },
      spec: r.kind === 'VMAuth' ? { unauthorizedUserAccessSpec: { targetRefs } } : { targetRefs },
    };
  }

  private writeRoute(r: RouteRef, user = WORKER): AuditEvent {
    return this.push({
      user,
      group: 'operator.victoriametrics.com',
      resource: r.kind === 'VMAuth' ? 'vmauths' : 'vmusers',
      name: r.name,
      responseObject: this.routeObject(r),
    });
  }

  /** Takes `cluster` out of the given routes (one write per route, the record in the same write). */
  remove(cluster: string, generation: number, routes: RouteRef[] = ROUTES): void {
    for (const r of routes) {
      const removal = computeRemoval({ route: r, targetRefs: this.routes[rkey(r)]! }, { name: cluster, namespace: NS });
      const record: OutOfRotationRecord = {
        vmdc: { namespace: NS, name: 'dc', uid: UID },
        route: { ...r, uid: `uid-${rkey(r)}` },
        zone: ZONE_OF[cluster]!,
        workflowId: wfId(generation),
        generation,
        vmcluster: { name: cluster, namespace: NS },
        removed: removal.removed,
        since: new Date(this.t).toISOString(),
      };
      this.routes[rkey(r)] = applyRemoval(this.routes[rkey(r)]!, removal);
      this.records[rkey(r)]![recordKey(UID, record.zone)] = record;
      this.writeRoute(r);
    }
  }

  /** Puts `cluster` back (exact undo of its record, record deleted); `mangle` breaks the undo. */
  restore(cluster: string, routes: RouteRef[] = ROUTES, mangle?: (refs: JsonObject[]) => JsonObject[]): void {
    for (const r of routes) {
      const key = recordKey(UID, ZONE_OF[cluster]!);
      const record = this.records[rkey(r)]![key]!;
      const restored = undoRemoval(this.routes[rkey(r)]!, record);
      this.routes[rkey(r)] = mangle ? mangle(restored) : restored;
      delete this.records[rkey(r)]![key];
      this.writeRoute(r);
    }
  }

  /** The user's write of the VMDistributedCluster's spec at `generation`: clusterVersion v<generation>. */
  specWrite(generation: number): AuditEvent {
    const spec = { clusterVersion: `v${generation}` };
    return this.push({
      user: OPERATOR,
      group: 'vmrollout.io',
      resource: 'vmdistributedclusters',
      name: 'dc',
      requestObject: { spec },
      responseObject: { metadata: { name: 'dc', generation }, spec },
    });
  }

  /**
   * vmrollout's server-side apply of the VMCluster to generation `rolloutGeneration`'s spec:
   * `changes` raises the generation. `claims`: the generation its applied-fields annotation names
   * (the worker's word, which the oracle does not take).
   */
  patchCluster(cluster: string, rolloutGeneration: number, changes = true, claims = rolloutGeneration): AuditEvent {
    if (changes) this.gen[cluster]!++;
    const spec = { clusterVersion: `v${rolloutGeneration}` };
    const metadata = {
      name: cluster,
      namespace: NS,
      annotations: { 'vmrollout.io/applied': appliedRecord({ name: 'dc', uid: UID, generation: claims }, 'overlay', spec) },
    };
    return this.push({
      user: WORKER,
      group: 'operator.victoriametrics.com',
      resource: 'vmclusters',
      name: cluster,
      requestObject: { apiVersion: 'operator.victoriametrics.com/v1beta1', kind: 'VMCluster', metadata, spec },
      responseObject: { metadata: { ...metadata, generation: this.gen[cluster]! }, spec },
    });
  }

  /** The operator's VMCluster status write. */
  clusterStatus(cluster: string, updateStatus: string, observedGeneration = this.gen[cluster]!): AuditEvent {
    return this.push({
      user: OPERATOR,
      group: 'operator.victoriametrics.com',
      resource: 'vmclusters',
      subresource: 'status',
      name: cluster,
      requestObject: { status: { updateStatus, observedGeneration } },
      responseObject: { metadata: { name: cluster, namespace: NS, generation: this.gen[cluster]! }, status: { updateStatus, observedGeneration } },
    });
  }

  /** The worker's VMDistributedCluster status write: `out` zones named out of reads (with a message), `leaving` announced (LeavingReads). */
  status(generation: number, out: string[], phase: VMDistributedClusterStatus['phase'] = 'Progressing', leaving?: string): AuditEvent {
    const status: VMDistributedClusterStatus = {
      observedGeneration: generation,
      phase,
      workflow: { id: wfId(generation), runId: 'run' },
      zonesOutOfRotation: out,
      zones: Object.values(ZONE_OF).map((z) => ({
        name: z,
        phase: z === leaving ? 'LeavingReads' : 'Pending',
        ...(out.includes(z) ? { message: 'out of read rotation' } : {}),
      })),
    };
    const json = JSON.parse(JSON.stringify(status)) as JsonObject;
    return this.push({
      user: WORKER,
      group: 'vmrollout.io',
      resource: 'vmdistributedclusters',
      subresource: 'status',
      name: 'dc',
      requestObject: { status: json },
      responseObject: { metadata: { name: 'dc', generation }, status: json },
    });
  }

  /** The campaign's looks at the zone's queues: backlog now, then drained every poll for `forMs`. */
  drain(cluster: string, forMs = DRAINED_FOR_MS): void {
    const looks = (this.queues[ZONE_OF[cluster]!] ??= []);
    looks.push({ at: this.t, drained: false });
    for (let at = this.t + POLL_MS; at <= this.t + forMs; at += POLL_MS) looks.push({ at, drained: true });
    this.t += forMs;
  }

  /** Out of reads (the status announces it first), then patched. */
  leaveAndPatch(cluster: string, generation: number): void {
    const z = ZONE_OF[cluster]!;
    this.status(generation, [z], 'Progressing', z);
    this.remove(cluster, generation);
    this.status(generation, [z]);
    this.patchCluster(cluster, generation);
  }

  /** Seen drained (for `drainedForMs`), back in reads, and a status naming no zone out. */
  rejoin(cluster: string, generation: number, phase: VMDistributedClusterStatus['phase'] = 'Progressing', drainedForMs = DRAINED_FOR_MS): void {
    this.drain(cluster, drainedForMs);
    this.restore(cluster);
    this.status(generation, [], phase);
  }

  /** One zone's correct step. */
  zone(cluster: string, generation: number): void {
    this.leaveAndPatch(cluster, generation);
    this.clusterStatus(cluster, 'expanding');
    this.clusterStatus(cluster, 'operational');
    this.rejoin(cluster, generation);
  }

  input(extra: Partial<JudgeInput> = {}): JudgeInput {
    return {
      events: this.events,
      namespace: NS,
      vmdc: { name: 'dc', uid: UID },
      zoneOf: ZONE_OF,
      initialRoutes: INITIAL_ROUTES,
      initialGenerations: Object.fromEntries(CLUSTERS.map((c) => [c, 1])),
      queues: this.queues,
      queueDrainedForMs: DRAINED_FOR_MS,
      upgrades: { 2: this.upgraded },
      reads: [
        { at: this.t - 1000, ageMs: 1200 },
        { at: this.t, ageMs: 900 },
      ],
      ...extra,
    };
  }
}

const checks = (breaches: Breach[]): CheckId[] => breaches.map((b) => b.check);
const checksOf = (input: JudgeInput): CheckId[] => checks(judge(input).breaches);

function correctRollout(): Scenario {
  const s = new Scenario();
  s.status(2, []);
  for (const c of CLUSTERS) s.zone(c, 2);
  s.status(2, [], 'Succeeded');
  return s;
}

/** A rollout of generation 2 that upgrades only `cluster`, so far out of reads and patched. */
function oneZone(cluster = 'vm-az-a'): Scenario {
  const s = new Scenario([cluster]);
  s.leaveAndPatch(cluster, 2);
  return s;
}

describe('chaos oracle: a correct 3-zone rollout', () => {
  it('has no breach, and counts what happened', () => {
    const s = correctRollout();
    const v = judge(s.input());
    expect(v.breaches).toEqual([]);
    // test/infra/oracle/invariants.ts agrees
    expect(crossCheck(s.input())).toEqual([]);
    expect(v.counts.routeEdits).toBe(12);
    expect(v.counts.removals).toBe(6);
    expect(v.counts.restores).toBe(6);
    expect(v.counts.maxZonesOut).toBe(1);
    expect(v.counts.statusWrites).toBe(11);
    expect(v.counts.vmclusterPatches).toEqual({
      'vm-az-a': { changed: 1, retries: 0 },
      'vm-az-b': { changed: 1, retries: 0 },
      'vm-az-c': { changed: 1, retries: 0 },
    });
    expect(v.counts.operationalReports).toBe(3);
    expect(v.counts.reads).toBe(2);
  });

  it('counts a no-op re-apply as a retry, not a change', () => {
    const s = oneZone();
    s.patchCluster('vm-az-a', 2, false);
    s.clusterStatus('vm-az-a', 'operational');
    s.rejoin('vm-az-a', 2, 'Succeeded');
    const v = judge(s.input());
    expect(v.breaches).toEqual([]);
    expect(v.counts.vmclusterPatches['vm-az-a']).toEqual({ changed: 1, retries: 1 });
    expect(v.counts.vmclusterPatchesByGeneration['vm-az-a@g2']).toEqual({ changed: 1, retries: 1 });
  });

  it('ignores dry runs, failed requests and other namespaces', () => {
    const s = correctRollout();
    const patch = s.events.find((e) => e.resource === 'vmclusters' && e.subresource === '')!;
    const extra: AuditEvent[] = [
      { ...patch, seq: 1000, dryRun: true, responseObject: { metadata: { name: 'vm-az-a', generation: 9 } } },
      { ...s.events[2]!, seq: 1001, code: 409, responseObject: undefined },
      { ...s.events[2]!, seq: 1002, namespace: 'elsewhere' },
    ];
    expect(judge(s.input({ events: [...s.events, ...extra] })).breaches).toEqual([]);
  });
});

describe('chaos oracle: one negative control per check', () => {
  it('a: two zones out of reads at once', () => {
    const s = oneZone();
    s.clusterStatus('vm-az-a', 'operational');
    s.remove('vm-az-b', 2, [ROUTES[0]!]);
    s.status(2, ['az-a', 'az-b']);
    s.restore('vm-az-b', [ROUTES[0]!]);
    s.status(2, ['az-a']);
    s.rejoin('vm-az-a', 2, 'Succeeded');
    const v = judge(s.input());
    expect(checks(v.breaches)).toEqual(['a']);
    expect(v.breaches[0]!.message).toMatch(/2 zones out of reads at once: az-a, az-b/);
    expect(v.counts.maxZonesOut).toBe(2);
    // invariants.ts also wants the status to name az-b at its removal (this log announces it only after)
    expect(checks(crossCheck(s.input()))).toEqual(['a', 'e']);
  });

  it('b: a zone rejoins before its VMCluster is operational at the patched generation', () => {
    const s = oneZone();
    s.clusterStatus('vm-az-a', 'operational', 1); // an old observedGeneration does not count
    s.restore('vm-az-a');
    s.clusterStatus('vm-az-a', 'operational');
    s.status(2, [], 'Succeeded');
    const v = judge(s.input({ queues: {} }));
    expect(checks(v.breaches)).toEqual(['b']);
    expect(v.breaches[0]!.message).toMatch(/rejoined reads before the operator reported VMCluster vm-az-a operational at generation 2/);
    expect(checks(crossCheck(s.input({ queues: {} })))).toEqual(['b']);
  });

  it('b: a zone rejoins operational but before it was seen drained (when queue observations are given)', () => {
    const s = oneZone();
    s.clusterStatus('vm-az-a', 'operational');
    s.restore('vm-az-a');
    s.drain('vm-az-a');
    s.status(2, [], 'Succeeded');
    expect(checksOf(s.input())).toEqual(['b']);
    // without queue observations, the same log passes
    expect(checksOf(s.input({ queues: undefined }))).toEqual([]);
  });

  it('b: a zone rejoins one poll before its queues were drained for queueDrainedFor (the early-rejoin timeline)', () => {
    const rollout = (drainedForMs: number) => {
      const s = oneZone();
      s.clusterStatus('vm-az-a', 'operational');
      s.rejoin('vm-az-a', 2, 'Succeeded', drainedForMs);
      return s;
    };
    const onTime = judge(rollout(DRAINED_FOR_MS).input());
    expect(onTime.breaches).toEqual([]);
    expect(onTime.counts.rejoins).toEqual([{ zone: 'az-a', seq: expect.any(Number), drainedForMs: expect.any(Number) }]);
    expect(onTime.counts.rejoins[0]!.drainedForMs).toBeGreaterThanOrEqual(DRAINED_FOR_MS);
    const early = rollout(DRAINED_FOR_MS - POLL_MS);
    const v = judge(early.input());
    expect(checks(v.breaches)).toEqual(['b']);
    expect(v.breaches[0]!.message).toMatch(/zone az-a rejoined reads after its queues were seen drained for \d+ ms only \(queueDrainedFor 8000 ms\)/);
    // test/infra/oracle/invariants.ts agrees from the same looks
    expect(checks(crossCheck(early.input()))).toEqual(['b']);
    expect(crossCheck(rollout(DRAINED_FOR_MS).input())).toEqual([]);
  });

  it('b: how long the queues were seen drained: from the last look that was not, and no look for a while is no proof', () => {
    const looks: QueueObservation[] = [
      { at: 0, drained: true },
      { at: 100, drained: false },
      { at: 200, drained: true },
      { at: 300, drained: true },
    ];
    expect(seenDrainedFor(looks, 350, 1000)).toBe(250);
    expect(seenDrainedFor(looks, 50, 1000)).toBe(50); // never seen otherwise: since the first look
    expect(seenDrainedFor(looks, 1400, 1000)).toBe(0); // the last look is too old
    expect(seenDrainedFor([...looks, { at: 1500, drained: true }], 1600, 1000)).toBe(100); // a gap breaks the streak
    expect(seenDrainedFor([], 100, 1000)).toBe(0);
  });

  it('c: an older generation changes a VMCluster after a newer one began (its content shows which, whatever its annotations claim)', () => {
    const s = new Scenario(['vm-az-a']);
    s.status(2, ['az-a'], 'Progressing', 'az-a');
    s.remove('vm-az-a', 2);
    s.status(2, ['az-a']);
    s.specWrite(3);
    s.status(3, ['az-a']);
    // generation 2's spec (v2), its applied-fields annotation claiming generation 3
    s.patchCluster('vm-az-a', 2, true, 3);
    const v = judge(s.input({ upgrades: { 2: ['vm-az-a'] } }));
    expect(checks(v.breaches)).toEqual(['c']);
    expect(v.breaches[0]!.message).toMatch(/VMCluster vm-az-a changed by generation 2 after generation 3 began/);
    // The same writes with generation 3's spec, the annotation and the route records claiming generation 2: no breach.
    const t = new Scenario(['vm-az-a']);
    t.status(2, ['az-a'], 'Progressing', 'az-a');
    t.remove('vm-az-a', 2);
    t.status(2, ['az-a']);
    t.specWrite(3);
    t.status(3, ['az-a']);
    t.patchCluster('vm-az-a', 3, true, 2);
    expect(checksOf(t.input({ upgrades: { 3: ['vm-az-a'] } }))).toEqual([]);
  });

  it('c: a later generation adopts and upgrades the zone an ended one left out (found by the campaign, seed 1201); not the other way round', () => {
    const adopted = new Scenario(['vm-az-a']);
    adopted.status(2, ['az-a'], 'Progressing', 'az-a');
    adopted.remove('vm-az-a', 2);
    adopted.status(2, ['az-a'], 'Cancelled');
    adopted.specWrite(3);
    adopted.patchCluster('vm-az-a', 3);
    adopted.clusterStatus('vm-az-a', 'operational');
    adopted.status(3, ['az-a']);
    adopted.drain('vm-az-a');
    adopted.restore('vm-az-a');
    adopted.status(3, [], 'Succeeded');
    expect(checksOf(adopted.input({ upgrades: { 3: ['vm-az-a'] } }))).toEqual([]);
    // A newer generation's zone is not an older one's to change.
    const older = new Scenario(['vm-az-a']);
    older.specWrite(3);
    older.status(3, ['az-a'], 'Progressing', 'az-a');
    older.remove('vm-az-a', 3);
    older.patchCluster('vm-az-a', 2);
    expect(judge(older.input({ upgrades: { 2: ['vm-az-a'] } })).breaches.map((b) => `${b.check}: ${b.message}`)).toContainEqual(
      expect.stringMatching(/^c: VMCluster vm-az-a changed by generation 2 after generation 3 began/),
    );
  });

  it('c: an older generation writes its status after a newer one began', () => {
    const s = correctRollout();
    s.specWrite(3);
    s.status(3, [], 'Succeeded');
    s.status(2, [], 'Superseded');
    const v = judge(s.input());
    expect(checks(v.breaches)).toEqual(['c']);
    expect(v.breaches[0]!.message).toMatch(/status write by generation 2 after generation 3 began/);
  });

  it('c: a write for a generation the user has not written', () => {
    const s = correctRollout();
    s.status(3, [], 'Succeeded');
    const v = judge(s.input());
    expect(checks(v.breaches)).toEqual(['c']);
    expect(v.breaches[0]!.message).toMatch(/status write for generation 3 before the VMDistributedCluster reached it \(at generation 2\)/);
  });

  it('d: a route does not end as it began', () => {
    const s = oneZone('vm-az-c');
    s.clusterStatus('vm-az-c', 'operational');
    s.drain('vm-az-c');
    // the VMUser's restore puts the zone back at the front of crd.objects: not the exact undo
    s.restore('vm-az-c', [ROUTES[0]!]);
    s.restore('vm-az-c', [ROUTES[1]!], (refs) => {
      const objects = (refs[0]!.crd as JsonObject).objects as JsonValue[];
      objects.unshift(objects.pop()!);
      return refs;
    });
    s.status(2, [], 'Succeeded');
    const v = judge(s.input());
    expect(new Set(checks(v.breaches))).toEqual(new Set(['d']));
    expect(v.breaches.map((b) => b.message).join('\n')).toMatch(/VMUser\/reads-all does not end as it began/);
    expect(checks(crossCheck(s.input()))).toEqual(['d', 'd']);
  });

  it('d: a zone the final status reports out may stay out (its record undoes it)', () => {
    const s = oneZone();
    s.clusterStatus('vm-az-a', 'failed');
    s.status(2, ['az-a'], 'Failed');
    expect(checksOf(s.input())).toEqual([]);
    expect(crossCheck(s.input())).toEqual([]);
  });

  it('e: a status write omits a zone that is out of reads', () => {
    const s = correctRollout();
    const t = new Scenario();
    // the same rollout, but the status written after az-b's removal forgets az-b
    const at = s.events.findIndex(
      (e, i) =>
        i > 0 &&
        e.resource === 'vmdistributedclusters' &&
        JSON.stringify(e.responseObject).includes('"zonesOutOfRotation":["az-b"]') &&
        s.events[i - 1]!.resource === 'vmusers',
    );
    expect(at).toBeGreaterThan(0);
    const bad = t.status(2, []);
    const events = s.events.map((e, i) => (i === at ? { ...bad, seq: e.seq, at: e.at } : e));
    const v = judge(s.input({ events }));
    expect(checks(v.breaches)).toEqual(['e']);
    expect(v.breaches[0]!.message).toMatch(/zone az-b is out of reads .* does not name it/);
    expect(new Set(checks(crossCheck(s.input({ events }))))).toEqual(new Set(['e']));
  });

  it('e: a status write names a zone out of reads that every route has (but while announcing it)', () => {
    const named = (out: string[], leaving?: string) => {
      const s = oneZone();
      s.clusterStatus('vm-az-a', 'operational');
      // mid-upgrade, no route edit near it
      s.status(2, out, 'Progressing', leaving);
      s.rejoin('vm-az-a', 2, 'Succeeded');
      return s.input();
    };
    expect(checksOf(named(['az-a']))).toEqual([]);
    const v = judge(named(['az-a', 'az-b']));
    expect(checks(v.breaches)).toEqual(['e']);
    expect(v.breaches[0]!.message).toMatch(/status written naming zone az-b out of reads .* while every route has it/);
    expect(checks(crossCheck(named(['az-a', 'az-b'])))).toEqual(['e']);
    expect(checksOf(named(['az-a', 'az-b'], 'az-b'))).toEqual([]);
  });

  it('f: a VMCluster changed twice in one rollout generation', () => {
    const s = oneZone();
    s.patchCluster('vm-az-a', 2);
    s.clusterStatus('vm-az-a', 'operational');
    s.rejoin('vm-az-a', 2, 'Succeeded');
    const v = judge(s.input());
    expect(checks(v.breaches)).toEqual(['f']);
    expect(v.breaches[0]!.message).toMatch(/vm-az-a in generation 2: 2 changes, expected exactly 1/);
    expect(v.counts.vmclusterPatches['vm-az-a']).toEqual({ changed: 2, retries: 0 });
  });

  it("f: counted by the generation whose spec the change carries, not by the applied-fields annotation's word", () => {
    const s = oneZone();
    s.clusterStatus('vm-az-a', 'operational');
    s.rejoin('vm-az-a', 2);
    s.specWrite(3);
    s.status(3, []);
    // generation 3 changes vm-az-b to its spec, the annotation claiming generation 2
    s.status(3, ['az-b'], 'Progressing', 'az-b');
    s.remove('vm-az-b', 3);
    s.patchCluster('vm-az-b', 3, true, 2);
    s.clusterStatus('vm-az-b', 'operational');
    s.rejoin('vm-az-b', 3, 'Succeeded');
    const v = judge(s.input({ upgrades: { 2: ['vm-az-a'], 3: ['vm-az-b'] } }));
    expect(v.breaches).toEqual([]);
    expect(v.counts.vmclusterPatchesByGeneration).toEqual({ 'vm-az-a@g2': { changed: 1, retries: 0 }, 'vm-az-b@g3': { changed: 1, retries: 0 } });
  });

  it('f: a VMCluster changed to a spec no generation asks for', () => {
    const s = oneZone();
    s.patchCluster('vm-az-a', 7);
    s.clusterStatus('vm-az-a', 'operational');
    s.rejoin('vm-az-a', 2, 'Succeeded');
    const v = judge(s.input());
    expect(checks(v.breaches)).toContain('f');
    expect(v.breaches.map((b) => b.message)).toContainEqual(expect.stringMatching(/VMCluster vm-az-a changed to a spec no generation of dc asks for/));
  });

  it('g: a failed and a stale read', () => {
    const s = correctRollout();
    const v = judge(
      s.input({
        reads: [
          { at: 1, ageMs: 1000 },
          { at: 2, error: 'HTTP 502' },
          { at: 3, ageMs: 20_000 },
        ],
      }),
    );
    expect(checks(v.breaches)).toEqual(['g', 'g']);
    expect(v.counts).toMatchObject({ reads: 3, failedReads: 1, staleReads: 1 });
  });

  it('g: a fresh read whose series has a hole longer than the stale threshold', () => {
    const s = correctRollout();
    const v = judge(
      s.input({
        reads: [
          { at: 1, ageMs: 500, gapMs: 400 },
          { at: 2, ageMs: 500, gapMs: 12_000 },
        ],
      }),
    );
    expect(checks(v.breaches)).toEqual(['g']);
    expect(v.counts).toMatchObject({ reads: 2, staleReads: 0, gappyReads: 1 });
    expect(v.breaches[0]!.message).toMatch(/1 read\(s\) with a hole in the series longer than 9000 ms/);
  });
});

describe('chaos audit log reader', () => {
  const line = (o: object) => `${JSON.stringify(o)}\n`;
  const raw = (id: string, extra: object = {}) => ({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'RequestResponse',
    auditID: id,
    stage: 'ResponseComplete',
    requestURI: '/apis/operator.victoriametrics.com/v1beta1/namespaces/ns/vmclusters/vm-az-a?fieldManager=vmrollout',
    verb: 'patch',
    user: { username: WORKER, groups: ['system:serviceaccounts'] },
    objectRef: { resource: 'vmclusters', namespace: 'ns', name: 'vm-az-a', apiGroup: 'operator.victoriametrics.com', apiVersion: 'v1beta1' },
    responseStatus: { metadata: {}, code: 200 },
    requestObject: { spec: { clusterVersion: 'v2' } },
    responseObject: { metadata: { name: 'vm-az-a', generation: 2 } },
    requestReceivedTimestamp: '2026-12-01T20:00:00.123456Z',
    stageTimestamp: '2026-12-01T20:00:00.234567Z',
    ...extra,
  });

  it('parses a ResponseComplete event, and skips other stages', () => {
    const e = parseAuditLine(JSON.stringify(raw('x')), 0)!;
    expect(e).toMatchObject({
      at: Date.UTC(2026, 11, 1, 20, 0, 0, 234),
      receivedAt: Date.UTC(2026, 11, 1, 20, 0, 0, 123),
      user: WORKER,
      verb: 'patch',
      group: 'operator.victoriametrics.com',
      resource: 'vmclusters',
      subresource: '',
      namespace: 'ns',
      name: 'vm-az-a',
      code: 200,
      dryRun: false,
    });
    expect(e.responseObject).toEqual({ metadata: { name: 'vm-az-a', generation: 2 } });
    expect(parseAuditLine(JSON.stringify(raw('y', { stage: 'ResponseStarted' })), 0)).toBeUndefined();
    expect(parseAuditLine(JSON.stringify(raw('z', { requestURI: '/apis/x?dryRun=All' })), 0)!.dryRun).toBe(true);
  });

  it('reads a whole log, and follows one as it grows (a partial line waits for its newline)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-'));
    const file = path.join(dir, 'audit.log');
    const f = followAuditLog(file, { intervalMs: 20 });
    try {
      expect(f.poll()).toEqual([]); // not there yet
      fs.writeFileSync(file, line(raw('1')) + line(raw('2', { stage: 'RequestReceived' })));
      expect(f.poll().map((e) => e.auditID)).toEqual(['1']);
      const whole = line(raw('3'));
      fs.appendFileSync(file, whole.slice(0, 40));
      expect(f.poll()).toEqual([]);
      expect(readAuditLog(file).map((e) => e.auditID)).toEqual(['1']);
      fs.appendFileSync(file, whole.slice(40));
      const got = await f.waitFor((e) => e.auditID === '3', 2000);
      expect(got.seq).toBe(1);
      expect(readAuditLog(file).map((e) => e.auditID)).toEqual(['1', '3']);
    } finally {
      expect(f.stop().map((e) => e.auditID)).toEqual(['1', '3']);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
