/**
 * The out-of-rotation records on the route objects, against a real kube-apiserver (+ etcd) with the
 * VM operator's real CRDs (test/fixtures/crds/vm-operator-crds.yaml) and our CRD: editRoutes with a record owner (one write carries the edit and
 * the record; restore from the records alone; conflicts; two VMDistributedClusters on one VMAuth; a
 * partial edit), readRecords, unreadable annotations, writeStatus rejected by the API server, and
 * `kubectl vmdc release-zone` (cli/main.ts) as a person runs it. Each test works in a namespace of its own (records
 * are listed per namespace).
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure, type Logger } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { createActivities } from '../../activities';
import { KubeObjects, mergePatchOptions, vmKind, VMDC_KIND, type KubeObject } from '../../kube/custom-objects';
import { noopMetrics, type ActivityMetrics } from '../../activities/metrics';
import { editRoutes } from '../../activities/routes/edit-routes';
import { isRejection, statusClient, writeStatus } from '../../activities/status/write-status';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, VM_GROUP, VM_VERSION } from '../../api/constants';
import { OUT_OF_ROTATION_ANNOTATION, parseRecords, recordKey, type OutOfRotationRecord, type RecordOwner } from '../../api/route-records';
import type { JsonObject, VMDistributedClusterStatus } from '../../api/types';
import { listRouteRecords } from '../../kube/route-records';
import { workflowIdFor } from '../../api/rollout-contract';
import type { RolloutActivities, RouteSnapshot } from '../../workflows/activity-types';
import { computeRemovals } from '../../workflows/routes';
import { applyRemoval, undoRemoval } from '../../api/route-edits';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';

jest.setTimeout(180_000);

const REPO = path.resolve(__dirname, '..', '..');
const VMDC_CRD = path.resolve(REPO, 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');
type RouteKind = 'VMAuth' | 'VMUser';

let kube: KubeCluster;
let custom: k8s.CustomObjectsApi;
let core: k8s.CoreV1Api;
let objects: KubeObjects;
let acts: RolloutActivities;
const env = new MockActivityEnvironment();
const runIn = <K extends keyof RolloutActivities>(a: RolloutActivities, name: K, ...args: Parameters<RolloutActivities[K]>) => runWith(env, a, name, ...args);
const runWith = <K extends keyof RolloutActivities>(env: MockActivityEnvironment, a: RolloutActivities, name: K, ...args: Parameters<RolloutActivities[K]>) =>
  env.run(a[name] as (...x: unknown[]) => ReturnType<RolloutActivities[K]>, ...args) as ReturnType<RolloutActivities[K]>;
const run = <K extends keyof RolloutActivities>(name: K, ...args: Parameters<RolloutActivities[K]>) => runIn(acts, name, ...args);

beforeAll(async () => {
  kube = await startKube();
  await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS, VMDC_CRD]);
  custom = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
  objects = new KubeObjects(kube.kubeConfig);
  // The activities' own mechanics, outside a rollout workflow: writes not bound to a caller (activities/guard/, tested in write-guard.test.ts).
  acts = createActivities({ kubeConfig: kube.kubeConfig, temporalClient: {} as Client, bindWrites: false });
});

afterAll(async () => {
  await kube?.stop();
});

let nsCount = 0;
async function newNamespace(): Promise<string> {
  const name = `rec-${++nsCount}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

// The real CRD requires crd.name and crd.namespace: "" when only crd.objects routes.
const vmselect = (ns: string, ...names: string[]): JsonObject => ({
  crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: names.map((name) => ({ name, namespace: ns })) },
  paths: ['/select/.*'],
});
const single = (ns: string, name: string): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', name, namespace: ns }, paths: ['/select/.*'] });
const other: JsonObject = { static: { url: 'http://other:8428' }, paths: ['/other'] };

async function createVM(ns: string, kind: RouteKind | 'VMCluster', name: string, spec: JsonObject, annotations?: Record<string, string>): Promise<void> {
  await custom.createNamespacedCustomObject({
    group: VM_GROUP,
    version: VM_VERSION,
    namespace: ns,
    plural: vmKind(kind).plural,
    body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind, metadata: { name, ...(annotations ? { annotations } : {}) }, spec },
  });
}
const get = async (ns: string, kind: RouteKind, name: string): Promise<KubeObject> => (await objects.get(vmKind(kind), ns, name))!;
const refsOf = (kind: RouteKind, obj: KubeObject): JsonObject[] =>
  (kind === 'VMAuth' ? ((obj.spec as JsonObject).unauthorizedUserAccessSpec as JsonObject).targetRefs : (obj.spec as JsonObject).targetRefs) as JsonObject[];
const refs = async (ns: string, kind: RouteKind, name: string) => refsOf(kind, await get(ns, kind, name));
const annotationsOf = (obj: KubeObject) => obj.metadata.annotations as Record<string, string> | undefined;
const recordOn = (obj: KubeObject, uid: string, zone: string): OutOfRotationRecord | undefined =>
  parseRecords(annotationsOf(obj)?.[OUT_OF_ROTATION_ANNOTATION])[recordKey(uid, zone)];
const rv = async (ns: string, kind: RouteKind, name: string) => (await get(ns, kind, name)).metadata.resourceVersion;

/** Writes the out-of-rotation annotation of VMAuth `name` as someone else would. */
const annotate = (ns: string, name: string, value: string) =>
  custom.patchNamespacedCustomObject(
    {
      group: VM_GROUP,
      version: VM_VERSION,
      namespace: ns,
      plural: 'vmauths',
      name,
      body: { metadata: { annotations: { [OUT_OF_ROTATION_ANNOTATION]: value } } },
    },
    mergePatchOptions,
  );

async function patchRefs(ns: string, kind: RouteKind, name: string, targetRefs: JsonObject[], extra: JsonObject = {}): Promise<void> {
  const spec = kind === 'VMAuth' ? { unauthorizedUserAccessSpec: { targetRefs, ...extra } } : { targetRefs, ...extra };
  await custom.patchNamespacedCustomObject(
    { group: VM_GROUP, version: VM_VERSION, namespace: ns, plural: vmKind(kind).plural, name, body: { spec } },
    mergePatchOptions,
  );
}

async function snapshots(ns: string, vmauth: string, users: string[]): Promise<RouteSnapshot[]> {
  return run('readRoutes', { namespace: ns, routes: [{ kind: 'VMAuth', name: vmauth }, ...users.map((name) => ({ kind: 'VMUser' as const, name }))] });
}

