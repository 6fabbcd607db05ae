// The environment of the trigger's integration suites (trigger-integration, trigger-finalizer): a
// real kube-apiserver + etcd with the VM operator's CRDs and the generated VMDistributedCluster CRD,
// a real Temporal dev server, a real worker running the real `rolloutWorkflow` and activities on
// that API server, and triggers started in-process on both. No VM operator runs: the VM objects
// exist (test CRDs) and a test plays the operator by setting their status. Every helper polls real
// state (the API server, Temporal); nothing sleeps as a stand-in.
//
// The vmagent is real: one vmagent process remote-writes to a real VictoriaMetrics single node,
// one URL per zone (two write paths of that one VictoriaMetrics, so the zones' URLs differ). Every
// VMAgent object lists those URLs in spec.remoteWrite, every spec() zone names its own as
// remoteWriteURL, and every VMAgent gets an EndpointSlice `vmagent-<name>` whose pod (its own
// TEST-NET-2 address, port 8429 named `http`, test/infra/harness/pod-network.ts) is that vmagent: the
// worker's activities read the real /metrics page through podNetworkFetch. So the check before a
// zone leaves reads (the carrying zones operational, their vmagent backlog empty) and the queue wait
// run against real vmagent pages.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { GROUP, PLURAL, VERSION, API_VERSION, KIND, OPERATIONAL, VM_GROUP, VM_KINDS, VM_VERSION, type VMKind } from '../../api/constants';
import { QUERY_PROGRESS, workflowIdFor, type Progress, type RolloutResult } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { STRICT_TRUST_POLICY } from '../../api/trust-policy';
import type { TriggerConfig } from '../../trigger/config';
import { createLogger } from '../../trigger/log';
import { startTrigger, type TriggerHandle, type TriggerDeps } from '../../trigger/main';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { allocatePodIP, podNetworkFetch, registerPodPort } from '../infra/harness/pod-network';
import { publishServicePods } from '../infra/harness/service-pods';
import { vmagentWorkloads } from '../../activities/vmagent/service';
import { harnessTempDir, waitFor } from '../infra/harness/processes';
import { startTemporalDevEnv } from '../infra/harness/temporal';
import { startVictoriaMetrics, startVmagent, type VmagentHandle, type VmProcessHandle } from '../infra/harness/vm';
import { workflowBundleOptions } from '../../process/workflow-bundle';

export const CRD_FILE = path.resolve(__dirname, '..', '..', 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');
/** Per wait. */
export const T = 30_000;
export const VERSION_NOW = 'v1.150.0-cluster';
export const VERSION_OLD = 'v1.149.0-cluster';
/** An observedGeneration no test object reaches: "operational at whatever generation". */
export const ANY_GENERATION = 1_000_000;
/** The port vmagent pods listen on (its `http` port). */
export const VMAGENT_POD_PORT = 8429;
export const ZONES = ['a', 'b'] as const;
export type Zone = (typeof ZONES)[number];

export interface Vmdc {
  metadata: { name: string; namespace: string; uid: string; generation: number; resourceVersion: string; finalizers?: string[]; deletionTimestamp?: string };
  spec: Record<string, unknown>;
  status?: VMDistributedClusterStatus;
}

export const mergePatch = () => k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/**
 * The spec of VMDistributedCluster `name`: its VM operator objects are named after it (see
 * vmObjects); zone `az-<z>` remote-writes to `remoteWriteURLs[z]`. The VMAgent has an overlay, so
 * the rollout applies it and waits for it to be operational first; zones in Declared order; short
 * delays (readDrainDelay 1s bounds the reads-drained wait, which finds no vmselect pod here).
 * Use the environment's `spec` (bound to its VictoriaMetrics).
 */
export function specWith(remoteWriteURLs: Record<Zone, string>, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clusterVersion: VERSION_NOW,
    zones: ZONES.map((z) => ({ name: `az-${z}`, vmcluster: { name: `${name}-${z}` }, vmuser: { name: `${name}-${z}` }, remoteWriteURL: remoteWriteURLs[z] })),
    vmauth: { name },
    vmagent: { name, overrideSpec: { replicaCount: 1 } },
    strategy: { order: 'Declared', readDrainDelay: '1s', pollInterval: '500ms' },
    ...extra,
  };
}

