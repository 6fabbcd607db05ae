// The trigger against a real kube-apiserver + etcd and a real Temporal dev server, with a real
// worker running the real `rolloutWorkflow` (workflows/) and the real activities (activities/) on
// the same API server. The VM operator objects the specs name (VMAgent, VMAuth, VMUsers,
// VMClusters) exist (test CRDs), but no operator runs: a rollout sits waiting for its VMAgent or
// VMCluster to become operational until a test plays the operator and sets that status.
// Assertions use the workflow's `progress` query, Temporal visibility/describe and the CR status.
// Every assertion polls real state (the API server, Temporal); nothing sleeps as a stand-in.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { GROUP, PLURAL, VERSION, API_VERSION, KIND, OPERATIONAL, VM_GROUP, VM_KINDS, VM_VERSION, type VMKind } from '../../api/constants';
import { QUERY_PROGRESS, SA_CLUSTER_VERSION, SA_GENERATION, SA_NAME, SA_NAMESPACE, workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { formatIssues, validateSpec } from '../../api/schema';
import type { TriggerConfig } from '../../trigger/config';
import { createLogger } from '../../trigger/log';
import type { SpecValidator } from '../../trigger/reconcile';
import { startTrigger, type TriggerHandle, type TriggerDeps } from '../../trigger/main';
import type { RolloutResult } from '../../workflows/state';
import type { Progress } from '../../workflows/state';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../harness/kube';
import { harnessTempDir, httpGet, waitFor } from '../harness/processes';
import { startTemporalDevEnv } from '../harness/temporal';

jest.setTimeout(120_000);

const CRD_FILE = path.resolve(__dirname, '..', '..', 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');
const NS = 'trigger-it';
const NS_IDLE = 'trigger-idle';
const NS_INVALID = 'trigger-invalid';
const T = 30_000; // per wait

interface Vmdc {
  metadata: { name: string; namespace: string; uid: string; generation: number; resourceVersion: string };
  spec: Record<string, unknown>;
  status?: VMDistributedClusterStatus;
}

const VERSION_NOW = 'v1.150.0-cluster';
const VERSION_OLD = 'v1.149.0-cluster';

/**
 * The spec of VMDistributedCluster `name`: its VM operator objects are named after it (see
 * vmObjects). The VMAgent has an overlay, so the rollout applies it and waits for it to be
 * operational first; zones in Declared order; short delays.
 */
function spec(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clusterVersion: VERSION_NOW,
    zones: ['a', 'b'].map((z) => ({ name: `az-${z}`, vmcluster: { name: `${name}-${z}` }, vmuser: { name: `${name}-${z}` } })),
    vmauth: { name },
    vmagent: { name, overrideSpec: { replicaCount: 1 } },
    strategy: { order: 'Declared', readDrainDelay: '1s', pollInterval: '500ms' },
    ...extra,
  };
}

let kube: KubeCluster | undefined;
let env: TestWorkflowEnvironment | undefined;
let worker: Worker | undefined;
let workerRun: Promise<void> | undefined;
let custom: k8s.CustomObjectsApi;
let vmCustom: k8s.CustomObjectsApi;
let core: k8s.CoreV1Api;
let client: Client;
let logDir: string;
const taskQueue = `trigger-it-${randomUUID()}`;
const triggers: TriggerHandle[] = [];
let main: TriggerHandle | undefined;

const mergePatch = () => k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

function config(namespaces: string[]): TriggerConfig {
  return {
    temporal: { address: 'unused:7233', namespace: 'default' },
    taskQueue,
    watchNamespaces: namespaces,
    metricsPort: 0,
    logLevel: 'debug',
    relistIntervalMs: 120_000,
    watchIdleTimeoutMs: 20_000,
  };
}

let triggerSeq = 0;
async function trigger(namespaces: string[] = [NS], extra: Partial<TriggerDeps> = {}): Promise<TriggerHandle> {
  const file = path.join(logDir, `trigger-${++triggerSeq}.log`);
  const log = createLogger('debug', (line) => fs.appendFileSync(file, line + '\n'));
  const t = await startTrigger(config(namespaces), {
    kubeConfig: kube!.kubeConfig,
    temporalClient: client,
    log,
    watchBackoff: { initialMs: 200, maxMs: 2000 },
    retryBackoff: { initialMs: 200, maxMs: 2000 },
    ...extra,
  });
  triggers.push(t);
  return t;
}

const logTail = () => {
  const files = fs.existsSync(logDir) ? fs.readdirSync(logDir).filter((f) => f.startsWith('trigger-')).sort() : [];
  const last = files[files.length - 1];
  return last ? fs.readFileSync(path.join(logDir, last), 'utf8').split('\n').slice(-40).join('\n') : '(no trigger log)';
};

async function create(name: string, s: Record<string, unknown>, namespace = NS): Promise<Vmdc> {
  return (await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    plural: PLURAL,
    namespace,
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: s },
  })) as Vmdc;
}
async function get(name: string, namespace = NS): Promise<Vmdc> {
  return (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name })) as Vmdc;
}
async function patchSpec(name: string, s: Record<string, unknown>, namespace = NS): Promise<Vmdc> {
  return (await custom.patchNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body: { spec: s } }, mergePatch())) as Vmdc;
}
async function patchStatus(name: string, status: Record<string, unknown>, namespace = NS): Promise<void> {
  await custom.patchNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body: { status } }, mergePatch());
}
async function remove(name: string, namespace = NS): Promise<void> {
  await custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name });
}

