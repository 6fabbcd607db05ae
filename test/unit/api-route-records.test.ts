// The out-of-rotation record format (api/route-records.ts) and the pure and listing parts of
// kube/route-records.ts (a fake list call: the real API server is in test/integration/activities-records).
import type { CustomObjectsApi } from '@kubernetes/client-node';
import {
  formatRecords,
  OUT_OF_ROTATION_ANNOTATION,
  parseRecords,
  recordKey,
  UnreadableRecordsError,
  type OutOfRotationRecord,
  type RouteRecords,
} from '../../api/route-records';
import type { RecordedRoute } from '../../api/route-records';
import { listRouteRecords, recordedZones } from '../../kube/route-records';

const NS = 'ns';
const rec = (uid: string, zone: string, over: Partial<OutOfRotationRecord> = {}): OutOfRotationRecord => ({
  vmdc: { namespace: NS, name: `vmdc-${uid}`, uid },
  route: { kind: 'VMAuth', name: 'g', uid: 'uid-g' },
  zone,
  workflowId: `vmdc/${NS}/vmdc-${uid}/g3-${uid}`,
  generation: 3,
  vmcluster: { name: `vm-${zone}`, namespace: NS },
  removed: [
    {
      type: 'object',
      index: 0,
      objectIndex: 1,
      object: { name: `vm-${zone}`, namespace: NS },
      targetRef: { crd: { kind: 'VMCluster/vmselect', objects: [] } },
    },
  ],
  since: '2024-05-01T10:00:00.000Z',
  ...over,
});
const keyed = (...rs: OutOfRotationRecord[]): RouteRecords => Object.fromEntries(rs.map((r) => [recordKey(r.vmdc.uid, r.zone), r]));

