// The exercises of test/integration/rbac-minimal.test.ts: each runs one component's REAL code (the
// worker's activities from createActivities, the trigger from startTrigger) as that component's
// ServiceAccount, against objects an admin put in place, and returns the steps that failed (empty:
// every API request the step needs was allowed and the step did what it should). Fast on a refused
// request: an activity fails at once on a 403 (refusedForGood), a queue sample turns it into a
// problem (asserted), and the trigger, which retries refused requests, is failed as soon as its log
// shows a 403.
import { gzipSync, crc32 } from 'node:zlib';
import * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { stringify as toYaml } from 'yaml';
import { createActivities } from '../../activities';
import { API_VERSION, GROUP, KIND, PLURAL, ROUTE_RECORDS_FINALIZER, VERSION, VM_GROUP, VM_KINDS, VM_VERSION, type VMKind } from '../../api/constants';
import { workflowIdFor } from '../../api/rollout-contract';
import { STRICT_TRUST_POLICY, validateUnderPolicy, type TrustPolicy } from '../../api/trust-policy';
import type { JsonObject, ObjectGeneration, VMDistributedClusterStatus } from '../../api/types';
import { APPLIED_ANNOTATION, appliedRecord } from '../../kube/applied-fields';
import { createLogger } from '../../trigger/log';
import { startTrigger } from '../../trigger/main';
import type { ApplyObjectInput, ManagedBy, RolloutActivities } from '../../workflows/activity-types';
import { computeRemovals } from '../../workflows/routes';
import { vmagentWorkloads } from '../../activities/vmagent/service';
import { vmauthWorkloads } from '../../activities/vmauth/config';
import { publishServicePods } from '../infra/harness/service-pods';

export const VMAUTH = 'vm-global';
export const VMAGENT_AUTH_SECRET = 'vmagent-auth';
export const VMAGENT_TOKEN = 'rbac-exercise-token';
const VERSION_OLD = 'v1.149.0-cluster';
const VERSION_NOW = 'v1.150.0-cluster';
/** TEST-NET-1 addresses: never dialled, the exercise's fetch answers for them. */
const VMAGENT_POD_IP = '192.0.2.10';
const VMAUTH_POD_IP = '192.0.2.20';
const VMAGENT_PORT = 8429;
const VMAUTH_PORT = 8427;
const CONFIG_RELOADER_PORT = 8435;

export interface ExerciseContext {
  /** The admin (fixtures, checks). */
  admin: k8s.KubeConfig;
  /** As the component's ServiceAccount. */
  kc: k8s.KubeConfig;
  temporal: Client;
  /** The watched (and createNamespaces, vmauths) namespace. */
  ns: string;
  /** The release namespace (the vmagent credentials Secret is there). */
  releaseNamespace: string;
  /** The trigger's task queue: no worker polls it, a started workflow stays scheduled. */
  taskQueue: string;
}

/** The steps that failed, `step: why`. */
export type Failures = string[];

export const policyFor = (ns: string): TrustPolicy => ({ ...STRICT_TRUST_POLICY, createNamespaces: [ns] });

const mergePatch = () => k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** What the API server refused, from its message: `403 cannot get resource "secrets" in API group "" in the namespace "x"`. */
export function forbiddenReason(text: string): string | undefined {
  const m = /is forbidden: User "[^"]+" (cannot [^"]+"[^"]*"(?: in API group "[^"]*")?(?: in the namespace "[^"]*"| at the cluster scope)?)/.exec(
    text.replace(/\\/g, ''),
  );
  return m ? `403 ${m[1]}` : undefined;
}

/** An error in one line: a refusal as forbiddenReason says it, anything else its message. */
const message = (err: unknown): string => {
  const text = (err as { message?: string } | undefined)?.message ?? String(err);
  const reason = forbiddenReason(text);
  const before = text
    .split(/HTTP(?:-Code)? 403/)[0]!
    .replace(/\s+/g, ' ')
    .trim();
  return reason ? `${before ? `${before} ` : ''}${reason}` : text.replace(/\s+/g, ' ').slice(0, 400);
};

