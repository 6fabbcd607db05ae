/**
 * Shared by the e2e tests and `make demo` (scripts/demo.ts): loading the demo manifests
 * (examples/demo/*.yaml, with ${VAR} placeholders), applying them, watching the
 * VMDistributedCluster, and the continuous writer/reader that prove "no failed and no stale read".
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { inspect } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { parseAllDocuments } from 'yaml';
import { GROUP, OPERATIONAL, PLURAL, VERSION, VM_GROUP, VM_KINDS, VM_VERSION } from '../../api/constants';
import { OUT_OF_ROTATION_ANNOTATION } from '../../api/route-records';
import { DEFAULT_TASK_QUEUE } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { STRICT_TRUST_POLICY, type TrustPolicy } from '../../api/trust-policy';
import { parsePayloadKeys, payloadDataConverter, type PayloadKeys } from '../../process/payload-codec';
import type { Worker } from '@temporalio/worker';
import type { TriggerHandle } from '../../trigger/main';
import { installChartIdentities } from '../infra/harness/chart-identities';
import { startInProcessTrigger, startInProcessWorker } from '../infra/harness/in-process-control';
import { noopMetrics } from '../../activities/metrics';
import { startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { podNetworkFetch } from '../infra/harness/pod-network';
import { httpRequest, waitFor } from '../infra/harness/processes';
import { freePort } from '../infra/harness/ports';
import { onRuntimeLog, startTemporalDevEnv } from '../infra/harness/temporal';
import { toolPath } from '../infra/harness/tools';
import { startVmEnvironment, type VmEnvironment, type VmEnvironmentOptions } from '../infra/simulator/environment';
import type { RenderedConfigRecord } from '../infra/simulator/simulator';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const DEMO_MANIFESTS_DIR = path.join(REPO_ROOT, 'examples', 'demo');

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    uid?: string;
    resourceVersion?: string;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** Replaces ${NAME} placeholders; an unknown placeholder is an error. */
export function substitute(text: string, vars: Record<string, string>, where = 'template'): string {
  return text.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new Error(`${where}: no value for placeholder \${${name}}`);
    return v;
  });
}

/** Every object of every *.yaml in `dir` (sorted by file name), placeholders filled in. */
export function loadManifests(dir: string, vars: Record<string, string>): KubeObject[] {
  const out: KubeObject[] = [];
  for (const f of fs
    .readdirSync(dir)
    .filter((n) => /\.ya?ml$/.test(n))
    .sort()) {
    const file = path.join(dir, f);
    for (const doc of parseAllDocuments(substitute(fs.readFileSync(file, 'utf8'), vars, file))) {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const obj = doc.toJS() as KubeObject | null;
      if (obj) out.push(obj);
    }
  }
  return out;
}

/** The URL-ish placeholder name of a VMCluster: vm-az-a → VM_AZ_A_WRITE_URL. */
export const writeUrlVar = (vmcluster: string) => `${vmcluster.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_WRITE_URL`;

const PLURALS: Record<string, { group: string; version: string; plural: string }> = {
  VMDistributedCluster: { group: GROUP, version: VERSION, plural: PLURAL },
  ...Object.fromEntries(Object.entries(VM_KINDS).map(([k, p]) => [k, { group: VM_GROUP, version: VM_VERSION, plural: p }])),
};

export function resourceOf(kind: string): { group: string; version: string; plural: string } {
  const r = PLURALS[kind];
  if (!r) throw new Error(`unknown kind ${kind}`);
  return r;
}

/** Creates custom objects (in order). */
export async function createObjects(kc: k8s.KubeConfig, objects: KubeObject[]): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  for (const o of objects) {
    const r = resourceOf(o.kind);
    await api.createNamespacedCustomObject({ ...r, namespace: o.metadata.namespace ?? 'default', body: o });
  }
}

export async function getObject(kc: k8s.KubeConfig, kind: string, namespace: string, name: string): Promise<KubeObject> {
  return (await kc.makeApiClient(k8s.CustomObjectsApi).getNamespacedCustomObject({ ...resourceOf(kind), namespace, name })) as KubeObject;
}

