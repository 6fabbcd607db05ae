// The trigger on the real stack (issue 13, items 3 and the trigger part of 4): a real
// kube-apiserver + etcd, a real Temporal dev server, the real trigger; no worker (workflows are
// only started). Prints ONE JSON document and writes it to .tmp/bench/trigger.json; compares within
// one run and never asserts a timing.
//
// 1. CR edit → workflow started: the trigger in this process; spec edits (clusterVersion, so each
//    is a new generation) of one busy object (the supersede path) and round-robin over many
//    objects. t0 = this process receiving the API server's answer to the edit, t1 = the workflow's
//    start time as Temporal records it (describe().startTime): the same machine clock. An edit whose
//    generation got no workflow of its own (a newer one overtook it while it was queued: the trigger
//    is level-triggered) is done when a newer generation's workflow started. Where the time goes:
//    every Temporal RPC and Kubernetes call of each reconciliation (trigger-instrument.ts). The
//    trigger is wired as production wires it: its KubeConfig on keep-alive agents (withKeepAliveAgent,
//    what startTrigger's default defaultKubeConfig() does), at most RECONCILE_CONCURRENCY (default 32)
//    reconciliations at once, failed ones retried with jittered backoff.
// 2. Memory and resync with N objects: the trigger as its own process (trigger-child.ts, compiled
//    with tsc and run by node as in the image; `--tsx` runs it through tsx instead): VmRSS from
//    /proc (what an SRE sees), heap after GC, CPU seconds of every process of the stack. The child
//    runs with the production defaults (keep-alive agents, RECONCILE_CONCURRENCY unset: 32).
//    - baseline: no object;
//    - backlog: N objects (every tenth paused) created while no trigger ran, then the trigger (a
//      time budget: one that has not handled them all by then is reported so, with its failures);
//    - steady: a restart on those N handled objects (time to the first list, `synced`, idle), then
//      two relists (the watch's `relist` restart), with the Temporal and Kubernetes calls of each
//      (a paused object whose status already shows Paused gets no pause signal again);
//    - the drift reporter's per-relist cost at N VMDistributedClusters × 6N VM objects (pure model:
//      the stack run has no VM objects).
//    Each phase is also written to .tmp/bench/trigger.partial.json as it ends.
// Memory is compared with the chart's trigger request and limit (charts/vmrollout/values.yaml).
//
// Run: npx tsx bench/stack/trigger.ts [--quick] [--tsx] [--objects N] [--edits N] [--part edit|scale] [--cpu-prof]
import { fork, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, WorkflowNotFoundError } from '@temporalio/client';
import { parse as parseYaml } from 'yaml';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION } from '../../api/constants';
import { STRICT_TRUST_POLICY, validateUnderPolicy, type TrustPolicy } from '../../api/trust-policy';
import { workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { withKeepAliveAgent } from '../../kube/keep-alive';
import { DEFAULT_CONCURRENCY } from '../../trigger/queue';
import { ObjectDriftIndex, driftReport, type ObjectDrift } from '../../trigger/drift';
import { createKubeOps } from '../../trigger/kube';
import type { Logger, LogFields } from '../../trigger/log';
import { startTrigger } from '../../trigger/main';
import { installCRDs, startKube, VM_OPERATOR_CRDS } from '../../test/infra/harness/kube';
import { guardPid, harnessTempDir, stopAll, waitFor } from '../../test/infra/harness/processes';
import { startTemporalDevServer } from '../../test/infra/harness/temporal';
import { round } from '../analysis/stats';
import { forEachLimit } from '../support/concurrency';
import { provenance } from '../support/provenance';
import { CallCounter, instrumentReconciler, recordedKubeOps, temporalRecorder, type ReconcileRecord, type Span } from './trigger-instrument';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const OUT_DIR = path.join(REPO_ROOT, '.tmp', 'bench');
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const useTsx = argv.includes('--tsx');
const num = (flag: string, dflt: number): number => {
  const i = argv.indexOf(flag);
  return i >= 0 && argv[i + 1] ? Number(argv[i + 1]) : dflt;
};
const EDITS = num('--edits', quick ? 20 : 200);
/** `--part edit` or `--part scale`: only that part (default both). */
const PART = argv.includes('--part') ? argv[argv.indexOf('--part') + 1] : 'all';
/** What is known so far, rewritten after each phase (.tmp/bench/trigger.partial.json): a run cut short still tells. */
const partial: Record<string, unknown> = {};
function savePartial(key: string, value: unknown): void {
  partial[key] = value;
  fs.mkdirSync(OUT_DIR, { recursive: true });
  fs.writeFileSync(path.join(OUT_DIR, 'trigger.partial.json'), JSON.stringify(partial, null, 2) + '\n');
}
const MANY_OBJECTS = quick ? 5 : 20;
const OBJECTS = num('--objects', quick ? 500 : 5000);
/** Open loop: one edit every this many ms (single object: 10 edits/s; many objects: 40/s in all). */
const SINGLE_INTERVAL_MS = 100;
const MANY_INTERVAL_MS = 25;
/** Every tenth scale object is paused (spec.paused: true). */
const PAUSED_EVERY = 10;
const CREATE_CONCURRENCY = 16;
const TARGET_P99_MS = 1000;
/** A Kubernetes memory quantity (`256Mi`, `1Gi`, `512M`, bytes) in MiB. */
function memoryMB(q: unknown): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(String(q).trim());
  if (!m) throw new Error(`charts/vmrollout/values.yaml: cannot read the memory quantity ${JSON.stringify(q)}`);
  const factor: Record<string, number> = { '': 2 ** -20, Ki: 2 ** -10, Mi: 1, Gi: 2 ** 10, K: 1e3 / 2 ** 20, M: 1e6 / 2 ** 20, G: 1e9 / 2 ** 20 };
  // (not round(): module initialisation has not reached it yet)
  return Math.round(Number(m[1]) * factor[m[2] ?? '']! * 10) / 10;
}
/** charts/vmrollout/values.yaml trigger.resources: what the memory figures are compared with. */
const TRIGGER_RESOURCES = (
  parseYaml(fs.readFileSync(path.join(REPO_ROOT, 'charts', 'vmrollout', 'values.yaml'), 'utf8')) as {
    trigger: { resources: { requests: { memory: unknown }; limits: { memory: unknown } } };
  }
).trigger.resources;
const TRIGGER_MEMORY_LIMIT_MB = memoryMB(TRIGGER_RESOURCES.limits.memory);
const TRIGGER_MEMORY_REQUEST_MB = memoryMB(TRIGGER_RESOURCES.requests.memory);
const EDIT_NS = 'bench-edit';
const SCALE_NS = 'bench-scale';
/** How long the trigger gets for the backlog of N objects before it is reported as not handling it. */
const BACKLOG_BUDGET_MS = (quick ? 5 : 6) * 60_000;
const POLICY: TrustPolicy = STRICT_TRUST_POLICY;