/** The activities' log, kept (not printed): the failures are reported by the steps. */
const activityLogger: Logger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

// ---- admin fixtures -------------------------------------------------------------------------

const rwURL = (ns: string, vmc: string) => `http://vminsert-${vmc}.${ns}.svc:8480/insert/0/prometheus/api/v1/write`;
const vmselectURL = (ns: string, vmc: string) => `http://vmselect-${vmc}.${ns}.svc:8481/select/0/prometheus`;
/** The real CRD requires crd.name and crd.namespace: "" when only crd.objects routes. */
const vmselects = (ns: string, ...names: string[]): JsonObject => ({
  crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: names.map((name) => ({ name, namespace: ns })) },
  paths: ['/select/.*'],
});

/** A valid VMDistributedCluster spec naming objects `<name>-a|b` (VMClusters, VMUsers), VMAuth vm-global and VMAgent `<name>`. */
function vmdcSpec(ns: string, name: string): JsonObject {
  return {
    clusterVersion: VERSION_NOW,
    zones: ['a', 'b'].map((z) => ({
      name: `az-${z}`,
      vmcluster: { name: `${name}-${z}` },
      vmuser: { name: `${name}-${z}` },
      remoteWriteURL: rwURL(ns, `${name}-${z}`),
    })),
    vmauth: { name: VMAUTH },
    vmagent: { name, overrideSpec: { replicaCount: 1 } },
    strategy: { order: 'Declared', readDrainDelay: '1s', pollInterval: '500ms' },
  };
}

interface Vmdc {
  metadata: { name: string; namespace: string; uid: string; generation: number; finalizers?: string[] };
  spec: JsonObject;
  status?: VMDistributedClusterStatus;
}

async function createVmdc(admin: k8s.KubeConfig, ns: string, name: string): Promise<Vmdc> {
  const custom = admin.makeApiClient(k8s.CustomObjectsApi);
  return (await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    plural: PLURAL,
    namespace: ns,
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: vmdcSpec(ns, name) },
  })) as Vmdc;
}

async function getVmdc(admin: k8s.KubeConfig, ns: string, name: string): Promise<Vmdc> {
  return (await admin
    .makeApiClient(k8s.CustomObjectsApi)
    .getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace: ns, name })) as Vmdc;
}

const ogOf = (o: Vmdc): ObjectGeneration => ({
  namespace: o.metadata.namespace,
  name: o.metadata.name,
  uid: o.metadata.uid,
  generation: o.metadata.generation,
});

async function createVm(
  admin: k8s.KubeConfig,
  ns: string,
  kind: VMKind,
  name: string,
  spec: JsonObject,
  annotations?: Record<string, string>,
): Promise<k8s.KubernetesObject> {
  return (await admin.makeApiClient(k8s.CustomObjectsApi).createNamespacedCustomObject({
    group: VM_GROUP,
    version: VM_VERSION,
    plural: VM_KINDS[kind],
    namespace: ns,
    body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind, metadata: { name, ...(annotations ? { annotations } : {}) }, spec },
  })) as k8s.KubernetesObject;
}

/** The vmagent metrics credentials (chart value vmagentMetricsAuthSecret), in the release namespace. */
export async function createVmagentAuthSecret(admin: k8s.KubeConfig, releaseNamespace: string): Promise<void> {
  await admin.makeApiClient(k8s.CoreV1Api).createNamespacedSecret({
    namespace: releaseNamespace,
    body: { metadata: { name: VMAGENT_AUTH_SECRET }, stringData: { token: VMAGENT_TOKEN } },
  });
}

// ---- the worker -----------------------------------------------------------------------------

/** The operator's config Secret of VMAuth vm-global: reads of the VMAuth and of VMUser w-a (username ua) go to both zones' vmselect. */
function vmauthConfig(ns: string): Buffer {
  // Two arrays, not one twice: the yaml library writes a reused object as an anchor and an alias,
  // which the operator (Go's yaml) never does and the worker refuses to resolve.
  const both = () => [vmselectURL(ns, 'w-a'), vmselectURL(ns, 'w-b')];
  return gzipSync(Buffer.from(toYaml({ unauthorized_user: { url_prefix: both() }, users: [{ username: 'ua', url_prefix: both() }] })));
}