/** JSON merge patch of an object (spec or metadata), optionally as a person's tool would send it (`fieldManager`, e.g. kubectl-edit). */
export async function mergePatch(kc: k8s.KubeConfig, kind: string, namespace: string, name: string, body: object, fieldManager?: string): Promise<KubeObject> {
  return (await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .patchNamespacedCustomObject(
      { ...resourceOf(kind), namespace, name, body, ...(fieldManager ? { fieldManager } : {}) },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as KubeObject;
}

/**
 * Until the VMCluster is operational at its generation: after its failure cause is removed the
 * operator's next reconcile (the zone simulator's) restarts the zone at the same generation.
 */
export async function waitVmclusterOperational(kc: k8s.KubeConfig, namespace: string, name: string, timeoutMs = 60_000): Promise<KubeObject> {
  return waitFor(
    async () => {
      const o = await getObject(kc, 'VMCluster', namespace, name);
      const st = (o.status ?? {}) as { updateStatus?: string; observedGeneration?: number };
      return st.updateStatus === OPERATIONAL && st.observedGeneration === o.metadata.generation ? o : undefined;
    },
    { timeoutMs, intervalMs: 250, description: `VMCluster ${name} operational at its generation` },
  );
}

export interface VmdcSnapshot {
  at: number;
  generation: number;
  status: VMDistributedClusterStatus;
}

/**
 * Polls a VMDistributedCluster (every `intervalMs`) and calls `onChange` whenever its status
 * changed. Polling, not a watch: every observed state is kept in `history`.
 */
export function watchVmdc(
  kc: k8s.KubeConfig,
  namespace: string,
  name: string,
  onChange: (snap: VmdcSnapshot, prev: VmdcSnapshot | undefined) => void = () => {},
  intervalMs = 100,
): { history: VmdcSnapshot[]; latest(): VmdcSnapshot | undefined; stop(): void } {
  const history: VmdcSnapshot[] = [];
  let last = '';
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      const o = await getObject(kc, 'VMDistributedCluster', namespace, name);
      const status = (o.status ?? {}) as VMDistributedClusterStatus;
      const key = JSON.stringify({ g: o.metadata.generation, s: { ...status, conditions: undefined } });
      if (key !== last) {
        last = key;
        const snap = { at: Date.now(), generation: o.metadata.generation ?? 0, status };
        const prev = history[history.length - 1];
        history.push(snap);
        onChange(snap, prev);
      }
    } catch {
      /* not there yet, or a transient error */
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  void tick();
  return {
    history,
    latest: () => history[history.length - 1],
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------
// writer / reader

export interface ReadRecord {
  at: number;
  /** route used: 'unauthorized' or the bearer token */
  route: string;
  status: number;
  /** age of the newest sample seen, ms (undefined when the read failed or was empty) */
  ageMs?: number;
  /** how long the read took, request sent → answer read (or failed), ms */
  latencyMs?: number;
  error?: string;
}

/**
 * A read is stale when its newest sample is older than this. A healthy read through vmagent and a
 * zone is at most ~5-6 s old on this stack (vmagent flush 200 ms + the zone's ~2 s pending-rows
 * flush, under load; measured p99 ~5 s, max 5.9 s at load average 11 on 2 cores): 9 s leaves
 * margin. Zones are kept down longer than this during an upgrade (e2e 15 s, demo 12 s), so a zone
 * serving reads before its backlog is delivered and searchable shows up as stale.
 */
export const STALE_AFTER_MS = 9_000;

/** The read path: vmselect's query API, tenant 0 (the VMAuth and VMUsers route vmselect paths). */
export const READ_PATH = '/select/0/prometheus/api/v1/query';

export interface TrafficOptions {
  /** vmagent base URL (writes go to /api/v1/import/prometheus) */
  vmagentURL: string;
  /** vmauth base URL(s) (reads): several = the vmauth pods behind the Service, used in turn. */
  vmauthURL: string | string[];
  /** Default READ_PATH. */
  readPath?: string;
  series?: string;
  writeIntervalMs?: number;
  readIntervalMs?: number;
  /** A read is stale when its newest sample is older than this. Default STALE_AFTER_MS. */
  staleAfterMs?: number;
  /** Extra routes: bearer tokens of VMUsers to read through as well. */
  bearerTokens?: string[];
  /** false: only read (another traffic writes the series). Default true. */
  writes?: boolean;
}

/**
 * Writes one fresh sample every writeIntervalMs to vmagent (value = write time in ms, so a
 * reader knows how fresh what it got is), and reads the series through vmauth every
 * readIntervalMs on every route. A read fails when the answer is not 200 or has no sample;
 * it is stale when the newest sample is older than staleAfterMs.
 */
export function startTraffic(opts: TrafficOptions) {
  const series = opts.series ?? 'vmrollout_e2e_heartbeat';
  const staleAfterMs = opts.staleAfterMs ?? STALE_AFTER_MS;
  const reads: ReadRecord[] = [];
  const writeErrors: string[] = [];
  let writes = 0;
  let stopped = false;
  const loops: Promise<void>[] = [];
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  if (opts.writes !== false)
    loops.push(
      (async () => {
        while (!stopped) {
          const now = Date.now();
          try {
            const r = await httpRequest('POST', `${opts.vmagentURL}/api/v1/import/prometheus`, {
              body: `${series}{source="e2e"} ${now} ${now}\n`,
              headers: { 'content-type': 'text/plain' },
              // vmagent answers an import at once (it only queues); 5 s covers a CPU-starved test machine.
              timeoutMs: 5000,
            });
            if (r.status >= 300) writeErrors.push(`${now}: HTTP ${r.status}: ${r.body.slice(0, 200)}`);
            else writes++;
          } catch (err) {
            writeErrors.push(`${now}: ${String(err)}`);
          }
          await sleep(opts.writeIntervalMs ?? 200);
        }
      })(),
    );

  const routes: Array<{ name: string; headers?: Record<string, string> }> = [
    { name: 'unauthorized' },
    ...(opts.bearerTokens ?? []).map((t) => ({ name: t, headers: { authorization: `Bearer ${t}` } })),
  ];
  const vmauthURLs = Array.isArray(opts.vmauthURL) ? opts.vmauthURL : [opts.vmauthURL];
  const readPath = opts.readPath ?? READ_PATH;
  let nextPod = 0;
  for (const route of routes) {
    loops.push(
      (async () => {
        while (!stopped) {
          const at = Date.now();
          const base = vmauthURLs[nextPod++ % vmauthURLs.length]!;
          try {
            const r = await httpRequest('GET', `${base}${readPath}?query=${encodeURIComponent(`max(${series})`)}`, {
              headers: route.headers,
              // A read routed to a zone that is down fails at once (vmauth answers 502: connection
              // refused); a slow answer is a CPU-starved test machine (suites run side by side).
              timeoutMs: 10_000,
            });
            const latencyMs = Date.now() - at;
            if (r.status !== 200) reads.push({ at, route: route.name, status: r.status, latencyMs, error: r.body.slice(0, 300) });
            else {
              const body = JSON.parse(r.body) as { data?: { result?: Array<{ value: [number, string] }> } };
              const v = body.data?.result?.[0]?.value?.[1];
              if (v === undefined) reads.push({ at, route: route.name, status: 200, latencyMs, error: 'empty result' });
              else reads.push({ at, route: route.name, status: 200, latencyMs, ageMs: at - Number(v) });
            }
          } catch (err) {
            reads.push({ at, route: route.name, status: 0, latencyMs: Date.now() - at, error: String(err) });
          }
          await sleep(opts.readIntervalMs ?? 100);
        }
      })(),
    );
  }

  return {
    reads,
    writeErrors,
    get writes() {
      return writes;
    },
    failed: (from = 0, to = Infinity) => reads.filter((r) => r.at >= from && r.at <= to && r.error !== undefined),
    stale: (from = 0, to = Infinity) => reads.filter((r) => r.at >= from && r.at <= to && r.ageMs !== undefined && r.ageMs > staleAfterMs),
    /** Resolves once the last `n` reads of every route were fresh and successful. */
    async waitHealthy(timeoutMs = 30_000, n = 5): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ok = routes.every((rt) => {
          const mine = reads.filter((r) => r.route === rt.name).slice(-n);
          return mine.length === n && mine.every((r) => r.error === undefined && (r.ageMs ?? Infinity) <= staleAfterMs);
        });
        if (ok) return;
        if (Date.now() > deadline) {
          throw new Error(
            `reads through vmauth not healthy after ${timeoutMs} ms; last reads: ${JSON.stringify(reads.slice(-6))}; write errors: ${writeErrors.slice(-3).join(' | ')}`,
          );
        }
        await sleep(200);
      }
    },
    async stop(): Promise<void> {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
export type Traffic = ReturnType<typeof startTraffic>;

const TERMINAL = ['Succeeded', 'Failed', 'Cancelled', 'Superseded', 'Aborted', 'Invalid'];

/**
 * Waits until the workflow of `generation` reports one of `phases`. The trigger records the new
 * generation (observedGeneration, workflow id) before that workflow writes its first phase, so
 * the previous generation's terminal phase is not taken for this one's: unless `fresh`, an
 * active (non-terminal) phase of this generation must have been seen first.
 */
export async function waitVmdcPhase(
  kc: k8s.KubeConfig,
  namespace: string,
  name: string,
  generation: number,
  phases: string[],
  { timeoutMs = 5 * 60_000, fresh = false, diagnostics }: { timeoutMs?: number; fresh?: boolean; diagnostics?: () => string } = {},
): Promise<VMDistributedClusterStatus> {
  let seenActive = fresh;
  return waitFor(
    async () => {
      const status = ((await getObject(kc, 'VMDistributedCluster', namespace, name)).status ?? {}) as VMDistributedClusterStatus;
      if (status.observedGeneration !== generation || !status.workflow?.id.includes(`/g${generation}-`)) return undefined;
      if (!TERMINAL.includes(status.phase ?? '')) seenActive = true;
      return seenActive && phases.includes(status.phase ?? '') ? status : undefined;
    },
    {
      timeoutMs,
      intervalMs: 100,
      description: `VMDistributedCluster ${name} generation ${generation} to reach phase ${phases.join('|')}`,
      ...(diagnostics ? { diagnostics } : {}),
    },
  );
}

/** A raw JSON request to the API server with the kubeconfig's credentials (no client-side serializer involved). */
export async function kubeRaw(kc: k8s.KubeConfig, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: string }> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(urlPath, server),
      { ...opts, method, agent: false, headers: { ...(opts.headers ?? {}), 'content-type': 'application/json' }, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: timeout`)));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * Installs the CRDs of YAML files/directories and waits until each is Established and served.
 * Sent as raw JSON: through the typed client the `x-kubernetes-*` keys of the schema are lost
 * (the serializer only knows the camelCase names, and under jest even those come out wrong), so
 * `x-kubernetes-preserve-unknown-fields` is dropped and the API server prunes spec and status.
 */
export async function installCrdFiles(kc: k8s.KubeConfig, ...files: string[]): Promise<void> {
  const crds: Array<{
    kind?: string;
    metadata: { name: string };
    spec: { group: string; names: { plural: string }; versions: Array<{ name: string; served?: boolean }> };
  }> = [];
  for (const f of files) {
    const list = fs.statSync(f).isDirectory()
      ? fs
          .readdirSync(f)
          .filter((n) => /\.ya?ml$/.test(n))
          .sort()
          .map((n) => path.join(f, n))
      : [f];
    for (const file of list) {
      for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
        const o = doc.toJS() as (typeof crds)[number] | null;
        if (o?.kind === 'CustomResourceDefinition') crds.push(o);
      }
    }
  }
  const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  for (const crd of crds) {
    const r = await kubeRaw(kc, 'POST', base, crd);
    if (r.status === 409) {
      const cur = JSON.parse((await kubeRaw(kc, 'GET', `${base}/${crd.metadata.name}`)).body) as { metadata: { resourceVersion: string } };
      const u = await kubeRaw(kc, 'PUT', `${base}/${crd.metadata.name}`, {
        ...crd,
        metadata: { ...crd.metadata, resourceVersion: cur.metadata.resourceVersion },
      });
      if (u.status >= 300) throw new Error(`replace CRD ${crd.metadata.name}: HTTP ${u.status}: ${u.body}`);
    } else if (r.status >= 300) throw new Error(`create CRD ${crd.metadata.name}: HTTP ${r.status}: ${r.body}`);
  }
  for (const crd of crds) {
    await waitFor(
      async () => {
        const r = await kubeRaw(kc, 'GET', `${base}/${crd.metadata.name}`);
        const conds = (JSON.parse(r.body) as { status?: { conditions?: Array<{ type: string; status: string }> } }).status?.conditions ?? [];
        if (!conds.some((c) => c.type === 'Established' && c.status === 'True')) return false;
        const v = crd.spec.versions.find((x) => x.served)?.name ?? crd.spec.versions[0]!.name;
        return (await kubeRaw(kc, 'GET', `/apis/${crd.spec.group}/${v}/${crd.spec.names.plural}`)).status === 200;
      },
      { timeoutMs: 30_000, description: `CRD ${crd.metadata.name} to be Established and served` },
    );
  }
}

// ---------------------------------------------------------------------------------------
// per-zone probe (evidence for the e2e assertions and for diagnosing stale reads)

export interface ZoneProbeRecord {
  at: number;
  zone: string;
  /** age of the zone's newest sample of the series, read straight from the zone (not through vmauth) */
  ageMs?: number;
  /** vmagent_remotewrite_pending_data_bytes of this zone's remote write (vmagent's own /metrics) */
  pendingBytes?: number;
  error?: string;
}

/**
 * Every `intervalMs`, reads each zone directly (newest sample of `series`) and vmagent's pending
 * bytes per remote write (`url="<i+1>:secret-url"`, i = index in `zones`). Loopback only.
 */
export function startZoneProbe(opts: { zones: Record<string, string>; vmagentURL: string; series: string; intervalMs?: number }) {
  const records: ZoneProbeRecord[] = [];
  let stopped = false;
  const names = Object.keys(opts.zones);
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      let metrics = '';
      try {
        metrics = (await httpRequest('GET', `${opts.vmagentURL}/metrics`, { timeoutMs: 2000 })).body;
      } catch {
        /* pending unknown this round */
      }
      await Promise.all(
        names.map(async (zone, i) => {
          const rec: ZoneProbeRecord = { at, zone };
          const m = new RegExp(`^vmagent_remotewrite_pending_data_bytes\\{[^}]*url="${i + 1}:[^"]*"[^}]*\\} (\\S+)$`, 'm').exec(metrics);
          if (m) rec.pendingBytes = Number(m[1]);
          try {
            const r = await httpRequest('GET', `${opts.zones[zone]}/api/v1/query?query=${encodeURIComponent(`max(${opts.series})`)}`, { timeoutMs: 1000 });
            const v = (JSON.parse(r.body) as { data?: { result?: Array<{ value: [number, string] }> } }).data?.result?.[0]?.value?.[1];
            if (v !== undefined) rec.ageMs = at - Number(v);
            else rec.error = 'empty result';
          } catch (err) {
            rec.error = String(err);
          }
          records.push(rec);
        }),
      );
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 500));
    }
  })();
  return {
    records,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
export type ZoneProbe = ReturnType<typeof startZoneProbe>;

// ---------------------------------------------------------------------------------------
// the whole e2e stack in this process (the demo manifests, real processes, the simulator, the
// real worker and trigger, read/write traffic and the per-zone probe)

/** The VMClusters and the VMUsers' bearer tokens of the demo manifests (examples/demo/). */
/** Where the e2e installs the chart's ServiceAccounts and roles. */
export const CHART_RELEASE_NAMESPACE = 'vmrollout-system';

export const DEMO_CLUSTERS = ['vm-az-a', 'vm-az-b', 'vm-az-c'];
/** The one Secret spec.notifications may name on the e2e stack: the chart grants the worker `get` on it (notificationSecrets). */
export const E2E_NOTIFICATION_SECRET = 'rollout-slack';
/** The clusterVersions the e2e files roll out, in turn (tags only: the zone simulator restarts the same binary). */
export const V1 = 'v1.150.0-cluster';
export const V2 = 'v1.151.0-cluster';
export const V3 = 'v1.152.0-cluster';
export const V4 = 'v1.153.0-cluster';
export const DEMO_TOKENS = ['token-az-a', 'token-az-b', 'token-az-c'];

export interface E2EStackOptions {
  namespace: string;
  /** Name given to the demo VMDistributedCluster. */
  vmdcName: string;
  /** VMCluster names of the demo manifests (one zone process each). */
  clusters: string[];
  /** VMSingle names (one zone process each, the VMSingle's pod itself); startControlPlane only, the demo manifests have none. */
  singles?: string[];
  /** Bearer tokens of the demo VMUsers (a reader per token, plus the unauthenticated one). */
  tokens: string[];
  /** clusterVersion every zone runs at the start (and generation 1 asks for). */
  initialVersion: string;
  /** See ZoneSimulatorOptions.zoneDowntimeMs. */
  zoneDowntimeMs: number;
  /** strategy of the VMDistributedCluster. */
  strategy: Record<string, unknown>;
  /** Default `${DEFAULT_TASK_QUEUE}-e2e`. */
  taskQueue?: string;
  /** The trigger's FINALIZER_RECHECK_INTERVAL (default: the trigger's). */
  finalizerRecheckIntervalMs?: number;
  /** Number of vmauth pods (default 1). */
  vmauthPods?: number;
  /** More real vmagents (VMAgent names, for spec.zones[].vmagent), each writing to every zone, with its EndpointSlice. */
  zoneVmagents?: string[];
  /** Kubelet's Secret volume delay of every vmauth pod (default 0). */
  configPropagationDelayMs?: number;
  /** Per vmauth pod: its own delay, or an old config-reloader without the content-hash metric. */
  vmauthPodOptions?: VmEnvironmentOptions['vmauthPodOptions'];
  /** createActivities({ confirmSwitchInPods }) at the start (default true); see E2EStack.knobs. */
  confirmSwitchInPods?: boolean;
  /** Run Temporal's Web UI too (E2EStack.temporalUiUrl): what it shows can be read from its HTTP API. */
  temporalUi?: boolean;
  /**
   * Runs the worker and the trigger some other way (e.g. inside the image: test/e2e/image.test.ts)
   * instead of in this process: called once the bed is up; stop() stops what it started first.
   */
  controlProcesses?: (bed: ControlBed) => Promise<{ stop(): Promise<void> }>;
  log?: (m: string) => void;
}

/** What a worker and a trigger started outside this process need from the bed. */
export interface ControlBed {
  temporal: { address: string; namespace: string };
  /** The chart's ServiceAccounts, with the rights the chart gives them. */
  identities: { worker: k8s.KubeConfig; trigger: k8s.KubeConfig };
  /** This run's payload keys, as a TEMPORAL_PAYLOAD_KEYS_FILE holds them. */
  payloadKeysText: string;
  taskQueue: string;
  /** The namespace watched, and the one full specs may create objects in. */
  namespace: string;
}

/** One pending-bytes sample the worker's activities observed (zone = the VMDistributedCluster's zone name). */
export interface WorkerQueueSample {
  at: number;
  zone: string;
  bytes: number;
}

export interface E2EStack {
  kube: KubeCluster;
  kc: k8s.KubeConfig;
  temporal: TestWorkflowEnvironment;
  /** With `temporalUi`: the Web UI (its HTTP API under /api/v1). */
  temporalUiUrl?: string;
  /** The client of the worker and the trigger: it encrypts and decrypts payloads (temporal.client does not). */
  client: Client;
  /** The payload keys of this run. */
  payloadKeys: PayloadKeys;
  /** Every log line of the worker (SDK Runtime, INFO and up) and of the trigger (debug and up), in order. */
  logs: string[];
  vm: VmEnvironment;
  /** The in-process worker and trigger (undefined with `controlProcesses`, as are the logs, queueSamples and knobs' effect). */
  worker?: Worker;
  trigger?: TriggerHandle;
  traffic: Traffic;
  probe: ZoneProbe;
  queueSamples: WorkerQueueSample[];
  /** The demo manifests as created (the VMDistributedCluster renamed to vmdcName, with `strategy`). */
  manifests: KubeObject[];
  /** The VMDistributedCluster as created (uid included), after generation 1 Succeeded. */
  vmdc: KubeObject;
  /** Right after generation 1 Succeeded: vmauth's rendered config, and the specs of the VMAuth and VMUsers. */
  baseline: { config: RenderedConfigRecord; routeSpecs: Record<string, unknown> };
  /**
   * Test-only knobs of the running worker's activities, read at each call: confirmSwitchInPods false
   * = confirmSwitch believes the statuses alone (the negative control of the switch confirmation).
   */
  knobs: { confirmSwitchInPods: boolean };
  stop(): Promise<void>;
}

/** `VMAuth/<name>` and `VMUser/<name>` of the demo manifests. */
export const routeObjectsOf = (manifests: KubeObject[]) =>
  manifests.filter((o) => o.kind === 'VMAuth' || o.kind === 'VMUser').map((o) => ({ kind: o.kind, name: o.metadata.name }));

/** The specs of the route objects, keyed `Kind/name`. */
export async function routeSpecs(kc: k8s.KubeConfig, namespace: string, routes: Array<{ kind: string; name: string }>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const r of routes) out[`${r.kind}/${r.name}`] = (await getObject(kc, r.kind, namespace, r.name)).spec;
  return out;
}

