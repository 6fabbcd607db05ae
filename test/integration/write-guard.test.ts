/**
 * Every write activity is bound to the calling workflow's VMDistributedCluster (activities/guard/,
 * docs/security.md#every-write-is-bound-to-its-object), against a real kube-apiserver and a real
 * Temporal dev server: a FOREIGN workflow (someone else's, on a task queue of their own) asks
 * vmrollout's worker, on vmrollout's task queue, for applyObject, editRoutes and writeStatus on real
 * objects. Each is refused (non-retryable InputRefused) and the object is unchanged; the same
 * workflow asking, under the object's own workflow id, for exactly what the spec asks for is served.
 * The endings keep working: once the object is being deleted (its generation moved on), its own
 * workflow id still puts back the zone it took out and writes its final status, and nothing else.
 *
 * Negative control: WRITE_GUARD_NEGATIVE_CONTROL=1 runs the same tests with the guard switched off
 * (createActivities' test-only bindWrites: false): every refusal test then fails.
 */
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { API_VERSION, GROUP, KIND, PLURAL, ROUTE_RECORDS_FINALIZER, VERSION, VM_GROUP, VM_VERSION } from '../../api/constants';
import { workflowIdFor } from '../../api/rollout-contract';
import type { RecordOwner } from '../../api/route-records';
import type { JsonObject, ObjectGeneration } from '../../api/types';
import { validateSpec } from '../../api/validate';
import { KubeObjects, mergePatchOptions, vmKind, VMDC_KIND } from '../../kube/custom-objects';
import type { ApplyObjectInput } from '../../workflows/activity-types';
import { specApplies } from '../../workflows/managed-objects';
import { computeRemovals } from '../../workflows/routes';
import type { ForeignCall, ForeignOutcome, foreignWriter } from '../fixtures/workflows/foreign-writer';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { startTemporalDevEnv } from '../infra/harness/temporal';

jest.setTimeout(240_000);

const NEGATIVE_CONTROL = process.env.WRITE_GUARD_NEGATIVE_CONTROL === '1';
const NS = 'default';
const VMROLLOUT_TQ = 'vmrollout-write-guard';
const FOREIGN_TQ = 'someone-elses';
const VMDC_CRD = path.resolve(__dirname, '..', '..', 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');

let kube: KubeCluster;
let objects: KubeObjects;
let custom: k8s.CustomObjectsApi;
let env: TestWorkflowEnvironment;
const workers: Array<{ worker: Worker; run: Promise<void> }> = [];

const vmselect = (name: string): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', name, namespace: NS }, paths: ['/select/.*'] });
const rawSpec = (vmauth: string) => ({
  clusterVersion: 'v1.151.0-cluster',
  zones: [
    { name: 'az-a', vmcluster: { name: 'vm-az-a' } },
    { name: 'az-b', vmcluster: { name: 'vm-az-b' } },
  ],
  vmauth: { name: vmauth },
  vmagent: { name: 'vm-global' },
});

let target: ObjectGeneration;
let other: ObjectGeneration;

async function createVM(kind: 'VMAuth' | 'VMCluster', name: string, spec: JsonObject): Promise<void> {
  await custom.createNamespacedCustomObject({
    group: VM_GROUP,
    version: VM_VERSION,
    namespace: NS,
    plural: vmKind(kind).plural,
    body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind, metadata: { name }, spec },
  });
}

async function createVmdc(name: string, spec: object, finalizers: string[] = []): Promise<ObjectGeneration> {
  const created = (await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NS,
    plural: PLURAL,
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name, finalizers }, spec },
  })) as { metadata: { uid: string; generation: number } };
  return { namespace: NS, name, uid: created.metadata.uid, generation: created.metadata.generation };
}

async function startWorker(options: Parameters<typeof Worker.create>[0]): Promise<void> {
  const worker = await Worker.create(options);
  workers.push({ worker, run: worker.run() });
}

