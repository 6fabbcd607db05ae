/**
 * Activities against a real kube-apiserver (+ etcd) with the VM operator's real CRDs (v0.74.1,
 * test/fixtures/crds/vm-operator-crds.yaml) and our CRD:
 * route removal/restore (exact, idempotent, conflict-safe, EmptyRoute refusal, the name+objects
 * form), the fixture CRDs' strictness, writeStatus's
 * generation / status.workflow guard, applyObject (server-side apply: create, change, dry run), waitOperational.
 */
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { createActivities } from '../../activities';
import { KubeObjects, mergePatchOptions, vmKind, VMDC_KIND } from '../../kube/custom-objects';
import { editRoutes, readRecords } from '../../activities/routes/edit-routes';
import { MAX_SELECTED_VMUSERS } from '../../api/label-selector';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, VM_GROUP, VM_VERSION } from '../../api/constants';
import type { JsonObject, ObjectGeneration } from '../../api/types';
import type { RecordOwner, RouteRemoval } from '../../api/route-records';
import type { ApplyObjectInput, ManagedBy, RolloutActivities, RouteSnapshot } from '../../workflows/activity-types';
import { computeRemovals } from '../../workflows/routes';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';

jest.setTimeout(180_000);

const NS = 'default';
const VMDC_CRD = path.resolve(__dirname, '..', '..', 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');

let kube: KubeCluster;
let custom: k8s.CustomObjectsApi;
let objects: KubeObjects;
let acts: RolloutActivities;
const env = new MockActivityEnvironment();
const run = <K extends keyof RolloutActivities>(name: K, ...args: Parameters<RolloutActivities[K]>) =>
  env.run(acts[name] as (...a: unknown[]) => ReturnType<RolloutActivities[K]>, ...args) as ReturnType<RolloutActivities[K]>;

beforeAll(async () => {
  kube = await startKube();
  await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS, VMDC_CRD]);
  custom = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  objects = new KubeObjects(kube.kubeConfig);
  // The activities' own mechanics, outside a rollout workflow: writes not bound to a caller (activities/guard/, tested in write-guard.test.ts).
  acts = createActivities({ kubeConfig: kube.kubeConfig, temporalClient: {} as Client, bindWrites: false });
});

afterAll(async () => {
  await kube?.stop();
});

// The real CRD requires crd.name and crd.namespace: "" when only crd.objects routes.
const vmselect = (...names: string[]): JsonObject => ({
  crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: names.map((name) => ({ name, namespace: NS })) },
  paths: ['/select/.*'],
});
const single = (name: string): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', name, namespace: NS }, paths: ['/select/.*'] });

/** Who the route records of a zone belong to (each edit carries its record). */
const owner = (zone: string): RecordOwner => ({ vmdc: { namespace: NS, name: 'vmdc', uid: 'uid-routes' }, zone, workflowId: 'wf-routes', generation: 1 });
/** A VMDistributedCluster that keeps what it creates (no ownerReference: nothing here collects garbage anyway). */
const managedBy: ManagedBy = {
  vmdc: { name: 'vmdc', uid: 'uid-apply', generation: 1 },
  specPath: 'zones[0].vmcluster',
  retain: true,
  adopt: false,
  forceConflicts: false,
};
const apply = (input: Omit<ApplyObjectInput, 'managedBy'>) => run('applyObject', { ...input, managedBy });

async function createVM(kind: 'VMAuth' | 'VMUser' | 'VMCluster', name: string, spec: JsonObject): Promise<JsonObject> {
  const k = vmKind(kind);
  return (await custom.createNamespacedCustomObject({
    group: VM_GROUP,
    version: VM_VERSION,
    namespace: NS,
    plural: k.plural,
    body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind, metadata: { name }, spec },
  })) as JsonObject;
}
async function getSpec(kind: 'VMAuth' | 'VMUser' | 'VMCluster', name: string): Promise<JsonObject> {
  return (await objects.get(vmKind(kind), NS, name))!.spec as JsonObject;
}