const progress = (msg: string) => process.stderr.write(`[bench trigger +${((Date.now() - T_START) / 1000).toFixed(1)}s] ${msg}\n`);
const T_START = Date.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------
// objects

/** A spec like examples/vmdc-basic.yaml (three zones, overlays): a realistic object size. */
function vmdcSpec(name: string, clusterVersion: string, paused = false): Record<string, unknown> {
  return {
    clusterVersion,
    ...(paused ? { paused: true } : {}),
    overrideSpec: { retentionPeriod: '30d', vmselect: { extraArgs: { 'search.maxConcurrentRequests': '16' } } },
    zones: ['a', 'b', 'c'].map((z) => ({
      name: `az-${z}`,
      vmcluster: { name: `${name}-${z}`, overrideSpec: { vmstorage: { replicaCount: 3 } } },
      vmuser: { name: `${name}-reads-${z}` },
      remoteWriteURL: `http://vminsert-${name}-${z}.monitoring.svc:8480/insert/0/prometheus/api/v1/write`,
    })),
    vmauth: { name: `${name}-global` },
    vmagent: { name: `${name}-global` },
    strategy: { order: 'Declared', readDrainDelay: '45s', queueDrainedFor: '2m', queueEmptyBytes: 65536, pollInterval: '10s', zoneTimeout: '1h30m' },
  };
}
const versionOf = (i: number) => `v1.${200 + i}.0-cluster`;

interface Vmdc {
  metadata: { name: string; namespace: string; uid: string; generation: number; resourceVersion: string };
  status?: VMDistributedClusterStatus;
}

function vmdcApi(kc: k8s.KubeConfig) {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const base = { group: GROUP, version: VERSION, plural: PLURAL };
  return {
    create: async (namespace: string, name: string, spec: Record<string, unknown>) =>
      (await custom.createNamespacedCustomObject({ ...base, namespace, body: { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec } })) as Vmdc,
    get: async (namespace: string, name: string) => (await custom.getNamespacedCustomObject({ ...base, namespace, name })) as Vmdc,
    list: async (namespace: string) => (await custom.listNamespacedCustomObject({ ...base, namespace })) as { items: Vmdc[] },
  };
}

/**
 * Spec merge patches over one keep-alive connection pool: the edits of part 1 are sent from the
 * trigger's own process, and client-node opens a new TLS connection per request (a new
 * https.Agent each time), which would load the event loop the trigger is measured on.
 */
async function keepAlivePatcher(kc: k8s.KubeConfig): Promise<(namespace: string, name: string, spec: Record<string, unknown>) => Promise<Vmdc>> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 8, ca: opts.ca, cert: opts.cert, key: opts.key });
  const server = new URL(kc.getCurrentCluster()!.server);
  return (namespace, name, spec) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ spec });
      const req = https.request(
        {
          agent,
          host: server.hostname,
          port: server.port,
          method: 'PATCH',
          path: `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL}/${name}`,
          headers: { 'content-type': 'application/merge-patch+json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            if ((res.statusCode ?? 0) >= 300) reject(new Error(`PATCH ${namespace}/${name}: HTTP ${res.statusCode}: ${text}`));
            else resolve(JSON.parse(text) as Vmdc);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

// ---------------------------------------------------------------------------------------
// statistics

interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}
/** Nearest-rank percentiles. */
function summarize(xs: number[]): Summary {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]! : NaN);
  return {
    n: s.length,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: s.length ? s[s.length - 1]! : NaN,
    mean: s.length ? round(s.reduce((a, b) => a + b, 0) / s.length) : NaN,
  };
}
const brief = (s: Summary) => ({ p50: s.p50, p95: s.p95, max: s.max });

// ---------------------------------------------------------------------------------------
// CPU seconds of the stack's processes (utime + stime from /proc/<pid>/stat), per phase