// ---- the VM operator's objects (no operator runs: tests set their status) ---------------------

/** An observedGeneration no test object reaches: "operational at whatever generation". */
const ANY_GENERATION = 1_000_000;

async function createVm(kind: VMKind, namespace: string, name: string, vmSpec: Record<string, unknown>, operational = false): Promise<void> {
  await vmCustom.createNamespacedCustomObject({
    group: VM_GROUP, version: VM_VERSION, plural: VM_KINDS[kind], namespace,
    body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind, metadata: { name }, spec: vmSpec },
  });
  if (operational) await setOperational(kind, namespace, name);
}

/** Plays the VM operator: the object reports operational (at any generation). */
async function setOperational(kind: VMKind, namespace: string, name: string): Promise<void> {
  await vmCustom.patchNamespacedCustomObjectStatus(
    { group: VM_GROUP, version: VM_VERSION, plural: VM_KINDS[kind], namespace, name, body: { status: { updateStatus: OPERATIONAL, observedGeneration: ANY_GENERATION } } },
    mergePatch(),
  );
}

/**
 * The objects spec(name) names: VMAgent `name`, VMAuth `name` and VMUsers `name-a`/`name-b`
 * routing reads to both zones' vmselect, VMClusters `name-a`/`name-b`. Routes are operational (so
 * leaving reads completes); the VMAgent and VMClusters are not, unless `upToDate`: then every
 * VMCluster already runs VERSION_NOW and is operational, so the rollout skips every zone.
 */
async function vmObjects(name: string, namespace = NS, opts: { upToDate?: boolean } = {}): Promise<void> {
  const vmselects = { crd: { kind: 'VMCluster/vmselect', objects: ['a', 'b'].map((z) => ({ name: `${name}-${z}`, namespace })) }, paths: ['/select/.*'] };
  await createVm('VMAgent', namespace, name, { remoteWrite: [] }, !!opts.upToDate);
  await createVm('VMAuth', namespace, name, { unauthorizedUserAccessSpec: { targetRefs: [vmselects] } }, true);
  for (const z of ['a', 'b']) {
    await createVm('VMUser', namespace, `${name}-${z}`, { targetRefs: [vmselects] }, true);
    await createVm('VMCluster', namespace, `${name}-${z}`, { clusterVersion: opts.upToDate ? VERSION_NOW : VERSION_OLD }, !!opts.upToDate);
  }
}

/** vmObjects + the VMDistributedCluster. */
async function createWithObjects(name: string, extra: Record<string, unknown> = {}, namespace = NS, opts: { upToDate?: boolean } = {}): Promise<Vmdc> {
  await vmObjects(name, namespace, opts);
  return create(name, spec(name, extra), namespace);
}

const idOf = (o: Vmdc, generation = o.metadata.generation) =>
  workflowIdFor({ namespace: o.metadata.namespace, name: o.metadata.name, uid: o.metadata.uid, generation });