async function snapshots(vmauth: string, users: string[]): Promise<RouteSnapshot[]> {
  return run('readRoutes', { namespace: NS, routes: [{ kind: 'VMAuth', name: vmauth }, ...users.map((name) => ({ kind: 'VMUser' as const, name }))] });
}

describe('editRoutes on a real API server', () => {
  const authSpec = (): JsonObject => ({
    selectAllByDefault: true,
    unauthorizedUserAccessSpec: {
      targetRefs: [vmselect('vm-az-a', 'vm-az-b', 'vm-az-c'), { static: { url: 'http://other:8428' }, paths: ['/other'] }],
      default_url: ['http://fallback'],
    },
  });

  it('removes a zone from the VMAuth and VMUsers and restores every route exactly', async () => {
    await createVM('VMAuth', 'ga', authSpec());
    await createVM('VMUser', 'reads-a', { username: 'a', targetRefs: [single('vm-az-a'), vmselect('vm-az-b', 'vm-az-a')] });
    await createVM('VMUser', 'reads-b', { username: 'b', targetRefs: [single('vm-az-b')] });
    const before = { ga: await getSpec('VMAuth', 'ga'), a: await getSpec('VMUser', 'reads-a'), b: await getSpec('VMUser', 'reads-b') };
    const gen0 = (await objects.get(vmKind('VMAuth'), NS, 'ga'))!.metadata.generation!;

    const removals = computeRemovals(await snapshots('ga', ['reads-a', 'reads-b']), { name: 'vm-az-a', namespace: NS });
    const r1 = await run('editRoutes', { namespace: NS, vmauthName: 'ga', removals, direction: 'remove', record: owner('az-a') });
    expect(r1.vmauthGeneration).toBe(gen0 + 1);
    // The edited VMUser's new generation is reported (the workflow waits until it is applied);
    // reads-b does not route to the zone, so it is neither edited nor reported.
    expect(r1.vmuserGenerations).toEqual({ 'reads-a': (await objects.get(vmKind('VMUser'), NS, 'reads-a'))!.metadata.generation });
    expect(r1.vmuserGenerations!['reads-a']).toBe(2);
    const ga1 = await getSpec('VMAuth', 'ga');
    expect((ga1.unauthorizedUserAccessSpec as JsonObject).targetRefs).toEqual([
      vmselect('vm-az-b', 'vm-az-c'),
      { static: { url: 'http://other:8428' }, paths: ['/other'] },
    ]);
    expect((ga1.unauthorizedUserAccessSpec as JsonObject).default_url).toEqual(['http://fallback']);
    expect((await getSpec('VMUser', 'reads-a')).targetRefs).toEqual([vmselect('vm-az-b')]);
    expect(await getSpec('VMUser', 'reads-b')).toEqual(before.b);

    // a retried remove is a no-op (no new generation)
    const r2 = await run('editRoutes', { namespace: NS, vmauthName: 'ga', removals, direction: 'remove', record: owner('az-a') });
    expect(r2.vmauthGeneration).toBe(r1.vmauthGeneration);

    await run('editRoutes', { namespace: NS, vmauthName: 'ga', removals, direction: 'restore', record: owner('az-a') });
    expect(await getSpec('VMAuth', 'ga')).toEqual(before.ga);
    expect(await getSpec('VMUser', 'reads-a')).toEqual(before.a);
    expect(await getSpec('VMUser', 'reads-b')).toEqual(before.b);
    // a retried restore is a no-op
    const gen = (await objects.get(vmKind('VMAuth'), NS, 'ga'))!.metadata.generation;
    await run('editRoutes', { namespace: NS, vmauthName: 'ga', removals, direction: 'restore', record: owner('az-a') });
    expect((await objects.get(vmKind('VMAuth'), NS, 'ga'))!.metadata.generation).toBe(gen);
    expect(await getSpec('VMUser', 'reads-a')).toEqual(before.a);
  });

  it('a concurrent edit between read and write: 409, re-read, retry; the user edit survives, and undo keeps it', async () => {
    await createVM('VMAuth', 'gb', authSpec());
    const removals = computeRemovals(await snapshots('gb', []), { name: 'vm-az-b', namespace: NS });
    let conflicts = 0;
    const userEdit = async (route: { name: string }, attempt: number) => {
      if (attempt !== 1) return;
      conflicts++;
      // The user adds a route and a default_url behind our back (bumps resourceVersion).
      const cur = (await objects.get(vmKind('VMAuth'), NS, route.name))!;
      const refs = ((cur.spec as JsonObject).unauthorizedUserAccessSpec as JsonObject).targetRefs as JsonObject[];
      await custom.patchNamespacedCustomObject(
        {
          group: VM_GROUP,
          version: VM_VERSION,
          namespace: NS,
          plural: 'vmauths',
          name: route.name,
          body: { spec: { unauthorizedUserAccessSpec: { targetRefs: [...refs, { static: { url: 'http://user-added' } }], default_url: ['http://user'] } } },
        },
        mergePatchOptions,
      );
    };
    await editRoutes(objects, { namespace: NS, vmauthName: 'gb', removals, direction: 'remove', record: owner('az-b') }, { beforeWrite: userEdit });
    expect(conflicts).toBe(1);
    const uas = (await getSpec('VMAuth', 'gb')).unauthorizedUserAccessSpec as JsonObject;
    expect(uas.targetRefs).toEqual([
      vmselect('vm-az-a', 'vm-az-c'),
      { static: { url: 'http://other:8428' }, paths: ['/other'] },
      { static: { url: 'http://user-added' } },
    ]);
    expect(uas.default_url).toEqual(['http://user']);

    await run('editRoutes', { namespace: NS, vmauthName: 'gb', removals, direction: 'restore', record: owner('az-b') });
    const back = (await getSpec('VMAuth', 'gb')).unauthorizedUserAccessSpec as JsonObject;
    expect(back.targetRefs).toEqual([
      vmselect('vm-az-a', 'vm-az-b', 'vm-az-c'),
      { static: { url: 'http://other:8428' }, paths: ['/other'] },
      { static: { url: 'http://user-added' } },
    ]);
    expect(back.default_url).toEqual(['http://user']);
  });

  it('refuses (EmptyRoute, non-retryable, naming the route) to leave a route with no backend, and touches nothing', async () => {
    await createVM('VMAuth', 'gc', authSpec());
    await createVM('VMUser', 'only-c', { username: 'c', targetRefs: [single('vm-az-c')] });
    const before = { gc: await objects.get(vmKind('VMAuth'), NS, 'gc'), u: await objects.get(vmKind('VMUser'), NS, 'only-c') };
    // Built by hand (computeRemovals would refuse up front): the activity must refuse on its own.
    const removals: RouteRemoval[] = [
      {
        route: { kind: 'VMAuth', name: 'gc' },
        vmcluster: { name: 'vm-az-c', namespace: NS },
        removed: [{ type: 'object', index: 0, objectIndex: 2, object: { name: 'vm-az-c', namespace: NS } }],
      },
      {
        route: { kind: 'VMUser', name: 'only-c' },
        vmcluster: { name: 'vm-az-c', namespace: NS },
        removed: [{ type: 'targetRef', index: 0, targetRef: single('vm-az-c') }],
      },
    ];
    const err = await run('editRoutes', { namespace: NS, vmauthName: 'gc', removals, direction: 'remove', record: owner('az-c') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('EmptyRoute');
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as ApplicationFailure).message).toContain('VMUser only-c');
    expect((await objects.get(vmKind('VMAuth'), NS, 'gc'))!.metadata.resourceVersion).toBe(before.gc!.metadata.resourceVersion);
    expect((await objects.get(vmKind('VMUser'), NS, 'only-c'))!.metadata.resourceVersion).toBe(before.u!.metadata.resourceVersion);
  });
});

