/**
 * Every write activity is bound to the calling workflow's VMDistributedCluster (activities/guard/,
 * docs/security.md#every-write-is-bound-to-its-object), against a real kube-apiserver and a real
 * Temporal dev server: a FOREIGN workflow (someone else's, on a task queue of their own) asks
 * vmrollout's worker, on vmrollout's task queue, for applyObject, editRoutes and writeStatus on real
 * objects. Each is refused (non-retryable InputRefused) and the object is unchanged; the same
 * workflow asking, under the object's own workflow id, for exactly what the spec asks for is served.
 *
 * Negative control: WRITE_GUARD_NEGATIVE_CONTROL=1 runs the same tests with the guard switched off
 * (createActivities' test-only bindWrites: false): every refusal test then fails.
 */
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, VM_GROUP, VM_VERSION } from '../../api/constants';
import { workflowIdFor } from '../../api/rollout-contract';
import type { RecordOwner } from '../../api/route-records';
import type { JsonObject, ObjectGeneration } from '../../api/types';
import { validateSpec } from '../../api/validate';
import { KubeObjects, vmKind, VMDC_KIND } from '../../kube/custom-objects';
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

async function createVmdc(name: string, spec: object): Promise<ObjectGeneration> {
  const created = (await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NS,
    plural: PLURAL,
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec },
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

/** The apply the spec of `target` asks for of `name` (what its own workflow sends). */
function specApply(name: string): ApplyObjectInput {
  const v = validateSpec(rawSpec('vm-global'));
  if (!v.success) throw new Error('invalid spec');
  return specApplies(target, v.spec).find((a) => a.name === name)!;
}

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

async function removalsOfAzA(): Promise<ReturnType<typeof computeRemovals>> {
  const auth = (await objects.get(vmKind('VMAuth'), NS, 'vm-global'))!;
  const targetRefs = ((auth.spec as JsonObject).unauthorizedUserAccessSpec as JsonObject).targetRefs as JsonObject[];
  return computeRemovals([{ route: { kind: 'VMAuth', name: 'vm-global' }, targetRefs }], { name: 'vm-az-a', namespace: NS });
}

describe('a foreign workflow asking vmrollout for a write: refused, nothing written', () => {
  const forgedApply = (): ApplyObjectInput => ({ ...specApply('vm-az-a'), patch: { clusterVersion: 'v0.0.1-evil' } });
  const record = (workflowId: string): RecordOwner => ({
    vmdc: { namespace: NS, name: target.name, uid: target.uid },
    zone: 'az-a',
    workflowId,
    generation: target.generation,
  });

  it.each([
    ['any workflow id', 'intruder'],
    ["another VMDistributedCluster's workflow id", () => workflowIdFor(other)],
  ])('applyObject, editRoutes, writeStatus from %s', async (_what, idOf) => {
    const id = typeof idOf === 'string' ? idOf : idOf();
    const before = await snapshot();
    const removals = await removalsOfAzA();
    expect(removals[0]!.removed.length).toBeGreaterThan(0);
    expect(await foreign(id, { activity: 'applyObject', input: forgedApply() })).toEqual(refused);
    expect(await foreign(id, { activity: 'applyObject', input: specApply('vm-az-a') })).toEqual(refused);
    expect(
      await foreign(id, { activity: 'editRoutes', input: { namespace: NS, vmauthName: 'vm-global', removals, direction: 'remove', record: record(id) } }),
    ).toEqual(refused);
    expect(await foreign(id, { activity: 'writeStatus', input: { object: target, status: { phase: 'Failed', message: 'forged' } } })).toEqual(refused);
    expect(await snapshot()).toEqual(before);
  });

  it("under the object's own workflow id: only what its spec asks for (a forged apply, another zone's VMCluster in a removal: refused)", async () => {
    const before = await snapshot();
    const own = workflowIdFor(target);
    expect(await foreign(own, { activity: 'applyObject', input: forgedApply() })).toEqual(refused);
    const removals = (await removalsOfAzA()).map((r) => ({ ...r, vmcluster: { name: 'vm-az-b', namespace: NS } }));
    expect(
      await foreign(own, { activity: 'editRoutes', input: { namespace: NS, vmauthName: 'vm-global', removals, direction: 'remove', record: record(own) } }),
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