interface WorkerFixtures {
  vmdc: Vmdc;
  configHash: number;
}

async function workerFixtures(ctx: ExerciseContext): Promise<WorkerFixtures> {
  const { admin, ns } = ctx;
  const vmdc = await createVmdc(admin, ns, 'w');
  await createVm(admin, ns, 'VMCluster', 'w-a', { clusterVersion: VERSION_OLD });
  await createVm(admin, ns, 'VMCluster', 'w-b', { clusterVersion: VERSION_OLD });
  await createVm(admin, ns, 'VMSingle', 'w-s', { image: { tag: 'v1.150.0' } });
  await createVm(admin, ns, 'VMAgent', 'w', { remoteWrite: [{ url: rwURL(ns, 'w-a') }, { url: rwURL(ns, 'w-b') }] });
  await createVm(admin, ns, 'VMAuth', VMAUTH, { unauthorizedUserAccessSpec: { targetRefs: [vmselects(ns, 'w-a', 'w-b')] } });
  await createVm(admin, ns, 'VMUser', 'w-a', { username: 'ua', targetRefs: [vmselects(ns, 'w-a', 'w-b')] });
  await createVm(admin, ns, 'VMUser', 'w-b', { username: 'ub', targetRefs: [vmselects(ns, 'w-a', 'w-b')] });
  // Each Service with its pod (the operator's Deployment → ReplicaSet → Pod, status.podIPs) and the
  // EndpointSlice controller's slice: the pods the worker verifies (services get, pods list).
  await publishServicePods(admin, {
    namespace: ns,
    component: 'vmagent',
    instance: 'w',
    port: VMAGENT_PORT,
    workload: vmagentWorkloads('w')[0]!,
    pods: [{ name: 'vmagent-w-0', ip: VMAGENT_POD_IP }],
  });
  await publishServicePods(admin, {
    namespace: ns,
    component: 'vmauth',
    instance: VMAUTH,
    port: VMAUTH_PORT,
    workload: vmauthWorkloads(VMAUTH)[0]!,
    pods: [{ name: `vmauth-${VMAUTH}-0`, ip: VMAUTH_POD_IP }],
  });
  const gz = vmauthConfig(ns);
  await admin.makeApiClient(k8s.CoreV1Api).createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: `vmauth-config-${VMAUTH}` }, data: { 'config.yaml.gz': gz.toString('base64') } },
  });
  return { vmdc, configHash: crc32(gz) };
}

/**
 * The pods' /metrics, as the worker fetches them: the vmagent pod answers only with the
 * credentials of the Secret (else 401, an unreadable pod); the vmauth pod's config-reloader reports
 * the content hash of the Secret's config.
 */
function podFetch(configHash: number, seen: string[]): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const auth = new Headers(init?.headers).get('authorization');
    seen.push(`${url.host}${url.pathname}${auth ? ' (with credentials)' : ''}`);
    if (url.hostname === VMAGENT_POD_IP && url.port === String(VMAGENT_PORT)) {
      if (auth !== `Bearer ${VMAGENT_TOKEN}`) return new Response('unauthorized', { status: 401 });
      const dir = '/tmp/vmagent-remotewrite-data/persistent-queue';
      return new Response(
        [
          `vmagent_remotewrite_pending_data_bytes{path="${dir}/1_0000000000000000", url="1:secret-url"} 0`,
          `vmagent_remotewrite_pending_data_bytes{path="${dir}/2_0000000000000000", url="2:secret-url"} 0`,
          '',
        ].join('\n'),
      );
    }
    if (url.hostname === VMAUTH_POD_IP && url.port === String(CONFIG_RELOADER_PORT)) {
      return new Response(`configreloader_reload_content_hash{key="main"} ${configHash}\n`);
    }
    return new Response('not found', { status: 404 });
  }) as typeof fetch;
}

