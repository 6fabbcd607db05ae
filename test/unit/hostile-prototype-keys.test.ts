// The hostile prototype keys (test/fixtures/hostile/prototype-keys.ts) at every place vmrollout
// builds or reads an object from keys it did not choose, then seeded random trees of such keys
// (test/support/property.ts: FC_SEED=<seed> make test-unit ARGS=hostile-prototype-keys). After each:
// no shared prototype gained or lost a key, and the keys that are data are still there as data.
import fc from 'fast-check';
import { parseSeries } from '../../activities/pods/prometheus-text';
import { podsRetriedSince } from '../../activities/vmagent/drain';
import { jsonEqual } from '../../api/json-value';
import { parseRecords, UnreadableRecordsError } from '../../api/route-records';
import type { QueueSample } from '../../api/rollout-contract';
import type { JsonObject, JsonValue } from '../../api/types';
import { appliedRecord, APPLIED_ANNOTATION, readAppliedRecord, releasedFields, type AppliedRecord } from '../../kube/applied-fields';
import { createLogger } from '../../trigger/log';
import { appliedConfig, applyPatch, composePatches } from '../../workflows/merge';
import { CASES, PROTOTYPE_KEYS, type PrototypeKeyCase } from '../fixtures/hostile/prototype-keys';
import { assertProperty } from '../support/property';

const VMDC = { name: 'd', uid: 'uid-1', generation: 1 };

/** The shared prototypes a write through a prototype key could reach, and their own keys now. */
const SHARED: Array<[string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Object', Object],
  ['Function.prototype', Function.prototype],
  ['Array.prototype', Array.prototype],
];
const keysOf = () => SHARED.map(([name, o]) => `${name}: ${Reflect.ownKeys(o).map(String).sort().join(',')}`);
const PRISTINE = keysOf();
const ORIGINAL_KEYS = SHARED.map(([, o]) => new Set(Reflect.ownKeys(o)));

/** Undoes a pollution (one that happened is a failure already): each case is judged on its own. */
function unpollute(): void {
  SHARED.forEach(([, o], i) => {
    for (const k of Reflect.ownKeys(o)) if (!ORIGINAL_KEYS[i]!.has(k)) Reflect.deleteProperty(o, k);
  });
}