describe('spec.vmuserSelector on a real API server', () => {
  const labelled = async (name: string, labels: Record<string, string>, targetRefs: JsonObject[]) => {
    const k = vmKind('VMUser');
    await custom.createNamespacedCustomObject({
      group: VM_GROUP,
      version: VM_VERSION,
      namespace: NS,
      plural: k.plural,
      body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind: 'VMUser', metadata: { name, labels }, spec: { username: name, targetRefs } },
    });
  };
  const spec = {
    zones: [{ name: 'az-a', storage: { name: 'vm-az-a', namespace: NS } }],
    routes: [{ kind: 'VMAuth' as const, name: 'gs' }],
    vmuserSelector: 'team=obs,tier=read',
  };
  const expectation = { namespace: NS, uid: 'uid-routes', spec };

  it('reads the VMUsers the selector selects now beside the named routes; edits one while it is selected, refuses one that is not; its record counts while its labels match', async () => {
    await createVM('VMAuth', 'gs', { selectAllByDefault: true, unauthorizedUserAccessSpec: { targetRefs: [vmselect('vm-az-a', 'vm-az-b')] } });
    await labelled('dash', { team: 'obs', tier: 'read' }, [vmselect('vm-az-a', 'vm-az-b')]);
    await labelled('dash-dev', { team: 'dev', tier: 'read' }, [vmselect('vm-az-a', 'vm-az-b')]);
    await labelled('obs-writer', { team: 'obs' }, [vmselect('vm-az-a', 'vm-az-b')]);
    const snaps = await run('readRoutes', { namespace: NS, routes: [{ kind: 'VMAuth', name: 'gs' }], vmuserSelector: spec.vmuserSelector });
    expect(snaps.map((x) => `${x.route.kind}/${x.route.name}`)).toEqual(['VMAuth/gs', 'VMUser/dash']);
    const removals = computeRemovals(snaps, { name: 'vm-az-a', namespace: NS });
    expect(removals.map((r) => r.route.name)).toEqual(['gs', 'dash']);
    await editRoutes(objects, { namespace: NS, vmauthName: 'gs', removals, direction: 'remove', record: owner('az-a') }, {}, spec);
    expect((await getSpec('VMUser', 'dash')).targetRefs).toEqual([vmselect('vm-az-b')]);
    expect((await readRecords(objects, expectation)).verified.map((v) => v.route.name)).toEqual(['gs', 'dash']);

    // A VMUser the selector does not select (a removal built by hand): refused before anything is touched.
    const other = computeRemovals(await snapshots('gs', ['dash-dev']), { name: 'vm-az-a', namespace: NS });
    const before = (await objects.get(vmKind('VMUser'), NS, 'dash-dev'))!.metadata.resourceVersion;
    const err = await editRoutes(objects, { namespace: NS, vmauthName: 'gs', removals: other, direction: 'remove', record: owner('az-a') }, {}, spec).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ type: 'NotOwned', nonRetryable: true, message: expect.stringContaining('VMUser dash-dev is not a read route') });
    expect((await objects.get(vmKind('VMUser'), NS, 'dash-dev'))!.metadata.resourceVersion).toBe(before);

    // Its labels changed while the zone is out: its record is no longer acted on (reported), the VMAuth's still is.
    await custom.patchNamespacedCustomObject(
      { group: VM_GROUP, version: VM_VERSION, namespace: NS, plural: vmKind('VMUser').plural, name: 'dash', body: { metadata: { labels: { team: 'dev' } } } },
      mergePatchOptions,
    );
    const listing = await readRecords(objects, expectation);
    expect(listing.verified.map((v) => v.route.name)).toEqual(['gs']);
    expect(listing.unverified).toEqual([
      { route: { kind: 'VMUser', name: 'dash' }, zone: 'az-a', reason: 'record of zone az-a is on a route its VMDistributedCluster does not manage' },
    ]);
    // The records stay with their objects: gone, for the tests after this one that read every record of the namespace.
    for (const [kind, name] of [
      ['VMAuth', 'gs'],
      ['VMUser', 'dash'],
    ] as const)
      await custom.deleteNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, namespace: NS, plural: vmKind(kind).plural, name });
  });

  it('more VMUsers than it edits: refused (SelectorTooBroad), naming the selector', async () => {
    for (let i = 0; i <= MAX_SELECTED_VMUSERS; i++) await labelled(`many-${i}`, { fleet: 'wide' }, [vmselect('vm-az-a', 'vm-az-b')]);
    const err = await run('readRoutes', { namespace: NS, routes: [], vmuserSelector: 'fleet=wide' }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      type: 'SelectorTooBroad',
      nonRetryable: true,
      message: expect.stringContaining('more than 100 VMUsers match spec.vmuserSelector fleet=wide'),
    });
  });
});

