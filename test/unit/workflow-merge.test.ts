import { applyPatch, composePatches, createsObject, desiredClusterPatch, isUpToDate, jsonEqual, managedObjectPatch } from '../../workflows/merge';
import type { JsonObject, NormalizedSpec, ZoneSpec } from '../../api/types';

const spec = (o: Partial<NormalizedSpec> = {}) =>
  ({ clusterVersion: 'v1.150.0-cluster', overrideSpec: { vmselect: { replicaCount: 3, extraArgs: { a: '1' } }, retentionPeriod: '30d' }, ...o }) as NormalizedSpec;

describe('desiredClusterPatch', () => {
  test('global overlay, then zone overlay, then clusterVersion', () => {
    const zone: ZoneSpec = { name: 'az-a', vmcluster: { name: 'vm-a', overrideSpec: { vmselect: { replicaCount: 5 }, clusterVersion: 'zone-wins-not' } } };
    expect(desiredClusterPatch(spec(), zone)).toEqual({
      vmselect: { replicaCount: 5, extraArgs: { a: '1' } },
      retentionPeriod: '30d',
      clusterVersion: 'v1.150.0-cluster',
    });
  });
  test('zone full spec is the base; overlays apply on top', () => {
    const zone: ZoneSpec = { name: 'az-a', vmcluster: { name: 'vm-a', spec: { vmstorage: { replicaCount: 2 }, vmselect: { replicaCount: 1, extraArgs: { b: '2' } } } } };
    expect(desiredClusterPatch(spec(), zone)).toEqual({
      vmstorage: { replicaCount: 2 },
      vmselect: { replicaCount: 3, extraArgs: { a: '1', b: '2' } },
      retentionPeriod: '30d',
      clusterVersion: 'v1.150.0-cluster',
    });
    expect(createsObject(zone.vmcluster)).toBe(true);
    expect(createsObject({ name: 'x', overrideSpec: {} })).toBe(false);
  });
  test('null deletes, lists replace', () => {
    const zone: ZoneSpec = { name: 'z', vmcluster: { name: 'vm', overrideSpec: { retentionPeriod: null, vmselect: { extraArgs: null } } } };
    const p = desiredClusterPatch(spec({ overrideSpec: { retentionPeriod: '1d', tolerations: [{ key: 'a' }] } }), zone);
    const cur = { retentionPeriod: '7d', tolerations: [{ key: 'x' }, { key: 'y' }], vmselect: { extraArgs: { q: '1' }, replicaCount: 2 } };
    expect(applyPatch(cur, p)).toEqual({ tolerations: [{ key: 'a' }], vmselect: { replicaCount: 2 }, clusterVersion: 'v1.150.0-cluster' });
  });
  test('composition equals applying patches one by one', () => {
    const ps: JsonObject[] = [{ a: { b: 1, c: [1] } }, { a: { c: [2], d: null } }, { e: 'x', a: { b: null } }];
    const target: JsonObject = { a: { b: 0, d: 4, f: 5 }, g: 1 };
    const seq = ps.reduce((t, p) => applyPatch(t, p), target);
    expect(applyPatch(target, composePatches(...ps))).toEqual(seq);
  });
});

describe('isUpToDate', () => {
  const patch = { clusterVersion: 'v2', vmselect: { replicaCount: 2 } };
  test('true when applying the patch changes nothing', () => {
    expect(isUpToDate({ clusterVersion: 'v2', vmselect: { replicaCount: 2, x: 1 }, other: true }, patch)).toBe(true);
  });
  test('false on a differing or missing field', () => {
    expect(isUpToDate({ clusterVersion: 'v1', vmselect: { replicaCount: 2 } }, patch)).toBe(false);
    expect(isUpToDate({ clusterVersion: 'v2' }, patch)).toBe(false);
    expect(isUpToDate(undefined, patch)).toBe(false);
  });
  test('a null in the patch requires the key to be absent', () => {
    expect(isUpToDate({ a: 1 }, { a: null })).toBe(false);
    expect(isUpToDate({ b: 1 }, { a: null })).toBe(true);
  });
  test('does not mutate its inputs', () => {
    const cur = { clusterVersion: 'v1' };
    isUpToDate(cur, patch);
    expect(cur).toEqual({ clusterVersion: 'v1' });
  });
});

test('managedObjectPatch: spec or overlay; nothing for a bare ref', () => {
  expect(managedObjectPatch({ name: 'a' })).toBeUndefined();
  expect(managedObjectPatch({ name: 'a', overrideSpec: {} })).toBeUndefined();
  expect(managedObjectPatch({ name: 'a', overrideSpec: { x: 1 } })).toEqual({ x: 1 });
  expect(managedObjectPatch({ name: 'a', spec: {} })).toEqual({});
  expect(managedObjectPatch(undefined)).toBeUndefined();
});

test('jsonEqual ignores key order, not array order', () => {
  expect(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
  expect(jsonEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
  expect(jsonEqual({ a: null }, {})).toBe(false);
});