const CLK_TCK = 100;
type Pids = Record<string, number>;
function cpuSeconds(pid: number): number {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}
/** Starts measuring; the returned function gives each process's CPU seconds since. */
function cpuMeter(pids: Pids): () => Record<string, number> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
  return () => Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, round(cpuSeconds(pid) - before[k]!, 2)]));
}

// ---------------------------------------------------------------------------------------
// part 1: CR edit → workflow started (trigger in this process)

interface Edit {
  key: string;
  name: string;
  uid: string;
  generation: number;
  sentAt: number;
  answeredAt: number;
}

/** A Logger that records when each watch event arrived and writes warnings and errors to a file. */
function recordingLogger(file: string, onWatchEvent: (object: string, generation: number, at: number) => void, base: LogFields = {}): Logger {
  const write = (level: string) => (msg: string, fields?: LogFields) => {
    const f = { ...base, ...fields };
    if (msg === 'watch event' && typeof f.object === 'string' && typeof f.generation === 'number') onWatchEvent(f.object, f.generation, Date.now());
    if (level === 'warn' || level === 'error') {
      let line: string;
      try {
        line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...f });
      } catch {
        line = JSON.stringify({ level, msg });
      }
      fs.appendFileSync(file, line + '\n');
    }
  };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (f) => recordingLogger(file, onWatchEvent, { ...base, ...f }),
  };
}