describe('the name+objects form (operator rules) on a real API server', () => {
  // {name: zone, namespace, objects: [b, c]}: the operator routes to the zone AND to b and c.
  const nameAndObjects = (name: string, ...others: string[]): JsonObject => ({
    crd: { kind: 'VMCluster/vmselect', name, namespace: NS, objects: others.map((o) => ({ name: o, namespace: NS })) },
    paths: ['/select/.*'],
  });

  it('taking the zone out of crd.name empties name and namespace (accepted by the API server), restoring gives back exactly the original spec', async () => {
    await createVM('VMAuth', 'gn', {
      unauthorizedUserAccessSpec: { targetRefs: [nameAndObjects('vm-az-a', 'vm-az-b', 'vm-az-c'), { static: { url: 'http://other:8428' } }] },
    });
    await createVM('VMUser', 'reads-n', { username: 'n', targetRefs: [nameAndObjects('vm-az-a', 'vm-az-b')] });
    const before = { gn: await getSpec('VMAuth', 'gn'), u: await getSpec('VMUser', 'reads-n') };
    const removals = computeRemovals(await snapshots('gn', ['reads-n']), { name: 'vm-az-a', namespace: NS });
    expect(removals.flatMap((r) => r.removed.map((x) => x.type))).toEqual(['crdName', 'crdName']);

    // Every write goes through the API server with the real schemas: a refusal would fail the activity (PatchRejected).
    const r1 = await editRoutes(objects, { namespace: NS, vmauthName: 'gn', removals, direction: 'remove', record: owner('az-a') });
    expect(r1.written).toEqual([
      { kind: 'VMAuth', name: 'gn' },
      { kind: 'VMUser', name: 'reads-n' },
    ]);
    const blank = (...others: string[]): JsonObject => ({
      crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: others.map((o) => ({ name: o, namespace: NS })) },
      paths: ['/select/.*'],
    });
    expect(((await getSpec('VMAuth', 'gn')).unauthorizedUserAccessSpec as JsonObject).targetRefs).toEqual([
      blank('vm-az-b', 'vm-az-c'),
      { static: { url: 'http://other:8428' } },
    ]);
    expect((await getSpec('VMUser', 'reads-n')).targetRefs).toEqual([blank('vm-az-b')]);
    // idempotent
    expect((await editRoutes(objects, { namespace: NS, vmauthName: 'gn', removals, direction: 'remove', record: owner('az-a') })).written).toEqual([]);

    const r2 = await editRoutes(objects, { namespace: NS, vmauthName: 'gn', removals, direction: 'restore', record: owner('az-a') });
    expect(r2.written).toHaveLength(2);
    expect(await getSpec('VMAuth', 'gn')).toEqual(before.gn);
    expect(await getSpec('VMUser', 'reads-n')).toEqual(before.u);
    expect((await editRoutes(objects, { namespace: NS, vmauthName: 'gn', removals, direction: 'restore', record: owner('az-a') })).written).toEqual([]);
  });
});

