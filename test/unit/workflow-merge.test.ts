// Desired patches (RFC 7386) and the up-to-date check. Property tests: seeds and replay in
// test/support/property.ts (FC_SEED=<seed> make test-unit ARGS=<this file>).
import fc from 'fast-check';
import { defaultPayloadConverter } from '@temporalio/common';
import { applyPatch, composePatches, createsObject, desiredClusterPatch } from '../../workflows/merge';
import { jsonEqual } from '../../api/json-value';
import { validateSpec } from '../../api/validate';
import type { JsonObject, JsonValue, ManagedObject, NormalizedSpec, ZoneSpec } from '../../api/types';
import { assertProperty } from '../support/property';
import { minimalRawSpec } from './api-helpers';

const spec = (o: Partial<NormalizedSpec> = {}) =>
  ({
    clusterVersion: 'v1.150.0-cluster',
    overrideSpec: { vmselect: { replicaCount: 3, extraArgs: { a: '1' } }, retentionPeriod: '30d' },
    ...o,
  }) as NormalizedSpec;

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
    const zone: ZoneSpec = {
      name: 'az-a',
      vmcluster: { name: 'vm-a', spec: { vmstorage: { replicaCount: 2 }, vmselect: { replicaCount: 1, extraArgs: { b: '2' } } } },
    };
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

/** Whether applying `patch` to `current` changes nothing: the patch is there already. */
const isUpToDate = (current: JsonObject | undefined, patch: JsonObject): boolean => jsonEqual(applyPatch(current, patch), current ?? {});