let createdSeq = 0;

/**
 * The worker's activities as its ServiceAccount, every Kubernetes request kind they make: the
 * input check, the status, server-side apply creating objects from full specs and changing
 * existing ones, reads, route edits with their records, a vmagent queue sample (EndpointSlices and
 * the credentials Secret) and the read switch confirmed from the VMAuth's config Secret
 * (confirmSwitch, the full activity). Every step runs; returns those that failed.
 */
export async function workerExercise(ctx: ExerciseContext): Promise<Failures> {
  const { ns } = ctx;
  const fx = await workerFixtures(ctx);
  const og = ogOf(fx.vmdc);
  const wid = workflowIdFor(og);
  const fetched: string[] = [];
  const policy = policyFor(ns);
  const acts: RolloutActivities = createActivities({
    kubeConfig: ctx.kc,
    temporalClient: ctx.temporal,
    policy,
    // Its applies are not the exercise VMDistributedCluster's own; the write guard's only request
    // (get vmdistributedclusters) is verifyInput's, exercised below.
    bindWrites: false,
    fetch: podFetch(fx.configHash, fetched),
    scrapeTimeoutMs: 2_000,
    vmagentAuth: { secretName: VMAGENT_AUTH_SECRET, secretNamespace: ctx.releaseNamespace, tokenKey: 'token' },
  });
  const env = new MockActivityEnvironment(
    { workflowExecution: { workflowId: wid, runId: 'rbac-run' }, heartbeatTimeoutMs: 60_000 },
    { logger: activityLogger },
  );
  const run = <K extends keyof RolloutActivities>(name: K, ...args: Parameters<RolloutActivities[K]>) =>
    env.run(acts[name] as (...a: unknown[]) => ReturnType<RolloutActivities[K]>, ...args) as ReturnType<RolloutActivities[K]>;

  const failures: Failures = [];
  const step = async (name: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      failures.push(`${name}: ${message(err)}`);
    }
  };
  const expectThat = (ok: boolean, what: string) => {
    if (!ok) throw new Error(what);
  };

  const normalized = validateUnderPolicy(fx.vmdc.spec, ns, policy);
  if (!normalized.success) throw new Error(`the exercise's VMDistributedCluster spec is invalid: ${JSON.stringify(normalized.issues)}`);
  const managedBy = (specPath: string): ManagedBy => ({
    vmdc: { name: og.name, uid: og.uid, generation: og.generation },
    specPath,
    retain: false,
    adopt: false,
    forceConflicts: false,
  });

  await step('verifyInput (get VMDistributedCluster)', async () => {
    const v = await run('verifyInput', { object: og, spec: normalized.spec, previousWorkflowIds: [] });
    expectThat(v.verdict === 'ok', `verdict ${JSON.stringify(v)}`);
  });

  await step('writeStatus (get + status patch, records listed, a zone transition Event created)', async () => {
    const status = {
      observedGeneration: og.generation,
      phase: 'Progressing' as const,
      message: 'rbac exercise',
      zones: [{ name: 'az-a', phase: 'WaitingForSwitch' as const }],
    };
    const r = await run('writeStatus', { object: og, status });
    expectThat(r.written, 'not written');
    const live = await getVmdc(ctx.admin, ns, 'w');
    expectThat(live.status?.message === 'rbac exercise', `status is ${JSON.stringify(live.status)}`);
    // An Event that cannot be created is only logged: look for it.
    const events = await ctx.admin.makeApiClient(k8s.CoreV1Api).listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=w' });
    expectThat(
      events.items.some((e) => e.reason === 'ZoneLeftReads'),
      `no ZoneLeftReads Event: ${events.items.map((e) => e.reason).join(', ') || 'none'}`,
    );
  });

  // Full specs: created by server-side apply (create + patch), owned by the VMDistributedCluster.
  const n = ++createdSeq;
  const created: Array<[VMKind, string, JsonObject]> = [
    ['VMCluster', `new-c${n}`, { clusterVersion: VERSION_NOW, vmselect: { replicaCount: 1 } }],
    ['VMSingle', `new-s${n}`, { image: { tag: 'v1.151.0' } }],
    ['VMAgent', `new-g${n}`, { remoteWrite: [{ url: rwURL(ns, 'w-a') }] }],
    ['VMAuth', `new-h${n}`, { selectAllByDefault: true }],
    ['VMUser', `new-u${n}`, { username: `nu${n}`, targetRefs: [vmselects(ns, 'w-a')] }],
  ];
  for (const [kind, name, spec] of created) {
    await step(`applyObject create ${kind} (full spec)`, async () => {
      const input: ApplyObjectInput = { kind, namespace: ns, name, patch: spec, create: true, managedBy: managedBy(`created.${kind}`) };
      const r = await run('applyObject', input);
      expectThat(r.created && r.generation === 1, `result ${JSON.stringify(r)}`);
      // The same full spec again: the existing object is patched (no change).
      const again = await run('applyObject', input);
      expectThat(!again.created && !again.changed, `second apply ${JSON.stringify(again)}`);
    });
  }

  // Overlays on the existing objects the admin created.
  const overlays: Array<[VMKind, string, JsonObject]> = [
    ['VMCluster', 'w-a', { clusterVersion: VERSION_NOW }],
    ['VMSingle', 'w-s', { image: { tag: 'v1.151.0' } }],
    ['VMAgent', 'w', { replicaCount: 1 }],
    ['VMAuth', VMAUTH, { selectAllByDefault: true }],
    ['VMUser', 'w-b', { disable_secret_creation: true }],
  ];
  for (const [kind, name, patch] of overlays) {
    await step(`applyObject patch existing ${kind} (overlay)`, async () => {
      const r = await run('applyObject', { kind, namespace: ns, name, patch, create: false, managedBy: managedBy(`overlay.${kind}`) });
      expectThat(!r.created && r.changed && r.generation === 2, `result ${JSON.stringify(r)}`);
    });
    await step(`readObject ${kind}`, async () => {
      const s = await run('readObject', { kind, namespace: ns, name });
      expectThat(s.exists && s.generation === 2, `state ${JSON.stringify(s)}`);
    });
  }

  await step('readRoutes + editRoutes remove with record + readRecords + editRoutes restore (get, list, patch VMAuth/VMUsers)', async () => {
    const routes = [
      { kind: 'VMAuth' as const, name: VMAUTH },
      { kind: 'VMUser' as const, name: 'w-a' },
    ];
    const snaps = await run('readRoutes', { namespace: ns, routes });
    const removals = computeRemovals(snaps, { name: 'w-a', namespace: ns });
    expectThat(removals.length === 2, `removals ${JSON.stringify(removals)}`);
    const record = { vmdc: { namespace: ns, name: og.name, uid: og.uid }, zone: 'az-a', workflowId: wid, generation: og.generation };
    const out = await run('editRoutes', { namespace: ns, vmauthName: VMAUTH, removals, direction: 'remove', record });
    expectThat(out.recorded?.length === 1 && out.recorded[0]!.zone === 'az-a', `remove: ${JSON.stringify(out)}`);
    const recorded = await run('readRecords', { namespace: ns, uid: og.uid });
    expectThat(recorded.length === 1 && recorded[0]!.removals.length === 2, `readRecords: ${JSON.stringify(recorded)}`);
    const back = await run('editRoutes', { namespace: ns, vmauthName: VMAUTH, removals, direction: 'restore', record });
    expectThat(back.recorded?.length === 0, `restore: ${JSON.stringify(back)}`);
  });

  await step('sampleQueue (get VMAgent, list EndpointSlices, get Service, list pods, get the credentials Secret)', async () => {
    const s = await run('sampleQueue', { namespace: ns, vmagentName: 'w', vmclusterName: 'w-a', remoteWriteURL: rwURL(ns, 'w-a'), queueEmptyBytes: 0 });
    // A refused request is no error here: it is a sample with a problem. The pod must have been listed and read with the credentials.
    expectThat(
      s.totalPods === 1 && s.unreadablePods === 0 && s.drained,
      `the sample lists ${s.totalPods} pods, ${s.unreadablePods} unreadable, message: ${s.message}`,
    );
    expectThat(
      fetched.some((f) => f.startsWith(`${VMAGENT_POD_IP}:${VMAGENT_PORT}/metrics (with credentials)`)),
      `fetched ${JSON.stringify(fetched)}`,
    );
  });

  await step(`confirmSwitch (get Secret vmauth-config-${VMAUTH}, get VMUser, list EndpointSlices, get Service, list pods)`, async () => {
    const c = await run('confirmSwitch', {
      namespace: ns,
      vmauthName: VMAUTH,
      vmcluster: 'w-a',
      expect: 'present',
      routes: [
        { kind: 'VMAuth', name: VMAUTH },
        { kind: 'VMUser', name: 'w-a' },
      ],
      pollIntervalMs: 200,
      fallbackWaitMs: 60_000,
    });
    expectThat(c.hash === fx.configHash && c.pods.length === 1 && c.pods[0]!.via === 'content-hash', `confirmed ${JSON.stringify(c)}`);
  });

  return failures;
}

