// The trigger against a real kube-apiserver + etcd and a real Temporal dev server, with a real
// worker running the real `rolloutWorkflow` (workflows/) and the real activities (activities/) on
// the same API server (the environment: trigger-env.ts). The VM operator objects the specs name
// (VMAgent, VMAuth, VMUsers, VMClusters) exist (test CRDs), but no operator runs: a rollout sits
// waiting for its VMAgent or VMCluster to become operational until a test plays the operator and
// sets that status. Assertions use the workflow's `progress` query, Temporal visibility/describe
// and the CR status. Every assertion polls real state (the API server, Temporal); nothing sleeps
// as a stand-in. Deletion with zones out of read rotation (the finalizer): trigger-finalizer.test.ts.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { WorkflowNotFoundError } from '@temporalio/client';
import { GROUP, PLURAL, VERSION, API_VERSION, KIND, ROUTE_RECORDS_FINALIZER, VM_GROUP, VM_KINDS, VM_VERSION } from '../../api/constants';
import { SA_CLUSTER_VERSION, SA_GENERATION, SA_NAME, SA_NAMESPACE } from '../../api/rollout-contract';
import { formatIssues, validateSpec } from '../../api/validate';
import { createLogger } from '../../trigger/log';
import type { SpecValidator } from '../../trigger/decide';
import { startTrigger, type TriggerHandle } from '../../trigger/main';
import { httpGet, waitFor } from '../infra/harness/processes';
import { T, triggerEnv, VERSION_NOW, type Vmdc } from './trigger-env';

jest.setTimeout(120_000);

const NS = 'trigger-it';
const NS_IDLE = 'trigger-idle';
const NS_INVALID = 'trigger-invalid';

const E = triggerEnv({ name: 'trigger-it', namespaces: [NS, NS_IDLE, NS_INVALID], namespace: NS });
const {
  trigger,
  logTail,
  create,
  get,
  patchSpec,
  patchStatus,
  remove,
  gone,
  vmObjects,
  createWithObjects,
  setOperational,
  idOf,
  recorded,
  progress,
  progressUntil,
  result,
  pendingActivities,
  executionsWithId,
  workflowsOf,
  statusName,
  events,
  spec,
} = E;

let main: TriggerHandle | undefined;

beforeAll(async () => {
  await E.setup();
  main = await trigger();
  await main.synced;
}, 240_000);

afterAll(() => E.teardown(), 120_000);

