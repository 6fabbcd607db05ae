/**
 * Two VMDistributedClusters sharing one VMAuth, on a real kube-apiserver (+ etcd) with the VM
 * operator's real CRDs: A manages the VMAuth (a full spec routing to the zones of both), B takes a
 * zone of its own out of it for its upgrade. A's apply of the VMAuth must not put B's zone back
 * into reads — not by force, not as drift, not with forceConflicts — and the trigger's drift
 * judgement must not call B's route edit drift of A's. Once B's zone is back, A applies again.
 * The route edits and applies are the real activities (activities/routes, activities/objects).
 */
import { randomUUID } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { applyObject } from '../../activities/objects/apply-object';
import { editRoutes, readRoutes } from '../../activities/routes/edit-routes';
import { VM_GROUP, VM_VERSION } from '../../api/constants';
import { formatRecords, OUT_OF_ROTATION_ANNOTATION, recordKey, type OutOfRotationRecord, type RecordOwner } from '../../api/route-records';
import type { JsonObject } from '../../api/types';
import { KubeObjects, mergePatchOptions, vmKind, type KubeObject } from '../../kube/custom-objects';
import { FIELD_MANAGER, routeFieldManager } from '../../kube/field-managers';
import { driftCondition, driftReport, objectDrift } from '../../trigger/drift';
import type { ApplyObjectInput } from '../../workflows/activity-types';
import { FailureType } from '../../workflows/failures';
import { computeRemovals } from '../../workflows/routes';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';

jest.setTimeout(180_000);

let kube: KubeCluster;
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;
let objects: KubeObjects;

beforeAll(async () => {
  kube = await startKube();
  await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS]);
  core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
  custom = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  objects = new KubeObjects(kube.kubeConfig);
});

afterAll(async () => {
  await kube?.stop();
});

