// Route edits against an in-memory API server (merge patches under a resourceVersion precondition,
// 409 on a stale one): the route objects of one call are edited at once, and a failed edit is
// reported only once every other edit has landed (the records then say exactly what landed).
import { ApplicationFailure } from '@temporalio/common';
import type { JsonObject, JsonValue } from '../../api/types';
import { OUT_OF_ROTATION_ANNOTATION, parseRecords, recordKey, type RecordOwner } from '../../api/route-records';
import type { KindRef, KubeObject, KubeObjects } from '../../kube/custom-objects';
import { editRoutes, readRecords, readRoutes } from '../../activities/routes/edit-routes';
import { settleAll } from '../../kube/at-once';
import { recordedZones } from '../../kube/route-records';
import { computeRemovals } from '../../workflows/routes';

const NS = 'ns';
/** The zones of uid-1 the verified records show out (what the workflow reads next). */
const recordedIn = async (kube: KubeObjects) => recordedZones((await readRecords(kube, { namespace: NS, uid: 'uid-1' })).verified);

const OWNER: RecordOwner = { vmdc: { namespace: NS, name: 'dc', uid: 'uid-1' }, zone: 'az-a', workflowId: 'wf', generation: 3 };
const single = (name: string): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', name, namespace: NS }, paths: ['/select/.*'] });

function mergeJson(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: JsonObject = target && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergeJson(out[k], v);
  }
  return out;
}

type Call = { op: 'get' | 'patch'; plural: string; name: string };

/** An in-memory namespace of route objects; `gate` may hold or fail any call before it is served. */
function fakeCluster(gate: (call: Call) => Promise<void> | void = () => {}) {
  const store = new Map<string, KubeObject>();
  let rv = 100;
  const key = (plural: string, name: string) => `${plural}/${name}`;
  const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;
  const conflict = () => Object.assign(new Error('409 Conflict'), { code: 409 });
  const kube = {
    async get(k: KindRef, _ns: string, name: string) {
      await gate({ op: 'get', plural: k.plural, name });
      const o = store.get(key(k.plural, name));
      return o && clone(o);
    },
    async mergePatch(k: KindRef, _ns: string, name: string, patch: JsonObject) {
      await gate({ op: 'patch', plural: k.plural, name });
      const cur = store.get(key(k.plural, name));
      if (!cur) throw Object.assign(new Error('404'), { code: 404 });
      const want = (patch.metadata as JsonObject | undefined)?.resourceVersion;
      if (want !== undefined && want !== cur.metadata.resourceVersion) throw conflict();
      const next = mergeJson(clone(cur) as unknown as JsonObject, patch) as unknown as KubeObject;
      next.metadata.resourceVersion = String(++rv);
      if (JSON.stringify(next.spec) !== JSON.stringify(cur.spec)) next.metadata.generation = (cur.metadata.generation ?? 1) + 1;
      store.set(key(k.plural, name), next);
      return clone(next);
    },
    api: {
      async listNamespacedCustomObject(p: { plural: string }) {
        return { items: [...store.entries()].filter(([k]) => k.startsWith(`${p.plural}/`)).map(([, o]) => clone(o)), metadata: {} };
      },
    },
  } as unknown as KubeObjects;
  const put = (plural: string, name: string, spec: JsonObject) =>
    store.set(key(plural, name), {
      metadata: { name, namespace: NS, uid: `uid-${plural}-${name}`, resourceVersion: String(++rv), generation: 1 },
      spec,
    } as unknown as KubeObject);
  const records = (plural: string, name: string) =>
    parseRecords((store.get(key(plural, name))!.metadata.annotations as Record<string, string> | undefined)?.[OUT_OF_ROTATION_ANNOTATION]);
  return { kube, put, records, store };
}

/** A VMAuth `ga` and VMUsers `u1`, `u2`, each routing to vm-az-a and vm-az-b. */
async function threeRoutes(gate?: (call: Call) => Promise<void> | void) {
  const c = fakeCluster(gate);
  c.put('vmauths', 'ga', { unauthorizedUserAccessSpec: { targetRefs: [single('vm-az-a'), single('vm-az-b')] } });
  c.put('vmusers', 'u1', { targetRefs: [single('vm-az-a'), single('vm-az-b')] });
  c.put('vmusers', 'u2', { targetRefs: [single('vm-az-a'), single('vm-az-b')] });
  const snaps = await readRoutes(c.kube, {
    namespace: NS,
    routes: [
      { kind: 'VMAuth', name: 'ga' },
      { kind: 'VMUser', name: 'u1' },
      { kind: 'VMUser', name: 'u2' },
    ],
  });
  const removals = computeRemovals(snaps, { name: 'vm-az-a', namespace: NS });
  expect(removals.map((r) => r.route.name)).toEqual(['ga', 'u1', 'u2']);
  return { ...c, removals };
}