async function editToStart(kc: k8s.KubeConfig, kubeconfigPath: string, temporalAddress: string, logDir: string, stackPids: Pids) {
  const api = vmdcApi(kc);
  // The trigger's own KubeConfig, as startTrigger's default (defaultKubeConfig) makes it: loaded
  // afresh, on keep-alive agents. Not the benchmark's `kc`, whose requests are not the trigger's.
  const triggerKc = new k8s.KubeConfig();
  triggerKc.loadFromFile(kubeconfigPath);
  withKeepAliveAgent(triggerKc);
  const patchSpec = await keepAlivePatcher(kc);
  const counter = new CallCounter();
  const connection = await Connection.connect({
    address: temporalAddress,
    interceptors: [temporalRecorder(counter), makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
  });
  const client = new Client({ connection, namespace: 'default' });
  const records: ReconcileRecord[] = [];
  const restore = instrumentReconciler({ onReconcile: (r) => records.push(r) });
  const watchEvents = new Map<string, number>();
  const warnFile = path.join(logDir, `trigger-inprocess-${EDIT_NS}-warnings.log`);
  const trigger = await startTrigger(
    {
      temporal: { address: temporalAddress, namespace: 'default' },
      taskQueue: `bench-edit-${randomUUID()}`,
      watchNamespaces: [EDIT_NS],
      policy: { ...POLICY, createNamespaces: [EDIT_NS] },
      metricsPort: 0,
      logLevel: 'debug',
      relistIntervalMs: 600_000,
      watchIdleTimeoutMs: 120_000,
    },
    {
      kubeConfig: triggerKc,
      temporalClient: client,
      kube: recordedKubeOps(createKubeOps(triggerKc), counter),
      serveMetrics: false,
      log: recordingLogger(warnFile, (object, generation, at) => {
        const k = `${object}#${generation}`;
        if (!watchEvents.has(k)) watchEvents.set(k, at);
      }),
    },
  );
  await trigger.synced;

  const scenario = async (label: string, objects: number, intervalMs: number, offset: number) => {
    const names = Array.from({ length: objects }, (_, i) => `${label}-${i}`);
    const created: Vmdc[] = [];
    for (const n of names) created.push(await api.create(EDIT_NS, n, vmdcSpec(n, versionOf(offset))));
    // Generation 1 of each has its workflow and the finalizer: the steady state an edit starts from.
    for (const n of names) {
      await waitFor(async () => (await api.get(EDIT_NS, n)).status?.observedGeneration === 1, {
        timeoutMs: 30_000,
        intervalMs: 50,
        description: `${n} generation 1 handled`,
      });
    }
    await trigger.idle();
    counter.reset();
    const recordsFrom = records.length;
    const edits: Edit[] = [];
    const cpu = cpuMeter({ ...stackPids, benchAndTrigger: process.pid });
    const t0 = Date.now();
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < EDITS; i++) {
      const at = t0 + i * intervalMs;
      const wait = at - Date.now();
      if (wait > 0) await sleep(wait);
      const idx = i % objects;
      const name = names[idx]!;
      inFlight.push(
        (async () => {
          const sentAt = Date.now();
          const o = await patchSpec(EDIT_NS, name, { clusterVersion: versionOf(offset + 1 + i) });
          edits.push({ key: `${EDIT_NS}/${name}`, name, uid: o.metadata.uid, generation: o.metadata.generation, sentAt, answeredAt: Date.now() });
        })(),
      );
    }
    await Promise.all(inFlight);
    const editSpanMs = Date.now() - t0;
    // Done when each object's last generation is recorded (its workflow started, status written).
    for (const n of names) {
      const last = Math.max(...edits.filter((e) => e.name === n).map((e) => e.generation));
      await waitFor(async () => (await api.get(EDIT_NS, n)).status?.observedGeneration === last, {
        timeoutMs: 60_000,
        intervalMs: 50,
        description: `${n} generation ${last} handled`,
      });
    }
    await trigger.idle();
    const cpuSecondsUsed = cpu();
    const calls = counter.snapshot();
    const recs = records.slice(recordsFrom);

    // t1 of every generation edited, as Temporal recorded it.
    const startedAt = new Map<string, number | null>();
    for (const e of edits) {
      const id = workflowIdFor({ namespace: EDIT_NS, name: e.name, uid: e.uid, generation: e.generation });
      try {
        startedAt.set(`${e.key}#${e.generation}`, (await client.workflow.getHandle(id).describe()).startTime.getTime());
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        startedAt.set(`${e.key}#${e.generation}`, null);
      }
    }
    const latencies: number[] = [];
    const own: number[] = [];
    let coalesced = 0;
    const parts: Record<string, number[]> = {
      patchRoundTrip: [],
      apiToWatchEvent: [],
      queued: [],
      beforeStart: [],
      startRpc: [],
      serverStartInRpc: [],
      afterStart: [],
      statusWrite: [],
      event: [],
      supersedeSignal: [],
      reconcile: [],
    };
    const spanMs = (spans: Span[], op: string) => spans.filter((s) => s.op === op).reduce((a, s) => a + s.end - s.start, 0);
    for (const e of edits) {
      parts.patchRoundTrip!.push(e.answeredAt - e.sentAt);
      let t1 = startedAt.get(`${e.key}#${e.generation}`);
      if (t1 == null) {
        coalesced++;
        const later = edits
          .filter((x) => x.key === e.key && x.generation > e.generation)
          .map((x) => startedAt.get(`${x.key}#${x.generation}`))
          .filter((t): t is number => typeof t === 'number');
        t1 = later.length ? Math.min(...later) : null;
      } else own.push(t1 - e.answeredAt);
      if (t1 == null) continue;
      latencies.push(t1 - e.answeredAt);
      const ev = watchEvents.get(`${e.key}#${e.generation}`);
      const rec = recs.find((r) => r.key === e.key && r.generation === e.generation && r.spans.some((s) => s.op === 'temporal:StartWorkflowExecution'));
      const start = rec?.spans.find((s) => s.op === 'temporal:StartWorkflowExecution');
      if (ev === undefined || !rec || !start || startedAt.get(`${e.key}#${e.generation}`) == null) continue;
      const wf = startedAt.get(`${e.key}#${e.generation}`)!;
      parts.apiToWatchEvent!.push(ev - e.answeredAt);
      parts.queued!.push(rec.begin - ev);
      parts.beforeStart!.push(start.start - rec.begin);
      parts.startRpc!.push(start.end - start.start);
      parts.serverStartInRpc!.push(wf - start.start);
      parts.afterStart!.push(rec.end - start.end);
      parts.statusWrite!.push(spanMs(rec.spans, 'kube:patchStatus'));
      parts.event!.push(spanMs(rec.spans, 'kube:createEvent'));
      parts.supersedeSignal!.push(spanMs(rec.spans, 'temporal:SignalWorkflowExecution'));
      parts.reconcile!.push(rec.end - rec.begin);
    }
    const s = summarize(latencies);
    return {
      objects,
      edits: edits.length,
      intervalMs,
      editsPerSecond: round((edits.length * 1000) / editSpanMs),
      ...s,
      ownWorkflow: brief(summarize(own)),
      coalesced,
      /** ms; p50/p95/max of each step, over the edits whose own generation got a workflow. */
      breakdown: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, brief(summarize(v))])),
      reconciles: recs.length,
      reconcilesPerEdit: round(recs.length / edits.length, 2),
      calls: calls.counts,
      callsPerEdit: Object.fromEntries(Object.entries(calls.counts).map(([k, v]) => [k, round(v / edits.length, 2)])),
      failedCalls: calls.failures,
      /** CPU seconds from the first edit until every last generation was recorded; benchAndTrigger = this process. */
      cpuSeconds: cpuSecondsUsed,
    };
  };

  try {
    progress(`edit → start (${EDIT_NS}): one busy object, ${EDITS} edits every ${SINGLE_INTERVAL_MS} ms`);
    const single = await scenario('single', 1, SINGLE_INTERVAL_MS, 0);
    progress(`edit → start (${EDIT_NS}): ${MANY_OBJECTS} objects, ${EDITS} edits every ${MANY_INTERVAL_MS} ms round-robin`);
    const many = await scenario('many', MANY_OBJECTS, MANY_INTERVAL_MS, 1000);
    const warnings = fs.existsSync(warnFile) ? fs.readFileSync(warnFile, 'utf8').split('\n').filter(Boolean).length : 0;
    return { single, many, triggerWarnings: warnings, reconcileErrors: (await trigger.metrics.reconcileErrors.get()).values[0]?.value ?? 0 };
  } finally {
    await trigger.stop();
    restore();
    await connection.close();
  }
}

// ---------------------------------------------------------------------------------------
// part 2: the trigger as a process, N objects

type ChildMsg = { type: string; [k: string]: unknown };
interface ChildStats {
  calls: { counts: Record<string, number>; failures: Record<string, number>; reasons: Record<string, number> };
  reconciles: { ok: number; failed: number; meanMs: number; maxMs: number; handled: number };
  sweeps: number;
  watchRestarts: number;
  mem: NodeJS.MemoryUsage;
}

class ChildTrigger {
  private readonly inbox: ChildMsg[] = [];
  private readonly waiters: Array<{ type: string; resolve: (m: ChildMsg) => void; reject: (e: Error) => void }> = [];
  private exited = false;
  readonly forkedAt = Date.now();
  private release: () => void;

