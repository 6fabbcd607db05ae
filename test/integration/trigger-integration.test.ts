// The trigger against a real kube-apiserver + etcd and a real Temporal dev server, with a stand-in
// `rolloutWorkflow` (test/fixtures/workflows/rollout-standin.ts) that records what it receives.
// Every assertion polls real state (the API server, Temporal); nothing sleeps as a stand-in.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { GROUP, PLURAL, VERSION, API_VERSION, KIND } from '../../api/constants';
import { SA_CLUSTER_VERSION, SA_GENERATION, SA_NAME, SA_NAMESPACE, workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { formatIssues, validateSpec } from '../../api/schema';
import type { TriggerConfig } from '../../trigger/config';
import { createLogger } from '../../trigger/log';
import type { SpecValidator } from '../../trigger/reconcile';
import { startTrigger, type TriggerHandle, type TriggerDeps } from '../../trigger/main';
import { installCRDs, startKube, type KubeCluster } from '../harness/kube';
import { harnessTempDir, httpGet, waitFor } from '../harness/processes';
import { startTemporalDevEnv } from '../harness/temporal';
import type { StandinState } from '../fixtures/workflows/rollout-standin';

jest.setTimeout(120_000);

const CRD_FILE = path.resolve(__dirname, '..', '..', 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');
const NS = 'trigger-it';
const NS_ADOPT = 'trigger-adopt';
const NS_IDLE = 'trigger-idle';
const NS_INVALID = 'trigger-invalid';
const T = 30_000; // per wait

interface Vmdc {
  metadata: { name: string; namespace: string; uid: string; generation: number; resourceVersion: string };
  spec: Record<string, unknown>;
  status?: VMDistributedClusterStatus;
}

function spec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clusterVersion: 'v1.150.0-cluster',
    zones: [
      { name: 'az-a', vmcluster: { name: 'vm-az-a' } },
      { name: 'az-b', vmcluster: { name: 'vm-az-b' } },
    ],
    vmauth: { name: 'vm-global' },
    vmagent: { name: 'vm-global' },
    ...extra,
  };
}

let kube: KubeCluster | undefined;
let env: TestWorkflowEnvironment | undefined;
let worker: Worker | undefined;
let workerRun: Promise<void> | undefined;
let custom: k8s.CustomObjectsApi;
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