/** Each call waits until `n` calls have started; after `ms` without that, it fails naming how many did. */
function barrier(n: number, ms = 2_000) {
  let started = 0;
  let open!: () => void;
  const all = new Promise<void>((r) => (open = r));
  return async (): Promise<void> => {
    if (++started === n) open();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`only ${started} of ${n} calls started`)), ms)));
    try {
      await Promise.race([all, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}

describe('editRoutes with a record owner: the route objects at once', () => {
  it('the writes overlap: every patch waits until all three have started, and the edit completes', async () => {
    let patches: (() => Promise<void>) | undefined;
    const c = await threeRoutes((call) => (call.op === 'patch' ? patches?.() : undefined));
    patches = barrier(3);
    const r = await editRoutes(c.kube, { namespace: NS, vmauthName: 'ga', removals: c.removals, direction: 'remove', record: OWNER });
    // Deterministic order whatever order the writes landed in: the VMAuth first, then the VMUsers.
    expect(r.written).toEqual([
      { kind: 'VMAuth', name: 'ga' },
      { kind: 'VMUser', name: 'u1' },
      { kind: 'VMUser', name: 'u2' },
    ]);
    expect(r.recorded).toHaveLength(1);
    expect(r.recorded![0]!.removals.map((x) => x.route.name)).toEqual(['ga', 'u1', 'u2']);
    expect(r).toMatchObject({ vmauthGeneration: 2, vmuserGenerations: { u1: 2, u2: 2 } });
    for (const [plural, name] of [
      ['vmauths', 'ga'],
      ['vmusers', 'u1'],
      ['vmusers', 'u2'],
    ] as const)
      expect(c.records(plural, name)[recordKey('uid-1', 'az-a')]).toBeDefined();

    // The restore, at once too.
    patches = barrier(3);
    const back = await editRoutes(c.kube, { namespace: NS, vmauthName: 'ga', removals: [], direction: 'restore', record: OWNER });
    expect(back.written.map((x) => x.name)).toEqual(['ga', 'u1', 'u2']);
    expect(back.recorded).toEqual([]);
  });

  it('negative control: the same barrier fails the edit when settleAll runs the calls one after another', async () => {
    let sequential!: typeof editRoutes;
    jest.isolateModules(() => {
      jest.doMock('../../kube/at-once', () => {
        const real = jest.requireActual<typeof import('../../kube/at-once')>('../../kube/at-once');
        const oneByOne: typeof settleAll = async (items, call) => {
          const out = [];
          for (const [i, item] of items.entries()) out.push(await call(item, i));
          return out;
        };
        return { ...real, settleAll: oneByOne };
      });
      ({ editRoutes: sequential } = jest.requireActual<typeof import('../../activities/routes/edit-routes')>('../../activities/routes/edit-routes'));
    });
    const patches = barrier(3, 200);
    let armed = false;
    const c = await threeRoutes((call) => (call.op === 'patch' && armed ? patches() : undefined));
    armed = true;
    await expect(sequential(c.kube, { namespace: NS, vmauthName: 'ga', removals: c.removals, direction: 'remove', record: OWNER })).rejects.toThrow(
      'only 1 of 3 calls started',
    );
  });

  it('one edit fails (a VMUser emptied between its read and its write): the failure is reported only after the others landed, and their records say so', async () => {
    let emptied = false;
    const order: string[] = [];
    const c = await threeRoutes(async (call) => {
      if (call.op !== 'patch' || !emptied) return;
      // The VMAuth's write is slow: it lands well after u1's edit has failed. An implementation that
      // reported the first failure at once would report before it landed.
      if (call.name === 'ga') await new Promise((r) => setTimeout(r, 100));
      order.push(`patch ${call.name}`);
    });
    emptied = true;
    const err = await editRoutes(
      c.kube,
      { namespace: NS, vmauthName: 'ga', removals: c.removals, direction: 'remove', record: OWNER },
      {
        beforeWrite: (route, attempt) => {
          if (route.name !== 'u1' || attempt !== 1) return;
          // Someone leaves u1 with vm-az-a alone: the write is refused (409), the re-read finds it would be empty.
          const u1 = c.store.get('vmusers/u1')!;
          c.store.set('vmusers/u1', { ...u1, metadata: { ...u1.metadata, resourceVersion: '999' }, spec: { targetRefs: [single('vm-az-a')] } });
        },
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('EmptyRoute');
    expect((err as ApplicationFailure).message).toContain('VMUser u1');
    // The slow VMAuth write had landed when the failure was reported.
    expect(order).toContain('patch ga');
    // What the workflow reads next (resyncRecorded): the VMAuth's and u2's records, not u1's.
    const zones = await recordedIn(c.kube);
    expect(zones).toHaveLength(1);
    expect(zones[0]!.removals.map((r) => r.route)).toEqual([
      { kind: 'VMAuth', name: 'ga' },
      { kind: 'VMUser', name: 'u2' },
    ]);
    expect(c.records('vmusers', 'u1')).toEqual({});
    expect(c.store.get('vmusers/u1')!.spec).toEqual({ targetRefs: [single('vm-az-a')] });
  });

  it('with several failures, the first in edit order is thrown, whatever failed first in time', async () => {
    const c = await threeRoutes(async (call) => {
      if (call.op !== 'patch') return;
      if (call.name === 'ga') {
        await new Promise((r) => setTimeout(r, 50));
        throw Object.assign(new Error('ga: 500'), { code: 500 });
      }
      if (call.name === 'u2') throw Object.assign(new Error('u2: 500'), { code: 500 });
    });
    await expect(editRoutes(c.kube, { namespace: NS, vmauthName: 'ga', removals: c.removals, direction: 'remove', record: OWNER })).rejects.toThrow('ga: 500');
    // u1 landed, and says so.
    expect((await recordedIn(c.kube))[0]!.removals.map((r) => r.route.name)).toEqual(['u1']);
  });
});

describe('editRoutes of a VMSingle zone', () => {
  const singleRef = (name: string): JsonObject => ({ crd: { kind: 'VMSingle', name, namespace: NS } });

  it("records the zone's storage kind, so its record is verified and restored (without it: not a VMCluster/vmselect reference, the zone stays out)", async () => {
    const c = fakeCluster();
    c.put('vmauths', 'ga', { unauthorizedUserAccessSpec: { targetRefs: [singleRef('vm-single-a'), singleRef('vm-single-b')] } });
    const ref = { name: 'vm-single-a', namespace: NS, kind: 'VMSingle' as const };
    const snaps = await readRoutes(c.kube, { namespace: NS, routes: [{ kind: 'VMAuth', name: 'ga' }] });
    const removals = computeRemovals(snaps, ref);
    await editRoutes(c.kube, { namespace: NS, vmauthName: 'ga', removals, direction: 'remove', record: OWNER });
    expect(c.records('vmauths', 'ga')[recordKey('uid-1', 'az-a')]?.vmcluster).toEqual(ref);
    const listed = await readRecords(c.kube, { namespace: NS, uid: 'uid-1' });
    expect(listed.unverified).toEqual([]);
    expect((await recordedIn(c.kube)).map((z) => z.zone)).toEqual(['az-a']);

    const back = await editRoutes(c.kube, { namespace: NS, vmauthName: 'ga', removals: [], direction: 'restore', record: OWNER });
    expect(back.written).toEqual([{ kind: 'VMAuth', name: 'ga' }]);
    expect((c.store.get('vmauths/ga')!.spec as JsonObject).unauthorizedUserAccessSpec).toEqual({
      targetRefs: [singleRef('vm-single-a'), singleRef('vm-single-b')],
    });
  });
});

describe('settleAll', () => {
  it('waits for every call before reporting a failure; Promise.all (the negative control) does not', async () => {
    let slowDone = false;
    const calls = (i: number) => (i === 0 ? Promise.reject(new Error('first')) : new Promise<number>((r) => setTimeout(() => r(((slowDone = true), i)), 50)));
    await expect(Promise.all([0, 1].map(calls))).rejects.toThrow('first');
    expect(slowDone).toBe(false);
    await new Promise((r) => setTimeout(r, 80));
    slowDone = false;
    await expect(settleAll([0, 1], calls)).rejects.toThrow('first');
    expect(slowDone).toBe(true);
  });

  it('results in the items order; the failure of the lowest rank; a synchronous throw is a failure', async () => {
    expect(await settleAll([30, 10, 20], (ms) => new Promise<number>((r) => setTimeout(() => r(ms), ms)))).toEqual([30, 10, 20]);
    const fail = (i: number) => Promise.reject(new Error(`e${i}`));
    await expect(settleAll([0, 1, 2], (_, i) => fail(i))).rejects.toThrow('e0');
    await expect(settleAll([0, 1, 2], (_, i) => fail(i), { failureOrder: (i) => (i === 0 ? 99 : i) })).rejects.toThrow('e1');
    await expect(
      settleAll([0], () => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
  });
});
