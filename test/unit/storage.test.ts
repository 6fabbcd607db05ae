// VMSingle zones (spec.zones[].vmsingle): what api/storage.ts declares, and the pure modules that
// follow the zone's kind. Each negative control is the same call with the kind left out (a VMCluster
// of the same name): what a kind-blind implementation would do.
import type { JsonObject } from '../../api/types';
import { computeRemoval, routeReferencesCluster } from '../../api/route-targets';
import { applyRemoval, undoRemoval } from '../../api/route-edits';
import { restoreIssue, type RecordExpectation } from '../../api/record-verification';
import type { OutOfRotationRecord } from '../../api/route-records';
import { STORAGE, storageRef, type StorageRef } from '../../api/storage';
import { validateSpec } from '../../api/validate';
import { selectRequests } from '../../activities/reads/drain';
import { vmselectCounters } from '../../activities/reads/read-health';
import { findZoneQueues, isWriteHost } from '../../activities/vmagent/url';
import { readHosts } from '../../activities/vmauth/config';
import { desiredClusterPatch } from '../../workflows/merge';
import { validRawSpec } from './api-helpers';

const NS = 'monitoring';
const SINGLE: StorageRef = { name: 'vm-b', namespace: NS, kind: 'VMSingle' };
const CLUSTER: StorageRef = { name: 'vm-b', namespace: NS };
const singleRef = (name: string): JsonObject => ({ crd: { kind: 'VMSingle', name, namespace: NS } });
const selectRef = (name: string): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', name, namespace: NS } });
const route = { kind: 'VMAuth' as const, name: 'global' };

/** A valid spec whose zone az-b is a VMSingle named vm-b. */
function singleSpec(): Record<string, unknown> {
  const raw = validRawSpec() as { zones: Array<Record<string, unknown>> } & Record<string, unknown>;
  raw.zones[1] = { name: 'az-b', vmsingle: { name: 'vm-b', overrideSpec: { retentionPeriod: '30d' } } };
  raw.singleVersion = 'v1.150.0';
  return raw;
}

describe('read routes: a VMSingle and a VMCluster of the same name are different backends', () => {
  const refs = [selectRef('vm-a'), singleRef('vm-b'), selectRef('vm-b')];

  test('taking the VMSingle out removes its VMSingle targetRef only, and puts it back exactly', () => {
    const r = computeRemoval({ route, targetRefs: refs }, SINGLE);
    expect(r.vmcluster).toEqual(SINGLE);
    expect(r.removed.map((x) => [x.type, x.index])).toEqual([['targetRef', 1]]);
    const without = applyRemoval(refs, r);
    expect(without).toEqual([selectRef('vm-a'), selectRef('vm-b')]);
    expect(routeReferencesCluster(without, SINGLE)).toBe(false);
    expect(routeReferencesCluster(without, CLUSTER)).toBe(true);
    expect(undoRemoval(without, r)).toEqual(refs);
  });

  test('negative control: the VMCluster of that name takes its vmselect targetRef, not the VMSingle', () => {
    const r = computeRemoval({ route, targetRefs: refs }, CLUSTER);
    expect(r.removed.map((x) => [x.type, x.index])).toEqual([['targetRef', 2]]);
    expect(routeReferencesCluster(applyRemoval(refs, r), SINGLE)).toBe(true);
  });

  test('crd.objects of a VMSingle targetRef (VMDistributed writes them): the entry goes, the others stay', () => {
    const shared: JsonObject = {
      crd: {
        kind: 'VMSingle',
        name: '',
        namespace: '',
        objects: [
          { name: 'vm-b', namespace: NS },
          { name: 'vm-c', namespace: NS },
        ],
      },
    };
    const r = computeRemoval({ route, targetRefs: [shared] }, SINGLE);
    expect(r.removed.map((x) => x.type)).toEqual(['object']);
    const without = applyRemoval([shared], r);
    expect(without).toEqual([{ crd: { kind: 'VMSingle', name: '', namespace: '', objects: [{ name: 'vm-c', namespace: NS }] } }]);
    expect(undoRemoval(without, r)).toEqual([shared]);
    expect(computeRemoval({ route, targetRefs: [shared] }, CLUSTER).removed).toEqual([]);
  });
});