describe('the VM operator CRDs of the fixture are as strict as a real cluster', () => {
  it('a VMUser whose crd has objects but no name/namespace is refused with 422 naming crd.name', async () => {
    const err = await createVM('VMUser', 'no-name', {
      username: 'x',
      targetRefs: [{ crd: { kind: 'VMCluster/vmselect', objects: [{ name: 'vm-az-a', namespace: NS }] } }],
    }).catch((e: unknown) => e);
    expect((err as { code?: number }).code).toBe(422);
    expect(String((err as { body?: unknown }).body)).toContain('spec.targetRefs[0].crd.name: Required value');
    // ...and an objects entry without a namespace
    const err2 = await createVM('VMUser', 'no-ns', {
      username: 'x',
      targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: [{ name: 'vm-az-a' }] } }],
    }).catch((e: unknown) => e);
    expect((err2 as { code?: number }).code).toBe(422);
    expect(String((err2 as { body?: unknown }).body)).toContain('spec.targetRefs[0].crd.objects[0].namespace: Required value');
    expect(await objects.get(vmKind('VMUser'), NS, 'no-name')).toBeUndefined();
  });

  it('unknown fields are pruned: spec on create, status through the status subresource (updateStatus has no enum)', async () => {
    await createVM('VMCluster', 'vm-strict', { clusterVersion: 'v1', notAField: 1 });
    expect(await getSpec('VMCluster', 'vm-strict')).toEqual({ clusterVersion: 'v1' });
    await custom.patchNamespacedCustomObjectStatus(
      {
        group: VM_GROUP,
        version: VM_VERSION,
        namespace: NS,
        plural: 'vmclusters',
        name: 'vm-strict',
        body: { status: { observedGeneration: 1, updateStatus: 'anything', madeUp: 'x' } },
      },
      mergePatchOptions,
    );
    expect((await objects.get(vmKind('VMCluster'), NS, 'vm-strict'))!.status).toEqual({ observedGeneration: 1, updateStatus: 'anything' });
  });
});