/** An object as the API server's JSON makes it: `{"<key>": value}`, the key an own property. */
const withKey = (key: string, value: JsonValue): JsonObject => JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value)}}`) as JsonObject;

const recordOf = (spec: JsonObject): AppliedRecord =>
  readAppliedRecord({ metadata: { annotations: { [APPLIED_ANNOTATION]: appliedRecord(VMDC, 'spec', spec) } } })!;

const sample = (sendRetries: Record<string, number> | undefined): QueueSample => ({
  at: '2026-12-04T00:00:00Z',
  pendingBytes: 0,
  unreadablePods: 0,
  totalPods: 1,
  drained: true,
  message: '',
  ...(sendRetries ? { sendRetries } : {}),
});

/** Feeds the case's key into its place; fails (expect) when the key is not carried as the case says. */
function run(c: PrototypeKeyCase): void {
  const { key } = c;
  const through = PROTOTYPE_KEYS.find((p) => p.key === key)!.through;
  const inner = { dryRun: 'true' };
  switch (c.place) {
    case 'released-subtree': {
      const spec = { vmselect: { extraArgs: withKey(key, inner) } };
      const live = { spec: JSON.parse(JSON.stringify(spec)) as JsonObject };
      const released = releasedFields(recordOf(live.spec), live, {});
      expect(JSON.stringify(released)).toBe(JSON.stringify(live));
      return;
    }
    case 'released-record': {
      let value: JsonValue = inner;
      for (const k of [...through].reverse()) value = withKey(k, value);
      const live = { spec: value as JsonObject };
      const forged: AppliedRecord = { vmdc: VMDC, form: 'spec', fields: [[['spec', ...through, 'dryRun'], 'forged']] };
      expect(JSON.stringify(releasedFields(forged, live, {}))).toBe(JSON.stringify({ spec: { [through[0]!]: (live.spec as JsonObject)[through[0]!] } }));
      return;
    }
    case 'merge-patch': {
      const overlay = withKey(key, inner);
      const composed = composePatches(overlay, { other: 1 });
      expect(JSON.stringify(composed)).toBe(`{${JSON.stringify(key)}:{"dryRun":"true"},"other":1}`);
      expect(JSON.stringify(applyPatch({ kept: 1 }, overlay))).toBe(`{"kept":1,${JSON.stringify(key)}:{"dryRun":"true"}}`);
      expect(Object.keys(applyPatch({}, {}))).toEqual([]);
      return;
    }
    case 'applied-config': {
      const patch = { extraArgs: withKey(key, inner) };
      expect(JSON.stringify(appliedConfig(patch))).toBe(JSON.stringify(patch));
      return;
    }
    case 'queue-sample-pods': {
      // As a workflow payload (JSON) carries the sample.
      const retries = (n: number) => withKey(key, n) as Record<string, number>;
      expect(podsRetriedSince(sample({ other: 1 }), sample(retries(3)))).toEqual([]);
      expect(podsRetriedSince(sample(undefined), sample(retries(3)))).toEqual([]);
      expect(podsRetriedSince(sample(retries(1)), sample(retries(3)))).toEqual([key]);
      return;
    }
    case 'log-fields': {
      const lines: string[] = [];
      createLogger('info', (l) => lines.push(l)).info('hostile', withKey(key, inner));
      const line = JSON.parse(lines[0]!) as JsonObject;
      expect(Object.hasOwn(line, key) && jsonEqual(line[key], inner)).toBe(true);
      return;
    }
    case 'metrics-labels': {
      const [series] = parseSeries(`vmagent_remotewrite_pending_data_bytes{${key}="x"} 5\n`, ['vmagent_remotewrite_pending_data_bytes']);
      expect(Object.hasOwn(series!.labels, key) && series!.labels[key]).toBe('x');
      return;
    }
    case 'route-records':
      expect(() => parseRecords(JSON.stringify(withKey(key, { zone: 'az-a' })))).toThrow(UnreadableRecordsError);
      return;
  }
}

describe('hostile prototype keys', () => {
  afterEach(unpollute);

  it.each(CASES.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    run(c);
    expect(keysOf()).toEqual(PRISTINE);
    expect(({} as Record<string, unknown>).dryRun).toBeUndefined();
  });

  it('random trees of prototype keys: handed over and merged as data, nothing shared touched (seeded)', () => {
    const keys = fc.constantFrom('__proto__', 'constructor', 'prototype', 'a', 'b');
    const paths = fc.array(fc.tuple(fc.array(keys, { minLength: 1, maxLength: 4 }), fc.oneof(fc.string(), fc.integer())), { minLength: 1, maxLength: 8 });
    assertProperty(
      fc.property(paths, (entries) => {
        const live = { spec: treeOf(entries) };
        const released = releasedFields(recordOf(live.spec), live, {});
        const composed = composePatches(live.spec, withKey('other', 1));
        return (
          jsonEqual(released ?? { spec: {} }, live) &&
          jsonEqual(composed, { ...live.spec, ...withKey('other', 1) }) &&
          jsonEqual(appliedConfig(live.spec), live.spec) &&
          jsonEqual(keysOf(), PRISTINE)
        );
      }),
    );
  });
});

/** A JSON object with a value at each path (a later path through a value replaces it), as JSON.parse makes it. */
function treeOf(entries: Array<[string[], string | number]>): JsonObject {
  type Node = Map<string, Node | string | number>;
  const root: Node = new Map();
  for (const [path, value] of entries) {
    let cur = root;
    for (const k of path.slice(0, -1)) {
      const next = cur.get(k);
      if (next instanceof Map) cur = next;
      else cur.set(k, (cur = new Map()));
    }
    cur.set(path[path.length - 1]!, value);
  }
  const text = (n: Node | string | number): string =>
    n instanceof Map ? `{${[...n].map(([k, v]) => `${JSON.stringify(k)}:${text(v)}`).join(',')}}` : JSON.stringify(n);
  return JSON.parse(text(root)) as JsonObject;
}