describe('parseRecords / formatRecords', () => {
  it('round-trips, with keys in a stable (sorted) order', () => {
    const records = keyed(rec('u2', 'az-b'), rec('u1', 'az-a', { removed: [{ type: 'targetRef', index: 2, targetRef: { static: { url: 'http://x' } } }] }));
    const text = formatRecords(records)!;
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['u1/az-a', 'u2/az-b']);
    expect(parseRecords(text)).toEqual(records);
    expect(formatRecords(parseRecords(text))).toBe(text);
  });

  it('round-trips every removed-entry type, the crdName entry (operator rules) included', () => {
    const crdName = {
      type: 'crdName' as const,
      index: 1,
      name: 'vm-az-a',
      namespace: NS,
      targetRef: { crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: NS, objects: [{ name: 'vm-az-b', namespace: NS }] } },
    };
    const records = keyed(
      rec('u1', 'az-a', {
        removed: [
          { type: 'targetRef', index: 0, targetRef: { static: { url: 'http://x' } } },
          crdName,
          { type: 'object', index: 1, objectIndex: 0, object: { name: 'vm-az-a', namespace: NS }, targetRef: crdName.targetRef },
        ],
      }),
    );
    const text = formatRecords(records)!;
    expect(parseRecords(text)).toEqual(records);
    expect(parseRecords(text)['u1/az-a']!.removed[1]).toEqual(crdName);
  });

  it('absent or empty annotation: no records; no records: null (the merge patch deletes the annotation)', () => {
    expect(parseRecords(undefined)).toEqual({});
    expect(parseRecords('')).toEqual({});
    expect(formatRecords({})).toBeNull();
  });

  it.each([
    ['not JSON', '{oops', /is not JSON/],
    ['a list', '[]', /must be a JSON object/],
    ['a string', '"x"', /must be a JSON object/],
    ['null', 'null', /must be a JSON object/],
  ])('rejects a value that is %s', (_what, value, msg) => {
    expect(() => parseRecords(value)).toThrow(UnreadableRecordsError);
    expect(() => parseRecords(value)).toThrow(msg);
  });

  const good = rec('u1', 'az-a');
  it.each<[string, Record<string, unknown>]>([
    ['a key that is not <uid>/<zone>', { 'u1/az-b': good }],
    ['no vmdc uid', { 'u1/az-a': { ...good, vmdc: { namespace: NS, name: 'x' } } }],
    ["an empty vmdc uid (it would be anyone's)", { '/az-a': { ...good, vmdc: { namespace: NS, name: 'x', uid: '' } } }],
    ['an empty zone', { 'u1/': { ...good, zone: '' } }],
    ['no route binding (a record written before records were bound to their object)', { 'u1/az-a': { ...good, route: undefined } }],
    ['a route binding without the uid', { 'u1/az-a': { ...good, route: { kind: 'VMAuth', name: 'g', uid: '' } } }],
    ['a route binding of another kind', { 'u1/az-a': { ...good, route: { kind: 'VMCluster', name: 'g', uid: 'x' } } }],
    ['nothing removed', { 'u1/az-a': { ...good, removed: [] } }],
    ['no vmcluster', { 'u1/az-a': { ...good, vmcluster: undefined } }],
    ['removed not a list', { 'u1/az-a': { ...good, removed: {} } }],
    ['a removed entry of an unknown type', { 'u1/az-a': { ...good, removed: [{ type: 'x', index: 0 }] } }],
    ['an object entry without the object', { 'u1/az-a': { ...good, removed: [{ type: 'object', index: 0, objectIndex: 0 }] } }],
    ['a targetRef entry without the targetRef', { 'u1/az-a': { ...good, removed: [{ type: 'targetRef', index: 0 }] } }],
    ['a negative index', { 'u1/az-a': { ...good, removed: [{ type: 'targetRef', index: -1, targetRef: {} }] } }],
    ['a crdName entry without the name', { 'u1/az-a': { ...good, removed: [{ type: 'crdName', index: 0, namespace: NS, targetRef: {} }] } }],
    ['a crdName entry with an empty name', { 'u1/az-a': { ...good, removed: [{ type: 'crdName', index: 0, name: '', namespace: NS, targetRef: {} }] } }],
    ['a crdName entry without the namespace', { 'u1/az-a': { ...good, removed: [{ type: 'crdName', index: 0, name: 'vm-az-a', targetRef: {} }] } }],
    [
      'a crdName entry with an empty namespace',
      { 'u1/az-a': { ...good, removed: [{ type: 'crdName', index: 0, name: 'vm-az-a', namespace: '', targetRef: {} }] } },
    ],
    ['a crdName entry without the targetRef', { 'u1/az-a': { ...good, removed: [{ type: 'crdName', index: 0, name: 'vm-az-a', namespace: NS }] } }],
    ['no generation', { 'u1/az-a': { ...good, generation: '3' } }],
    ['no since', { 'u1/az-a': { ...good, since: undefined } }],
  ])('rejects a record with %s, naming its key', (_what, value) => {
    const text = JSON.stringify(value);
    expect(() => parseRecords(text)).toThrow(UnreadableRecordsError);
    expect(() => parseRecords(text)).toThrow(`record ${JSON.stringify(Object.keys(value)[0])}`);
  });

  it('__proto__ and constructor keys are rejected, and never reach a prototype', () => {
    for (const key of ['__proto__', 'constructor', 'toString']) {
      const text = `{${JSON.stringify(key)}:${JSON.stringify(good)}}`;
      expect(() => parseRecords(text)).toThrow(UnreadableRecordsError);
      expect(() => parseRecords(text)).toThrow(`record ${JSON.stringify(key)}`);
    }
    expect(({} as Record<string, unknown>).zone).toBeUndefined();
    // A record under a proper key next to them does not make them acceptable.
    expect(() => parseRecords(`{"u1/az-a":${JSON.stringify(good)},"__proto__":${JSON.stringify(good)}}`)).toThrow(UnreadableRecordsError);
  });
});

describe('recordedZones', () => {
  it('groups by zone (sorted), one removal per route (VMAuth first), since and generation of the earliest record', () => {
    const routes: RecordedRoute[] = [
      { route: { kind: 'VMUser', name: 'u-b' }, record: rec('u1', 'az-b', { since: '2024-05-01T10:00:02.000Z', generation: 4 }) },
      { route: { kind: 'VMUser', name: 'u-a' }, record: rec('u1', 'az-b', { since: '2024-05-01T10:00:01.000Z', generation: 3 }) },
      { route: { kind: 'VMAuth', name: 'g' }, record: rec('u1', 'az-b', { since: '2024-05-01T10:00:03.000Z', generation: 5 }) },
      { route: { kind: 'VMAuth', name: 'g' }, record: rec('u1', 'az-a') },
    ];
    const zones = recordedZones(routes);
    expect(zones.map((z) => z.zone)).toEqual(['az-a', 'az-b']);
    const b = zones[1]!;
    expect(b.removals.map((r) => `${r.route.kind}/${r.route.name}`)).toEqual(['VMAuth/g', 'VMUser/u-a', 'VMUser/u-b']);
    expect(b.since).toBe('2024-05-01T10:00:01.000Z');
    expect(b.generation).toBe(3);
    expect(b.vmcluster).toEqual({ name: 'vm-az-b', namespace: NS });
    expect(b.removals[0]).toEqual({ route: { kind: 'VMAuth', name: 'g' }, vmcluster: { name: 'vm-az-b', namespace: NS }, removed: routes[2]!.record.removed });
    expect(recordedZones([])).toEqual([]);
  });
});