describe('route records of a VMSingle zone', () => {
  const uid = 'uid-1';
  const record = (vmcluster: StorageRef, targetRef: JsonObject): OutOfRotationRecord => ({
    vmdc: { namespace: NS, name: 'metrics', uid },
    zone: 'az-b',
    workflowId: 'w',
    generation: 2,
    route: { kind: 'VMAuth', name: 'global', uid: 'route-uid' },
    vmcluster,
    removed: [{ type: 'targetRef', index: 1, targetRef }],
    since: '2026-12-06T00:00:00Z',
  });
  const carrier = { route, uid: 'route-uid', namespace: NS };
  const v = validateSpec(singleSpec());
  if (!v.success) throw new Error('the VMSingle spec is valid');
  const expectation: RecordExpectation = {
    namespace: NS,
    uid,
    spec: { zones: v.spec.zones.map((z) => ({ name: z.name, storage: storageRef(z, NS) })), routes: [route] },
  };

  test('a record of its VMSingle restores; one naming a VMCluster of that name for it does not', () => {
    expect(restoreIssue(record(SINGLE, singleRef('vm-b')), carrier, expectation)).toBeUndefined();
    expect(restoreIssue(record(CLUSTER, selectRef('vm-b')), carrier, expectation)).toBe('names VMCluster vm-b, but zone az-b is VMSingle vm-b');
  });

  test('what a VMSingle record puts back must be a VMSingle reference', () => {
    expect(restoreIssue(record(SINGLE, selectRef('vm-b')), carrier, expectation)).toMatch(
      /removed targetRefs\[1\] routes elsewhere than VMSingle monitoring\/vm-b/,
    );
  });
});

describe("a VMSingle's read counters (single-node VictoriaMetrics strips /prometheus before counting)", () => {
  const page = [
    'vm_http_requests_total{path="/api/v1/query"} 7',
    'vm_http_requests_total{path="/api/v1/query_range"} 3',
    'vm_http_requests_total{path="/api/v1/write",protocol="promremotewrite"} 500',
    'vm_http_requests_total{path="/api/v1/import"} 40',
    'vm_http_request_errors_total{path="/api/v1/query"} 1',
    'vm_http_request_errors_total{path="/api/v1/write",protocol="promremotewrite"} 9',
  ].join('\n');

  test('queries count as reads; writes (a zone out of reads is still written) do not', () => {
    expect(selectRequests(page, 'VMSingle')).toBe(10);
    expect(vmselectCounters(page, 'VMSingle')).toEqual({ requests: 10, errors: 1, durationSeconds: 0, durationCount: 0 });
  });

  test("negative control: read as a vmselect's page it counts nothing (no /select/ path)", () => {
    expect(selectRequests(page, 'VMCluster')).toBe(0);
  });
});

describe("a VMSingle's services", () => {
  test('vmauth routes it to vmsingle-<name> (AsURL), not to a vmselect', () => {
    expect(readHosts(SINGLE)).toEqual([`vmsingle-vm-b.${NS}.svc`, `vmsingle-vm-b-additional-service.${NS}.svc`]);
    expect(readHosts(CLUSTER)).toEqual([`vmselect-vm-b.${NS}.svc`, `vmselect-vm-b-additional-service.${NS}.svc`]);
  });

  test("vmagent's remote write to it is found by its host vmsingle-<name> (as VMDistributed writes it)", async () => {
    const rw = [
      { url: 'http://vminsert-vm-a.monitoring.svc:8480/insert/0/prometheus/api/v1/write' },
      { url: 'http://vmsingle-vm-b.monitoring.svc:8429/api/v1/write' },
    ];
    expect(isWriteHost('vmsingle-vm-b.monitoring.svc', SINGLE)).toBe(true);
    expect(isWriteHost('vminsert-vm-b.monitoring.svc', SINGLE)).toBe(false);
    const found = await findZoneQueues(rw, { namespace: NS, vmclusterName: 'vm-b', storageKind: 'VMSingle' });
    expect(found.ok && found.queues.map((q) => q.index)).toEqual([1]);
    const blind = await findZoneQueues(rw, { namespace: NS, vmclusterName: 'vm-b' });
    expect(blind).toEqual({ ok: false, message: 'no VMAgent spec.remoteWrite entry with host vminsert-vm-b (bare or .monitoring[.svc[.<domain>]])' });
  });
});

describe('a VMSingle zone in the spec', () => {
  test('normalizes to its vmsingle, with singleVersion; a spec without one normalizes as before', () => {
    const v = validateSpec(singleSpec());
    if (!v.success) throw new Error(JSON.stringify(v.issues));
    expect(v.spec.zones[1]).toEqual({ name: 'az-b', vmsingle: { name: 'vm-b', overrideSpec: { retentionPeriod: '30d' } } });
    expect(v.spec.singleVersion).toBe('v1.150.0');
    const plain = validateSpec(validRawSpec());
    expect(plain.success && 'singleVersion' in plain.spec).toBe(false);
  });

  test('its apply sets spec.image.tag to singleVersion over its own overlay; the global VMCluster overlay is not applied', () => {
    const v = validateSpec({ ...singleSpec(), overrideSpec: { vmselect: { replicaCount: 2 } } });
    if (!v.success) throw new Error(JSON.stringify(v.issues));
    expect(desiredClusterPatch(v.spec, v.spec.zones[1]!)).toEqual({ retentionPeriod: '30d', image: { tag: 'v1.150.0' } });
    expect(desiredClusterPatch(v.spec, v.spec.zones[0]!)).toMatchObject({ vmselect: { replicaCount: 2 }, clusterVersion: v.spec.clusterVersion });
    expect(STORAGE.VMSingle.versionOf(desiredClusterPatch(v.spec, v.spec.zones[1]!))).toBe('v1.150.0');
  });
});