let nsSeq = 0;
async function newNamespace(): Promise<string> {
  const ns = `shared-${++nsSeq}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  return ns;
}

const vmselects = (ns: string, names: string[]): JsonObject => ({
  crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: names.map((name) => ({ name, namespace: ns })) },
  paths: ['/select/.*'],
});
/** Zones a1, a2 of A and b1, b2 of B, all behind the one VMAuth. */
const ALL = ['vm-a1', 'vm-a2', 'vm-b1', 'vm-b2'];
const authSpec = (ns: string, extra: JsonObject[] = []): JsonObject => ({
  selectAllByDefault: true,
  unauthorizedUserAccessSpec: { targetRefs: [vmselects(ns, ALL), ...extra] },
});

const A = { name: 'a', uid: randomUUID(), generation: 1 };
const B = { name: 'b', uid: randomUUID(), generation: 1 };

/** A's apply of the shared VMAuth (its full spec), as its rollout's prepare step sends it. */
const applyA = (ns: string, spec: JsonObject, over: Partial<ApplyObjectInput> & { forceConflicts?: boolean } = {}) => {
  const { forceConflicts = false, ...rest } = over;
  return applyObject(objects, {
    kind: 'VMAuth',
    namespace: ns,
    name: 'shared',
    patch: spec,
    create: true,
    managedBy: { vmdc: A, specPath: 'vmauth', retain: true, adopt: false, forceConflicts },
    ...rest,
  });
};

const ownerB = (ns: string): RecordOwner => ({ vmdc: { namespace: ns, ...B }, zone: 'az-b1', workflowId: 'wf-b', generation: 1 });

/** B's rollout takes its zone az-b1 (VMCluster vm-b1) out of the VMAuth, or puts it back. */
async function routeB(ns: string, direction: 'remove' | 'restore'): Promise<void> {
  const snapshot = await readRoutes(objects, { namespace: ns, routes: [{ kind: 'VMAuth', name: 'shared' }] });
  const removals = computeRemovals(snapshot, { name: 'vm-b1', namespace: ns });
  await editRoutes(objects, { namespace: ns, vmauthName: 'shared', removals, direction, record: ownerB(ns) });
}

const getAuth = async (ns: string): Promise<KubeObject> => (await objects.get(vmKind('VMAuth'), ns, 'shared'))!;
const refsOf = async (ns: string): Promise<JsonObject[]> =>
  (((await getAuth(ns)).spec as JsonObject).unauthorizedUserAccessSpec as JsonObject).targetRefs as JsonObject[];
/** Whether the VMAuth routes reads to VMCluster `name`. */
const routesTo = async (ns: string, name: string): Promise<boolean> => JSON.stringify(await refsOf(ns)).includes(`"${name}"`);
const managers = (o: KubeObject) =>
  ((o.metadata as { managedFields?: Array<{ manager: string; operation: string }> }).managedFields ?? []).map((m) => `${m.manager}/${m.operation}`);

/** What the trigger reports for A from the live VMAuth (its pure judgement, trigger/drift.ts). */
async function driftOfA(ns: string) {
  const d = objectDrift('VMAuth', (await getAuth(ns)) as unknown as k8s.KubernetesObject)!;
  const report = driftReport({ namespace: ns, name: A.name, uid: A.uid }, [d]);
  return { report, condition: driftCondition(report, undefined) };
}

async function refused(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('a VMAuth shared by two VMDistributedClusters, one of them mid-zone', () => {
  it("A's apply never puts B's zone back into reads (nor with forceConflicts, nor as a dry run), and it is no drift of A's; once B is done, A applies", async () => {
    const ns = await newNamespace();
    await applyA(ns, authSpec(ns));
    await routeB(ns, 'remove');
    expect(await routesTo(ns, 'vm-b1')).toBe(false);
    // B's route edit is B's own manager's (a uid of the API server's length fits the 128 allowed).
    expect(managers(await getAuth(ns))).toContain(`${routeFieldManager(B.uid)}/Update`);

    // A's next rollout applies its VMAuth again: the same spec, with B's zone in it.
    for (const over of [{}, { forceConflicts: true }, { dryRun: true }]) {
      const err = await refused(applyA(ns, authSpec(ns), over));
      expect(err.type).toBe(FailureType.FieldConflict);
      expect(err.nonRetryable).toBe(true);
      expect(err.message).toContain('.spec.unauthorizedUserAccessSpec.targetRefs');
      expect(err.message).toContain(`zone az-b1 of VMDistributedCluster ${ns}/b`);
      expect(await routesTo(ns, 'vm-b1')).toBe(false);
    }

    // The trigger: B's zone out of the shared route is not a field of A's that drifted.
    const during = await driftOfA(ns);
    expect(during.report).toEqual({ checked: [], skipped: ['VMAuth shared'] });
    expect(during.condition?.status).not.toBe('True');

    // B's zone back: A's unchanged spec applies (what B put back is what A applied), and so does a
    // changed one, over B's finished route edit.
    await routeB(ns, 'restore');
    expect(await routesTo(ns, 'vm-b1')).toBe(true);
    await applyA(ns, authSpec(ns));
    expect(managers(await getAuth(ns))).toContain(`${routeFieldManager(B.uid)}/Update`);
    const more = { static: { url: 'http://more:8481' }, paths: ['/more'] };
    await applyA(ns, authSpec(ns, [more]));
    // Taken by force from B's finished route edit (a conflict with B's manager, which owns nothing now).
    expect(managers(await getAuth(ns))).not.toContain(`${routeFieldManager(B.uid)}/Update`);
    expect(await refsOf(ns)).toEqual([vmselects(ns, ALL), more]);
    const after = await driftOfA(ns);
    expect(after.report).toEqual({ checked: [{ object: 'VMAuth shared', fields: [] }], skipped: [] });
  });

  it('a route edit written under the shared manager of builds before 1.0.0-rc.1 is held while another VMDistributedCluster has a zone recorded there', async () => {
    const ns = await newNamespace();
    await applyA(ns, authSpec(ns));
    // B's zone out, written as unreleased builds before 1.0.0-rc.1 wrote it: manager `vmrollout`, operation Update.
    const live = await getAuth(ns);
    const record: OutOfRotationRecord = {
      ...ownerB(ns),
      route: { kind: 'VMAuth', name: 'shared', uid: live.metadata.uid! },
      vmcluster: { name: 'vm-b1', namespace: ns },
      removed: [{ type: 'object', index: 0, objectIndex: 2, object: { name: 'vm-b1', namespace: ns } }],
      since: new Date().toISOString(),
    };
    await custom.patchNamespacedCustomObject(
      {
        group: VM_GROUP,
        version: VM_VERSION,
        namespace: ns,
        plural: 'vmauths',
        name: 'shared',
        fieldManager: FIELD_MANAGER,
        body: {
          metadata: {
            resourceVersion: live.metadata.resourceVersion,
            annotations: { [OUT_OF_ROTATION_ANNOTATION]: formatRecords({ [recordKey(B.uid, 'az-b1')]: record }) },
          },
          spec: { unauthorizedUserAccessSpec: { targetRefs: [vmselects(ns, ['vm-a1', 'vm-a2', 'vm-b2'])] } },
        },
      },
      mergePatchOptions,
    );
    expect(managers(await getAuth(ns))).toContain(`${FIELD_MANAGER}/Update`);

    const err = await refused(applyA(ns, authSpec(ns), { forceConflicts: true }));
    expect(err.type).toBe(FailureType.FieldConflict);
    expect(err.message).toContain(`zone az-b1 of VMDistributedCluster ${ns}/b`);
    expect(await routesTo(ns, 'vm-b1')).toBe(false);

    // B's zone back (by its records, as B's rollout or `kubectl vmdc release-zone` does): A applies.
    await routeB(ns, 'restore');
    await applyA(ns, authSpec(ns));
    expect(await routesTo(ns, 'vm-b1')).toBe(true);
  });
});

describe('a zone its trafficMode holds out of reads (spec.zones[].trafficMode)', () => {
  const ownerA = (ns: string): RecordOwner => ({ vmdc: { namespace: ns, ...A }, zone: 'az-a2', workflowId: 'wf-a', generation: 1 });
  async function routeA(ns: string, direction: 'remove' | 'restore'): Promise<void> {
    const snapshot = await readRoutes(objects, { namespace: ns, routes: [{ kind: 'VMAuth', name: 'shared' }] });
    const removals = direction === 'remove' ? computeRemovals(snapshot, { name: 'vm-a2', namespace: ns }) : [];
    await editRoutes(objects, { namespace: ns, vmauthName: 'shared', removals, direction, record: ownerA(ns) });
  }

  it('its own VMAuth applied without the held VMCluster keeps it out (negative control: applied in full, it is back); its restore is exact afterwards', async () => {
    const ns = await newNamespace();
    await applyA(ns, authSpec(ns));
    await routeA(ns, 'remove');
    expect(await routesTo(ns, 'vm-a2')).toBe(false);
    const without = [{ name: 'vm-a2', namespace: ns }];
    for (const dryRun of [true, false]) await applyA(ns, authSpec(ns), { without, dryRun });
    expect(await routesTo(ns, 'vm-a2')).toBe(false);
    expect(await refsOf(ns)).toEqual([vmselects(ns, ['vm-a1', 'vm-b1', 'vm-b2'])]);
    // A route the held zones would leave with no backend is refused, nothing applied.
    const only = { unauthorizedUserAccessSpec: { targetRefs: [vmselects(ns, ['vm-a2'])] } };
    const err = await refused(applyA(ns, only, { without }));
    expect(err.type).toBe(FailureType.EmptyRoute);
    expect(await refsOf(ns)).toEqual([vmselects(ns, ['vm-a1', 'vm-b1', 'vm-b2'])]);
    // Back to read-write: the records put it back exactly where the spec has it.
    await routeA(ns, 'restore');
    expect(await refsOf(ns)).toEqual([vmselects(ns, ALL)]);
    // Negative control: the same apply without `without`, the zone out again, puts it back.
    await routeA(ns, 'remove');
    await applyA(ns, authSpec(ns));
    expect(await routesTo(ns, 'vm-a2')).toBe(true);
  });
});
