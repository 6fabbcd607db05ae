import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OUT_OF_ROTATION_ANNOTATION, formatRecords, recordKey, type OutOfRotationRecord, type RouteRecords, type RouteRef } from '../../api/route-records';
import type { JsonObject, JsonValue, VMDistributedClusterStatus } from '../../api/types';
import { appliedRecord } from '../../kube/applied-fields';
import { computeRemoval } from '../../workflows/routes';
import { applyRemoval, undoRemoval } from '../../api/route-edits';
import { followAuditLog, parseAuditLine, readAuditLog, type AuditEvent } from '../chaos/audit-log';
import { crossCheck, judge, workflowGeneration, type Breach, type CheckId, type JudgeInput } from '../chaos/oracle';

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

const initialTargetRefs = (): JsonObject[] => [
  { crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: CLUSTERS.map((name) => ({ name, namespace: NS })) }, paths: ['/select/.*'] },
  { static: { url: 'http://user-backend:8481' }, paths: ['/other/.*'] },
];
const INITIAL_ROUTES: Record<string, JsonObject[]> = Object.fromEntries(ROUTES.map((r) => [rkey(r), initialTargetRefs()]));

/** Writes a synthetic audit log: the API server's view of a rollout, one write at a time. */
class Scenario {
  /** `upgraded`: the VMClusters generation 2 is expected to change (check f). */
  constructor(private readonly upgraded: string[] = CLUSTERS) {}