/** A two-zone VMDistributedCluster of NS, as the rollout's input names it (uid and generation from the API server). */
async function createVmdc(name: string): Promise<ObjectGeneration> {
  const created = (await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NS,
    plural: PLURAL,
    body: {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name },
      spec: {
        clusterVersion: 'v1.150.0-cluster',
        zones: [
          { name: 'az-a', vmcluster: { name: 'vm-az-a' } },
          { name: 'az-b', vmcluster: { name: 'vm-az-b' } },
        ],
        vmauth: { name: 'g' },
        vmagent: { name: 'g' },
      },
    },
  })) as { metadata: { uid: string; generation: number } };
  return { namespace: NS, name, uid: created.metadata.uid, generation: created.metadata.generation };
}

describe('writeStatus', () => {
  it('writes through /status only while the object is at our generation and uid', async () => {
    const object = await createVmdc('st');
    // A zone announced leaving reads is reported out (no record yet: its edit comes next).
    const leaving = {
      phase: 'Progressing' as const,
      currentZone: 'az-a',
      zones: [{ name: 'az-a', phase: 'LeavingReads' as const }],
      zonesOutOfRotation: ['az-a'],
    };
    expect(await run('writeStatus', { object, status: leaving })).toEqual({ written: true });
    let got = (await objects.get(VMDC_KIND, NS, 'st'))!;
    expect(got.status).toMatchObject({ phase: 'Progressing', currentZone: 'az-a', zonesOutOfRotation: ['az-a'] });
    expect(got.metadata.generation).toBe(object.generation); // status writes never bump the generation

    // cleared fields disappear; out of reads is what the records say (none)
    const done = { phase: 'Succeeded' as const, zones: [{ name: 'az-a', phase: 'Done' as const }] };
    expect(await run('writeStatus', { object, status: done })).toEqual({ written: true });
    got = (await objects.get(VMDC_KIND, NS, 'st'))!;
    expect(got.status).toEqual({ ...done, zonesOutOfRotation: [] });

    // a new generation: the old workflow's status is not written
    await custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name: 'st', body: { spec: { clusterVersion: 'v1.151.0-cluster' } } },
      mergePatchOptions,
    );
    expect(await run('writeStatus', { object, status: { phase: 'Failed' } })).toEqual({ written: false });
    expect((await objects.get(VMDC_KIND, NS, 'st'))!.status).toEqual({ ...done, zonesOutOfRotation: [] });
    // another uid (deleted and recreated) or a missing object: not written
    expect(await run('writeStatus', { object: { ...object, generation: object.generation + 1, uid: 'other' }, status: { phase: 'Failed' } })).toEqual({
      written: false,
    });
    expect(await run('writeStatus', { object: { ...object, name: 'absent' }, status: { phase: 'Failed' } })).toEqual({ written: false });
  });

  it('an adopted workflow (status.workflow names it at a later generation) still writes, without moving observedGeneration back', async () => {
    const object = await createVmdc('st-adopt');
    const own = { id: 'vmdc/default/st-adopt/g1-x', runId: 'r1' };
    const asWorkflow = (id: string) => new MockActivityEnvironment({ workflowExecution: { workflowId: id, runId: 'r' } });
    const write = (id: string, status: Parameters<RolloutActivities['writeStatus']>[0]['status']) => asWorkflow(id).run(acts.writeStatus, { object, status });
    expect(await write(own.id, { observedGeneration: object.generation, workflow: own, phase: 'Progressing' })).toEqual({ written: true });

    // paused-only edit: generation + 1, the trigger records it and keeps status.workflow
    await custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name: 'st-adopt', body: { spec: { paused: true } } },
      mergePatchOptions,
    );
    const g2 = object.generation + 1;
    await objects.api.patchNamespacedCustomObjectStatus(
      { ...VMDC_KIND, namespace: NS, name: 'st-adopt', body: { status: { observedGeneration: g2 } } },
      mergePatchOptions,
    );
    expect(await write(own.id, { observedGeneration: object.generation, workflow: own, phase: 'Paused', message: 'paused' })).toEqual({ written: true });
    let got = (await objects.get(VMDC_KIND, NS, 'st-adopt'))!;
    expect(got.status).toMatchObject({ phase: 'Paused', message: 'paused', observedGeneration: g2, workflow: own });
    // another workflow (the status names someone else) may not write at a generation not its own
    expect(await write('vmdc/default/st-adopt/g0-other', { phase: 'Failed' })).toEqual({ written: false });

    // a real change: the trigger moves status.workflow to the new generation's workflow → superseded, no more writes
    await custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name: 'st-adopt', body: { spec: { clusterVersion: 'v1.151.0-cluster' } } },
      mergePatchOptions,
    );
    const next = { id: 'vmdc/default/st-adopt/g3-x', runId: 'r3' };
    await objects.api.patchNamespacedCustomObjectStatus(
      { ...VMDC_KIND, namespace: NS, name: 'st-adopt', body: { status: { observedGeneration: g2 + 1, workflow: next } } },
      mergePatchOptions,
    );
    expect(await write(own.id, { phase: 'Superseded' })).toEqual({ written: false });
    got = (await objects.get(VMDC_KIND, NS, 'st-adopt'))!;
    expect(got.status).toMatchObject({ phase: 'Paused', observedGeneration: g2 + 1, workflow: next });
  });
});