// ---- the trigger ----------------------------------------------------------------------------

/** One object of each kind the drift watches cover, each carrying a record of `t` whose applied field differs from the live one. */
const DRIFTED: Array<{ kind: VMKind; name: string; live: JsonObject; applied: JsonObject }> = [
  { kind: 'VMCluster', name: 't-c', live: { clusterVersion: VERSION_OLD }, applied: { clusterVersion: VERSION_NOW } },
  { kind: 'VMSingle', name: 't-s', live: { retentionPeriod: '1' }, applied: { retentionPeriod: '2' } },
  {
    kind: 'VMAgent',
    name: 't-g',
    live: { remoteWrite: [{ url: 'http://vminsert-x.default.svc:8480/insert/0/prometheus/api/v1/write' }], replicaCount: 1 },
    applied: { replicaCount: 2 },
  },
  {
    kind: 'VMUser',
    name: 't-u',
    live: { username: 'tu', targetRefs: [{ static: { url: 'http://x:8481' }, paths: ['/select/.*'] }] },
    applied: { username: 'other' },
  },
  { kind: 'VMAuth', name: 't-h', live: { selectAllByDefault: true }, applied: { selectAllByDefault: false } },
];

export interface TriggerExerciseResult {
  failures: Failures;
  /** The trigger's log (JSON lines). */
  log: string[];
}