export interface TriggerEnvOptions {
  /** Log directory prefix and task queue prefix. */
  name: string;
  /** Created at setup. */
  namespaces: string[];
  /** The namespace of every helper unless told otherwise. */
  namespace: string;
}

export type TriggerEnv = ReturnType<typeof triggerEnv>;

/**
 * The environment, with helpers bound to it. Call `setup()` in beforeAll and `teardown()` in
 * afterAll; the helpers are plain functions (destructure them at module level).
 */
export function triggerEnv(opts: TriggerEnvOptions) {
  const NS = opts.namespace;
  const taskQueue = `${opts.name}-${randomUUID()}`;
  const triggers: TriggerHandle[] = [];
  let kube: KubeCluster | undefined;
  let env: TestWorkflowEnvironment | undefined;
  let worker: Worker | undefined;
  let workerRun: Promise<void> | undefined;
  let custom!: k8s.CustomObjectsApi;
  let core!: k8s.CoreV1Api;
  let vm: VmProcessHandle | undefined;
  let agent: VmagentHandle | undefined;
  let urls: Record<Zone, string> | undefined;
  const unregister: Array<() => void> = [];
  let client!: Client;
  let logDir = '';
  let triggerSeq = 0;

  async function setup(): Promise<void> {
    logDir = harnessTempDir(opts.name);
    [kube, vm] = await Promise.all([startKube(), startVictoriaMetrics({ name: `${opts.name}-vm` })]);
    // One VictoriaMetrics, two of its write paths: a distinct remoteWriteURL (and vmagent queue) per zone.
    urls = { a: `${vm.url}/api/v1/write`, b: `${vm.url}/prometheus/api/v1/write` };
    agent = await startVmagent({ name: `${opts.name}-vmagent`, remoteWriteUrls: ZONES.map((z) => urls![z]), extraArgs: ['-remoteWrite.flushInterval=100ms'] });
    custom = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS, CRD_FILE]);
    for (const name of opts.namespaces) await core.createNamespace({ body: { metadata: { name } } });
    env = await startTemporalDevEnv();
    client = env.client;
    const workflowBundle = await bundleWorkflowCode({ ...workflowBundleOptions(), logger: new DefaultLogger('WARN') });
    const activities = createActivities({
      kubeConfig: kube.kubeConfig,
      temporalClient: client,
      // The vmagent pods' TEST-NET-2 addresses map to the real vmagent on loopback.
      fetch: podNetworkFetch,
      scrapeTimeoutMs: 2_000,
      // TEST-ONLY, and acceptable here only: these suites test the trigger (and the workflow it
      // starts), not the read switch. This environment has no vmauth pods and no operator-rendered
      // Secret vmauth-config-<name>, so the switch is believed from the VMAuth/VMUser statuses the
      // tests set. The pod confirmation itself is tested where real vmauth pods run (e2e).
      confirmSwitchInPods: false,
    });
    worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace,
      taskQueue,
      workflowBundle,
      activities,
      // Heartbeats (and so cancellations) reach the server within a second, not 0.8 × heartbeatTimeout.
      maxHeartbeatThrottleInterval: '1s',
      // Rollouts are still waiting at the end: shutdown must not wait for them.
      shutdownForceTime: '10s',
    });
    workerRun = worker.run();
  }

  async function teardown(): Promise<void> {
    for (const t of triggers) await t.stop().catch(() => {});
    worker?.shutdown();
    await workerRun?.catch(() => {});
    await env?.teardown();
    await kube?.stop();
    for (const u of unregister.splice(0)) u();
    await agent?.stop();
    await vm?.stop();
  }

  /** The zones' remoteWriteURLs (two write paths of the environment's VictoriaMetrics). */
  function remoteWriteURLs(): Record<Zone, string> {
    if (!urls) throw new Error('trigger-env: setup() first');
    return urls;
  }

  /** specWith the environment's remoteWriteURLs. */
  const spec = (name: string, extra: Record<string, unknown> = {}) => specWith(remoteWriteURLs(), name, extra);

  function config(namespaces: string[], over: Partial<TriggerConfig> = {}): TriggerConfig {
    return {
      temporal: { address: 'unused:7233', namespace: 'default' },
      taskQueue,
      watchNamespaces: namespaces,
      policy: { ...STRICT_TRUST_POLICY, createNamespaces: namespaces },
      metricsPort: 0,
      logLevel: 'debug',
      relistIntervalMs: 120_000,
      watchIdleTimeoutMs: 20_000,
      ...over,
    };
  }

  /** A trigger in this process on the environment's API server and Temporal, logging to a file; stopped at teardown. */
  async function trigger(namespaces: string[] = [NS], extra: Partial<TriggerDeps> = {}, configOver: Partial<TriggerConfig> = {}): Promise<TriggerHandle> {
    const file = path.join(logDir, `trigger-${++triggerSeq}.log`);
    const log = createLogger('debug', (line) => fs.appendFileSync(file, line + '\n'));
    const t = await startTrigger(config(namespaces, configOver), {
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

  /** Registers a trigger started elsewhere, so that teardown stops it. */
  const adopt = (t: TriggerHandle): TriggerHandle => (triggers.push(t), t);

  const logTail = (): string => {
    const files = fs.existsSync(logDir)
      ? fs
          .readdirSync(logDir)
          .filter((f) => f.startsWith('trigger-'))
          .sort()
      : [];
    const last = files[files.length - 1];
    return last ? fs.readFileSync(path.join(logDir, last), 'utf8').split('\n').slice(-40).join('\n') : '(no trigger log)';
  };

  // ---- VMDistributedClusters ----------------------------------------------------------------

  async function create(name: string, s: Record<string, unknown>, namespace = NS, metadata: Record<string, unknown> = {}): Promise<Vmdc> {
    return (await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      namespace,
      body: { apiVersion: API_VERSION, kind: KIND, metadata: { ...metadata, name }, spec: s },
    })) as Vmdc;
  }
  async function get(name: string, namespace = NS): Promise<Vmdc> {
    return (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name })) as Vmdc;
  }
  /** The object, or undefined once it is gone. */
  async function find(name: string, namespace = NS): Promise<Vmdc | undefined> {
    try {
      return await get(name, namespace);
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }
  async function patchSpec(name: string, s: Record<string, unknown>, namespace = NS): Promise<Vmdc> {
    return (await custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body: { spec: s } },
      mergePatch(),
    )) as Vmdc;
  }
  async function patchMetadata(name: string, metadata: Record<string, unknown>, namespace = NS): Promise<Vmdc> {
    return (await custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body: { metadata } },
      mergePatch(),
    )) as Vmdc;
  }
  async function patchStatus(name: string, status: Record<string, unknown>, namespace = NS): Promise<void> {
    await custom.patchNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body: { status } }, mergePatch());
  }
  async function remove(name: string, namespace = NS): Promise<void> {
    await custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name });
  }
  /** Waits until the object is gone from the API server. */
  async function gone(name: string, namespace = NS, timeoutMs = T): Promise<void> {
    let last: Vmdc | undefined;
    await waitFor(
      async () => {
        last = await find(name, namespace);
        return last === undefined;
      },
      {
        timeoutMs,
        description: `${namespace}/${name} to be gone`,
        diagnostics: () => `last seen: ${JSON.stringify(last?.metadata)} ${JSON.stringify(last?.status)}\n${logTail()}`,
      },
    );
  }

  // ---- the VM operator's objects (no operator runs: tests set their status) -------------------

  async function createVm(kind: VMKind, namespace: string, name: string, vmSpec: Record<string, unknown>, operational = false): Promise<void> {
    await custom.createNamespacedCustomObject({
      group: VM_GROUP,
      version: VM_VERSION,
      plural: VM_KINDS[kind],
      namespace,
      body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind, metadata: { name }, spec: vmSpec },
    });
    if (operational) await setOperational(kind, namespace, name);
  }

  async function getVm(
    kind: VMKind,
    namespace: string,
    name: string,
  ): Promise<{ metadata: k8s.V1ObjectMeta; spec: Record<string, unknown>; status?: Record<string, unknown> }> {
    return (await custom.getNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, plural: VM_KINDS[kind], namespace, name })) as never;
  }

  /** Plays the VM operator: the object reports operational (at any generation). */
  async function setOperational(kind: VMKind, namespace: string, name: string): Promise<void> {
    await setVmStatus(kind, namespace, name, { updateStatus: OPERATIONAL, observedGeneration: ANY_GENERATION });
  }

  /**
   * Plays the VM operator: the object reports operational at its current generation (what the
   * operator reports once it applied it); a later spec change is not operational until told.
   */
  async function setOperationalNow(kind: VMKind, namespace: string, name: string): Promise<void> {
    const generation = (await getVm(kind, namespace, name)).metadata.generation;
    await setVmStatus(kind, namespace, name, { updateStatus: OPERATIONAL, observedGeneration: generation });
  }

  /**
   * The pod of VMAgent `name`: its Service, Deployment → ReplicaSet → Pod `vmagent-<name>-0` at its
   * own TEST-NET-2 address, and the EndpointSlice listing it ready on port 8429 (`http`), as the
   * cluster has them (../infra/harness/service-pods.ts); the address is mapped to the environment's real vmagent.
   */
  async function vmagentPod(name: string, namespace = NS): Promise<void> {
    const podIP = allocatePodIP();
    unregister.push(registerPodPort(podIP, VMAGENT_POD_PORT, agent!.port));
    await publishServicePods(kube!.kubeConfig, {
      namespace,
      component: 'vmagent',
      instance: name,
      port: VMAGENT_POD_PORT,
      workload: vmagentWorkloads(name)[0]!,
      pods: [{ name: `vmagent-${name}-0`, ip: podIP }],
      sliceName: `vmagent-${name}-x1`,
    });
  }

  async function setVmStatus(kind: VMKind, namespace: string, name: string, status: Record<string, unknown>): Promise<void> {
    await custom.patchNamespacedCustomObjectStatus(
      { group: VM_GROUP, version: VM_VERSION, plural: VM_KINDS[kind], namespace, name, body: { status } },
      mergePatch(),
    );
  }

  /**
   * The objects spec(name) names: VMAgent `name` (remote-writing to both zones' URLs, its pod the
   * real vmagent: vmagentPod), VMAuth `name` and VMUsers `name-a`/`name-b` routing reads to both
   * zones' vmselect, VMClusters `name-a`/`name-b`. Routes are operational (so leaving reads
   * completes). The VMAgent is not operational (a rollout waits for it in Preparing until a test
   * sets it), unless `upToDate`. The VMClusters run VERSION_OLD and are operational at their
   * current generation: a zone that stays in reads can carry them; a zone the rollout patches is not
   * operational at its new generation until a test says so (it holds at WaitingOperational). With
   * `upToDate` every VMCluster already runs VERSION_NOW and is operational, so the rollout skips every zone.
   */
  async function vmObjects(name: string, namespace = NS, o: { upToDate?: boolean } = {}): Promise<void> {
    // crd.name/crd.namespace "": the operator's CRD requires both keys (test/fixtures/crds/vm-operator-crds.yaml).
    const vmselects = {
      crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: ZONES.map((z) => ({ name: `${name}-${z}`, namespace })) },
      paths: ['/select/.*'],
    };
    const rw = remoteWriteURLs();
    await createVm('VMAgent', namespace, name, { remoteWrite: ZONES.map((z) => ({ url: rw[z] })) }, !!o.upToDate);
    await vmagentPod(name, namespace);
    await createVm('VMAuth', namespace, name, { unauthorizedUserAccessSpec: { targetRefs: [vmselects] } }, true);
    for (const z of ZONES) {
      await createVm('VMUser', namespace, `${name}-${z}`, { targetRefs: [vmselects] }, true);
      await createVm('VMCluster', namespace, `${name}-${z}`, { clusterVersion: o.upToDate ? VERSION_NOW : VERSION_OLD }, !!o.upToDate);
      if (!o.upToDate) await setOperationalNow('VMCluster', namespace, `${name}-${z}`);
    }
  }

  /** vmObjects + the VMDistributedCluster. */
  async function createWithObjects(name: string, extra: Record<string, unknown> = {}, namespace = NS, o: { upToDate?: boolean } = {}): Promise<Vmdc> {
    await vmObjects(name, namespace, o);
    return create(name, spec(name, extra), namespace);
  }

  // ---- Temporal ---------------------------------------------------------------------------------

  const idOf = (o: Vmdc, generation = o.metadata.generation) =>
    workflowIdFor({ namespace: o.metadata.namespace, name: o.metadata.name, uid: o.metadata.uid, generation });

  /** Waits until the status names the workflow of `generation` and observed that generation. */
  async function recorded(o: Vmdc, generation: number, namespace = NS): Promise<Vmdc> {
    const wid = idOf(o, generation);
    return waitFor(
      async () => {
        const cur = await get(o.metadata.name, namespace);
        return cur.status?.observedGeneration === generation && cur.status.workflow?.id === wid ? cur : undefined;
      },
      { timeoutMs: T, description: `status of ${o.metadata.name} to record ${wid}`, diagnostics: logTail },
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

  /** The results of the completed activities of type `activityType` in the workflow's history, in order (JSON payloads). */
  async function activityResults(workflowId: string, activityType: string): Promise<unknown[]> {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const scheduled = new Set<string>();
    const results: unknown[] = [];
    for (const e of history.events ?? []) {
      const s = e.activityTaskScheduledEventAttributes;
      if (s?.activityType?.name === activityType) scheduled.add(String(e.eventId));
      const c = e.activityTaskCompletedEventAttributes;
      if (c && scheduled.has(String(c.scheduledEventId))) {
        const data = c.result?.payloads?.[0]?.data;
        results.push(data ? JSON.parse(Buffer.from(data).toString('utf8')) : undefined);
      }
    }
    return results;
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

  return {
    taskQueue,
    get kube(): KubeCluster {
      return kube!;
    },
    get client(): Client {
      return client;
    },
    get custom(): k8s.CustomObjectsApi {
      return custom;
    },
    get core(): k8s.CoreV1Api {
      return core;
    },
    get logDir(): string {
      return logDir;
    },
    /** The real vmagent every VMAgent's pod is. */
    get vmagent(): VmagentHandle {
      return agent!;
    },
    remoteWriteURLs,
    spec,
    setup,
    teardown,
    config,
    trigger,
    adopt,
    logTail,
    create,
    get,
    find,
    patchSpec,
    patchMetadata,
    patchStatus,
    remove,
    gone,
    createVm,
    getVm,
    setOperational,
    setOperationalNow,
    setVmStatus,
    vmagentPod,
    vmObjects,
    createWithObjects,
    idOf,
    recorded,
    progress,
    progressUntil,
    result,
    pendingActivities,
    activityResults,
    executionsWithId,
    workflowsOf,
    statusName,
    events,
  };
}