/** What startControlPlane starts: everything but the VM operator's objects and the traffic. */
export type ControlPlaneOptions = Pick<
  E2EStackOptions,
  | 'namespace'
  | 'clusters'
  | 'singles'
  | 'zoneDowntimeMs'
  | 'taskQueue'
  | 'finalizerRecheckIntervalMs'
  | 'vmauthPods'
  | 'zoneVmagents'
  | 'configPropagationDelayMs'
  | 'vmauthPodOptions'
  | 'confirmSwitchInPods'
  | 'temporalUi'
  | 'controlProcesses'
  | 'log'
> & {
  /** Also run the API server's garbage collector (kube-controller-manager): owned objects go with their owner. */
  garbageCollector?: boolean;
};

export type ControlPlane = Pick<
  E2EStack,
  'kube' | 'kc' | 'temporal' | 'client' | 'payloadKeys' | 'logs' | 'vm' | 'worker' | 'trigger' | 'queueSamples' | 'knobs' | 'temporalUiUrl' | 'stop'
>;

/**
 * kube-apiserver + CRDs (and with `garbageCollector` its garbage collector), Temporal dev server, the
 * VM environment (zones, vmagent, vmauth pods, zone simulator) on an empty namespace, and the real
 * worker and trigger in this process.
 */
export async function startControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane & { onStop(f: () => Promise<void>): void }> {
  const log = opts.log ?? (() => {});
  const parts: Partial<ControlPlane> = {};
  const before: Array<() => Promise<void>> = [];
  let stopWorker: (() => Promise<void>) | undefined;
  const stop = async () => {
    for (const f of before.splice(0)) await f();
    await parts.trigger?.stop().catch(() => {});
    await stopWorker?.();
    await parts.vm?.stop();
    await parts.temporal?.teardown();
    await parts.kube?.stop();
  };
  try {
    const kube = (parts.kube = await startKube({ garbageCollector: opts.garbageCollector }));
    const kc = kube.kubeConfig;
    await installCrdFiles(kc, VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds'));
    // The garbage collector discovers resources every 30 s: restarted, it watches the new CRDs at once.
    await kube.controllerManager?.restart();
    // The worker and the trigger run as the chart's ServiceAccounts, with the rights the chart gives
    // them for this namespace (the test itself, and the zone simulator playing the VM operator, stay admin).
    const identities = await installChartIdentities(kc, {
      releaseNamespace: CHART_RELEASE_NAMESPACE,
      values: [
        `watchNamespaces={${opts.namespace}}`,
        `createNamespaces={${opts.namespace}}`,
        `vmauths={${opts.namespace}/vm-global}`,
        `notificationSecrets={${opts.namespace}/${E2E_NOTIFICATION_SECRET}}`,
      ],
    });
    const uiPort = opts.temporalUi ? await freePort() : undefined;
    const temporal = (parts.temporal = await startTemporalDevEnv({ ui: !!uiPort, uiPort }));
    if (uiPort) parts.temporalUiUrl = `http://127.0.0.1:${uiPort}`;
    // Every log line of the worker (the SDK Runtime's: worker, workflow, activity logs) and the trigger.
    const logs: string[] = (parts.logs = []);
    const stopRuntimeLog = onRuntimeLog((e) => logs.push(`${e.level} ${e.message} ${inspect(e.meta, { depth: 8, breakLength: Infinity })}`));
    before.push(async () => void stopRuntimeLog());
    // Payloads encrypted as in production (a fresh key per run): history holds no spec in plaintext.
    const payloadKeysText = `e2e:${randomBytes(32).toString('base64')}\n`;
    const payloadKeys = (parts.payloadKeys = parsePayloadKeys(payloadKeysText));
    const dataConverter = payloadDataConverter(payloadKeys);
    const client = (parts.client = new Client({ connection: temporal.connection, namespace: temporal.namespace ?? 'default', dataConverter }));
    parts.vm = await startVmEnvironment({
      kubeConfig: kc,
      namespace: opts.namespace,
      vmclusters: opts.clusters,
      vmsingles: opts.singles,
      vmagentName: 'vm-global',
      zoneVmagents: opts.zoneVmagents,
      vmauthName: 'vm-global',
      zoneDowntimeMs: opts.zoneDowntimeMs,
      vmauthPods: opts.vmauthPods,
      configPropagationDelayMs: opts.configPropagationDelayMs,
      vmauthPodOptions: opts.vmauthPodOptions,
      log,
    });

    // The control plane: the real worker (workflow + activities) and the real trigger.
    const queueSamples: WorkerQueueSample[] = (parts.queueSamples = []);
    const knobs = (parts.knobs = { confirmSwitchInPods: opts.confirmSwitchInPods ?? true });
    const taskQueue = opts.taskQueue ?? `${DEFAULT_TASK_QUEUE}-e2e`;
    // As the chart would be configured for this bed: full specs may create objects in the namespace,
    // and the VMAgent may write to the zones' vminserts, which listen on loopback here.
    const policy: TrustPolicy = { ...STRICT_TRUST_POLICY, createNamespaces: [opts.namespace], remoteWriteHosts: ['127.0.0.1'] };
    if (opts.controlProcesses) {
      const outside = await opts.controlProcesses({
        temporal: { address: temporal.address, namespace: temporal.namespace ?? 'default' },
        identities,
        payloadKeysText,
        taskQueue,
        namespace: opts.namespace,
      });
      before.push(() => outside.stop());
      return Object.assign(parts as ControlPlane, { kc, stop, onStop: (f: () => Promise<void>) => void before.push(f) });
    }
    const control = { temporal, client, dataConverter, taskQueue, policy, identities };
    const worker = await startInProcessWorker({
      ...control,
      knobs,
      // EndpointSlices carry TEST-NET-2 pod addresses (the API server refuses loopback endpoints);
      // podNetworkFetch maps them to 127.0.0.1, where the real vmagent, vmauth pods (and their
      // config-reloaders) and vmselect fronts listen.
      fetch: podNetworkFetch,
      metrics: {
        ...noopMetrics,
        queuePendingBytes: (l, bytes) => {
          queueSamples.push({ at: Date.now(), zone: l.zone, bytes });
          log(`worker queue sample ${l.zone}: ${bytes} bytes`);
        },
        activityError: (a, t) => log(`activity error ${a}: ${t}`),
      },
    });
    parts.worker = worker.worker;
    stopWorker = () => worker.stop();
    parts.trigger = await startInProcessTrigger({
      ...control,
      namespace: opts.namespace,
      finalizerRecheckIntervalMs: opts.finalizerRecheckIntervalMs,
      onLog: (line) => {
        logs.push(line);
        if (/"level":"(warn|error)"/.test(line)) process.stdout.write(`${line}\n`);
      },
    });
    return Object.assign(parts as ControlPlane, { kc, stop, onStop: (f: () => Promise<void>) => void before.push(f) });
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Until the simulator renders vmauth with every zone and `users` VMUsers, served by every vmauth pod. */
export async function waitVmauthRendered(vm: Pick<VmEnvironment, 'simulator'>, zones: number, users: number, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    () =>
      vm.simulator.currentConfig?.routes.unauthorized?.length === zones &&
      Object.keys(vm.simulator.currentConfig.routes).length === users + 1 &&
      vm.simulator.allPodsServeCurrent(),
    {
      timeoutMs,
      description: 'the simulator to render vmauth with every zone and every VMUser, served by every vmauth pod',
      diagnostics: () =>
        `simulator errors: ${vm.simulator.errors.slice(-5).join('\n')}; reconcile errors: ${JSON.stringify(vm.simulator.reconcileErrors.slice(-3))}`,
    },
  );
}

/**
 * Everything rollout.test.ts's setup does, for any e2e file: the control plane, the demo objects,
 * healthy traffic, the zone probe, and generation 1 of the VMDistributedCluster at the version every
 * zone runs (every zone skipped) Succeeded.
 */
/** The strategy of the e2e stacks that need no other: Declared order, 1 s read drain, 6 s queueDrainedFor, 250 ms polls, 2 min per zone. */
export const E2E_STRATEGY: Record<string, unknown> = {
  order: 'Declared',
  readDrainDelay: '1s',
  queueDrainedFor: '6s',
  pollInterval: '250ms',
  zoneTimeout: '2m',
};

/** The demo stack as most e2e files start it: the demo zones and readers, every zone at V1, E2E_STRATEGY unless given. */
export function demoStackOptions(
  o: Omit<E2EStackOptions, 'clusters' | 'tokens' | 'initialVersion' | 'strategy'> & Partial<Pick<E2EStackOptions, 'strategy'>>,
): E2EStackOptions {
  return { clusters: DEMO_CLUSTERS, tokens: DEMO_TOKENS, initialVersion: V1, strategy: E2E_STRATEGY, ...o };
}

export async function startE2EStack(opts: E2EStackOptions): Promise<E2EStack> {
  const cp = await startControlPlane(opts);
  const parts: Partial<E2EStack> = { ...cp };
  cp.onStop(async () => {
    await parts.traffic?.stop();
    await parts.probe?.stop();
  });
  try {
    const { kc, vm } = cp;
    const vars: Record<string, string> = { NAMESPACE: opts.namespace, INITIAL_VERSION: opts.initialVersion };
    for (const c of opts.clusters) vars[writeUrlVar(c)] = vm.remoteWriteURLs[c]!;
    const manifests = loadManifests(DEMO_MANIFESTS_DIR, vars);
    const vmdc = manifests.find((o) => o.kind === 'VMDistributedCluster')!;
    vmdc.metadata.name = opts.vmdcName;
    vmdc.spec!.strategy = opts.strategy;

    // The VM side first: zones operational, vmauth rendered with every zone, traffic healthy.
    await createObjects(
      kc,
      manifests.filter((o) => o.kind !== 'VMDistributedCluster'),
    );
    await waitVmauthRendered(vm, opts.clusters.length, opts.tokens.length, 30_000 + (opts.configPropagationDelayMs ?? 0));
    const traffic = (parts.traffic = startTraffic({
      vmagentURL: vm.vmagent.url,
      vmauthURL: vm.vmauthPods.map((p) => p.vmauth.url),
      bearerTokens: opts.tokens,
      staleAfterMs: STALE_AFTER_MS,
    }));
    await traffic.waitHealthy();
    parts.probe = startZoneProbe({
      zones: Object.fromEntries(opts.clusters.map((c) => [c, vm.zones[c]!.url])),
      vmagentURL: vm.vmagent.url,
      series: 'vmrollout_e2e_heartbeat',
    });

    // Generation 1 at the version every zone already runs: nothing to upgrade, every zone skipped.
    await createObjects(kc, [vmdc]);
    await waitFor(
      async () => {
        const st = (await getObject(kc, 'VMDistributedCluster', opts.namespace, opts.vmdcName)).status as VMDistributedClusterStatus | undefined;
        return st?.observedGeneration === 1 && st.workflow?.id.includes('/g1-') && st.phase === 'Succeeded';
      },
      { timeoutMs: 120_000, description: `generation 1 of ${opts.vmdcName} to succeed`, diagnostics: () => vm.simulator.errors.slice(-5).join('\n') },
    );
    const created = await getObject(kc, 'VMDistributedCluster', opts.namespace, opts.vmdcName);
    const baseline = { config: vm.simulator.currentConfig!, routeSpecs: await routeSpecs(kc, opts.namespace, routeObjectsOf(manifests)) };
    return Object.assign(parts as E2EStack, { manifests, vmdc: created, baseline });
  } catch (err) {
    await cp.stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------
// what is out of read rotation, seen three ways: vmauth's rendered config, the records on the
// route objects, the VMDistributedCluster status

/**
 * The zones (VMCluster names) a rendered config no longer routes to on some route that reached
 * them in `baseline` (a config rendered with every zone in rotation).
 */
export function zonesMissingFrom(routes: Record<string, string[]>, baseline: Record<string, string[]>): string[] {
  const missing = new Set<string>();
  for (const [route, zs] of Object.entries(baseline)) for (const z of zs) if (!routes[route]?.includes(z)) missing.add(z);
  return [...missing].sort();
}

/** The out-of-rotation records on one route object, as written: key `<uid>/<zone>` → record. */
export interface RecordOnRoute {
  route: string;
  key: string;
  zone: string;
  uid: string;
  vmcluster: string;
}

/** Every record (annotation vmrollout.io/out-of-rotation) on the given route objects, read raw. */
export async function recordsOnRoutes(kc: k8s.KubeConfig, namespace: string, routes: Array<{ kind: string; name: string }>): Promise<RecordOnRoute[]> {
  const out: RecordOnRoute[] = [];
  for (const r of routes) {
    const value = (await getObject(kc, r.kind, namespace, r.name)).metadata.annotations?.[OUT_OF_ROTATION_ANNOTATION];
    if (value === undefined) continue;
    const parsed = JSON.parse(value) as Record<string, { zone: string; vmdc: { uid: string }; vmcluster: { name: string } }>;
    for (const [key, rec] of Object.entries(parsed))
      out.push({ route: `${r.kind}/${r.name}`, key, zone: rec.zone, uid: rec.vmdc.uid, vmcluster: rec.vmcluster.name });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// the commands a person runs (docs/operations.md#runbook-failed-zone: kubectl, `temporal workflow cancel`,
// `kubectl vmdc release-zone`)

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command (no shell), never throwing on a non-zero exit. */
export function runCommand(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: REPO_ROOT, env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) + (err && code === -1 ? `\n${err.message}` : '') });
      },
    );
  });
}