describe('applyObject / readObject / waitOperational', () => {
  it('creates when absent (create: true), applies otherwise (a key no longer set goes), reports changed', async () => {
    expect(await run('readObject', { kind: 'VMCluster', namespace: NS, name: 'vm-new' })).toEqual({ exists: false });
    const c = await apply({
      kind: 'VMCluster',
      namespace: NS,
      name: 'vm-new',
      patch: { clusterVersion: 'v1', retentionPeriod: '1', drop: null },
      create: true,
    });
    expect(c).toEqual({ generation: 1, created: true, changed: true });
    expect(await getSpec('VMCluster', 'vm-new')).toEqual({ clusterVersion: 'v1', retentionPeriod: '1' });

    const p = await apply({
      kind: 'VMCluster',
      namespace: NS,
      name: 'vm-new',
      patch: { clusterVersion: 'v2', retentionPeriod: null, vmselect: { replicaCount: 2 } },
      create: true,
    });
    expect(p).toEqual({ generation: 2, created: false, changed: true });
    expect(await getSpec('VMCluster', 'vm-new')).toEqual({ clusterVersion: 'v2', vmselect: { replicaCount: 2 } });

    const same = await apply({
      kind: 'VMCluster',
      namespace: NS,
      name: 'vm-new',
      patch: { clusterVersion: 'v2', vmselect: { replicaCount: 2 } },
      create: true,
    });
    expect(same).toEqual({ generation: 2, created: false, changed: false });

    const fewer = await apply({ kind: 'VMCluster', namespace: NS, name: 'vm-new', patch: { clusterVersion: 'v2' }, create: true });
    expect(fewer).toEqual({ generation: 3, created: false, changed: true });
    expect(await getSpec('VMCluster', 'vm-new')).toEqual({ clusterVersion: 'v2' });

    const missing = await apply({ kind: 'VMUser', namespace: NS, name: 'nope', patch: { a: 1 }, create: false }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApplicationFailure);
    expect((missing as ApplicationFailure).nonRetryable).toBe(true);
  });

  async function setStatus(name: string, status: JsonObject) {
    await custom.patchNamespacedCustomObjectStatus(
      { group: VM_GROUP, version: VM_VERSION, namespace: NS, plural: 'vmclusters', name, body: { status } },
      mergePatchOptions,
    );
  }

  it('waits for observedGeneration >= generation and operational', async () => {
    await createVM('VMCluster', 'vm-wait', { clusterVersion: 'v1' });
    await setStatus('vm-wait', { observedGeneration: 1, updateStatus: 'operational' });
    const { generation } = await apply({ kind: 'VMCluster', namespace: NS, name: 'vm-wait', patch: { clusterVersion: 'v2' }, create: false });
    expect(generation).toBe(2);
    const beats: unknown[] = [];
    const e = new MockActivityEnvironment();
    e.on('heartbeat', (d: unknown) => beats.push(d));
    let settled = false;
    const wait = e
      .run(acts.waitOperational, { kind: 'VMCluster' as const, namespace: NS, name: 'vm-wait', generation, pollIntervalMs: 100 })
      .finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 400));
    expect(settled).toBe(false); // old generation still operational: not done
    await setStatus('vm-wait', { observedGeneration: 2, updateStatus: 'expanding' });
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false);
    await setStatus('vm-wait', { observedGeneration: 2, updateStatus: 'operational' });
    const state = await wait;
    expect(state).toMatchObject({ exists: true, generation: 2, observedGeneration: 2, updateStatus: 'operational' });
    expect(beats.length).toBeGreaterThan(0);
  });

  it('fails non-retryably with ObjectFailed and the reason when the object reports failed', async () => {
    await createVM('VMCluster', 'vm-fail', { clusterVersion: 'v1' });
    await setStatus('vm-fail', { observedGeneration: 1, updateStatus: 'failed', reason: 'cannot pull image v1' });
    const err = await run('waitOperational', { kind: 'VMCluster', namespace: NS, name: 'vm-fail', generation: 1, pollIntervalMs: 100 }).catch(
      (x: unknown) => x,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('ObjectFailed');
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as ApplicationFailure).message).toContain('cannot pull image v1');
  });
});