beforeAll(async () => {
  kube = await startKube();
  await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS, VMDC_CRD]);
  objects = new KubeObjects(kube.kubeConfig);
  custom = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  await createVM('VMCluster', 'vm-az-a', { clusterVersion: 'v1.150.0-cluster' });
  await createVM('VMCluster', 'vm-az-b', { clusterVersion: 'v1.150.0-cluster' });
  await createVM('VMAuth', 'vm-global', { selectAllByDefault: true, unauthorizedUserAccessSpec: { targetRefs: [vmselect('vm-az-a'), vmselect('vm-az-b')] } });
  target = await createVmdc('target', rawSpec('vm-global'));
  other = await createVmdc('other', rawSpec('vm-other'));

  env = await startTemporalDevEnv();
  const connection = env.nativeConnection;
  // vmrollout's worker: its activities only, on its task queue.
  await startWorker({
    connection,
    namespace: env.namespace,
    taskQueue: VMROLLOUT_TQ,
    activities: createActivities({ kubeConfig: kube.kubeConfig, temporalClient: env.client, bindWrites: !NEGATIVE_CONTROL }),
  });
  // Someone else's worker: their workflow, on their task queue.
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../fixtures/workflows/foreign-writer'),
    logger: new DefaultLogger('WARN'),
  });
  await startWorker({ connection, namespace: env.namespace, taskQueue: FOREIGN_TQ, workflowBundle });
}, 240_000);

afterAll(async () => {
  for (const w of workers) w.worker.shutdown();
  for (const w of workers) await w.run.catch(() => {});
  await env?.teardown();
  await kube?.stop();
});

let seq = 0;
/** The foreign workflow, started by hand with id `workflowId`, asking vmrollout's worker for `call`. */
function foreign(workflowId: string, call: ForeignCall): Promise<ForeignOutcome> {
  return env.client.workflow.execute<typeof foreignWriter>('foreignWriter', {
    taskQueue: FOREIGN_TQ,
    workflowId: `${workflowId}${workflowId.startsWith('vmdc/') ? '' : `-${++seq}`}`,
    args: [VMROLLOUT_TQ, call],
  });
}

/** The apply the spec of `o` (VMAuth `vmauth`) asks for of `name`: what its own workflow sends. */
function specApply(name: string, o = target, vmauth = 'vm-global'): ApplyObjectInput {
  const v = validateSpec(rawSpec(vmauth));
  if (!v.success) throw new Error('invalid spec');
  return specApplies(o, v.spec).find((a) => a.name === name)!;
}

/** The record owner of zone `zone` of `o`, written by `workflowId`. */
const recordOf = (o: ObjectGeneration, workflowId: string, zone = 'az-a'): RecordOwner => ({
  vmdc: { namespace: o.namespace, name: o.name, uid: o.uid },
  zone,
  workflowId,
  generation: o.generation,
});

const refused = { failure: { type: 'InputRefused', nonRetryable: true, message: expect.stringContaining('write refused, nothing written') } };

async function snapshot(): Promise<Record<string, unknown>> {
  const get = async (kind: Parameters<typeof vmKind>[0], name: string) => (await objects.get(vmKind(kind), NS, name))!;
  const vmdc = (await objects.get(VMDC_KIND, NS, 'target'))!;
  return {
    'vm-az-a': (await get('VMCluster', 'vm-az-a')).metadata.resourceVersion,
    'vm-global': (await get('VMAuth', 'vm-global')).metadata.resourceVersion,
    target: vmdc.metadata.resourceVersion,
  };
}

async function targetRefsOf(vmauth: string): Promise<JsonObject[]> {
  const auth = (await objects.get(vmKind('VMAuth'), NS, vmauth))!;
  return ((auth.spec as JsonObject).unauthorizedUserAccessSpec as JsonObject).targetRefs as JsonObject[];
}

async function removalsOf(vmcluster: string, vmauth = 'vm-global'): Promise<ReturnType<typeof computeRemovals>> {
  return computeRemovals([{ route: { kind: 'VMAuth', name: vmauth }, targetRefs: await targetRefsOf(vmauth) }], { name: vmcluster, namespace: NS });
}