/** The harness' kubectl against the harness' kube-apiserver. */
export const kubectl = (kubeconfigPath: string, args: string[]) => runCommand(toolPath('kubectl'), ['--kubeconfig', kubeconfigPath, ...args]);

/** The `temporal` CLI against a Temporal server (e.g. `workflow cancel -w <id>`). */
export const temporalCli = (address: string, namespace: string, args: string[]) =>
  runCommand(toolPath('temporal'), [...args, '--address', address, '--namespace', namespace]);

/** `npx tsx cli/main.ts release-zone ARGS` (`kubectl vmdc release-zone` from the checkout; tsx from node_modules, as `npx tsx` runs it). */
export const releaseZone = (args: string[]) =>
  runCommand(path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), [path.join(REPO_ROOT, 'cli', 'main.ts'), 'release-zone', ...args], { timeoutMs: 120_000 });

/** The Events the worker raised on an object (`after`: names to leave out), in order, as `reason [zone]`. */
export async function workerEvents(kc: k8s.KubeConfig, namespace: string, name: string, after: Set<string> = new Set()): Promise<string[]> {
  const list = JSON.parse((await kubeRaw(kc, 'GET', `/api/v1/namespaces/${namespace}/events?fieldSelector=involvedObject.name%3D${name}`)).body) as {
    items: Array<{ reason: string; message: string; reportingComponent?: string; metadata: { name: string; resourceVersion: string } }>;
  };
  return (
    list.items
      .filter((e) => e.reportingComponent === 'vmrollout.io/worker' && !after.has(e.metadata.name))
      // Timestamps have whole seconds; the storage revision orders Events created within one.
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
      .map((e) => [e.reason, e.reason.startsWith('Zone') ? /^zone (az-\w)/.exec(e.message)?.[1] : undefined].filter(Boolean).join(' '))
  );
}

/** The names of the Events on an object now. */
export async function eventNames(kc: k8s.KubeConfig, namespace: string, name: string): Promise<Set<string>> {
  const list = JSON.parse((await kubeRaw(kc, 'GET', `/api/v1/namespaces/${namespace}/events?fieldSelector=involvedObject.name%3D${name}`)).body) as {
    items: Array<{ metadata: { name: string } }>;
  };
  return new Set(list.items.map((e) => e.metadata.name));
}