describe('applyObject: the server-side dry run, and requests the API server refuses for good', () => {
  const refusal = async (p: Promise<unknown>): Promise<ApplicationFailure> => {
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  };

  it('a dry run is admitted by the API server and stores nothing (patch and create)', async () => {
    await createVM('VMCluster', 'dry-a', { clusterVersion: 'v1' });
    const before = (await objects.get(vmKind('VMCluster'), NS, 'dry-a'))!;
    const r = await apply({ kind: 'VMCluster', namespace: NS, name: 'dry-a', patch: { clusterVersion: 'v2' }, create: false, dryRun: true });
    expect(r.created).toBe(false);
    const after = (await objects.get(vmKind('VMCluster'), NS, 'dry-a'))!;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec).toEqual({ clusterVersion: 'v1' });
    expect(await apply({ kind: 'VMCluster', namespace: NS, name: 'dry-b', patch: { clusterVersion: 'v2' }, create: true, dryRun: true })).toMatchObject({
      created: true,
    });
    expect(await objects.get(vmKind('VMCluster'), NS, 'dry-b')).toBeUndefined();
  });

  it.each([
    ['404: the namespace does not exist', 'no-such-namespace', 'dry-c', /HTTP 404/],
    ['422: an invalid object name', NS, 'Not_A_DNS_Name', /HTTP 422/],
  ])('%s fails at once, non-retryable PatchRejected with the API server message (dry run or not)', async (_what, namespace, name, message) => {
    for (const dryRun of [true, false]) {
      const err = await refusal(apply({ kind: 'VMCluster', namespace, name, patch: { clusterVersion: 'v2' }, create: true, dryRun }));
      expect(err.type).toBe('PatchRejected');
      expect(err.nonRetryable).toBe(true);
      expect(err.message).toMatch(message);
    }
  });
});