async function standin(workflowId: string): Promise<StandinState> {
  return client.workflow.getHandle(workflowId).query<StandinState>('standin');
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
  await installCRDs(kube.kubeConfig, CRD_FILE);
  for (const name of [NS, NS_ADOPT, NS_IDLE, NS_INVALID]) await core.createNamespace({ body: { metadata: { name } } });
  env = await startTemporalDevEnv();
  client = env.client;
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../fixtures/workflows/rollout-standin'), logger: new DefaultLogger('WARN') });
  worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle });
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
}, 60_000);

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
    const o = await create('c-create', spec());
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
    expect(desc.typedSearchAttributes.get(SA_CLUSTER_VERSION)).toBe('v1.150.0-cluster');
    const st = await standin(id);
    expect(st.input.object).toEqual({ namespace: NS, name: 'c-create', uid: o.metadata.uid, generation: 1 });
    expect(st.input.previousWorkflowIds).toEqual([]);
    expect(st.input.spec.zones.map((z) => z.name)).toEqual(['az-a', 'az-b']);
    // visibility: exactly this one workflow for the object
    await waitFor(async () => JSON.stringify(await workflowsOf('c-create')) === JSON.stringify([id]), { timeoutMs: T, description: 'visibility to list exactly one workflow' });
    expect(await executionsWithId(id)).toBe(1);
    const ev = await waitFor(async () => (await events('c-create')).find((e) => e.reason === 'RolloutStarted'), { timeoutMs: T, description: 'RolloutStarted Event' });
    expect(ev.type).toBe('Normal');
    expect(ev.message).toContain(id);
    expect(ev.involvedObject.uid).toBe(o.metadata.uid);
  });

  it('edit spec → the new generation gets its own workflow; the old one is superseded', async () => {
    const o = await create('c-edit', spec());
    await recorded(o, 1);
    const edited = await patchSpec('c-edit', { clusterVersion: 'v1.151.0-cluster' });
    expect(edited.metadata.generation).toBe(2);
    await recorded(o, 2);
    const oldResult = (await client.workflow.getHandle(idOf(o, 1)).result()) as StandinState;
    expect(oldResult.outcome).toBe('superseded');
    expect(oldResult.signals).toContainEqual({ name: 'supersede', arg: { generation: 2 } });
    const st = await standin(idOf(o, 2));
    expect(st.input.previousWorkflowIds).toEqual([idOf(o, 1)]);
    expect(st.input.spec.clusterVersion).toBe('v1.151.0-cluster');
    expect((await client.workflow.getHandle(idOf(o, 2)).describe()).typedSearchAttributes.get(SA_CLUSTER_VERSION)).toBe('v1.151.0-cluster');
    await waitFor(async () => (await workflowsOf('c-edit')).length === 2, { timeoutMs: T, description: 'two workflows (one per generation)' });
  });

  it('paused: true/false → each generation its own workflow; the paused one receives pause', async () => {
    const o = await create('c-pause', spec({ paused: false }));
    await recorded(o, 1);
    await patchSpec('c-pause', { paused: true });
    await recorded(o, 2);
    const g2 = idOf(o, 2);
    await waitFor(async () => (await standin(g2)).signals.some((s) => s.name === 'pause'), { timeoutMs: T, description: 'pause signal', diagnostics: logTail });
    expect((await standin(g2)).input.spec.paused).toBe(true);
    expect(((await client.workflow.getHandle(idOf(o, 1)).result()) as StandinState).outcome).toBe('superseded');
    await patchSpec('c-pause', { paused: false });
    await recorded(o, 3);
    expect((await standin(idOf(o, 3))).input.spec.paused).toBe(false);
    expect(((await client.workflow.getHandle(g2).result()) as StandinState).signals.map((s) => s.name)).toEqual(['pause', 'supersede']);
  });

  it('paused: true/false with paused-only adoption → the running workflow receives pause, then resume', async () => {
    const t = await trigger([NS_ADOPT], { adoptPausedOnlyChanges: true });
    await t.synced;
    try {
      const o = await create('c-adopt', spec(), NS_ADOPT);
      const cur = await recorded(o, 1, NS_ADOPT);
      const id = cur.status!.workflow!.id;
      await patchSpec('c-adopt', { paused: true }, NS_ADOPT);
      await waitFor(async () => (await standin(id)).signals.map((s) => s.name).join() === 'pause', { timeoutMs: T, description: 'pause', diagnostics: logTail });
      await waitFor(async () => (await get('c-adopt', NS_ADOPT)).status?.observedGeneration === 2, { timeoutMs: T, description: 'generation 2 observed' });
      await patchSpec('c-adopt', { paused: false }, NS_ADOPT);
      await waitFor(async () => (await standin(id)).signals.map((s) => s.name).join() === 'pause,resume', { timeoutMs: T, description: 'resume', diagnostics: logTail });
      const after = await waitFor(async () => {
        const c = await get('c-adopt', NS_ADOPT);
        return c.status?.observedGeneration === 3 ? c : undefined;
      }, { timeoutMs: T, description: 'generation 3 observed' });
      expect(after.status?.workflow?.id).toBe(id);
      for (const g of [2, 3]) await expect(client.workflow.getHandle(idOf(o, g)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    } finally {
      await t.stop();
    }
  });

  it('delete → its running workflow is cancelled', async () => {
    const o = await create('c-del', spec());
    await recorded(o, 1);
    await remove('c-del');
    await waitFor(async () => (await statusName(idOf(o, 1))) === 'CANCELLED', { timeoutMs: T, description: 'workflow cancelled', diagnostics: logTail });
  });

  it('invalid spec → Invalid status, Valid=False condition, Warning Event, no workflow; fixing it starts one', async () => {
    // Specs the zod schema rejects but the CRD may let through (defaults the CEL rules cannot see).
    // The first the API server accepts goes to the trigger with the real validator. When the CRD
    // catches them all, a trigger whose validator also rejects a marker clusterVersion is used, so
    // the trigger's handling of invalid specs is still exercised on the real API server.
    const candidates = [
      spec({ strategy: { zoneTimeout: '30s' } }), // <= queueDrainedFor's default 1m
      spec({ strategy: { pollInterval: '2m' } }), // > queueDrainedFor's default 1m
      spec({ zones: [{ name: 'az-a', vmcluster: { name: 'vm-a' } }, { name: 'az-a', vmcluster: { name: 'vm-b' } }] }),
    ];
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
      o ??= await create('c-invalid', spec({ clusterVersion: MARKER }), NS_INVALID);
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
        body: { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'c-invalid', resourceVersion: cur.metadata.resourceVersion }, spec: spec() },
      });
      const fixed = await recorded(o, 2, NS_INVALID);
      expect(fixed.status?.phase).not.toBe('Invalid');
      expect(fixed.status?.conditions?.find((c) => c.type === 'Valid')).toMatchObject({ status: 'True', observedGeneration: 2 });
      expect((await standin(idOf(o, 2))).input.previousWorkflowIds).toEqual([]);
    } finally {
      await t.stop();
    }
  });

  it('kill and restart the trigger mid-way → no duplicate workflow, no missed generation, no missed delete', async () => {
    // Before the stop: objects with workflows.
    const a = await create('r-edit', spec());
    const d = await create('r-del', spec());
    const lost = await create('r-lost-status', spec());
    const done = await create('r-done', spec());
    for (const o of [a, d, lost, done]) await recorded(o, 1);
    const lostRun = (await get('r-lost-status')).status!.workflow!.runId;
    await client.workflow.getHandle(idOf(done, 1)).signal('finish');
    await waitFor(async () => (await statusName(idOf(done, 1))) === 'COMPLETED', { timeoutMs: T, description: 'r-done completed' });
    const doneRun = (await get('r-done')).status!.workflow!.runId;

    // Killed right after an object appears (it may or may not have handled it).
    const mid = await create('r-mid', spec());
    await main!.stop();

    // While no trigger runs: a new generation, a new object, a delete, status lost (as if the
    // trigger died between starting a workflow and recording it), also for a completed workflow.
    await patchSpec('r-edit', { clusterVersion: 'v1.151.0-cluster' });
    const b = await create('r-new', spec());
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
    expect(((await client.workflow.getHandle(idOf(a, 1)).result()) as StandinState).outcome).toBe('superseded');
    for (const id of [idOf(a, 1), idOf(a, 2), idOf(b, 1), idOf(mid, 1), idOf(lost, 1), idOf(done, 1)]) {
      await waitFor(async () => (await executionsWithId(id)) >= 1, { timeoutMs: T, description: `visibility of ${id}` });
      expect(await executionsWithId(id)).toBe(1);
    }
  });

  it('two trigger replicas → still one workflow per generation', async () => {
    const second = await trigger();
    await second.synced;
    try {
      const o = await create('c-two', spec());
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
    const o = await create('c-after-apiserver-restart', spec());
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
      const a = await create('c-idle-a', spec(), NS_IDLE);
      await recorded(a, 1, NS_IDLE);
      freeze();
      const idleBefore = (await t.metrics.watchRestarts.get()).values.find((v) => v.labels.reason === 'idle')?.value ?? 0;
      const b = await create('c-idle-b', spec(), NS_IDLE);
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