  readonly events: AuditEvent[] = [];
  private t = Date.UTC(2026, 11, 1, 20, 0, 0);
  readonly routes: Record<string, JsonObject[]> = JSON.parse(JSON.stringify(INITIAL_ROUTES)) as Record<string, JsonObject[]>;
  readonly records: Record<string, RouteRecords> = Object.fromEntries(ROUTES.map((r) => [rkey(r), {}]));
  private readonly gen: Record<string, number> = Object.fromEntries(CLUSTERS.map((c) => [c, 1]));
  readonly drainedAt: Record<string, number[]> = {};

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
    return this.push({ user, group: 'operator.victoriametrics.com', resource: r.kind === 'VMAuth' ? 'vmauths' : 'vmusers', name: r.name, responseObject: this.routeObject(r) });
  }

  /** Takes `cluster` out of the given routes (one write per route, the record in the same write). */
  remove(cluster: string, generation: number, routes: RouteRef[] = ROUTES): void {
    for (const r of routes) {
      const removal = computeRemoval({ route: r, targetRefs: this.routes[rkey(r)]! }, { name: cluster, namespace: NS });
      const record: OutOfRotationRecord = {
        vmdc: { namespace: NS, name: 'dc', uid: UID },
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

  /** vmrollout's server-side apply of the VMCluster: `changes` raises the generation. */
  patchCluster(cluster: string, rolloutGeneration: number, changes = true): AuditEvent {
    if (changes) this.gen[cluster]!++;
    const metadata = { name: cluster, namespace: NS, annotations: { 'vmrollout.io/applied': appliedRecord({ name: 'dc', uid: UID, generation: rolloutGeneration }, 'overlay', { clusterVersion: 'v2' }) } };
    return this.push({
      user: WORKER,
      group: 'operator.victoriametrics.com',
      resource: 'vmclusters',
      name: cluster,
      requestObject: { apiVersion: 'operator.victoriametrics.com/v1beta1', kind: 'VMCluster', metadata, spec: { clusterVersion: 'v2' } },
      responseObject: { metadata: { ...metadata, generation: this.gen[cluster]! }, spec: { clusterVersion: 'v2' } },
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

  /** The worker's VMDistributedCluster status write: `out` zones named out of reads (with a message). */
  status(generation: number, out: string[], phase: VMDistributedClusterStatus['phase'] = 'Progressing'): AuditEvent {
    const status: VMDistributedClusterStatus = {
      observedGeneration: generation,
      phase,
      workflow: { id: wfId(generation), runId: 'run' },
      zonesOutOfRotation: out,
      zones: Object.values(ZONE_OF).map((z) => ({ name: z, phase: 'Pending', ...(out.includes(z) ? { message: 'out of read rotation' } : {}) })),
    };
    const json = JSON.parse(JSON.stringify(status)) as JsonObject;
    return this.push({ user: WORKER, group: 'vmrollout.io', resource: 'vmdistributedclusters', subresource: 'status', name: 'dc', requestObject: { status: json }, responseObject: { metadata: { name: 'dc', generation }, status: json } });
  }

  drained(cluster: string): void {
    this.t += 50;
    (this.drainedAt[ZONE_OF[cluster]!] ??= []).push(this.t);
  }

  /** Out of reads (the status announces it first), then patched. */
  leaveAndPatch(cluster: string, generation: number): void {
    const z = ZONE_OF[cluster]!;
    this.status(generation, [z]);
    this.remove(cluster, generation);
    this.status(generation, [z]);
    this.patchCluster(cluster, generation);
  }

  /** Seen drained, back in reads, and a status naming no zone out. */
  rejoin(cluster: string, generation: number, phase: VMDistributedClusterStatus['phase'] = 'Progressing'): void {
    this.drained(cluster);
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
      drainedAt: this.drainedAt,
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
    // test/oracle/invariants.ts agrees
    expect(crossCheck(s.input())).toEqual([]);
    expect(v.counts.routeEdits).toBe(12);
    expect(v.counts.removals).toBe(6);
    expect(v.counts.restores).toBe(6);
    expect(v.counts.maxZonesOut).toBe(1);
    expect(v.counts.statusWrites).toBe(11);
    expect(v.counts.vmclusterPatches).toEqual({ 'vm-az-a': { changed: 1, retries: 0 }, 'vm-az-b': { changed: 1, retries: 0 }, 'vm-az-c': { changed: 1, retries: 0 } });
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
    const v = judge(s.input({ drainedAt: {} }));
    expect(checks(v.breaches)).toEqual(['b']);
    expect(v.breaches[0]!.message).toMatch(/rejoined reads before the operator reported VMCluster vm-az-a operational at generation 2/);
    expect(checks(crossCheck(s.input({ drainedAt: {} })))).toEqual(['b']);
  });

  it('b: a zone rejoins operational but before it was seen drained (when drain times are given)', () => {
    const s = oneZone();
    s.clusterStatus('vm-az-a', 'operational');
    s.restore('vm-az-a');
    s.drained('vm-az-a');
    s.status(2, [], 'Succeeded');
    expect(checksOf(s.input())).toEqual(['b']);
    // without drain times, the same log passes
    expect(checksOf(s.input({ drainedAt: undefined }))).toEqual([]);
  });

  it("c: a second workflow generation edits the routes while another's removal is pending", () => {
    const s = new Scenario();
    s.status(2, ['az-a']);
    s.remove('vm-az-a', 2, [ROUTES[0]!]);
    s.status(2, ['az-a']);
    s.remove('vm-az-a', 3, [ROUTES[1]!]);
    s.status(3, ['az-a']);
    s.restore('vm-az-a');
    s.status(3, [], 'Succeeded');
    const v = judge(s.input({ upgrades: {} }));
    expect(checks(v.breaches)).toEqual(['c']);
    expect(v.breaches[0]!.message).toContain(`${wfId(3)} (g3) took zone az-a out of VMUser/reads-all while ${wfId(2)} (g2)'s removal of zone az-a is pending on VMAuth/vm-global`);
  });

  it('c: a later generation adopts and upgrades the zone an ended one left out (found by the campaign, seed 1201); not the other way round', () => {
    const adopted = new Scenario(['vm-az-a']);
    adopted.status(2, ['az-a']);
    adopted.remove('vm-az-a', 2);
    adopted.status(2, ['az-a'], 'Cancelled');
    adopted.patchCluster('vm-az-a', 3);
    adopted.clusterStatus('vm-az-a', 'operational');
    adopted.status(3, ['az-a']);
    adopted.drained('vm-az-a');
    adopted.restore('vm-az-a');
    adopted.status(3, [], 'Succeeded');
    expect(checksOf(adopted.input({ upgrades: { 3: ['vm-az-a'] } }))).toEqual([]);
    // A newer generation's pending removal is not an older one's to act on.
    const older = new Scenario(['vm-az-a']);
    older.status(3, ['az-a']);
    older.remove('vm-az-a', 3);
    older.patchCluster('vm-az-a', 2);
    expect(judge(older.input({ upgrades: { 2: ['vm-az-a'] } })).breaches.map((b) => b.message)).toContainEqual(expect.stringMatching(/changed for generation 2 while g3's removal of zone az-a/));
  });

  it('c: an older generation writes after a newer one began', () => {
    const s = correctRollout();
    s.status(3, [], 'Succeeded');
    s.status(2, [], 'Superseded');
    const v = judge(s.input());
    expect(checks(v.breaches)).toEqual(['c']);
    expect(v.breaches[0]!.message).toMatch(/by generation 2 after generation 3 began/);
  });

  it('d: a route does not end as it began', () => {
    const s = oneZone('vm-az-c');
    s.clusterStatus('vm-az-c', 'operational');
    s.drained('vm-az-c');
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
    const at = s.events.findIndex((e, i) => i > 0 && e.resource === 'vmdistributedclusters' && JSON.stringify(e.responseObject).includes('"zonesOutOfRotation":["az-b"]') && s.events[i - 1]!.resource === 'vmusers');
    expect(at).toBeGreaterThan(0);
    const bad = t.status(2, []);
    const events = s.events.map((e, i) => (i === at ? { ...bad, seq: e.seq, at: e.at } : e));
    const v = judge(s.input({ events }));
    expect(checks(v.breaches)).toEqual(['e']);
    expect(v.breaches[0]!.message).toMatch(/zone az-b is out of reads .* does not name it/);
    expect(new Set(checks(crossCheck(s.input({ events }))))).toEqual(new Set(['e']));
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
    expect(e).toMatchObject({ at: Date.UTC(2026, 11, 1, 20, 0, 0, 234), receivedAt: Date.UTC(2026, 11, 1, 20, 0, 0, 123), user: WORKER, verb: 'patch', group: 'operator.victoriametrics.com', resource: 'vmclusters', subresource: '', namespace: 'ns', name: 'vm-az-a', code: 200, dryRun: false });
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

  it('reads the generation from a workflow id', () => {
    expect(workflowGeneration('vmdc/ns/dc/g12-abcdef01')).toBe(12);
    expect(workflowGeneration('something-else')).toBeUndefined();
  });
});