describe('a patch that changes nothing', () => {
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

test('jsonEqual ignores key order, not array order', () => {
  expect(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
  expect(jsonEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
  expect(jsonEqual({ a: null }, {})).toBe(false);
});

test('composition: a later list replaces an earlier one, whatever their lengths', () => {
  expect(composePatches({ a: [1, 2, 3] }, { a: [9] })).toEqual({ a: [9] });
  expect(applyPatch({ a: [0] }, composePatches({ a: [1, 2] }, { a: [3] }))).toEqual({ a: [3] });
});

// ---------------------------------------------------------------------------------------------
// Overlays are data, whatever their keys.

const DANGEROUS_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'] as const;
const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON as it arrives from the API server: `__proto__` is an own key. */
const fromJson = (s: string) => JSON.parse(s) as JsonObject;

/** A canonical text of a JSON value over own keys only (sorted), independent of workflows/merge. */
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (isObj(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The own data property at `path`, or undefined. */
function ownAt(v: unknown, path: string[]): PropertyDescriptor | undefined {
  let cur: unknown = v;
  let d: PropertyDescriptor | undefined;
  for (const k of path) {
    if (!isObj(cur) || !hasOwn(cur, k)) return undefined;
    d = Object.getOwnPropertyDescriptor(cur, k);
    cur = d?.value;
  }
  return d;
}

/** Every object inside `v` has a null, Object or Array prototype, and is reached through own keys. */
function checkPrototypes(v: unknown): void {
  if (typeof v !== 'object' || v === null) return;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (Array.isArray(v)) expect(proto).toBe(Array.prototype);
  else expect(proto === null || proto === Object.prototype).toBe(true);
  for (const k of Object.keys(v)) checkPrototypes((v as Record<string, unknown>)[k]);
}

const OBJECT_PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();
function checkNoGlobalPollution(): void {
  expect(({} as Record<string, unknown>).replicaCount).toBeUndefined();
  expect(({} as Record<string, unknown>).x).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(OBJECT_PROTOTYPE_KEYS);
  expect(typeof Object.prototype.toString).toBe('function');
  expect(typeof Object.prototype.hasOwnProperty).toBe('function');
}

/**
 * The independent reading of "x is as the patch wants it": each non-null leaf of the patch is an
 * own property of x at its path with that value, each null leaf is absent, each object is an object.
 */
function satisfies(x: JsonValue | undefined, patch: JsonValue): boolean {
  if (!isObj(patch)) return x !== undefined && canon(x) === canon(patch);
  if (!isObj(x)) return false;
  return Object.keys(patch).every((k) => (patch[k] === null ? !hasOwn(x, k) : hasOwn(x, k) && satisfies(x[k], patch[k]!)));
}

const roundTrip = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const VERSION = 'v1.150.0-cluster';
const specOf = (overrideSpec: JsonObject): NormalizedSpec => ({ clusterVersion: VERSION, overrideSpec }) as NormalizedSpec;

describe('overlays are data, whatever their keys', () => {
  afterEach(checkNoGlobalPollution);

  type Where = 'global overlay' | 'zone overlay' | 'full spec';
  type Depth = 'top level' | 'nested';
  const cases: Array<[string, Where, Depth]> = [];
  for (const key of DANGEROUS_KEYS) {
    for (const where of ['global overlay', 'zone overlay', 'full spec'] as Where[]) {
      for (const depth of ['top level', 'nested'] as Depth[]) cases.push([key, where, depth]);
    }
  }

  /** The key carries `{ replicaCount: 9 }`: what a merge that turns it into a prototype would leak. */
  const overlay = (key: string, depth: Depth) =>
    depth === 'top level'
      ? fromJson(`{${JSON.stringify(key)}: {"replicaCount": 9}, "vmselect": {"replicaCount": 2}}`)
      : fromJson(`{"vmselect": {"replicaCount": 2, ${JSON.stringify(key)}: {"replicaCount": 9}, "extraArgs": {${JSON.stringify(key)}: "1"}}}`);
  const paths = (key: string, depth: Depth) =>
    depth === 'top level'
      ? [[key]]
      : [
          ['vmselect', key],
          ['vmselect', 'extraArgs', key],
        ];

  test.each(cases)('VMCluster: %s in the %s at %s', (key, where, depth) => {
    const o = overlay(key, depth);
    const zone: ZoneSpec =
      where === 'global overlay'
        ? { name: 'z', vmcluster: { name: 'vm' } }
        : where === 'zone overlay'
          ? { name: 'z', vmcluster: { name: 'vm', overrideSpec: o } }
          : { name: 'z', vmcluster: { name: 'vm', spec: o } };
    const patch = desiredClusterPatch(specOf(where === 'global overlay' ? o : {}), zone);

    // The desired patch holds the keys as plain data, and says so in JSON.
    expect(canon(roundTrip(patch))).toBe(canon({ ...roundTrip(o), clusterVersion: VERSION }));
    for (const p of paths(key, depth)) expect(ownAt(patch, p)?.value).toBeDefined();
    expect((patch as Record<string, unknown>).replicaCount).toBeUndefined();
    checkPrototypes(patch);

    // Not up to date until the keys are there, even with everything else already applied.
    const current: JsonObject = { clusterVersion: VERSION, vmselect: { replicaCount: 2, extraArgs: {} }, vmstorage: { replicaCount: 1 } };
    expect(isUpToDate(current, patch)).toBe(false);
    expect(isUpToDate(roundTrip(current), roundTrip(patch))).toBe(false);

    // Applying puts them there as own data properties, and nothing else changes.
    const after = applyPatch(current, patch);
    for (const p of paths(key, depth)) {
      const d = ownAt(after, p);
      expect(d).toMatchObject({ enumerable: true, writable: true });
      expect(d && 'value' in d).toBe(true);
    }
    expect((after as Record<string, unknown>).replicaCount).toBeUndefined();
    expect(ownAt(after, ['vmstorage', 'replicaCount'])?.value).toBe(1);
    checkPrototypes(after);
    expect(isUpToDate(after, patch)).toBe(true);
    // ... also as read back from the API server and after Temporal's payload converter.
    expect(isUpToDate(roundTrip(after), roundTrip(patch))).toBe(true);
    const carried = defaultPayloadConverter.fromPayload<JsonObject>(defaultPayloadConverter.toPayload(patch));
    expect(canon(carried)).toBe(canon(patch));
    expect(isUpToDate(after, carried)).toBe(true);
    expect(current).toEqual({ clusterVersion: VERSION, vmselect: { replicaCount: 2, extraArgs: {} }, vmstorage: { replicaCount: 1 } });

    // The create path (full spec, object absent): created with every key.
    if (where === 'full spec') {
      expect(createsObject(zone.vmcluster)).toBe(true);
      const created = applyPatch(undefined, patch);
      expect(canon(roundTrip(created))).toBe(canon(roundTrip(patch)));
      expect(isUpToDate(created, patch)).toBe(true);
    }
  });

  test.each(DANGEROUS_KEYS.flatMap((key) => (['overrideSpec', 'spec'] as const).map((form) => [key, form] as const)))(
    'VMAgent / VMUser: %s in the %s',
    (key, form) => {
      const o = fromJson(`{${JSON.stringify(key)}: {"replicaCount": 9}, "extraArgs": {${JSON.stringify(key)}: "1"}}`);
      const obj: ManagedObject = { name: 'x', [form]: o };
      const patch = composePatches(obj.spec, obj.overrideSpec);
      expect(canon(roundTrip(patch))).toBe(canon(roundTrip(o)));
      checkPrototypes(patch);
      expect(isUpToDate({ extraArgs: {} }, patch)).toBe(false);
      const after = applyPatch(form === 'spec' ? undefined : { extraArgs: {} }, patch);
      expect(ownAt(after, [key])?.value).toBeDefined();
      expect(ownAt(after, ['extraArgs', key])?.value).toBe('1');
      checkPrototypes(after);
      expect(isUpToDate(after, patch)).toBe(true);
      expect(isUpToDate(roundTrip(after), roundTrip(patch))).toBe(true);
    },
  );

  test('a null under a dangerous key deletes exactly that key', () => {
    const cur = fromJson('{"__proto__": {"a": 1}, "constructor": 1, "prototype": [1], "keep": true}');
    const patch = fromJson('{"__proto__": null, "constructor": null, "prototype": {"x": null}}');
    expect(isUpToDate(cur, patch)).toBe(false);
    const after = applyPatch(cur, patch);
    expect(canon(after)).toBe(canon({ keep: true, prototype: {} }));
    expect(hasOwn(after, '__proto__')).toBe(false);
    expect(isUpToDate(after, patch)).toBe(true);
    expect(isUpToDate(fromJson('{"keep": true}'), fromJson('{"__proto__": null, "toString": null}'))).toBe(true);
    // A target whose own keys shadow Object.prototype's methods is still just data.
    const shadowing = fromJson('{"hasOwnProperty": "x", "toString": 1, "a": 1}');
    expect(isUpToDate(shadowing, { a: null })).toBe(false);
    expect(canon(applyPatch(shadowing, { a: null, hasOwnProperty: null }))).toBe(canon({ toString: 1 }));
  });

  test('composition keeps dangerous keys of every layer', () => {
    const p = composePatches(
      fromJson('{"__proto__": {"a": 1}}'),
      fromJson('{"__proto__": {"b": 2}, "constructor": {"c": 3}}'),
      fromJson('{"constructor": {"c": null}}'),
    );
    expect(canon(p)).toBe(canon(fromJson('{"__proto__": {"a": 1, "b": 2}, "constructor": {"c": null}}')));
    checkPrototypes(p);
  });

  test('from the raw custom resource (validateSpec) to the patch: dangerous keys survive the schema', () => {
    const raw = JSON.parse(
      JSON.stringify(minimalRawSpec({ overrideSpec: { x: 1 } })).replace(
        '"overrideSpec":{"x":1}',
        '"overrideSpec":{"__proto__":{"replicaCount":9},"constructor":{"a":1}}',
      ),
    ) as Record<string, unknown>;
    const r = validateSpec(raw);
    if (!r.success) throw new Error(JSON.stringify(r.issues));
    const patch = desiredClusterPatch(r.spec, r.spec.zones[0]!);
    expect(ownAt(patch, ['__proto__', 'replicaCount'])?.value).toBe(9);
    expect(ownAt(patch, ['constructor', 'a'])?.value).toBe(1);
    expect((patch as Record<string, unknown>).replicaCount).toBeUndefined();
    expect(isUpToDate({ clusterVersion: 'v1' }, patch)).toBe(false);
  });
});

describe('property: after applying the desired patch the object is up to date, and up to date means every leaf is there', () => {
  afterAll(checkNoGlobalPollution);

  const key = fc.oneof(fc.constantFrom(...DANGEROUS_KEYS), fc.string({ maxLength: 4 }));
  /** An object built as JSON.parse builds it: every key (`__proto__` too) an own data property. */
  const toObject = (entries: Array<[string, JsonValue]>): JsonObject => {
    const o: JsonObject = {};
    for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
    return o;
  };
  const { object } = fc.letrec<{ value: JsonValue; object: JsonObject }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(null), fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<JsonValue>, tie('object')),
    object: fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map(toObject),
  }));

  test('VMCluster: full spec → global overlay → zone overlay → clusterVersion', () => {
    assertProperty(
      fc.property(object, object, fc.option(object, { nil: undefined }), fc.boolean(), object, object, (current, global, zoneLayer, full, other, garbage) => {
        const vmcluster: ManagedObject = { name: 'vm' };
        if (zoneLayer) vmcluster[full ? 'spec' : 'overrideSpec'] = zoneLayer;
        const patch = desiredClusterPatch(specOf(global), { name: 'z', vmcluster });
        const after = applyPatch(current, patch);
        expect(isUpToDate(after, patch)).toBe(true);
        expect(satisfies(after, patch)).toBe(true);
        expect(isUpToDate(roundTrip(after), roundTrip(patch))).toBe(true);
        // Up to date exactly when every leaf is there: on the object before, after, and after a
        // further patch that may undo some of it.
        for (const x of [current, after, applyPatch(after, other), applyPatch(current, garbage)]) {
          expect(isUpToDate(x, patch)).toBe(satisfies(x, patch));
        }
        checkPrototypes(patch);
        checkPrototypes(after);
        expect(({} as Record<string, unknown>).replicaCount).toBeUndefined();
      }),
    );
  });

  test('VMAgent / VMUser: spec or overrideSpec', () => {
    assertProperty(
      fc.property(object, object, fc.boolean(), (current, layer, full) => {
        const obj: ManagedObject = { name: 'x', [full ? 'spec' : 'overrideSpec']: layer };
        const patch = composePatches(obj.spec, obj.overrideSpec);
        const after = applyPatch(full ? undefined : current, patch);
        expect(isUpToDate(after, patch)).toBe(true);
        expect(satisfies(after, patch)).toBe(true);
        expect(isUpToDate(current, patch)).toBe(satisfies(current, patch));
        checkPrototypes(after);
      }),
    );
  });
});
