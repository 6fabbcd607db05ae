// spec.zones[].trafficMode (api/traffic-mode.ts) and the route applies that leave held zones out
// (api/route-targets.ts specWithoutClusters): the held modes, and the targetRefs an apply of the
// spec's VMAuth / VMUser sends when zones are held out of reads.
import { specWithoutClusters } from '../../api/route-targets';
import { heldMode } from '../../api/traffic-mode';
import type { JsonObject } from '../../api/types';

const NS = 'monitoring';
const objects = (...names: string[]): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', objects: names.map((name) => ({ name, namespace: NS })) } });
const named = (name: string): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', name, namespace: NS } });
const held = (...names: string[]) => names.map((name) => ({ name, namespace: NS }));

test('write-only and maintenance hold a zone out of reads; read-write and unset do not', () => {
  expect([undefined, 'read-write', 'write-only', 'maintenance'].map((m) => heldMode({ trafficMode: m as never }))).toEqual([
    undefined,
    undefined,
    'write-only',
    'maintenance',
  ]);
});

test("a VMAuth's unauthorizedUserAccessSpec and a VMUser's targetRefs lose the held zones' entries, the rest of the spec kept", () => {
  const vmauth = { unauthorizedUserAccessSpec: { targetRefs: [objects('vm-a', 'vm-b', 'vm-c')], default_url: ['http://x'] }, replicaCount: 2 };
  expect(specWithoutClusters({ kind: 'VMAuth', name: 'g' }, vmauth, held('vm-b', 'vm-c'))).toEqual({
    unauthorizedUserAccessSpec: { targetRefs: [objects('vm-a')], default_url: ['http://x'] },
    replicaCount: 2,
  });
  const vmuser = { username: 'reads', targetRefs: [named('vm-a'), named('vm-b')] };
  expect(specWithoutClusters({ kind: 'VMUser', name: 'u' }, vmuser, held('vm-b'))).toEqual({ username: 'reads', targetRefs: [named('vm-a')] });
  // The input is not changed.
  expect(vmuser.targetRefs).toHaveLength(2);
});

test('a spec that sets no targetRefs is applied as it is; one left with no read backend is refused (undefined)', () => {
  expect(specWithoutClusters({ kind: 'VMUser', name: 'u' }, { tokenRef: { key: 'token' } }, held('vm-b'))).toEqual({ tokenRef: { key: 'token' } });
  expect(specWithoutClusters({ kind: 'VMUser', name: 'u' }, { targetRefs: [named('vm-b')] }, held('vm-b'))).toBeUndefined();
  // Negative control: the same route with a zone in reads beside it keeps that zone.
  expect(specWithoutClusters({ kind: 'VMUser', name: 'u' }, { targetRefs: [named('vm-b'), named('vm-a')] }, held('vm-b'))).toEqual({
    targetRefs: [named('vm-a')],
  });
});