describe('a foreign workflow asking vmrollout for a write: refused, nothing written', () => {
  const forgedApply = (): ApplyObjectInput => ({ ...specApply('vm-az-a'), patch: { clusterVersion: 'v0.0.1-evil' } });

  it.each([
    ['any workflow id', 'intruder'],
    ["another VMDistributedCluster's workflow id", () => workflowIdFor(other)],
  ])('applyObject, editRoutes, writeStatus from %s', async (_what, idOf) => {
    const id = typeof idOf === 'string' ? idOf : idOf();
    const before = await snapshot();
    const removals = await removalsOf('vm-az-a');
    expect(removals[0]!.removed.length).toBeGreaterThan(0);
    expect(await foreign(id, { activity: 'applyObject', input: forgedApply() })).toEqual(refused);
    expect(await foreign(id, { activity: 'applyObject', input: specApply('vm-az-a') })).toEqual(refused);
    expect(
      await foreign(id, {
        activity: 'editRoutes',
        input: { namespace: NS, vmauthName: 'vm-global', removals, direction: 'remove', record: recordOf(target, id) },
      }),
    ).toEqual(refused);
    expect(await foreign(id, { activity: 'writeStatus', input: { object: target, status: { phase: 'Failed', message: 'forged' } } })).toEqual(refused);
    expect(await snapshot()).toEqual(before);
  });

  it("under the object's own workflow id: only what its spec asks for (a forged apply, another zone's VMCluster in a removal: refused)", async () => {
    const before = await snapshot();
    const own = workflowIdFor(target);
    expect(await foreign(own, { activity: 'applyObject', input: forgedApply() })).toEqual(refused);
    const removals = (await removalsOf('vm-az-a')).map((r) => ({ ...r, vmcluster: { name: 'vm-az-b', namespace: NS } }));
    expect(
      await foreign(own, {
        activity: 'editRoutes',
        input: { namespace: NS, vmauthName: 'vm-global', removals, direction: 'remove', record: recordOf(target, own) },
      }),
    ).toEqual(refused);
    expect(await snapshot()).toEqual(before);
    expect((await objects.get(vmKind('VMCluster'), NS, 'vm-az-a'))!.spec).toEqual({ clusterVersion: 'v1.150.0-cluster' });
  });
});

it("positive control: the apply the spec asks for, under the object's own workflow id, is served", async () => {
  // (the id is free: no rollout of this generation ran here; each run of this file is a fresh server)
  const outcome = await foreign(workflowIdFor(target), { activity: 'applyObject', input: specApply('vm-az-b') });
  expect(outcome).toEqual({ result: { generation: 2, created: false, changed: true } });
  expect(((await objects.get(vmKind('VMCluster'), NS, 'vm-az-b'))!.spec as JsonObject).clusterVersion).toBe('v1.151.0-cluster');
});

it('the endings still work: the run of a generation no longer in charge (its object being deleted) puts its zone back and writes its final status, and may take nothing out or apply', async () => {
  // A third backend (not the object's) keeps the route servable whatever the object takes out.
  await createVM('VMAuth', 'vm-ending', {
    selectAllByDefault: true,
    unauthorizedUserAccessSpec: { targetRefs: [vmselect('vm-az-a'), vmselect('vm-az-b'), vmselect('vm-az-c')] },
  });
  const before = await targetRefsOf('vm-ending');
  const ending = await createVmdc('ending', rawSpec('vm-ending'), [ROUTE_RECORDS_FINALIZER]);
  const own = workflowIdFor(ending);
  // What the trigger records when it starts the workflow.
  await objects.api.patchNamespacedCustomObjectStatus(
    { ...VMDC_KIND, namespace: NS, name: 'ending', body: { status: { observedGeneration: ending.generation, workflow: { id: own, runId: 'r' } } } },
    mergePatchOptions,
  );
  const edit = async (direction: 'remove' | 'restore', vmcluster: string, zone: string) =>
    foreign(own, {
      activity: 'editRoutes',
      input: { namespace: NS, vmauthName: 'vm-ending', removals: await removalsOf(vmcluster, 'vm-ending'), direction, record: recordOf(ending, own, zone) },
    });
  expect(await edit('remove', 'vm-az-a', 'az-a')).toEqual({ result: expect.objectContaining({ recorded: [expect.objectContaining({ zone: 'az-a' })] }) });
  expect(await targetRefsOf('vm-ending')).toEqual([vmselect('vm-az-b'), vmselect('vm-az-c')]);

  await custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name: 'ending' });
  const deleting = (await objects.get(VMDC_KIND, NS, 'ending'))!;
  expect(deleting.metadata.deletionTimestamp).toBeDefined();
  expect(deleting.metadata.generation).toBe(ending.generation + 1); // a deletion moves the generation on

  expect(await foreign(own, { activity: 'applyObject', input: specApply('vm-az-a', ending, 'vm-ending') })).toEqual(refused);
  expect(await edit('remove', 'vm-az-b', 'az-b')).toEqual(refused);
  expect(await targetRefsOf('vm-ending')).toEqual([vmselect('vm-az-b'), vmselect('vm-az-c')]);

  expect(await edit('restore', 'vm-az-a', 'az-a')).toEqual({ result: expect.objectContaining({ recorded: [] }) });
  expect(await targetRefsOf('vm-ending')).toEqual(before);
  expect(await foreign(own, { activity: 'writeStatus', input: { object: ending, status: { phase: 'Cancelled', message: 'cancelled' } } })).toEqual({
    result: { written: true },
  });
  expect((await objects.get(VMDC_KIND, NS, 'ending'))!.status).toMatchObject({ phase: 'Cancelled', message: 'cancelled' });
});