  private constructor(readonly proc: ChildProcess) {
    this.release = guardPid(proc.pid!, 'bench trigger child');
    proc.on('message', (m: ChildMsg) => {
      if (m.type === 'error') {
        progress(`trigger child ${proc.pid}: ${String(m.message)}`);
        for (const w of this.waiters.splice(0)) w.reject(new Error(`trigger child: ${String(m.message)}`));
        return;
      }
      const i = this.waiters.findIndex((w) => w.type === m.type);
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(m);
      else this.inbox.push(m);
    });
    proc.on('exit', (code, signal) => {
      this.exited = true;
      this.release();
      for (const w of this.waiters.splice(0)) w.reject(new Error(`trigger child exited (${code ?? signal}) waiting for ${w.type}`));
    });
  }

  static start(entry: string, execArgv: string[], env: NodeJS.ProcessEnv, logFile: string): ChildTrigger {
    const fd = fs.openSync(logFile, 'a');
    const proc = fork(entry, [], { cwd: REPO_ROOT, env, execArgv, stdio: ['ignore', fd, fd, 'ipc'] });
    fs.closeSync(fd);
    return new ChildTrigger(proc);
  }

  get pid(): number {
    return this.proc.pid!;
  }

  next(type: string, timeoutMs = 120_000): Promise<ChildMsg> {
    const i = this.inbox.findIndex((m) => m.type === type);
    if (i >= 0) return Promise.resolve(this.inbox.splice(i, 1)[0]!);
    if (this.exited) return Promise.reject(new Error(`trigger child has exited; no ${type}`));
    return new Promise((resolve, reject) => {
      const w = {
        type,
        resolve: (m: ChildMsg) => {
          clearTimeout(t);
          resolve(m);
        },
        reject: (e: Error) => {
          clearTimeout(t);
          reject(e);
        },
      };
      const t = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for the trigger child's ${type}`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  request(cmd: Record<string, unknown>, reply: string, timeoutMs?: number): Promise<ChildMsg> {
    const p = this.next(reply, timeoutMs);
    this.proc.send(cmd);
    return p;
  }

  async stats(gc = false): Promise<ChildStats> {
    return (await this.request({ cmd: 'stats', gc }, 'stats')) as unknown as ChildStats;
  }

  /** VmRSS and VmHWM (peak) of the process, MB. */
  memory(): { rssMB: number; peakMB: number } {
    const st = fs.readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(st)?.[1] ?? NaN);
    return { rssMB: round(kb('VmRSS') / 1024), peakMB: round(kb('VmHWM') / 1024) };
  }

  /** RSS after a quiet moment: the median of samples over ~1.5 s. */
  async settledRss(): Promise<number> {
    await sleep(1500);
    const xs: number[] = [];
    for (let i = 0; i < 5; i++) {
      xs.push(this.memory().rssMB);
      await sleep(300);
    }
    return summarize(xs).p50;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.send({ cmd: 'stop' });
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(t);
  }
}

/** Compiles trigger-child.ts and what it imports with tsc (as the image does); the entry's path. */
async function compileChild(): Promise<{ entry: string; ms: number }> {
  const dir = path.join(OUT_DIR, 'trigger-build');
  fs.mkdirSync(dir, { recursive: true });
  const rel = path.relative(dir, REPO_ROOT);
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify(
      {
        extends: path.join(rel, 'tsconfig.build.json'),
        compilerOptions: { outDir: 'dist', rootDir: rel, sourceMap: false, declaration: false, incremental: false },
        // Everything the image builds (process/ resolves workflows/ files at run time), and the child.
        files: [path.join(rel, 'bench', 'stack', 'trigger-child.ts')],
        include: ['api', 'kube', 'process', 'workflows', 'activities', 'worker', 'trigger'].map((d) => path.join(rel, d)),
        exclude: [path.join(rel, 'node_modules'), path.join(rel, '**', '*.test.ts')],
      },
      null,
      2,
    ),
  );
  const start = Date.now();
  const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const out: string[] = [];
  const code = await new Promise<number | null>((resolve) => {
    const p = spawn(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout.on('data', (d: Buffer) => out.push(d.toString()));
    p.stderr.on('data', (d: Buffer) => out.push(d.toString()));
    p.on('exit', resolve);
  });
  if (code !== 0) throw new Error(`tsc failed (${code}):\n${out.join('')}`);
  return { entry: path.join(dir, 'dist', 'bench', 'stack', 'trigger-child.js'), ms: Date.now() - start };
}

/**
 * What the drift reporter does per VMDistributedCluster event (driftReport over every VM object the
 * watches hold), once per object of a relist: M = 6 VM objects per VMDistributedCluster (3
 * VMClusters, 3 VMUsers; VMAuth and VMAgent shared), one in six carrying an applied record.
 * In-process and pure: the stack run has no VM objects, so its resync does not show this cost.
 */
function driftModel(n: number): { vmdcs: number; vmObjects: number; msPerRelist: number; msPerRelistFullScan: number } {
  const objects: ObjectDrift[] = [];
  const index = new ObjectDriftIndex();
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < 6; j++) {
      const o: ObjectDrift = { kind: j < 3 ? 'VMCluster' : 'VMUser', namespace: SCALE_NS, name: `s${i}-${j}`, resourceVersion: String(i * 6 + j) };
      if (j === 0) o.applied = { vmdc: { name: `s${i}`, uid: `uid-${i}` }, fields: [], outOfReads: false };
      objects.push(o);
      index.set(`${o.kind}/${o.namespace}/${o.name}`, o);
    }
  }
  // As the trigger reports now (the index by VMDistributedCluster), and as before it (every object scanned per report).
  const relist = (of: (i: number) => Iterable<ObjectDrift>) => {
    const start = process.hrtime.bigint();
    let checked = 0;
    for (let i = 0; i < n; i++) checked += driftReport({ namespace: SCALE_NS, name: `s${i}`, uid: `uid-${i}` }, of(i)).checked.length;
    if (checked !== n) throw new Error(`drift model: ${checked} reports`);
    return round(Number(process.hrtime.bigint() - start) / 1e6);
  };
  return { vmdcs: n, vmObjects: objects.length, msPerRelist: relist((i) => index.of(SCALE_NS, `s${i}`)), msPerRelistFullScan: relist(() => objects) };
}