describe('listRouteRecords (fake list call)', () => {
  type Item = { metadata: { name: string; uid: string; annotations?: Record<string, string> }; spec?: Record<string, unknown> };
  function fakeApi(items: { vmauths?: Item[]; vmusers?: Item[] }, pageSize = 1000) {
    const calls: Array<{ plural: string; cont?: string }> = [];
    const api = {
      async listNamespacedCustomObject(p: { plural: string; namespace: string; _continue?: string }) {
        calls.push({ plural: p.plural, cont: p._continue });
        const all = (items as Record<string, Item[] | undefined>)[p.plural] ?? [];
        const start = Number(p._continue ?? 0);
        const next = start + pageSize < all.length ? String(start + pageSize) : undefined;
        return { items: all.slice(start, start + pageSize), metadata: next ? { continue: next } : {} };
      },
    } as unknown as CustomObjectsApi;
    return { api, calls };
  }
  const ann = (records: RouteRecords | string) => ({ [OUT_OF_ROTATION_ANNOTATION]: typeof records === 'string' ? records : formatRecords(records)! });
  const onUser = (uid: string, zone: string) => rec(uid, zone, { route: { kind: 'VMUser', name: 'r', uid: 'uid-r' } });

  it("returns this uid's verified records from VMAuths then VMUsers, following continue tokens", async () => {
    const { api, calls } = fakeApi(
      {
        vmauths: [
          { metadata: { name: 'g', uid: 'uid-g', annotations: ann(keyed(rec('u1', 'az-a'), rec('u2', 'az-a'))) } },
          { metadata: { name: 'plain', uid: 'p' } },
        ],
        vmusers: [{ metadata: { name: 'x', uid: 'uid-x' } }, { metadata: { name: 'r', uid: 'uid-r', annotations: ann(keyed(onUser('u1', 'az-a'))) } }],
      },
      1,
    );
    const got = await listRouteRecords(api, NS, { namespace: NS, uid: 'u1' });
    expect(got.unverified).toEqual([]);
    expect(got.verified.map((r) => [r.route.kind, r.route.name, r.record.vmdc.uid])).toEqual([
      ['VMAuth', 'g', 'u1'],
      ['VMUser', 'r', 'u1'],
    ]);
    expect(calls.filter((c) => c.plural === 'vmusers').length).toBe(2);
    expect(await listRouteRecords(api, NS, { namespace: NS, uid: 'u9' })).toEqual({ verified: [], unverified: [] });
  });

  it('an unparseable annotation is reported, naming the object, and fails nothing; a bad entry of ANOTHER uid does not concern this one', async () => {
    const broken = fakeApi({ vmusers: [{ metadata: { name: 'bad', uid: 'b', annotations: ann('{nope') } }] });
    expect(await listRouteRecords(broken.api, NS, { namespace: NS, uid: 'u1' })).toEqual({
      verified: [],
      unverified: [{ route: { kind: 'VMUser', name: 'bad' }, reason: `${OUT_OF_ROTATION_ANNOTATION} is not JSON` }],
    });

    const value = JSON.stringify({ 'u2/az-a': { zone: 'garbage' }, ...keyed(rec('u1', 'az-a')) });
    const mixed = fakeApi({ vmauths: [{ metadata: { name: 'g', uid: 'uid-g', annotations: ann(value) } }] });
    expect((await listRouteRecords(mixed.api, NS, { namespace: NS, uid: 'u1' })).verified.map((r) => r.record.zone)).toEqual(['az-a']);
    expect((await listRouteRecords(mixed.api, NS, { namespace: NS, uid: 'u2' })).unverified[0]!.reason).toMatch(/^record "u2\/az-a"/);
    // A key that names no uid could be anyone's: it concerns every uid.
    const anon = fakeApi({ vmauths: [{ metadata: { name: 'g', uid: 'uid-g', annotations: ann(JSON.stringify({ junk: 1 })) } }] });
    expect((await listRouteRecords(anon.api, NS, { namespace: NS, uid: 'u1' })).unverified[0]!.reason).toMatch(/^record "junk"/);
  });
});