/** Waits until the status names the workflow of `generation` and observed that generation. */
async function recorded(o: Vmdc, generation: number, namespace = NS): Promise<Vmdc> {
  const id = idOf(o, generation);
  return waitFor(
    async () => {
      const cur = await get(o.metadata.name, namespace);
      return cur.status?.observedGeneration === generation && cur.status.workflow?.id === id ? cur : undefined;
    },
    { timeoutMs: T, description: `status of ${o.metadata.name} to record ${id}`, diagnostics: logTail },
  );
}

async function progress(workflowId: string): Promise<Progress> {
  return client.workflow.getHandle(workflowId).query<Progress>(QUERY_PROGRESS);
}

/** Polls the workflow's progress until `ok` holds. */
async function progressUntil(workflowId: string, ok: (p: Progress) => boolean, description: string): Promise<Progress> {
  let last: Progress | undefined;
  return waitFor(
    async () => {
      last = await progress(workflowId);
      return ok(last) ? last : undefined;
    },
    { timeoutMs: T, description: `${workflowId}: ${description}`, diagnostics: () => `last progress: ${JSON.stringify(last)}\n${logTail()}` },
  );
}

async function result(workflowId: string): Promise<RolloutResult> {
  return client.workflow.getHandle(workflowId).result() as Promise<RolloutResult>;
}

/** Activity types the workflow is running right now (describe → pending activities). */
async function pendingActivities(workflowId: string): Promise<string[]> {
  const d = await client.workflow.getHandle(workflowId).describe();
  return (d.raw.pendingActivities ?? []).map((a) => a.activityType?.name ?? '?');
}

async function executionsWithId(workflowId: string): Promise<number> {
  let n = 0;
  for await (const _ of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) n++;
  return n;
}

async function workflowsOf(name: string, namespace = NS): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: `VmdcNamespace = '${namespace}' AND VmdcName = '${name}'` })) ids.push(wf.workflowId);
  return ids.sort();
}

async function statusName(workflowId: string): Promise<string> {
  return (await client.workflow.getHandle(workflowId).describe()).status.name;
}

async function events(name: string, namespace = NS): Promise<k8s.CoreV1Event[]> {
  return (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })).items;
}

beforeAll(async () => {
  logDir = harnessTempDir('trigger-it');
  kube = await startKube();
  custom = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
  vmCustom = custom;
  await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS, CRD_FILE]);
  for (const name of [NS, NS_IDLE, NS_INVALID]) await core.createNamespace({ body: { metadata: { name } } });
  env = await startTemporalDevEnv();
  client = env.client;
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') });
  const activities = createActivities({ kubeConfig: kube.kubeConfig, temporalClient: client });
  worker = await Worker.create({ connection: env.nativeConnection, namespace: env.namespace, taskQueue, workflowBundle, activities,
    // Heartbeats (and so cancellations) reach the server within a second, not 0.8 × heartbeatTimeout.
    maxHeartbeatThrottleInterval: '1s',
    // Rollouts are still waiting at the end: shutdown must not wait for them.
    shutdownForceTime: '10s',
  });
  workerRun = worker.run();
  main = await trigger();
  await main.synced;
}, 240_000);

afterAll(async () => {
  for (const t of triggers) await t.stop().catch(() => {});
  worker?.shutdown();
  await workerRun?.catch(() => {});
  await env?.teardown();
  await kube?.stop();
}, 120_000);