describe('trigger (real kube-apiserver + Temporal dev server)', () => {
  it('the generated CRD is accepted and Established', async () => {
    const crd = await E.kube.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name: `${PLURAL}.${GROUP}` });
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
    const desc = await E.client.workflow.getHandle(id).describe();
    expect(desc.type).toBe('rolloutWorkflow');
    expect(desc.taskQueue).toBe(E.taskQueue);
    expect(cur.status?.workflow?.runId).toBe(desc.runId);
    expect(desc.typedSearchAttributes.get(SA_NAMESPACE)).toBe(NS);
    expect(desc.typedSearchAttributes.get(SA_NAME)).toBe('c-create');
    expect(desc.typedSearchAttributes.get(SA_GENERATION)).toBe(1);
    expect(desc.typedSearchAttributes.get(SA_CLUSTER_VERSION)).toBe(VERSION_NOW);
    // Its fairness key on the shared task queue: its namespace, the tenant (rolloutPriority).
    expect(desc.priority).toMatchObject({ fairnessKey: NS });
    // The real rollout took over, applied the VMAgent overlay and waits for the VMAgent.
    const p = await progressUntil(id, (x) => x.currentStep === 'Preparing' && x.phase === 'Progressing', 'preparing');
    expect(p.order).toEqual(['az-a', 'az-b']);
    expect(p.paused).toBe(false);
    expect(p.zonesOutOfRotation).toEqual([]);
    await waitFor(async () => (await pendingActivities(id)).includes('waitOperational'), { timeoutMs: T, description: 'waiting for the VMAgent' });
    const agent = (await E.custom.getNamespacedCustomObject({
      group: VM_GROUP,
      version: VM_VERSION,
      plural: VM_KINDS.VMAgent,
      namespace: NS,
      name: 'c-create',
    })) as { spec: Record<string, unknown> };
    const rw = E.remoteWriteURLs();
    expect(agent.spec).toEqual({ remoteWrite: [{ url: rw.a }, { url: rw.b }], replicaCount: 1 });
    // The workflow reports in the status; the trigger's fields stay.
    const reported = await waitFor(
      async () => {
        const c = await get('c-create');
        return c.status?.phase === 'Progressing' ? c : undefined;
      },
      { timeoutMs: T, description: 'status written by the workflow' },
    );
    expect(reported.status).toMatchObject({ observedGeneration: 1, workflow: { id, runId: desc.runId } });
    // visibility: exactly this one workflow for the object
    await waitFor(async () => JSON.stringify(await workflowsOf('c-create')) === JSON.stringify([id]), {
      timeoutMs: T,
      description: 'visibility to list exactly one workflow',
    });
    expect(await executionsWithId(id)).toBe(1);
    const ev = await waitFor(async () => (await events('c-create')).find((e) => e.reason === 'RolloutStarted'), {
      timeoutMs: T,
      description: 'RolloutStarted Event',
    });
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
    expect((await E.client.workflow.getHandle(g2).describe()).typedSearchAttributes.get(SA_CLUSTER_VERSION)).toBe('v1.151.0-cluster');
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
    // Before az-a left, az-b (which carries the reads) was operational with an empty backlog on the real vmagent's page.
    expect(await E.activityResults(g2, 'waitCarriersReady')).toEqual([
      { message: 'zones carrying the reads are operational with empty vmagent backlogs: az-b' },
    ]);
    const vmc = (await E.custom.getNamespacedCustomObject({
      group: VM_GROUP,
      version: VM_VERSION,
      plural: VM_KINDS.VMCluster,
      namespace: NS,
      name: 'c-edit-a',
    })) as { spec: Record<string, unknown> };
    expect(vmc.spec.clusterVersion).toBe('v1.151.0-cluster');
    const st = await waitFor(
      async () => {
        const c = await get('c-edit');
        return c.status?.currentZone === 'az-a' && c.status.zonesOutOfRotation?.includes('az-a') ? c : undefined;
      },
      { timeoutMs: T, description: 'status of generation 2 written by its workflow' },
    );
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
    const adopted = await waitFor(
      async () => {
        const c = await get('c-pause');
        return c.status?.observedGeneration === 2 ? c : undefined;
      },
      { timeoutMs: T, description: 'generation 2 observed', diagnostics: logTail },
    );
    expect(adopted.status?.workflow?.id).toBe(id);
    // pause reached the workflow; it stops at the next safe point (after the VMAgent is operational)
    await progressUntil(id, (p) => p.pauseRequested, 'pause requested');
    await setOperational('VMAgent', NS, 'c-pause');
    const paused = await progressUntil(id, (p) => p.paused && p.phase === 'Paused', 'paused');
    expect(paused.currentZone).toBe('az-a');
    expect(paused.zonesOutOfRotation).toEqual([]);
    // The adopted workflow still reports (status.workflow names it), without moving observedGeneration back.
    const st = await waitFor(
      async () => {
        const c = await get('c-pause');
        return c.status?.phase === 'Paused' ? c : undefined;
      },
      { timeoutMs: T, description: 'status Paused written by the adopted workflow' },
    );
    expect(st.status).toMatchObject({ observedGeneration: 2, workflow: { id } });
    expect(st.status?.conditions?.find((c) => c.type === 'Paused')).toMatchObject({ status: 'True' });

    await patchSpec('c-pause', { paused: false });
    const resumed = await progressUntil(id, (p) => !p.paused && !p.pauseRequested && p.phase === 'Progressing', 'resumed');
    expect(resumed.currentZone).toBe('az-a');
    const after = await waitFor(
      async () => {
        const c = await get('c-pause');
        return c.status?.observedGeneration === 3 && c.status.phase === 'Progressing' ? c : undefined;
      },
      { timeoutMs: T, description: 'generation 3 observed, Progressing' },
    );
    expect(after.status?.workflow?.id).toBe(id);
    expect(after.status?.conditions?.find((c) => c.type === 'Paused')).toMatchObject({ status: 'False' });
    for (const g of [2, 3]) await expect(E.client.workflow.getHandle(idOf(o, g)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(await statusName(id)).toBe('RUNNING');
    await waitFor(async () => JSON.stringify(await workflowsOf('c-pause')) === JSON.stringify([id]), {
      timeoutMs: T,
      description: 'one workflow in visibility',
    });
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
    const cur = await waitFor(
      async () => {
        const c = await get('c-pause-done');
        return c.status?.observedGeneration === 2 ? c : undefined;
      },
      { timeoutMs: T, description: 'generation 2 observed', diagnostics: logTail },
    );
    expect(cur.status).toMatchObject({ phase: 'Succeeded', workflow: { id } });
    await main!.idle();
    await expect(E.client.workflow.getHandle(idOf(o, 2)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(await workflowsOf('c-pause-done')).toEqual([id]);
  });

  it('delete → its running workflow is cancelled; no zone was out, so the finalizer goes and so does the object', async () => {
    const o = await createWithObjects('c-del');
    const cur = await recorded(o, 1);
    expect(cur.metadata.finalizers).toEqual([ROUTE_RECORDS_FINALIZER]);
    await progressUntil(idOf(o, 1), (p) => p.currentStep === 'Preparing', 'preparing');
    await remove('c-del');
    await waitFor(async () => (await statusName(idOf(o, 1))) === 'CANCELLED', { timeoutMs: T, description: 'workflow cancelled', diagnostics: logTail });
    // Promptly: the trigger awaits the cancelled workflow's close (this trigger's finalizer recheck
    // timer is the default 30 s, and the close changes nothing the watch sees).
    await gone('c-del', NS, 10_000);
  });

  it('invalid spec → Invalid status, Valid=False condition, Warning Event, no workflow; fixing it starts one', async () => {
    // Specs the zod schema rejects but the CRD may let through (defaults the CEL rules cannot see).
    // The first the API server accepts goes to the trigger with the real validator. When the CRD
    // catches them all, a trigger whose validator also rejects a marker clusterVersion is used, so
    // the trigger's handling of invalid specs is still exercised on the real API server.
    const candidates = [
      spec('c-invalid', { strategy: { zoneTimeout: '30s' } }), // <= queueDrainedFor's default 1m
      spec('c-invalid', { strategy: { pollInterval: '2m' } }), // > queueDrainedFor's default 1m
      spec('c-invalid', {
        zones: [
          { name: 'az-a', vmcluster: { name: 'vm-a' } },
          { name: 'az-a', vmcluster: { name: 'vm-b' } },
        ],
      }),
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
        if (v.success && v.spec.clusterVersion === MARKER)
          return { success: false, issues: [{ path: 'spec.clusterVersion', message: 'rejected by the test validator' }] };
        return v;
      },
      format: formatIssues,
    };
    const t = await trigger([NS_INVALID], { validator });
    await t.synced;
    try {
      o ??= await create('c-invalid', spec('c-invalid', { clusterVersion: MARKER }), NS_INVALID);
      const cur = await waitFor(
        async () => {
          const c = await get('c-invalid', NS_INVALID);
          return c.status?.phase === 'Invalid' && c.status.observedGeneration === 1 ? c : undefined;
        },
        { timeoutMs: T, description: 'Invalid status', diagnostics: logTail },
      );
      const valid = cur.status?.conditions?.find((c) => c.type === 'Valid');
      expect(valid).toMatchObject({ status: 'False', reason: 'InvalidSpec', observedGeneration: 1 });
      expect(valid?.message).toMatch(/spec\./);
      expect(cur.status?.message).toBe(valid?.message);
      expect(cur.status?.workflow).toBeUndefined();
      const ev = await waitFor(async () => (await events('c-invalid', NS_INVALID)).find((e) => e.reason === 'InvalidSpec'), {
        timeoutMs: T,
        description: 'InvalidSpec Event',
      });
      expect(ev.type).toBe('Warning');
      expect(ev.message).toMatch(/spec\./);
      await expect(E.client.workflow.getHandle(idOf(o, 1)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

      await E.custom.replaceNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace: NS_INVALID,
        name: 'c-invalid',
        body: { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'c-invalid', resourceVersion: cur.metadata.resourceVersion }, spec: spec('c-invalid') },
      });
      const fixed = await recorded(o, 2, NS_INVALID);
      expect(fixed.status?.phase).not.toBe('Invalid');
      await progressUntil(idOf(o, 2), (p) => p.currentStep === 'Preparing', 'the fixed generation rolls out');
      // The workflow's status writes keep the trigger's Valid condition.
      await waitFor(
        async () => {
          const now = await get(o!.metadata.name, NS_INVALID);
          const types = (now.status?.conditions ?? []).map((c) => c.type);
          return types.includes('Progressing') && types.includes('Valid') ? now : undefined;
        },
        { timeoutMs: 30_000, description: 'the workflow status keeps Valid next to its own conditions' },
      );
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
    expect((await get('r-del')).metadata).toMatchObject({ deletionTimestamp: expect.any(String), finalizers: [ROUTE_RECORDS_FINALIZER] });
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
    await waitFor(async () => (await statusName(idOf(d, 1))) === 'CANCELLED', {
      timeoutMs: T,
      description: 'workflow of the object deleted while down cancelled',
      diagnostics: logTail,
    });
    // Deleted while no trigger ran: the finalizer kept it until the restarted trigger let it go.
    await gone('r-del');
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
    await E.kube.apiserver.restart();
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
    const health = await waitFor(
      async () => {
        const h = await httpGet(`http://127.0.0.1:${main!.metricsPort}/readyz`);
        return h.status === 200 ? h : undefined;
      },
      { timeoutMs: T, description: '/readyz 200' },
    );
    expect(health.body).toContain('ok');
  }, 120_000);

  it('the watchdog restarts a watch that went silent (half-open connection) and catches up', async () => {
    // A TCP proxy in front of the API server that can freeze its open connections: no bytes, no
    // close — what a dead peer behind a NAT looks like. New connections still go through.
    const server = new URL(E.kube.server);
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
    const base = E.kube.kubeConfig;
    kc.loadFromOptions({
      clusters: base.getClusters().map((c) => ({ ...c, server: `https://127.0.0.1:${(proxy.address() as net.AddressInfo).port}` })),
      users: base.getUsers(),
      contexts: base.getContexts(),
      currentContext: base.getCurrentContext(),
    });
    const t = await startTrigger(
      { ...E.config([NS_IDLE]), watchIdleTimeoutMs: 3000 },
      {
        kubeConfig: kc,
        temporalClient: E.client,
        serveMetrics: false,
        log: createLogger('debug', (line) => fs.appendFileSync(path.join(E.logDir, 'trigger-idle.log'), line + '\n')),
        watchBackoff: { initialMs: 200, maxMs: 2000 },
      },
    );
    E.adopt(t);
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