const owner = (ns: string, uid: string, zone: string, generation = 3): RecordOwner => ({
  vmdc: { namespace: ns, name: `dc-${uid}`, uid },
  zone,
  workflowId: `vmdc/${ns}/dc-${uid}/g${generation}-${uid.slice(0, 8)}`,
  generation,
});

/** Every watch event (MODIFIED/ADDED/DELETED) on the namespace's VMAuths and VMUsers from now on. */
async function watchRoutes(
  ns: string,
): Promise<{ events: Array<{ type: string; kind: RouteKind; obj: KubeObject }>; stop(untilSeen: Array<[RouteKind, string]>): Promise<void> }> {
  const events: Array<{ type: string; kind: RouteKind; obj: KubeObject }> = [];
  const aborts: AbortController[] = [];
  for (const kind of ['VMAuth', 'VMUser'] as const) {
    const plural = vmKind(kind).plural;
    const list = (await custom.listNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, namespace: ns, plural })) as {
      metadata: { resourceVersion: string };
    };
    aborts.push(
      await new k8s.Watch(kube.kubeConfig).watch(
        `/apis/${VM_GROUP}/${VM_VERSION}/namespaces/${ns}/${plural}`,
        { resourceVersion: list.metadata.resourceVersion },
        (type, obj: KubeObject) => events.push({ type, kind, obj }),
        () => {},
      ),
    );
  }
  return {
    events,
    // Wait until the watch delivered each (written) object's current resourceVersion: every write is in `events`.
    async stop(untilSeen) {
      for (const [kind, name] of untilSeen) {
        const want = await rv(ns, kind, name);
        const deadline = Date.now() + 10_000;
        while (!events.some((e) => e.kind === kind && e.obj.metadata.name === name && e.obj.metadata.resourceVersion === want)) {
          if (Date.now() > deadline) throw new Error(`watch never delivered ${kind} ${name} at ${want}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      for (const a of aborts) a.abort();
    },
  };
}
const writesTo = (events: Array<{ type: string; kind: RouteKind; obj: KubeObject }>, kind: RouteKind, name: string) =>
  events.filter((e) => e.kind === kind && e.obj.metadata.name === name && e.type === 'MODIFIED');

/** A VMAuth `ga` (vm-az-a among three in crd.objects), VMUser `ua` routing to vm-az-a twice, VMUser `ub` not routing to it. */
async function threeRoutes(ns: string) {
  await createVM(
    ns,
    'VMAuth',
    'ga',
    {
      selectAllByDefault: true,
      unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a', 'vm-az-b', 'vm-az-c'), other], default_url: ['http://fallback'] },
    },
    { 'example.com/keep': 'me' },
  );
  await createVM(ns, 'VMUser', 'ua', { username: 'a', targetRefs: [single(ns, 'vm-az-a'), vmselect(ns, 'vm-az-b', 'vm-az-a')] });
  await createVM(ns, 'VMUser', 'ub', { username: 'b', targetRefs: [single(ns, 'vm-az-b')] });
  const before = { ga: await get(ns, 'VMAuth', 'ga'), ua: await get(ns, 'VMUser', 'ua'), ub: await get(ns, 'VMUser', 'ub') };
  const removals = computeRemovals(await snapshots(ns, 'ga', ['ua', 'ub']), { name: 'vm-az-a', namespace: ns });
  return { before, removals };
}

describe('editRoutes with a record owner', () => {
  it('remove: one write per route carries both the edit and the exact record; a second call writes nothing', async () => {
    const ns = await newNamespace();
    const { before, removals } = await threeRoutes(ns);
    const rec = owner(ns, 'uid-1111', 'az-a');
    const t0 = Date.now();

    const watch = await watchRoutes(ns);
    const r1 = await run('editRoutes', { namespace: ns, vmauthName: 'ga', removals, direction: 'remove', record: rec });
    await watch.stop([
      ['VMAuth', 'ga'],
      ['VMUser', 'ua'],
    ]);

    // Exactly one write per edited route, and that one write has both the edit and the record.
    for (const [kind, name] of [
      ['VMAuth', 'ga'],
      ['VMUser', 'ua'],
    ] as const) {
      const writes = writesTo(watch.events, kind, name);
      expect(writes).toHaveLength(1);
      const written = writes[0]!.obj;
      expect(recordOn(written, 'uid-1111', 'az-a')).toBeDefined();
      expect(JSON.stringify(refsOf(kind, written))).not.toContain('"vm-az-a"');
    }
    expect(writesTo(watch.events, 'VMUser', 'ub')).toHaveLength(0);
    expect(await rv(ns, 'VMUser', 'ub')).toBe(before.ub.metadata.resourceVersion);

    const ga = await get(ns, 'VMAuth', 'ga');
    const ua = await get(ns, 'VMUser', 'ua');
    expect(refsOf('VMAuth', ga)).toEqual([vmselect(ns, 'vm-az-b', 'vm-az-c'), other]);
    expect(refsOf('VMUser', ua)).toEqual([vmselect(ns, 'vm-az-b')]);
    expect(annotationsOf(ga)!['example.com/keep']).toBe('me');
    // The record says exactly what is missing: nothing more, nothing less.
    const recGa = recordOn(ga, 'uid-1111', 'az-a')!;
    expect(recGa.removed).toEqual([
      { type: 'object', index: 0, objectIndex: 0, object: { name: 'vm-az-a', namespace: ns }, targetRef: vmselect(ns, 'vm-az-a', 'vm-az-b', 'vm-az-c') },
    ]);
    expect(applyRemoval(refsOf('VMAuth', before.ga), recGa)).toEqual(refsOf('VMAuth', ga));
    expect(undoRemoval(refsOf('VMAuth', ga), recGa)).toEqual(refsOf('VMAuth', before.ga));
    const recUa = recordOn(ua, 'uid-1111', 'az-a')!;
    expect(recUa.removed.map((r) => [r.type, r.index])).toEqual([
      ['targetRef', 0],
      ['object', 1],
    ]);
    expect(undoRemoval(refsOf('VMUser', ua), recUa)).toEqual(refsOf('VMUser', before.ua));
    expect(recGa).toMatchObject({ ...rec, vmcluster: { name: 'vm-az-a', namespace: ns } });
    expect(Date.parse(recGa.since)).toBeGreaterThanOrEqual(t0 - 1000);
    expect(Date.parse(recGa.since)).toBeLessThanOrEqual(Date.now());
    expect(annotationsOf(await get(ns, 'VMUser', 'ub'))).toBeUndefined();

    expect(r1.vmauthGeneration).toBe(ga.metadata.generation);
    expect(r1.vmuserGenerations).toEqual({ ua: ua.metadata.generation });
    expect(r1.recorded).toEqual([
      {
        zone: 'az-a',
        vmcluster: { name: 'vm-az-a', namespace: ns },
        removals: [
          { route: { kind: 'VMAuth', name: 'ga' }, vmcluster: { name: 'vm-az-a', namespace: ns }, removed: recGa.removed },
          { route: { kind: 'VMUser', name: 'ua' }, vmcluster: { name: 'vm-az-a', namespace: ns }, removed: recUa.removed },
        ],
        since: [recGa.since, recUa.since].sort()[0],
        generation: 3,
      },
    ]);

    // The same call again (a retried activity): nothing is written.
    const rvs = { ga: ga.metadata.resourceVersion, ua: ua.metadata.resourceVersion };
    const r2 = await run('editRoutes', { namespace: ns, vmauthName: 'ga', removals, direction: 'remove', record: rec });
    expect(await rv(ns, 'VMAuth', 'ga')).toBe(rvs.ga);
    expect(await rv(ns, 'VMUser', 'ua')).toBe(rvs.ua);
    expect(r2).toEqual(r1);
    expect(await run('readRecords', { namespace: ns, uid: 'uid-1111' })).toEqual(r1.recorded);
    expect(await run('readRecords', { namespace: ns, uid: 'uid-other' })).toEqual([]);
  });

  it('restore from a fresh activities instance with no removals: the records alone put everything back; user additions kept', async () => {
    const ns = await newNamespace();
    const { before, removals } = await threeRoutes(ns);
    const rec = owner(ns, 'uid-2222', 'az-a');
    await run('editRoutes', { namespace: ns, vmauthName: 'ga', removals, direction: 'remove', record: rec });
    // The user adds a route to the VMAuth while the zone is out.
    await patchRefs(ns, 'VMAuth', 'ga', [...(await refs(ns, 'VMAuth', 'ga')), { static: { url: 'http://user-added' } }]);

    const fresh = createActivities({ kubeConfig: kube.kubeConfig, temporalClient: {} as Client, bindWrites: false });
    const r = await runIn(fresh, 'editRoutes', { namespace: ns, vmauthName: 'ga', removals: [], direction: 'restore', record: rec });

    const ga = await get(ns, 'VMAuth', 'ga');
    const ua = await get(ns, 'VMUser', 'ua');
    expect(refsOf('VMAuth', ga)).toEqual([...refsOf('VMAuth', before.ga), { static: { url: 'http://user-added' } }]);
    expect(((ga.spec as JsonObject).unauthorizedUserAccessSpec as JsonObject).default_url).toEqual(['http://fallback']);
    expect(ua.spec).toEqual(before.ua.spec);
    expect((await get(ns, 'VMUser', 'ub')).metadata.resourceVersion).toBe(before.ub.metadata.resourceVersion);
    // The record is gone (the annotation with it); other annotations stay.
    expect(annotationsOf(ga)).toEqual({ 'example.com/keep': 'me' });
    expect(annotationsOf(ua)).toBeUndefined();
    expect(r.recorded).toEqual([]);
    expect(r.vmauthGeneration).toBe(ga.metadata.generation);
    expect(r.vmuserGenerations).toEqual({ ua: ua.metadata.generation });

    // A retried restore writes nothing.
    const rvs = [ga.metadata.resourceVersion, ua.metadata.resourceVersion];
    const again = await runIn(fresh, 'editRoutes', { namespace: ns, vmauthName: 'ga', removals: [], direction: 'restore', record: rec });
    expect([await rv(ns, 'VMAuth', 'ga'), await rv(ns, 'VMUser', 'ua')]).toEqual(rvs);
    expect(again.recorded).toEqual([]);
  });

  it('recomputes from the fresh read, and a concurrent edit between read and write (409) is retried: the edit and the record both survive', async () => {
    const ns = await newNamespace();
    await createVM(ns, 'VMAuth', 'gb', { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a', 'vm-az-b', 'vm-az-c'), other] } });
    const removals = computeRemovals(await snapshots(ns, 'gb', []), { name: 'vm-az-b', namespace: ns });
    // After the workflow's snapshot, the user reorders the zones: the recorded positions must be today's.
    await patchRefs(ns, 'VMAuth', 'gb', [vmselect(ns, 'vm-az-c', 'vm-az-a', 'vm-az-b'), other]);
    const original = await refs(ns, 'VMAuth', 'gb');
    let conflicts = 0;
    await editRoutes(
      objects,
      { namespace: ns, vmauthName: 'gb', removals, direction: 'remove', record: owner(ns, 'uid-3333', 'az-b') },
      {
        beforeWrite: async (route, attempt) => {
          if (attempt !== 1) return;
          conflicts++;
          await patchRefs(ns, 'VMAuth', route.name, [...(await refs(ns, 'VMAuth', route.name)), { static: { url: 'http://user-added' } }], {
            default_url: ['http://user'],
          });
        },
      },
    );
    expect(conflicts).toBe(1);
    const gb = await get(ns, 'VMAuth', 'gb');
    const uas = (gb.spec as JsonObject).unauthorizedUserAccessSpec as JsonObject;
    expect(uas.targetRefs).toEqual([vmselect(ns, 'vm-az-c', 'vm-az-a'), other, { static: { url: 'http://user-added' } }]);
    expect(uas.default_url).toEqual(['http://user']);
    const record = recordOn(gb, 'uid-3333', 'az-b')!;
    expect(record.removed).toEqual([
      { type: 'object', index: 0, objectIndex: 2, object: { name: 'vm-az-b', namespace: ns }, targetRef: vmselect(ns, 'vm-az-c', 'vm-az-a', 'vm-az-b') },
    ]);

    await run('editRoutes', { namespace: ns, vmauthName: 'gb', removals: [], direction: 'restore', record: owner(ns, 'uid-3333', 'az-b') });
    const back = await get(ns, 'VMAuth', 'gb');
    expect(refsOf('VMAuth', back)).toEqual([...original, { static: { url: 'http://user-added' } }]);
    expect(((back.spec as JsonObject).unauthorizedUserAccessSpec as JsonObject).default_url).toEqual(['http://user']);
    expect(annotationsOf(back)).toBeUndefined();
  });

  it('two zones of two VMDistributedClusters on one VMAuth: restoring one leaves the other record and its entries untouched', async () => {
    const ns = await newNamespace();
    await createVM(ns, 'VMAuth', 'gm', { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a', 'vm-az-b', 'vm-az-c'), other] } });
    const original = await refs(ns, 'VMAuth', 'gm');
    const one = owner(ns, 'uid-aaaa', 'az-a');
    const two = owner(ns, 'uid-bbbb', 'east');
    const removalsOf = async (vmc: string) => computeRemovals(await snapshots(ns, 'gm', []), { name: vmc, namespace: ns });
    await run('editRoutes', { namespace: ns, vmauthName: 'gm', removals: await removalsOf('vm-az-a'), direction: 'remove', record: one });
    await run('editRoutes', { namespace: ns, vmauthName: 'gm', removals: await removalsOf('vm-az-b'), direction: 'remove', record: two });
    const both = await get(ns, 'VMAuth', 'gm');
    expect(refsOf('VMAuth', both)).toEqual([vmselect(ns, 'vm-az-c'), other]);
    const recordTwo = recordOn(both, 'uid-bbbb', 'east')!;
    expect(recordOn(both, 'uid-aaaa', 'az-a')).toBeDefined();

    const r = await run('editRoutes', { namespace: ns, vmauthName: 'gm', removals: [], direction: 'restore', record: one });
    expect(r.recorded).toEqual([]);
    const after = await get(ns, 'VMAuth', 'gm');
    expect(Object.keys(parseRecords(annotationsOf(after)![OUT_OF_ROTATION_ANNOTATION]))).toEqual([recordKey('uid-bbbb', 'east')]);
    expect(recordOn(after, 'uid-bbbb', 'east')).toEqual(recordTwo);
    const names = (tr: JsonObject[]) => ((tr[0]!.crd as JsonObject).objects as JsonObject[]).map((o) => o.name);
    expect(names(refsOf('VMAuth', after))).toEqual(['vm-az-a', 'vm-az-c']); // vm-az-b stays out
    expect((await run('readRecords', { namespace: ns, uid: 'uid-bbbb' })).map((z) => z.zone)).toEqual(['east']);

    await run('editRoutes', { namespace: ns, vmauthName: 'gm', removals: [], direction: 'restore', record: two });
    const last = await get(ns, 'VMAuth', 'gm');
    expect(annotationsOf(last)).toBeUndefined();
    // Restored out of order (not last-in-first-out): every entry is back; the order of crd.objects may differ.
    expect(names(refsOf('VMAuth', last)).sort()).toEqual(['vm-az-a', 'vm-az-b', 'vm-az-c']);
    expect(refsOf('VMAuth', last).slice(1)).toEqual(original.slice(1));
  });

  it('the name+objects form: the record holds a crdName entry, the write keeps name/namespace as "" (accepted), restore gives back exactly the original spec', async () => {
    const ns = await newNamespace();
    // {name: zone, namespace, objects: [b, c]}: the operator routes to all three.
    const nameAndObjects = (name: string, namespace: string, ...others: string[]): JsonObject => ({
      crd: { kind: 'VMCluster/vmselect', name, namespace, objects: others.map((o) => ({ name: o, namespace: ns })) },
      paths: ['/select/.*'],
    });
    await createVM(ns, 'VMAuth', 'gn', {
      unauthorizedUserAccessSpec: { targetRefs: [nameAndObjects('vm-az-a', ns, 'vm-az-b', 'vm-az-c'), other], default_url: ['http://fallback'] },
    });
    await createVM(ns, 'VMUser', 'un', { username: 'n', targetRefs: [other, nameAndObjects('vm-az-a', ns, 'vm-az-a', 'vm-az-b')] });
    const before = { gn: await get(ns, 'VMAuth', 'gn'), un: await get(ns, 'VMUser', 'un') };
    // The workflow's removals only name the routes: the activity recomputes from a fresh read (operator rules).
    const removals = [
      { route: { kind: 'VMAuth' as const, name: 'gn' }, vmcluster: { name: 'vm-az-a', namespace: ns }, removed: [] },
      { route: { kind: 'VMUser' as const, name: 'un' }, vmcluster: { name: 'vm-az-a', namespace: ns }, removed: [] },
    ];
    const rec = owner(ns, 'uid-7777', 'az-a');
    await run('editRoutes', { namespace: ns, vmauthName: 'gn', removals, direction: 'remove', record: rec });

    const gn = await get(ns, 'VMAuth', 'gn');
    const un = await get(ns, 'VMUser', 'un');
    // What the API server stored is exactly what vmrollout wrote: nothing refused, nothing pruned.
    expect(refsOf('VMAuth', gn)).toEqual([nameAndObjects('', '', 'vm-az-b', 'vm-az-c'), other]);
    expect(refsOf('VMUser', un)).toEqual([other, nameAndObjects('', '', 'vm-az-b')]);
    expect(recordOn(gn, 'uid-7777', 'az-a')!.removed).toEqual([
      { type: 'crdName', index: 0, name: 'vm-az-a', namespace: ns, targetRef: refsOf('VMAuth', before.gn)[0] },
    ]);
    expect(recordOn(un, 'uid-7777', 'az-a')!.removed.map((r) => [r.type, r.index])).toEqual([
      ['crdName', 1],
      ['object', 1],
    ]);
    expect(await run('readRecords', { namespace: ns, uid: 'uid-7777' })).toHaveLength(1);

    await run('editRoutes', { namespace: ns, vmauthName: 'gn', removals: [], direction: 'restore', record: rec });
    for (const [kind, name] of [
      ['VMAuth', 'gn'],
      ['VMUser', 'un'],
    ] as const) {
      const now = await get(ns, kind, name);
      expect(now.spec).toEqual(before[name].spec);
      expect(annotationsOf(now)).toBeUndefined();
    }
  });

  it('a partial edit (a VMUser emptied between the VMAuth edit and its own): EmptyRoute, the VMAuth carries its record, readRecords shows it, a restore puts it back', async () => {
    const ns = await newNamespace();
    await createVM(ns, 'VMAuth', 'gp', { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a', 'vm-az-b')] } });
    await createVM(ns, 'VMUser', 'up', { username: 'p', targetRefs: [single(ns, 'vm-az-a'), other] });
    const before = await get(ns, 'VMAuth', 'gp');
    const removals = computeRemovals(await snapshots(ns, 'gp', ['up']), { name: 'vm-az-a', namespace: ns });
    expect(removals.map((r) => r.route.name)).toEqual(['gp', 'up']);
    const rec = owner(ns, 'uid-4444', 'az-a');

    // The route objects are edited at once: the VMUser's first write waits for the VMAuth's, then
    // someone empties the VMUser (its write gets 409, the re-read finds it would be empty).
    let vmauthWritten!: () => void;
    const vmauthDone = new Promise<void>((r) => (vmauthWritten = r));
    const err = await editRoutes(
      objects,
      { namespace: ns, vmauthName: 'gp', removals, direction: 'remove', record: rec },
      {
        afterWrite: (route) => {
          if (route.kind === 'VMAuth') vmauthWritten();
        },
        beforeWrite: async (route, attempt) => {
          if (route.kind !== 'VMUser' || attempt !== 1) return;
          await vmauthDone;
          await patchRefs(ns, 'VMUser', 'up', [single(ns, 'vm-az-a')]);
        },
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('EmptyRoute');
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as ApplicationFailure).message).toContain('VMUser up');

    const gp = await get(ns, 'VMAuth', 'gp');
    const record = recordOn(gp, 'uid-4444', 'az-a')!;
    expect(record).toBeDefined();
    expect(refsOf('VMAuth', gp)).toEqual(applyRemoval(refsOf('VMAuth', before), record));
    expect(refsOf('VMAuth', gp)).toEqual([vmselect(ns, 'vm-az-b')]);
    expect(undoRemoval(refsOf('VMAuth', gp), record)).toEqual(refsOf('VMAuth', before));
    const up = await get(ns, 'VMUser', 'up');
    expect(refsOf('VMUser', up)).toEqual([single(ns, 'vm-az-a')]);
    expect(annotationsOf(up)).toBeUndefined();

    const zones = await run('readRecords', { namespace: ns, uid: 'uid-4444' });
    expect(zones).toHaveLength(1);
    expect(zones[0]!.zone).toBe('az-a');
    expect(zones[0]!.removals.map((r) => r.route)).toEqual([{ kind: 'VMAuth', name: 'gp' }]);

    await run('editRoutes', { namespace: ns, vmauthName: 'gp', removals: [], direction: 'restore', record: rec });
    const back = await get(ns, 'VMAuth', 'gp');
    expect(back.spec).toEqual(before.spec);
    expect(annotationsOf(back)).toBeUndefined();
    expect(refsOf('VMUser', await get(ns, 'VMUser', 'up'))).toEqual([single(ns, 'vm-az-a')]);
  });
});

describe('unreadable records', () => {
  it('readRecords and listRouteRecords report it and fail nothing; editRoutes refuses (RecordsUnreadable, naming the object) and never overwrites the annotation', async () => {
    const ns = await newNamespace();
    await createVM(ns, 'VMAuth', 'gu', { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a', 'vm-az-b')] } });
    await createVM(ns, 'VMUser', 'bad', { username: 'u', targetRefs: [single(ns, 'vm-az-a'), other] }, { [OUT_OF_ROTATION_ANNOTATION]: '{nope' });
    const failure = async (p: Promise<unknown>) => {
      const e = await p.catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ApplicationFailure);
      expect((e as ApplicationFailure).type).toBe('RecordsUnreadable');
      expect((e as ApplicationFailure).nonRetryable).toBe(true);
      return (e as ApplicationFailure).message;
    };
    expect(await run('readRecords', { namespace: ns, uid: 'uid-5555' })).toEqual([]);
    expect((await listRouteRecords(custom, ns, { namespace: ns, uid: 'uid-5555' })).unverified).toEqual([
      { route: { kind: 'VMUser', name: 'bad' }, reason: `${OUT_OF_ROTATION_ANNOTATION} is not JSON` },
    ]);

    const rvs = [await rv(ns, 'VMAuth', 'gu'), await rv(ns, 'VMUser', 'bad')];
    const removals = computeRemovals(await snapshots(ns, 'gu', ['bad']), { name: 'vm-az-a', namespace: ns });
    expect(
      await failure(run('editRoutes', { namespace: ns, vmauthName: 'gu', removals, direction: 'remove', record: owner(ns, 'uid-5555', 'az-a') })),
    ).toContain(`VMUser ${ns}/bad`);
    // Refused before touching anything, the VMAuth included.
    expect([await rv(ns, 'VMAuth', 'gu'), await rv(ns, 'VMUser', 'bad')]).toEqual(rvs);
    expect(annotationsOf(await get(ns, 'VMUser', 'bad'))![OUT_OF_ROTATION_ANNOTATION]).toBe('{nope');
  });

  it("another VMDistributedCluster's broken entry: this uid still reads its records, but that route is never rewritten", async () => {
    const ns = await newNamespace();
    await createVM(
      ns,
      'VMAuth',
      'gx',
      { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a', 'vm-az-b')] } },
      {
        [OUT_OF_ROTATION_ANNOTATION]: JSON.stringify({ 'uid-someone/az-q': { zone: 'az-q' } }),
      },
    );
    expect(await run('readRecords', { namespace: ns, uid: 'uid-6666' })).toEqual([]);
    const before = await get(ns, 'VMAuth', 'gx');
    const removals = computeRemovals(await snapshots(ns, 'gx', []), { name: 'vm-az-a', namespace: ns });
    const e = await run('editRoutes', { namespace: ns, vmauthName: 'gx', removals, direction: 'remove', record: owner(ns, 'uid-6666', 'az-a') }).catch(
      (x: unknown) => x,
    );
    expect((e as ApplicationFailure).type).toBe('RecordsUnreadable');
    expect((e as ApplicationFailure).message).toContain(`VMAuth ${ns}/gx: record "uid-someone/az-q"`);
    expect((await get(ns, 'VMAuth', 'gx')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    // Unreadable for that uid too, and still nothing fails: it is reported, never acted on.
    expect(await run('readRecords', { namespace: ns, uid: 'uid-someone' })).toEqual([]);
  });
});

const vmdcSpec = {
  clusterVersion: 'v1.150.0-cluster',
  zones: [
    { name: 'az-a', vmcluster: { name: 'vm-az-a' }, vmuser: { name: 'us' } },
    { name: 'az-b', vmcluster: { name: 'vm-az-b' } },
  ],
  vmauth: { name: 'gs' },
  vmagent: { name: 'g' },
};
async function createVmdc(ns: string, name: string, spec: object = vmdcSpec): Promise<{ uid: string; generation: number }> {
  const created = (await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns,
    plural: PLURAL,
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec },
  })) as { metadata: { uid: string; generation: number } };
  return created.metadata;
}

describe('forged records (issue 29: records are claims, not commands)', () => {
  const forgedOn = (ns: string, uid: string, route: KubeObject, zone: string, removed: OutOfRotationRecord['removed']): OutOfRotationRecord => ({
    vmdc: { namespace: ns, name: 'dc', uid },
    route: { kind: 'VMAuth', name: route.metadata.name, uid: route.metadata.uid! },
    zone,
    workflowId: 'written-by-hand',
    generation: 1,
    vmcluster: { name: `vm-${zone}`, namespace: ns },
    removed,
    since: new Date().toISOString(),
  });

  it('a record of this uid whose zone the route still serves: not adopted, not in the status, reported (condition, Warning Event, metric); the real removal replaces it', async () => {
    const ns = await newNamespace();
    const meta = await createVmdc(ns, 'dc');
    const object = { namespace: ns, name: 'dc', uid: meta.uid, generation: meta.generation };
    await createVM(ns, 'VMAuth', 'gs', { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a', 'vm-az-b')] } });
    const forged = forgedOn(ns, meta.uid, await get(ns, 'VMAuth', 'gs'), 'az-b', [
      { type: 'object', index: 0, objectIndex: 1, object: { name: 'vm-az-b', namespace: ns } },
    ]);
    await annotate(ns, 'gs', JSON.stringify({ [recordKey(meta.uid, 'az-b')]: forged }));
    const counts: number[] = [];
    const a = createActivities({
      kubeConfig: kube.kubeConfig,
      temporalClient: {} as Client,
      bindWrites: false,
      metrics: { ...noopMetrics, unverifiedRecords: (_l, n) => counts.push(n) },
    });
    // As the rollout workflow of this object calls them: its name comes from the workflow id.
    const env1 = new MockActivityEnvironment({ workflowExecution: { workflowId: workflowIdFor(object), runId: 'r1' } });
    const inWorkflow = <K extends keyof RolloutActivities>(name: K, ...args: Parameters<RolloutActivities[K]>) => runWith(env1, a, name, ...args);

    expect(await inWorkflow('readRecords', { namespace: ns, uid: meta.uid })).toEqual([]);
    await inWorkflow('writeStatus', {
      object,
      status: {
        phase: 'Progressing',
        zonesOutOfRotation: [],
        zones: [
          { name: 'az-a', phase: 'Pending' },
          { name: 'az-b', phase: 'Pending' },
        ],
      },
    });
    const status = (await objects.get(VMDC_KIND, ns, 'dc'))!.status as VMDistributedClusterStatus;
    expect(status.zonesOutOfRotation).toEqual([]);
    const condition = status.conditions?.find((c) => c.type === 'RecordsVerified');
    expect(condition).toMatchObject({ status: 'False', reason: 'UnverifiedRecords' });
    expect(condition!.message).toContain(`VMAuth gs: record of zone az-b says VMCluster vm-az-b was taken out, but the route still sends it reads`);
    const events = (await core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.reason === 'RouteRecordsUnverified');
    expect(events.map((e) => e.message)).toEqual([condition!.message]);
    expect(counts.at(-1)).toBe(1);

    // az-b's real turn: the claim under its key is replaced by the record of what was really removed.
    const removals = computeRemovals(await snapshots(ns, 'gs', []), { name: 'vm-az-b', namespace: ns });
    const owned = owner(ns, meta.uid, 'az-b', meta.generation);
    await run('editRoutes', { namespace: ns, vmauthName: 'gs', removals, direction: 'remove', record: { ...owned, vmdc: { ...owned.vmdc, name: 'dc' } } });
    expect(await refs(ns, 'VMAuth', 'gs')).toEqual([vmselect(ns, 'vm-az-a')]);
    expect(recordOn(await get(ns, 'VMAuth', 'gs'), meta.uid, 'az-b')).toMatchObject({ workflowId: owned.workflowId });
    expect((await inWorkflow('readRecords', { namespace: ns, uid: meta.uid })).map((z) => z.zone)).toEqual(['az-b']);
    // Verified again: the condition turns True.
    await inWorkflow('writeStatus', {
      object,
      status: {
        phase: 'Progressing',
        zones: [
          { name: 'az-a', phase: 'Pending' },
          { name: 'az-b', phase: 'WaitingForSwitch' },
        ],
      },
    });
    const after = (await objects.get(VMDC_KIND, ns, 'dc'))!.status as VMDistributedClusterStatus;
    expect(after.zonesOutOfRotation).toEqual(['az-b']);
    expect(after.conditions?.find((c) => c.type === 'RecordsVerified')).toMatchObject({ status: 'True', reason: 'Verified' });
    expect(counts.at(-1)).toBe(0);
  });

  it('a record that would put back a static URL or another VMCluster is never restored: the route and the annotation stay as they are, and the rejoin fails saying so', async () => {
    const ns = await newNamespace();
    const meta = await createVmdc(ns, 'dc');
    await createVM(ns, 'VMAuth', 'gs', { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-b')] } });
    const gs = await get(ns, 'VMAuth', 'gs');
    const value = JSON.stringify({
      [recordKey(meta.uid, 'az-a')]: forgedOn(ns, meta.uid, gs, 'az-a', [
        { type: 'targetRef', index: 0, targetRef: { static: { url: 'http://attacker.example' } } },
      ]),
    });
    await annotate(ns, 'gs', value);
    const before = await get(ns, 'VMAuth', 'gs');
    const err = await run('editRoutes', {
      namespace: ns,
      vmauthName: 'gs',
      removals: [],
      direction: 'restore',
      record: { ...owner(ns, meta.uid, 'az-a'), vmdc: { namespace: ns, name: 'dc', uid: meta.uid } },
    }).catch((e: unknown) => e);
    expect([(err as ApplicationFailure).type, (err as ApplicationFailure).nonRetryable]).toEqual(['RecordsUnreadable', true]);
    const now = await get(ns, 'VMAuth', 'gs');
    expect(now.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(annotationsOf(now)![OUT_OF_ROTATION_ANNOTATION]).toBe(value);
    expect(JSON.stringify(now.spec)).not.toContain('attacker');
  });
});

describe('writeStatus rejected by the API server', () => {
  it('a 422 (a phase outside the CRD enum) is the non-retryable StatusRejected, logged at warn and counted by type', async () => {
    const ns = await newNamespace();
    const meta = await createVmdc(ns, 'st');
    const object = { namespace: ns, name: 'st', uid: meta.uid, generation: meta.generation };
    const errors: Array<[string, string]> = [];
    const metrics: ActivityMetrics = { ...noopMetrics, activityError: (a, t) => errors.push([a, t]) };
    const warnings: string[] = [];
    const logger: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} };
    const a = createActivities({ kubeConfig: kube.kubeConfig, temporalClient: {} as Client, bindWrites: false, metrics });
    const e = await new MockActivityEnvironment(undefined, { logger })
      .run(a.writeStatus, { object, status: { phase: 'Bogus' } as unknown as VMDistributedClusterStatus })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ApplicationFailure);
    expect((e as ApplicationFailure).type).toBe('StatusRejected');
    expect((e as ApplicationFailure).nonRetryable).toBe(true);
    expect((e as ApplicationFailure).message).toMatch(new RegExp(`^status of ${ns}/st rejected by the API server: HTTP 422: .*phase`));
    expect(errors).toEqual([['writeStatus', 'StatusRejected']]);
    expect(warnings).toContain((e as ApplicationFailure).message); // (the SDK adds its own "Activity failed")
    expect((await objects.get(VMDC_KIND, ns, 'st'))!.status).toBeUndefined();
  });

  it('a 409 is not a rejection: the writer re-reads and writes', async () => {
    const ns = await newNamespace();
    const meta = await createVmdc(ns, 'st409');
    const object = { namespace: ns, name: 'st409', uid: meta.uid, generation: meta.generation };
    const real = statusClient(kube.kubeConfig);
    const codes: Array<number | undefined> = [];
    let first = true;
    const client: typeof real = {
      get: (n, name) => real.get(n, name),
      async mergePatchStatus(n, name, body) {
        if (first) {
          first = false;
          // Someone else writes the status between our GET and PATCH: a real 409.
          await objects.api.patchNamespacedCustomObjectStatus(
            { ...VMDC_KIND, namespace: ns, name: 'st409', body: { status: { message: 'someone else' } } },
            mergePatchOptions,
          );
        }
        try {
          return await real.mergePatchStatus(n, name, body);
        } catch (err) {
          codes.push((err as { code?: number }).code);
          throw err;
        }
      },
    };
    expect(await writeStatus(client, { object, status: { phase: 'Progressing', message: 'ours' } })).toEqual({ written: true });
    expect(codes).toEqual([409]);
    expect((await objects.get(VMDC_KIND, ns, 'st409'))!.status).toMatchObject({ phase: 'Progressing', message: 'ours' });
  });

  it('classifies: 400, 403, 405, 413, 422 reject; 401, 404, 408, 409, 429, 5xx and network errors do not', () => {
    for (const code of [400, 403, 405, 413, 422]) expect([code, isRejection({ code })]).toEqual([code, true]);
    for (const code of [401, 404, 408, 409, 429, 500, 503]) expect([code, isRejection({ code })]).toEqual([code, false]);
    expect(isRejection(new Error('ECONNRESET'))).toBe(false);
  });
});

describe("a fleet's report on a member it never started (spec.fleet, the fleet cancelled)", () => {
  it('written only by the fleet the object names, for the child its status names; a zone an earlier generation left out stays in zonesOutOfRotation', async () => {
    const ns = await newNamespace();
    const meta = await createVmdc(ns, 'dc', { ...vmdcSpec, fleet: { name: 'prod', region: 'eu' } });
    const object = { namespace: ns, name: 'dc', uid: meta.uid, generation: meta.generation };
    const child = workflowIdFor(object);
    // As the trigger leaves it once handed over: the child named, no run.
    await custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: ns,
        plural: PLURAL,
        name: 'dc',
        body: { status: { observedGeneration: meta.generation, workflow: { id: child, runId: '' }, phase: 'Pending', message: 'queued' } },
      },
      mergePatchOptions,
    );
    // az-a out of reads, recorded by an earlier generation of it (superseded, leaving it for its successor).
    await createVM(ns, 'VMAuth', 'gs', { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a', 'vm-az-b')] } });
    const earlier = owner(ns, meta.uid, 'az-a', meta.generation);
    const removals = computeRemovals(await snapshots(ns, 'gs', []), { name: 'vm-az-a', namespace: ns });
    await run('editRoutes', { namespace: ns, vmauthName: 'gs', removals, direction: 'remove', record: { ...earlier, vmdc: { ...earlier.vmdc, name: 'dc' } } });

    const a = createActivities({ kubeConfig: kube.kubeConfig, temporalClient: {} as Client });
    const as = (workflowId: string) => new MockActivityEnvironment({ workflowExecution: { workflowId, runId: 'r1' } });
    const report = { object, workflowId: child, message: 'not started: fleet prod was cancelled' };
    const statusNow = async () => (await objects.get(VMDC_KIND, ns, 'dc'))!.status as VMDistributedClusterStatus;
    // Another fleet's id, or the child's own: nothing written.
    expect(await runWith(as('fleet/' + ns + '/other'), a, 'reportQueuedMember', report)).toEqual({ written: false });
    expect(await runWith(as(child), a, 'reportQueuedMember', report)).toEqual({ written: false });
    expect((await statusNow()).phase).toBe('Pending');
    // The fleet the object names: Cancelled, and the zone still out is shown (records, not the report).
    expect(await runWith(as(`fleet/${ns}/prod`), a, 'reportQueuedMember', report)).toEqual({ written: true });
    expect(await statusNow()).toMatchObject({ phase: 'Cancelled', message: report.message, zonesOutOfRotation: ['az-a'], workflow: { id: child, runId: '' } });
    const events = (await core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.reason === 'RolloutCancelled');
    expect(events).toHaveLength(1);
  });
});

describe('kubectl vmdc release-zone', () => {
  function release(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        'npx',
        ['--no-install', 'tsx', 'cli/main.ts', 'release-zone', ...args],
        { cwd: REPO, env: { ...process.env, ...extraEnv }, timeout: 60_000 },
        (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  it('lists, releases exactly (0), refuses when nothing is recorded (1) or on bad arguments (2), and works by uid once the object is gone', async () => {
    const ns = await newNamespace();
    const { uid } = await createVmdc(ns, 'dc');
    await createVM(ns, 'VMAuth', 'gs', { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a', 'vm-az-b'), other] } });
    await createVM(ns, 'VMUser', 'us', { username: 's', targetRefs: [single(ns, 'vm-az-a'), single(ns, 'vm-az-b')] });
    const before = { gs: await get(ns, 'VMAuth', 'gs'), us: await get(ns, 'VMUser', 'us') };
    const rec: RecordOwner = { vmdc: { namespace: ns, name: 'dc', uid }, zone: 'az-a', workflowId: 'wf-x', generation: 7 };
    const takeOut = async () => {
      const removals = computeRemovals(await snapshots(ns, 'gs', ['us']), { name: 'vm-az-a', namespace: ns });
      await run('editRoutes', { namespace: ns, vmauthName: 'gs', removals, direction: 'remove', record: rec });
      expect(JSON.stringify(await refs(ns, 'VMAuth', 'gs'))).not.toContain('vm-az-a');
    };
    const kc = ['--kubeconfig', kube.kubeconfigPath];
    await takeOut();

    const list = await release(['--namespace', ns, '--vmdc', 'dc', '--list', ...kc]);
    expect(list.code).toBe(0);
    const rows = list.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^ZONE\s+ROUTE\s+VMCLUSTER\s+SINCE\s+GENERATION/);
    expect(rows.slice(1)).toHaveLength(2);
    expect(rows[1]).toMatch(new RegExp(`^az-a\\s+VMAuth ${ns}/gs\\s+VMCluster ${ns}/vm-az-a\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+7\\s+wf-x$`));
    expect(rows[2]).toMatch(new RegExp(`^az-a\\s+VMUser ${ns}/us\\s`));

    // KUBECONFIG from the environment works as well as --kubeconfig.
    const done = await release(['--namespace', ns, '--vmdc', 'dc', '--zone', 'az-a'], { KUBECONFIG: kube.kubeconfigPath });
    expect(done).toMatchObject({ code: 0 });
    expect(done.stdout).toContain(`warning: VMCluster ${ns}/vm-az-a of zone az-a was not checked`);
    expect(done.stdout).toContain(`VMAuth ${ns}/gs: put back 1 entry; record deleted`);
    expect(done.stdout).toContain(`targetRefs[0].crd.objects[0] {"name":"vm-az-a","namespace":"${ns}"}`);
    expect(done.stdout).toContain(`VMUser ${ns}/us: put back 1 entry; record deleted`);
    for (const [kind, name] of [
      ['VMAuth', 'gs'],
      ['VMUser', 'us'],
    ] as const) {
      const now = await get(ns, kind, name);
      expect(now.spec).toEqual(before[name].spec);
      expect(annotationsOf(now)).toBeUndefined();
    }

    const nothing = await release(['--namespace', ns, '--vmdc', 'dc', '--zone', 'az-a', ...kc]);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain(`nothing recorded out of reads for zone az-a of VMDistributedCluster ${ns}/dc`);
    const emptyList = await release(['--namespace', ns, '--vmdc', 'dc', '--list', ...kc]);
    expect(emptyList).toMatchObject({ code: 0 });
    expect(emptyList.stdout).toContain('no route');

    for (const bad of [
      ['--vmdc', 'dc', '--zone', 'az-a'], // no namespace
      ['--namespace', ns, '--zone', 'az-a'], // neither --vmdc nor --uid
      ['--namespace', ns, '--vmdc', 'dc'], // no zone
      ['--namespace', ns, '--vmdc', 'dc', '--uid', uid, '--zone', 'az-a'],
      ['--namespace', ns, '--vmdc', 'dc', '--zone', 'az-a', '--bogus'],
    ]) {
      const r = await release([...bad, ...kc]);
      expect([bad.join(' '), r.code]).toEqual([bad.join(' '), 2]);
      expect(r.stderr).toContain('usage:');
    }

    // The VMDistributedCluster is gone: --vmdc cannot find it, --uid still releases the zone.
    await takeOut();
    await custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: PLURAL, name: 'dc' });
    const gone = await release(['--namespace', ns, '--vmdc', 'dc', '--zone', 'az-a', ...kc]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('not found');
    const all = await release(['--namespace', ns, '--list', ...kc]);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(uid);
    expect(all.stdout).toContain(`VMAuth ${ns}/gs`);
    const byUid = await release(['--namespace', ns, '--uid', uid, '--zone', 'az-a', ...kc]);
    expect(byUid.code).toBe(0);
    expect((await get(ns, 'VMAuth', 'gs')).spec).toEqual(before.gs.spec);
    expect((await get(ns, 'VMUser', 'us')).spec).toEqual(before.us.spec);
    expect(annotationsOf(await get(ns, 'VMAuth', 'gs'))).toBeUndefined();
  });

  it("a record that is not the object's to restore is listed as not acted on, and a release refuses it (1) and writes nothing", async () => {
    const ns = await newNamespace();
    const { uid } = await createVmdc(ns, 'dc');
    await createVM(ns, 'VMAuth', 'gs', { unauthorizedUserAccessSpec: { targetRefs: [vmselect(ns, 'vm-az-a')] } });
    const gs = await get(ns, 'VMAuth', 'gs');
    const value = JSON.stringify({
      [recordKey(uid, 'az-b')]: {
        vmdc: { namespace: ns, name: 'dc', uid },
        route: { kind: 'VMAuth', name: 'gs', uid: gs.metadata.uid },
        zone: 'az-b',
        workflowId: 'written-by-hand',
        generation: 1,
        vmcluster: { name: 'vm-az-b', namespace: ns },
        removed: [{ type: 'targetRef', index: 0, targetRef: { static: { url: 'http://attacker.example' } } }],
        since: new Date().toISOString(),
      },
    });
    await annotate(ns, 'gs', value);
    const kc = ['--kubeconfig', kube.kubeconfigPath];
    const list = await release(['--namespace', ns, '--vmdc', 'dc', '--list', ...kc]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`not acted on: VMAuth gs: record of zone az-b removed targetRefs[0] routes elsewhere than VMCluster ${ns}/vm-az-b`);
    const before = await get(ns, 'VMAuth', 'gs');
    const refused = await release(['--namespace', ns, '--vmdc', 'dc', '--zone', 'az-b', ...kc]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`VMAuth ${ns}/gs: not restored, nothing written: record of zone az-b removed targetRefs[0] routes elsewhere`);
    expect(refused.stderr).toContain('1 record(s) of zone az-b not restored');
    const after = await get(ns, 'VMAuth', 'gs');
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(JSON.stringify(after.spec)).not.toContain('attacker');

    // The rollout's own rejoin of that zone: nothing written either, and it fails (the zone is not
    // reported back in reads while a record of it may hold it out), naming the route and why.
    const err = await editRoutes(objects, {
      namespace: ns,
      vmauthName: 'gs',
      removals: [],
      direction: 'restore',
      record: { vmdc: { namespace: ns, name: 'dc', uid }, zone: 'az-b', workflowId: `vmdc/${ns}/dc/g1-x`, generation: 1 },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect([(err as ApplicationFailure).type, (err as ApplicationFailure).nonRetryable]).toEqual(['RecordsUnreadable', true]);
    expect((err as ApplicationFailure).message).toContain(`zone az-b not put back on VMAuth gs (record of zone az-b removed targetRefs[0] routes elsewhere`);
    expect((await get(ns, 'VMAuth', 'gs')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });
});