/**
 * The trigger as its ServiceAccount, from start to everything it does for a new
 * VMDistributedCluster: the informer (list + watch), its finalizer (get + patch), the workflow's
 * start recorded in the status (status patch), an Event, and the drift watches of every VM kind
 * (list + watch: the Drifted condition names an object of each kind, and a later change of each is
 * seen through the watch). Fails at the first step that does not complete, and at once when the
 * log shows a refused (403) request: the trigger retries those forever.
 */
export async function triggerExercise(ctx: ExerciseContext, timeoutMs = 15_000): Promise<TriggerExerciseResult> {
  const { admin, ns } = ctx;
  const custom = admin.makeApiClient(k8s.CustomObjectsApi);
  const core = admin.makeApiClient(k8s.CoreV1Api);
  const vmdc = await createVmdc(admin, ns, 't');
  const og = ogOf(vmdc);
  for (const d of DRIFTED) {
    await createVm(admin, ns, d.kind, d.name, d.live, {
      [APPLIED_ANNOTATION]: appliedRecord({ name: og.name, uid: og.uid, generation: og.generation }, 'overlay', d.applied),
    });
  }

  const log: string[] = [];
  const trigger = await startTrigger(
    {
      temporal: { address: 'unused:7233', namespace: 'default' },
      taskQueue: ctx.taskQueue,
      watchNamespaces: [ns],
      policy: policyFor(ns),
      metricsPort: 0,
      logLevel: 'info',
      relistIntervalMs: 120_000,
      watchIdleTimeoutMs: 20_000,
    },
    {
      kubeConfig: ctx.kc,
      temporalClient: ctx.temporal,
      serveMetrics: false,
      log: createLogger('info', (line) => log.push(line)),
      watchBackoff: { initialMs: 200, maxMs: 1_000 },
      retryBackoff: { initialMs: 200, maxMs: 1_000 },
    },
  );
  let synced = false;
  void trigger.synced.then(() => (synced = true));
  /** Every distinct refusal in the trigger's log so far, `<log message> (<resource>): 403 cannot ...`. */
  const refusals = (): string[] => {
    const out = new Set<string>();
    for (const line of log) {
      if (!/"code":403\b|forbidden/i.test(line)) continue;
      const rec = JSON.parse(line) as { msg?: string; resource?: string; err?: { message?: string } };
      const text = rec.err?.message ?? line;
      out.add(`${rec.msg}${rec.resource ? ` (${rec.resource})` : ''}: ${forbiddenReason(text) ?? text.slice(0, 300)}`);
    }
    return [...out];
  };
  /** Polls `fn` until it holds; fails when the trigger's log shows a refusal, or after timeoutMs. */
  const until = async <T>(step: string, fn: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    let lastErr: unknown;
    for (;;) {
      try {
        const v = await fn();
        if (v !== undefined && v !== false) return v;
      } catch (err) {
        lastErr = err;
      }
      const refused = refusals();
      if (refused.length) throw new Error(`while waiting for "${step}", the trigger was refused: ${refused.join('; ')}`);
      if (Date.now() >= deadline) throw new Error(`"${step}" not done within ${timeoutMs} ms${lastErr ? ` (last error: ${message(lastErr)})` : ''}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const failures: Failures = [];
  try {
    await until('VMDistributedCluster watch synced (list)', () => synced);
    await until(`finalizer ${ROUTE_RECORDS_FINALIZER} added (get + patch)`, async () =>
      (await getVmdc(admin, ns, 't')).metadata.finalizers?.includes(ROUTE_RECORDS_FINALIZER),
    );
    const wid = workflowIdFor(og);
    await until('status names the started workflow (status patch)', async () => {
      const st = (await getVmdc(admin, ns, 't')).status;
      return st?.workflow?.id === wid && st.observedGeneration === og.generation;
    });
    const events = async (reason: string) =>
      (await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=t` })).items.filter((e) => e.reason === reason);
    await until('Event RolloutStarted (create events)', async () => (await events('RolloutStarted')).length > 0);
    const labels = DRIFTED.map((d) => `${d.kind} ${d.name}`);
    await until('Drifted condition naming an object of every VM kind (drift watches listed, status patch)', async () => {
      const c = (await getVmdc(admin, ns, 't')).status?.conditions?.find((x) => x.type === 'Drifted');
      return c?.status === 'True' && labels.every((l) => c.message.includes(`${l}:`));
    });
    await until('a Drifted Event per object', async () => (await events('Drifted')).length >= DRIFTED.length);
    // The watches (not only their first list): a change of each object reaches the trigger.
    for (const d of DRIFTED) {
      const patched = (await custom.patchNamespacedCustomObject(
        { group: VM_GROUP, version: VM_VERSION, plural: VM_KINDS[d.kind], namespace: ns, name: d.name, body: { metadata: { labels: { touched: 'yes' } } } },
        mergePatch(),
      )) as k8s.KubernetesObject;
      const rv = patched.metadata!.resourceVersion!;
      await until(`${d.kind} watch delivers a change`, () => trigger.drift.observed(d.kind, ns, d.name) === rv);
    }
    const refused = refusals();
    if (refused.length) failures.push(`after every step, the log shows refusals: ${refused.join('; ')}`);
  } catch (err) {
    failures.push(err instanceof Error ? err.message : String(err));
  } finally {
    await trigger.stop();
  }
  return { failures, log };
}