describe('trigger (real kube-apiserver + Temporal dev server)', () => {
  it('the generated CRD is accepted and Established', async () => {
    const crd = await kube!.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name: `${PLURAL}.${GROUP}` });
    const cond = (t: string) => crd.status?.conditions?.find((c) => c.type === t)?.status;
    expect(cond('Established')).toBe('True');
    expect(cond('NamesAccepted')).toBe('True');
    expect(crd.spec.names.shortNames).toContain('vmdc');
    expect(crd.spec.versions.find((v) => v.name === VERSION)?.subresources?.status).toBeDefined();
  });

  it('create → exactly one workflow with the expected id and search attributes, recorded in the status, with an Event', async () => {
    const o = await createWithObjects('c-create');
    const id = idOf(o, 1);
    expect(id).toMatch(new RegExp(`^vmdc/${NS}/c-create/g1-[0-9a-f]{8}$`));
    const cur = await recorded(o, 1);
    const desc = await client.workflow.getHandle(id).describe();
    expect(desc.type).toBe('rolloutWorkflow');
    expect(desc.taskQueue).toBe(taskQueue);
    expect(cur.status?.workflow?.runId).toBe(desc.runId);
    expect(desc.typedSearchAttributes.get(SA_NAMESPACE)).toBe(NS);
    expect(desc.typedSearchAttributes.get(SA_NAME)).toBe('c-create');
    expect(desc.typedSearchAttributes.get(SA_GENERATION)).toBe(1);
    expect(desc.typedSearchAttributes.get(SA_CLUSTER_VERSION)).toBe(VERSION_NOW);
    // The real rollout took over, applied the VMAgent overlay and waits for the VMAgent.
    const p = await progressUntil(id, (x) => x.currentStep === 'Preparing' && x.phase === 'Progressing', 'preparing');
    expect(p.order).toEqual(['az-a', 'az-b']);
    expect(p.paused).toBe(false);
    expect(p.zonesOutOfRotation).toEqual([]);
    await waitFor(async () => (await pendingActivities(id)).includes('waitOperational'), { timeoutMs: T, description: 'waiting for the VMAgent' });
    const agent = (await vmCustom.getNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, plural: VM_KINDS.VMAgent, namespace: NS, name: 'c-create' })) as { spec: Record<string, unknown> };
    expect(agent.spec).toEqual({ remoteWrite: [], replicaCount: 1 });
    // The workflow reports in the status; the trigger's fields stay.
    const reported = await waitFor(async () => {
      const c = await get('c-create');
      return c.status?.phase === 'Progressing' ? c : undefined;
    }, { timeoutMs: T, description: 'status written by the workflow' });
    expect(reported.status).toMatchObject({ observedGeneration: 1, workflow: { id, runId: desc.runId } });
    // visibility: exactly this one workflow for the object
    await waitFor(async () => JSON.stringify(await workflowsOf('c-create')) === JSON.stringify([id]), { timeoutMs: T, description: 'visibility to list exactly one workflow' });
    expect(await executionsWithId(id)).toBe(1);
    const ev = await waitFor(async () => (await events('c-create')).find((e) => e.reason === 'RolloutStarted'), { timeoutMs: T, description: 'RolloutStarted Event' });
    expect(ev.type).toBe('Normal');
    expect(ev.message).toContain(id);
    expect(ev.involvedObject.uid).toBe(o.metadata.uid);
  });

  it('edit spec → the new generation gets its own workflow, which waits until the old one ended Superseded', async () => {
    const o = await createWithObjects('c-edit');
    await recorded(o, 1);
    const g1 = idOf(o, 1);
    await progressUntil(g1, (p) => p.currentStep === 'Preparing', 'preparing');
    const edited = await patchSpec('c-edit', { clusterVersion: 'v1.151.0-cluster' });
    expect(edited.metadata.generation).toBe(2);
    await recorded(o, 2);
    const g2 = idOf(o, 2);
    expect((await client.workflow.getHandle(g2).describe()).typedSearchAttributes.get(SA_CLUSTER_VERSION)).toBe('v1.151.0-cluster');
    // The old one was told; it stops only at its next safe point (it waits for the VMAgent).
    await progressUntil(g1, (p) => p.supersededBy === 2, 'supersede received');
    expect(await statusName(g1)).toBe('RUNNING');
    // Never two acting: the new one sits in takeOver until the old one closed.
    await waitFor(async () => (await pendingActivities(g2)).join() === 'takeOverObject', { timeoutMs: T, description: 'g2 in takeOver', diagnostics: logTail });
    expect(await progress(g2)).toMatchObject({ phase: 'Pending', message: 'starting', zonesOutOfRotation: [] });
    expect((await progress(g2)).currentStep).toBeUndefined();
    // Play the operator: the VMAgent is operational → the old one reaches a safe point and ends.
    await setOperational('VMAgent', NS, 'c-edit');
    const old = await result(g1);
    expect(old.phase).toBe('Superseded');
    expect(old.message).toBe('superseded by generation 2');
    expect(old.zonesOutOfRotation).toEqual([]);
    expect(await statusName(g1)).toBe('COMPLETED');
    // Now the new one acts: the first zone leaves reads, is patched, and waits for its VMCluster.
    const p = await progressUntil(g2, (x) => x.currentZone === 'az-a' && x.currentStep === 'WaitingOperational', 'zone az-a waiting for its VMCluster');
    expect(p.zonesOutOfRotation).toEqual(['az-a']);
    const vmc = (await vmCustom.getNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, plural: VM_KINDS.VMCluster, namespace: NS, name: 'c-edit-a' })) as { spec: Record<string, unknown> };
    expect(vmc.spec.clusterVersion).toBe('v1.151.0-cluster');
    const st = await waitFor(async () => {
      const c = await get('c-edit');
      return c.status?.currentZone === 'az-a' && c.status.zonesOutOfRotation?.includes('az-a') ? c : undefined;
    }, { timeoutMs: T, description: 'status of generation 2 written by its workflow' });
    expect(st.status).toMatchObject({ observedGeneration: 2, workflow: { id: g2 }, phase: 'Progressing' });
    await waitFor(async () => (await workflowsOf('c-edit')).length === 2, { timeoutMs: T, description: 'two workflows (one per generation)' });
  });

  it('paused: true/false → the same workflow (generation adopted), paused at its next safe point, then resumed', async () => {
    const o = await createWithObjects('c-pause', { paused: false });
    await recorded(o, 1);
    const id = idOf(o, 1);
    await progressUntil(id, (p) => p.currentStep === 'Preparing', 'preparing');

    const g2 = await patchSpec('c-pause', { paused: true });
    expect(g2.metadata.generation).toBe(2);
    const adopted = await waitFor(async () => {
      const c = await get('c-pause');
      return c.status?.observedGeneration === 2 ? c : undefined;
    }, { timeoutMs: T, description: 'generation 2 observed', diagnostics: logTail });
    expect(adopted.status?.workflow?.id).toBe(id);
    // pause reached the workflow; it stops at the next safe point (after the VMAgent is operational)
    await progressUntil(id, (p) => p.pauseRequested, 'pause requested');
    await setOperational('VMAgent', NS, 'c-pause');
    const paused = await progressUntil(id, (p) => p.paused && p.phase === 'Paused', 'paused');
    expect(paused.currentZone).toBe('az-a');
    expect(paused.zonesOutOfRotation).toEqual([]);
    // The adopted workflow still reports (status.workflow names it), without moving observedGeneration back.
    const st = await waitFor(async () => {
      const c = await get('c-pause');
      return c.status?.phase === 'Paused' ? c : undefined;
    }, { timeoutMs: T, description: 'status Paused written by the adopted workflow' });
    expect(st.status).toMatchObject({ observedGeneration: 2, workflow: { id } });
    expect(st.status?.conditions?.find((c) => c.type === 'Paused')).toMatchObject({ status: 'True' });

    await patchSpec('c-pause', { paused: false });
    const resumed = await progressUntil(id, (p) => !p.paused && !p.pauseRequested && p.phase === 'Progressing', 'resumed');
    expect(resumed.currentZone).toBe('az-a');
    const after = await waitFor(async () => {
      const c = await get('c-pause');
      return c.status?.observedGeneration === 3 && c.status.phase === 'Progressing' ? c : undefined;
    }, { timeoutMs: T, description: 'generation 3 observed, Progressing' });
    expect(after.status?.workflow?.id).toBe(id);
    expect(after.status?.conditions?.find((c) => c.type === 'Paused')).toMatchObject({ status: 'False' });
    for (const g of [2, 3]) await expect(client.workflow.getHandle(idOf(o, g)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(await statusName(id)).toBe('RUNNING');
    await waitFor(async () => JSON.stringify(await workflowsOf('c-pause')) === JSON.stringify([id]), { timeoutMs: T, description: 'one workflow in visibility' });
  });

  it('paused flipped after the rollout Succeeded → observedGeneration recorded, no new rollout', async () => {
    const o = await createWithObjects('c-pause-done', {}, NS, { upToDate: true });
    await recorded(o, 1);
    const id = idOf(o, 1);
    const r = await result(id);
    expect(r.phase).toBe('Succeeded');
    expect(r.zones.map((z) => z.phase)).toEqual(['Skipped', 'Skipped']);
    await waitFor(async () => (await get('c-pause-done')).status?.phase === 'Succeeded', { timeoutMs: T, description: 'status Succeeded' });
    await patchSpec('c-pause-done', { paused: true });
    const cur = await waitFor(async () => {
      const c = await get('c-pause-done');
      return c.status?.observedGeneration === 2 ? c : undefined;
    }, { timeoutMs: T, description: 'generation 2 observed', diagnostics: logTail });
    expect(cur.status).toMatchObject({ phase: 'Succeeded', workflow: { id } });
    await main!.idle();
    await expect(client.workflow.getHandle(idOf(o, 2)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(await workflowsOf('c-pause-done')).toEqual([id]);
  });

  it('delete → its running workflow is cancelled', async () => {
    const o = await createWithObjects('c-del');
    await recorded(o, 1);
    await progressUntil(idOf(o, 1), (p) => p.currentStep === 'Preparing', 'preparing');
    await remove('c-del');
    await waitFor(async () => (await statusName(idOf(o, 1))) === 'CANCELLED', { timeoutMs: T, description: 'workflow cancelled', diagnostics: logTail });
  });

  it('invalid spec → Invalid status, Valid=False condition, Warning Event, no workflow; fixing it starts one', async () => {
    // Specs the zod schema rejects but the CRD may let through (defaults the CEL rules cannot see).
    // The first the API server accepts goes to the trigger with the real validator. When the CRD
    // catches them all, a trigger whose validator also rejects a marker clusterVersion is used, so
    // the trigger's handling of invalid specs is still exercised on the real API server.
    const candidates = [
      spec('c-invalid', { strategy: { zoneTimeout: '30s' } }), // <= queueDrainedFor's default 1m
      spec('c-invalid', { strategy: { pollInterval: '2m' } }), // > queueDrainedFor's default 1m
      spec('c-invalid', { zones: [{ name: 'az-a', vmcluster: { name: 'vm-a' } }, { name: 'az-a', vmcluster: { name: 'vm-b' } }] }),
    ];
    await vmObjects('c-invalid', NS_INVALID);
    let o: Vmdc | undefined;
    for (const c of candidates) {
      expect(validateSpec(c).success).toBe(false);
      try {
        o = await create('c-invalid', c, NS_INVALID);
        break;
      } catch {
        /* rejected by the API server itself: try the next */
      }
    }
    const MARKER = 'v0.0.0-rejected-by-test';
    const validator: SpecValidator = {
      validate: (raw) => {
        const v = validateSpec(raw);
        if (v.success && v.spec.clusterVersion === MARKER) return { success: false, issues: [{ path: 'spec.clusterVersion', message: 'rejected by the test validator' }] };
        return v;
      },
      format: formatIssues,
    };
    const t = await trigger([NS_INVALID], { validator });
    await t.synced;
    try {
      o ??= await create('c-invalid', spec('c-invalid', { clusterVersion: MARKER }), NS_INVALID);
      const cur = await waitFor(async () => {
        const c = await get('c-invalid', NS_INVALID);
        return c.status?.phase === 'Invalid' && c.status.observedGeneration === 1 ? c : undefined;
      }, { timeoutMs: T, description: 'Invalid status', diagnostics: logTail });
      const valid = cur.status?.conditions?.find((c) => c.type === 'Valid');
      expect(valid).toMatchObject({ status: 'False', reason: 'InvalidSpec', observedGeneration: 1 });
      expect(valid?.message).toMatch(/spec\./);
      expect(cur.status?.message).toBe(valid?.message);
      expect(cur.status?.workflow).toBeUndefined();
      const ev = await waitFor(async () => (await events('c-invalid', NS_INVALID)).find((e) => e.reason === 'InvalidSpec'), { timeoutMs: T, description: 'InvalidSpec Event' });
      expect(ev.type).toBe('Warning');
      expect(ev.message).toMatch(/spec\./);
      await expect(client.workflow.getHandle(idOf(o, 1)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

      await custom.replaceNamespacedCustomObject({
        group: GROUP, version: VERSION, plural: PLURAL, namespace: NS_INVALID, name: 'c-invalid',
        body: { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'c-invalid', resourceVersion: cur.metadata.resourceVersion }, spec: spec('c-invalid') },
      });
      const fixed = await recorded(o, 2, NS_INVALID);
      expect(fixed.status?.phase).not.toBe('Invalid');
      await progressUntil(idOf(o, 2), (p) => p.currentStep === 'Preparing', 'the fixed generation rolls out');
      // The workflow's status writes keep the trigger's Valid condition.
      await waitFor(async () => {
        const now = await get(o!.metadata.name, NS_INVALID);
        const types = (now.status?.conditions ?? []).map((c) => c.type);
        return types.includes('Progressing') && types.includes('Valid') ? now : undefined;
      }, { timeoutMs: 30_000, description: 'the workflow status keeps Valid next to its own conditions' });
      const after = await get(o.metadata.name, NS_INVALID);
      expect(after.status?.conditions?.find((c) => c.type === 'Valid')).toMatchObject({ status: 'True', observedGeneration: 2 });
      expect(await workflowsOf('c-invalid', NS_INVALID)).toEqual([idOf(o, 2)]);
    } finally {
      await t.stop();
    }
  });

  it('kill and restart the trigger mid-way → no duplicate workflow, no missed generation, no missed delete', async () => {
    // Before the stop: objects with workflows.
    const a = await createWithObjects('r-edit');
    const d = await createWithObjects('r-del');
    const lost = await createWithObjects('r-lost-status');
    const done = await createWithObjects('r-done', {}, NS, { upToDate: true });
    for (const o of [a, d, lost, done]) await recorded(o, 1);
    const lostRun = (await get('r-lost-status')).status!.workflow!.runId;
    expect((await result(idOf(done, 1))).phase).toBe('Succeeded');
    await waitFor(async () => (await get('r-done')).status?.phase === 'Succeeded', { timeoutMs: T, description: 'r-done Succeeded in the status' });
    const doneRun = (await get('r-done')).status!.workflow!.runId;
    await progressUntil(idOf(a, 1), (p) => p.currentStep === 'Preparing', 'r-edit g1 preparing');

    // Killed right after an object appears (it may or may not have handled it).
    await vmObjects('r-mid');
    const mid = await create('r-mid', spec('r-mid'));
    await main!.stop();

    // While no trigger runs: a new generation, a new object, a delete, status lost (as if the
    // trigger died between starting a workflow and recording it), also for a completed workflow.
    await patchSpec('r-edit', { clusterVersion: 'v1.151.0-cluster' });
    const b = await createWithObjects('r-new');
    await remove('r-del');
    await patchStatus('r-lost-status', { observedGeneration: null, workflow: null });
    await patchStatus('r-done', { observedGeneration: null, workflow: null });

    main = await trigger();
    await recorded(a, 2);
    await recorded(b, 1);
    await recorded(mid, 1);
    const l = await recorded(lost, 1);
    expect(l.status?.workflow?.runId).toBe(lostRun); // the same run, not a second one
    const dn = await recorded(done, 1);
    expect(dn.status?.workflow?.runId).toBe(doneRun); // a closed generation is not started again
    expect(await statusName(idOf(done, 1))).toBe('COMPLETED');
    await waitFor(async () => (await statusName(idOf(d, 1))) === 'CANCELLED', { timeoutMs: T, description: 'workflow of the object deleted while down cancelled', diagnostics: logTail });
    // r-edit: generation 2 waits in takeOver for generation 1, which ends Superseded once it can.
    await progressUntil(idOf(a, 1), (p) => p.supersededBy === 2, 'r-edit g1 told');
    await waitFor(async () => (await pendingActivities(idOf(a, 2))).join() === 'takeOverObject', { timeoutMs: T, description: 'r-edit g2 in takeOver' });
    await setOperational('VMAgent', NS, 'r-edit');
    expect((await result(idOf(a, 1))).phase).toBe('Superseded');
    await progressUntil(idOf(a, 2), (p) => p.currentZone === 'az-a', 'r-edit g2 acts');
    for (const o of [b, mid, lost]) await progressUntil(idOf(o, 1), (p) => p.currentStep === 'Preparing', `${o.metadata.name} preparing`);
    for (const id of [idOf(a, 1), idOf(a, 2), idOf(b, 1), idOf(mid, 1), idOf(lost, 1), idOf(done, 1)]) {
      await waitFor(async () => (await executionsWithId(id)) >= 1, { timeoutMs: T, description: `visibility of ${id}` });
      expect(await executionsWithId(id)).toBe(1);
    }
  });

  it('two trigger replicas → still one workflow per generation', async () => {
    const second = await trigger();
    await second.synced;
    try {
      const o = await createWithObjects('c-two');
      await recorded(o, 1);
      await Promise.all([main!.idle(), second.idle()]);
      await waitFor(async () => (await workflowsOf('c-two')).length >= 1, { timeoutMs: T, description: 'visibility' });
      expect(await workflowsOf('c-two')).toEqual([idOf(o, 1)]);
      expect(await executionsWithId(idOf(o, 1))).toBe(1);
    } finally {
      await second.stop();
    }
  });

  it('the watchdog recovers when the API server restarts, and counts restarts', async () => {
    const before = main!.watch.restarts;
    main!.watch.restartAll('test');
    expect(main!.watch.restarts).toBe(before + 1);
    await kube!.apiserver.restart();
    const o = await createWithObjects('c-after-apiserver-restart');
    await recorded(o, 1);
    expect(main!.watch.restarts).toBeGreaterThan(before + 1); // the outage made the informer fail: restarted with backoff
    const metrics = await httpGet(`http://127.0.0.1:${main!.metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/vmrollout_trigger_watch_restarts_total\{reason="test"\} 1/);
    expect(metrics.body).toMatch(/vmrollout_trigger_workflows_started_total\{result="started"\} [1-9]/);
    expect(metrics.body).toMatch(/vmrollout_trigger_events_total\{type="add"\} [1-9]/);
    expect(metrics.body).toMatch(/vmrollout_trigger_watch_restarts_total\{reason="error"\} [1-9]/);
    expect((await httpGet(`http://127.0.0.1:${main!.metricsPort}/healthz`)).status).toBe(200);
    const health = await waitFor(async () => {
      const h = await httpGet(`http://127.0.0.1:${main!.metricsPort}/readyz`);
      return h.status === 200 ? h : undefined;
    }, { timeoutMs: T, description: '/readyz 200' });
    expect(health.body).toContain('ok');
  }, 120_000);

  it('the watchdog restarts a watch that went silent (half-open connection) and catches up', async () => {
    // A TCP proxy in front of the API server that can freeze its open connections: no bytes, no
    // close — what a dead peer behind a NAT looks like. New connections still go through.
    const server = new URL(kube!.server);
    const pairs: Array<[net.Socket, net.Socket]> = [];
    const all: Array<[net.Socket, net.Socket]> = [];
    const proxy = net.createServer((down) => {
      const up = net.connect(Number(server.port), server.hostname);
      down.pipe(up);
      up.pipe(down);
      const close = () => {
        down.destroy();
        up.destroy();
      };
      down.on('error', close);
      up.on('error', close);
      pairs.push([down, up]);
      all.push([down, up]);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const freeze = () => {
      for (const [down, up] of pairs.splice(0)) {
        down.unpipe(up);
        up.unpipe(down);
        down.pause();
        up.pause();
      }
    };
    const kc = new k8s.KubeConfig();
    const base = kube!.kubeConfig;
    kc.loadFromOptions({
      clusters: base.getClusters().map((c) => ({ ...c, server: `https://127.0.0.1:${(proxy.address() as net.AddressInfo).port}` })),
      users: base.getUsers(),
      contexts: base.getContexts(),
      currentContext: base.getCurrentContext(),
    });
    const t = await startTrigger({ ...config([NS_IDLE]), watchIdleTimeoutMs: 3000 }, {
      kubeConfig: kc,
      temporalClient: client,
      serveMetrics: false,
      log: createLogger('debug', (line) => fs.appendFileSync(path.join(logDir, 'trigger-idle.log'), line + '\n')),
      watchBackoff: { initialMs: 200, maxMs: 2000 },
    });
    triggers.push(t);
    try {
      await t.synced;
      const a = await createWithObjects('c-idle-a', {}, NS_IDLE);
      await recorded(a, 1, NS_IDLE);
      freeze();
      const idleBefore = (await t.metrics.watchRestarts.get()).values.find((v) => v.labels.reason === 'idle')?.value ?? 0;
      const b = await createWithObjects('c-idle-b', {}, NS_IDLE);
      await recorded(b, 1, NS_IDLE);
      const idleAfter = (await t.metrics.watchRestarts.get()).values.find((v) => v.labels.reason === 'idle')?.value ?? 0;
      expect(idleAfter).toBeGreaterThan(idleBefore);
    } finally {
      await t.stop();
      for (const [down, up] of all) {
        down.destroy();
        up.destroy();
      }
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });
});