async function scale(
  kc: k8s.KubeConfig,
  kubeconfigPath: string,
  temporalAddress: string,
  logDir: string,
  child: { entry: string; execArgv: string[]; runtime: string },
  stackPids: Pids,
) {
  const api = vmdcApi(kc);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    KUBECONFIG: kubeconfigPath,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    // No worker polls it: the workflows are started and stay running.
    TASK_QUEUE: `bench-scale-${randomUUID()}`,
    WATCH_NAMESPACES: SCALE_NS,
    CREATE_NAMESPACES: SCALE_NS,
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    // Relists are driven by the benchmark (the same restart the timer does).
    RELIST_INTERVAL: '1h',
    WATCH_IDLE_TIMEOUT: '2m',
  };
  let seq = 0;
  const startChild = () => ChildTrigger.start(child.entry, child.execArgv, env, path.join(logDir, `trigger-child-${++seq}.log`));
  const createObjects = async () => {
    const start = Date.now();
    await forEachLimit(names, CREATE_CONCURRENCY, async (n) => {
      await api.create(SCALE_NS, n, vmdcSpec(n, versionOf(0), Number(n.slice(1)) % PAUSED_EVERY === 0));
    });
    return Date.now() - start;
  };
  const names = Array.from({ length: OBJECTS }, (_, i) => `s${String(i).padStart(5, '0')}`);
  const sum = (c: Record<string, number>, prefix: string) =>
    Object.entries(c)
      .filter(([k]) => k.startsWith(prefix))
      .reduce((a, [, v]) => a + v, 0);
  /**
   * Fork → every object handled (its workflow started, status written), within `budgetMs`; samples
   * the RSS meanwhile. A trigger that has not handled them all by then is reported as such.
   */
  const runBacklog = async (c: ChildTrigger, budgetMs: number) => {
    const cpu = cpuMeter({ ...stackPids, trigger: c.pid });
    const ready = (await c.next('ready')).ms as number;
    const synced = await c.next('synced', budgetMs);
    let st = await c.stats();
    let peakMB = 0;
    const progressAt: Array<[number, number]> = [];
    while (st.reconciles.handled < OBJECTS && Date.now() - c.forkedAt < budgetMs) {
      await sleep(1000);
      peakMB = Math.max(peakMB, c.memory().rssMB);
      st = await c.stats();
      if (progressAt.length === 0 || Date.now() - c.forkedAt >= progressAt[progressAt.length - 1]![0] + 30_000)
        progressAt.push([Date.now() - c.forkedAt, st.reconciles.handled]);
    }
    const completed = st.reconciles.handled >= OBJECTS;
    const ms = Date.now() - c.forkedAt;
    if (completed) await c.next('idle', 600_000);
    st = await c.stats();
    const mem = c.memory();
    return {
      completed,
      handled: st.reconciles.handled,
      /** Fork → every object handled (or the budget spent). */
      ms,
      objectsPerSecond: round((st.reconciles.handled * 1000) / ms),
      processStartMs: ready,
      listedMs: (synced.listedMs as number) - ready,
      syncedMs: (synced.ms as number) - ready,
      calls: st.calls.counts,
      failedCalls: st.calls.failures,
      failureReasons: st.calls.reasons,
      reconciles: st.reconciles,
      startsPerObject: round((st.calls.counts['temporal:StartWorkflowExecution'] ?? 0) / OBJECTS, 3),
      rssMB: mem.rssMB,
      peakRssMB: Math.max(peakMB, mem.peakMB),
      openFds: fs.readdirSync(`/proc/${c.pid}/fd`).length,
      cpuSeconds: cpu(),
      /** [ms since fork, objects handled], every 30 s. */
      progress: progressAt,
    };
  };

  // T0: no object: the baseline.
  progress('scale: baseline trigger process (no object)');
  const t0 = startChild();
  await t0.next('idle');
  const rssBaselineMB = await t0.settledRss();
  const baselineHeap = (await t0.stats(true)).mem.heapUsed;
  await t0.stop();

  // T1: the trigger meets N objects it never handled (created while no trigger ran): finalizer,
  // start, status for each.
  progress(`scale: creating ${OBJECTS} VMDistributedClusters`);
  const createMs = await createObjects();
  const paused = names.filter((n) => Number(n.slice(1)) % PAUSED_EVERY === 0).length;
  progress(`scale: trigger process with the backlog of ${OBJECTS} objects (budget ${BACKLOG_BUDGET_MS / 60_000} min)`);
  const t1 = startChild();
  const backlog = await runBacklog(t1, BACKLOG_BUDGET_MS);
  progress(`scale: backlog ${backlog.completed ? 'handled' : `NOT handled (${backlog.handled}/${OBJECTS})`} after ${backlog.ms} ms`);
  savePartial('scale.baseline', { rssBaselineMB, heapUsedBaselineMB: round(baselineHeap / 2 ** 20), createMs });
  savePartial('scale.backlog', backlog);
  await t1.stop();

  // T2: the trigger restarted on the N objects, every generation handled (only when the backlog
  // was: else the restart would still be handling it); then relists.
  let steady: Record<string, unknown> | undefined;
  let resyncMs = NaN;
  let initialSyncMs = NaN;
  let rssMB = NaN;
  let resyncTemporalCalls = NaN;
  if (backlog.completed) {
    progress(`scale: restarted trigger process on ${SCALE_NS} (every generation already handled), then relists`);
    const t2 = startChild();
    const restartCpu = cpuMeter({ ...stackPids, trigger: t2.pid });
    const ready = (await t2.next('ready')).ms as number;
    const synced = await t2.next('synced', 300_000);
    const idle = (await t2.next('idle', 600_000)) as unknown as ChildStats & { ms: number };
    const restartCpuSeconds = restartCpu();
    rssMB = await t2.settledRss();
    const heap = (await t2.stats(true)).mem.heapUsed;
    const restartPeak = t2.memory().peakMB;
    const relists: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 2; i++) {
      const cpu = cpuMeter({ ...stackPids, trigger: t2.pid });
      const x = (await t2.request({ cmd: 'relist' }, 'relisted', 600_000)) as unknown as ChildStats & { ms: number; listMs: number };
      const temporalCalls = sum(x.calls.counts, 'temporal:');
      relists.push({
        ms: x.ms,
        listMs: x.listMs,
        calls: x.calls.counts,
        temporalCalls,
        kubeCalls: sum(x.calls.counts, 'kube:'),
        reconciles: x.reconciles,
        cpuSeconds: cpu(),
      });
      resyncMs = x.ms;
      resyncTemporalCalls = temporalCalls;
    }
    const afterRelist = { rssMB: await t2.settledRss(), peakMB: t2.memory().peakMB, heapUsedAfterGcMB: round((await t2.stats(true)).mem.heapUsed / 2 ** 20) };
    await t2.stop();
    initialSyncMs = idle.ms - ready;
    steady = {
      namespace: SCALE_NS,
      rssMB,
      heapUsedAfterGcMB: round(heap / 2 ** 20),
      restart: {
        processStartMs: ready,
        listedMs: (synced.listedMs as number) - ready,
        syncedMs: (synced.ms as number) - ready,
        idleMs: idle.ms - ready,
        calls: idle.calls.counts,
        reconciles: idle.reconciles,
        peakRssMB: restartPeak,
        cpuSeconds: restartCpuSeconds,
      },
      resync: relists,
      rssAfterRelistMB: afterRelist.rssMB,
      peakRssAfterRelistsMB: afterRelist.peakMB,
      heapUsedAfterRelistAfterGcMB: afterRelist.heapUsedAfterGcMB,
    };
    savePartial('scale.steady', steady);
  }

  return {
    objects: OBJECTS,
    pausedObjects: paused,
    runtime: child.runtime,
    createMs,
    rssBaselineMB,
    heapUsedBaselineMB: round(baselineHeap / 2 ** 20),
    /** Steady state: the restarted trigger with N handled objects, after a quiet moment. */
    rssMB,
    /** The restarted trigger with N objects, every generation handled: start → list, every object reconciled, orphan sweep done. */
    initialSyncMs,
    /** A relist of that trigger (the watch's `relist` restart: fresh list, every object reconciled again, orphan sweep). */
    resyncMs,
    resyncTemporalCalls,
    steady,
    /** The trigger meeting N never-handled objects at once. */
    backlog,
    driftReportModel: driftModel(OBJECTS),
  };
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  fs.mkdirSync(OUT_DIR, { recursive: true });
  for (const [name, paused] of [
    ['s00000', true],
    ['single-0', false],
  ] as const) {
    const v = validateUnderPolicy(vmdcSpec(name, versionOf(0), paused), SCALE_NS, POLICY);
    if (!v.success) throw new Error(`the benchmark's spec is invalid: ${JSON.stringify(v.issues)}`);
  }
  const logDir = harnessTempDir('bench-trigger');
  const runInfo = provenance();
  progress(`logs in ${logDir}`);
  const compiling = useTsx ? undefined : compileChild();
  compiling?.catch(() => undefined);
  const [kube, temporal] = await Promise.all([startKube({ dir: path.join(logDir, 'kube') }), startTemporalDevServer({ ui: false, logDir })]);
  try {
    const kc = kube.kubeConfig;
    await installCRDs(kc, [VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds')]);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    for (const name of [EDIT_NS, SCALE_NS]) await core.createNamespace({ body: { metadata: { name } } });
    progress(`kube-apiserver ${kube.server}, Temporal ${temporal.address}`);

    // Compiled before any measurement: tsc must not compete with the trigger for the CPU.
    let child: { entry: string; execArgv: string[]; runtime: string; compileMs?: number };
    if (compiling) {
      const c = await compiling;
      child = { entry: c.entry, execArgv: ['--expose-gc'], runtime: 'node (tsc-compiled, as in the image)', compileMs: c.ms };
    } else {
      child = { entry: path.join(__dirname, 'trigger-child.ts'), execArgv: ['--expose-gc', '--import', 'tsx'], runtime: 'node --import tsx' };
    }
    // --cpu-prof: each trigger child writes a V8 CPU profile into <logs>/prof (it slows the child down:
    // for finding where its CPU goes, not for the figures).
    if (argv.includes('--cpu-prof')) {
      child.execArgv.push('--cpu-prof', `--cpu-prof-dir=${path.join(logDir, 'prof')}`);
      child.runtime += ' --cpu-prof';
    }

    const stackPids: Pids = { apiserver: kube.apiserver.pid, etcd: kube.etcd.process.pid, temporal: temporal.process.pid };
    let edit: Awaited<ReturnType<typeof editToStart>> | undefined;
    if (PART !== 'scale') {
      edit = await editToStart(kc, kube.kubeconfigPath, temporal.address, logDir, stackPids);
      savePartial('editToStart', edit);
    }
    const sc = PART !== 'edit' ? await scale(kc, kube.kubeconfigPath, temporal.address, logDir, child, stackPids) : undefined;
    /** A ratio, or NaN when a part it needs did not run. */
    const r = (f: () => number): number => {
      try {
        return f();
      } catch {
        return NaN;
      }
    };

    const allRatios: Record<string, number> = {
      p99OverTarget: r(() => Math.max(edit!.single.p99, edit!.many.p99) / TARGET_P99_MS),
      singleP99OverTarget: r(() => edit!.single.p99 / TARGET_P99_MS),
      manyP99OverTarget: r(() => edit!.many.p99 / TARGET_P99_MS),
      singleP99OverP50: r(() => edit!.single.p99 / edit!.single.p50),
      manyP99OverP50: r(() => edit!.many.p99 / edit!.many.p50),
      queuedShareOfP95Many: r(() => (edit!.many.breakdown.queued?.p95 ?? NaN) / edit!.many.p95),
      startRpcShareOfP50Single: r(() => (edit!.single.breakdown.startRpc?.p50 ?? NaN) / edit!.single.p50),
      resyncVsInitialSync: r(() => sc!.resyncMs / sc!.initialSyncMs),
      rssPerThousandObjectsMB: r(() => (sc!.rssMB - sc!.rssBaselineMB) / (OBJECTS / 1000)),
      rssOverLimit: r(() => sc!.rssMB / TRIGGER_MEMORY_LIMIT_MB),
      rssOverRequest: r(() => sc!.rssMB / TRIGGER_MEMORY_REQUEST_MB),
      rssBaselineOverRequest: r(() => sc!.rssBaselineMB / TRIGGER_MEMORY_REQUEST_MB),
      rssOverBaseline: r(() => sc!.rssMB / sc!.rssBaselineMB),
      backlogPeakRssOverLimit: r(() => sc!.backlog.peakRssMB / TRIGGER_MEMORY_LIMIT_MB),
      resyncTemporalCallsPerObject: r(() => sc!.resyncTemporalCalls / OBJECTS),
      resyncTemporalCallsPerPausedObject: r(() => sc!.resyncTemporalCalls / Math.max(1, sc!.pausedObjects)),
      backlogHandledShare: r(() => sc!.backlog.handled / OBJECTS),
      backlogMsPerHandledObject: r(() => sc!.backlog.ms / sc!.backlog.handled),
      backlogStartsPerObject: r(() => sc!.backlog.startsPerObject),
      backlogTriggerCpuVsApiserverCpu: r(() => sc!.backlog.cpuSeconds.trigger! / sc!.backlog.cpuSeconds.apiserver!),
      backlogVsResync: r(() => sc!.backlog.ms / sc!.resyncMs),
      backlogTriggerCoresBusy: r(() => sc!.backlog.cpuSeconds.trigger! / (sc!.backlog.ms / 1000)),
      driftModelVsResync: r(() => sc!.driftReportModel.msPerRelist / sc!.resyncMs),
      driftIndexVsFullScan: r(() => sc!.driftReportModel.msPerRelist / sc!.driftReportModel.msPerRelistFullScan),
    };
    // Every ratio is finite and > 0; one that cannot be (a phase that did not happen) is named instead.
    const ratios = Object.fromEntries(Object.entries(allRatios).filter(([, v]) => Number.isFinite(v) && v > 0));
    const ratiosNotApplicable = Object.keys(allRatios).filter((k) => !(k in ratios));
    const result = {
      benchmark: 'trigger',
      quick,
      ...runInfo,
      loadavgAtEnd: os.loadavg().map((x) => round(x, 2)),
      /** The trigger measured: production defaults (RECONCILE_CONCURRENCY unset in both parts). */
      trigger: { kubeAgents: 'keep-alive (withKeepAliveAgent)', reconcileConcurrency: DEFAULT_CONCURRENCY },
      editToStart: edit,
      scale: sc,
      ratios,
      ratiosNotApplicable,
      targets: {
        editToStartP99Ms: TARGET_P99_MS,
        triggerMemoryLimitMB: TRIGGER_MEMORY_LIMIT_MB,
        triggerMemoryRequestMB: TRIGGER_MEMORY_REQUEST_MB,
        resyncStartsPerObject: 0,
        resyncDescribesPerObject: 0,
      },
      childCompileMs: child.compileMs,
      logs: logDir,
    };
    const json = JSON.stringify(result, null, 2);
    fs.writeFileSync(path.join(OUT_DIR, 'trigger.json'), json + '\n');
    console.log(json);
  } finally {
    await temporal.stop().catch(() => undefined);
    await kube.stop().catch(() => undefined);
    await stopAll().catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench trigger failed: ${String((err as Error)?.stack ?? err)}\n`);
    void stopAll().finally(() => process.exit(1));
  },
);
