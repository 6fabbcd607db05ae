/**
 * The real worker and the real trigger as separate child processes that a chaos campaign can
 * SIGKILL and start again: `node --import tsx worker/main.ts` / `trigger/main.ts`, configured
 * through their environment exactly as in production (worker/config.ts, trigger/config.ts).
 *
 *  - One node process per incarnation: `node --import tsx <entry>` runs the entry in the process
 *    it starts (the `tsx` CLI would add a second, relaying process). It is spawned in its own
 *    process group by the harness (startProcess), and kill() signals the whole group, so nothing
 *    of an incarnation survives a SIGKILL; the harness' watchdog kills it if the test process dies.
 *  - The worker reaches the test bed's pods through the pod gateway in the test process
 *    (pod-gateway.ts): pod-network-preload.cjs is preloaded (`--require`) and POD_GATEWAY_URL set.
 *  - Identity: the KubeConfig given (e.g. a chart ServiceAccount's, installChartIdentities) is
 *    written to a kubeconfig FILE (KUBECONFIG). Payload keys: a keys file (TEMPORAL_PAYLOAD_KEYS_FILE).
 *    The workflow bundle: a prebuilt one (WORKFLOW_BUNDLE), built once per test process by
 *    scripts/bundle-workflows.ts (buildWorkflowBundle).
 *  - Readiness: the process's own /readyz (process/metrics-server.ts) on a metrics port fixed for
 *    the handle, so metricsUrl stays the same across restarts.
 *  - The child's environment is built from scratch (PATH, HOME, TMPDIR, LANG, TZ + the variables
 *    here + extraEnv), so nothing of the test process's environment (NODE_ENV, KUBECONFIG,
 *    TEMPORAL_*) leaks into its configuration.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { freePort } from '../harness/ports';
import { allProcStats, harnessTempDir, httpGet, procStat, startProcess, waitFor, type ManagedProcess, type ProcStat } from '../harness/processes';
import { REPO_ROOT } from '../harness/tools';

/** The preload that maps pod addresses to the gateway (see pod-network-preload.cjs). */
export const POD_NETWORK_PRELOAD = path.join(__dirname, 'pod-network-preload.cjs');

/** `node --require <preload> --import tsx`: how a child runs a .ts entry (preload optional). */
export function tsxNodeArgs(entry: string, opts: { preload?: boolean } = {}): string[] {
  return [...(opts.preload ? ['--require', POD_NETWORK_PRELOAD] : []), '--import', 'tsx', path.isAbsolute(entry) ? entry : path.join(REPO_ROOT, entry)];
}

// ---------------------------------------------------------------------------------------
// files the processes read

let bundleOnce: Promise<string> | undefined;

/**
 * The prebuilt workflow bundle (scripts/bundle-workflows.ts, as the image builds it), built once
 * per test process (about 10-20 s) and shared by every worker process started by it.
 */
export function buildWorkflowBundle(): Promise<string> {
  bundleOnce ??= new Promise<string>((resolve, reject) => {
    const out = path.join(harnessTempDir('workflow-bundle'), 'workflow-bundle.js');
    execFile(
      process.execPath,
      tsxNodeArgs('scripts/bundle-workflows.ts').concat(out),
      { cwd: REPO_ROOT, env: baseEnv(), timeout: 180_000, maxBuffer: 16 << 20 },
      (err, _stdout, stderr) => {
        if (err || !fs.existsSync(out)) reject(new Error(`bundling the workflows failed: ${err?.message ?? 'no output'}\n${String(stderr)}`));
        else resolve(out);
      },
    );
  });
  bundleOnce.catch(() => (bundleOnce = undefined));
  return bundleOnce;
}

/** Writes `kc` (e.g. a ServiceAccount token KubeConfig) to a kubeconfig file (mode 0600); returns its path. */
export function writeKubeconfigFile(kc: KubeConfig, dir = harnessTempDir('kubeconfig'), name = 'kubeconfig'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, kc.exportConfig(), { mode: 0o600 });
  return file;
}

/** Writes a payload keys file (process/payload-codec.ts format); a fresh random key unless `text` is given. */
export function writePayloadKeysFile(
  dir = harnessTempDir('payload-keys'),
  text = `chaos:${randomBytes(32).toString('base64')}\n`,
): { path: string; text: string } {
  const file = path.join(dir, 'payload-keys');
  fs.writeFileSync(file, text, { mode: 0o600 });
  return { path: file, text };
}

function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ', 'VMROLLOUT_CACHE']) if (process.env[k] !== undefined) env[k] = process.env[k];
  return env;
}

// ---------------------------------------------------------------------------------------
// process inspection

// A process that has exited but is not yet reaped holds nothing.
const live = (p: ProcStat): boolean => p.state !== 'Z' && p.state !== 'X';

/** pids in /proc whose process group is `pgid` or whose parent is `pid` (what would be an orphan of a killed incarnation). */
export function processesOf(pid: number): number[] {
  return allProcStats()
    .filter((p) => live(p) && (p.pid === pid || p.ppid === pid || p.pgrp === pid))
    .map((p) => p.pid);
}

/** Whether `pid` is a live (not zombie) process. */
export function pidAlive(pid: number): boolean {
  const p = procStat(pid);
  return p !== undefined && live(p);
}

// ---------------------------------------------------------------------------------------
// the handle

export interface Startup {
  pid: number;
  /** Date.now() when it was spawned. */
  startedAt: number;
  /** Date.now() when /readyz first answered 200; undefined while not (yet) ready. */
  readyAt?: number;
}

export interface Kill {
  pid: number;
  signal: NodeJS.Signals;
  at: number;
  /** Date.now() when the process was seen gone (terminating signals). */
  exitedAt?: number;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ControlProcess {
  readonly name: string;
  /** pid of the current incarnation (-1 before the first start). */
  readonly pid: number;
  readonly running: boolean;
  /** Readiness of the current incarnation: resolves when its /readyz answers 200, rejects if it exits first or is not ready in time. */
  readonly ready: Promise<void>;
  /** `http://127.0.0.1:<port>` of /metrics, /healthz, /readyz (the same port for every incarnation). */
  readonly baseUrl: string;
  /** `<baseUrl>/metrics` */
  readonly metricsUrl: string;
  readonly logPath: string;
  /** Every line of the log file so far (every incarnation; each begins with a `=== <time> start:` line). */
  readonly logs: string[];
  /** One entry per incarnation. */
  readonly startups: Startup[];
  readonly kills: Kill[];
  /** The environment each incarnation gets. */
  readonly env: Readonly<NodeJS.ProcessEnv>;
  /**
   * Sends `signal` (default SIGKILL) to the incarnation's whole process group. For SIGKILL, SIGTERM,
   * SIGINT and SIGQUIT waits until it exited and returns how; for others (SIGSTOP, SIGCONT) returns
   * at once (undefined). No-op (undefined) when not running.
   */
  kill(signal?: NodeJS.Signals): Promise<ExitInfo | undefined>;
  /** Starts a new incarnation unless one runs; resolves when it is ready (rejects if it is not). */
  start(): Promise<void>;
  /** Waits `ms`, then start(). */
  restartAfter(ms: number): Promise<void>;
  /** Graceful stop (SIGTERM, SIGKILL after the harness' grace). */
  stop(): Promise<void>;
  /** Resolves when the current incarnation exits. */
  exited(): Promise<ExitInfo>;
  logTail(lines?: number): string;
}

export interface ControlProcessOptions {
  /** Log file name and error messages; default `worker` / `trigger`. */
  name?: string;
  /** Its identity: a KubeConfig (written to a file) or a kubeconfig file path. */
  kubeConfig: KubeConfig | string;
  temporalAddress: string;
  /** Default `default`. */
  temporalNamespace?: string;
  taskQueue: string;
  /** TEMPORAL_PAYLOAD_KEYS_FILE; unset: payloads in plaintext. */
  payloadKeysFile?: string;
  /** LOG_LEVEL (default info). */
  logLevel?: string;
  /** The trust policy (CREATE_NAMESPACES, ALLOW_CROSS_NAMESPACE_TARGET_REFS). */
  createNamespaces?: string[];
  crossNamespaceTargetRefs?: boolean;
  /** METRICS_PORT (default: a free port, kept for every incarnation). */
  metricsPort?: number;
  logDir?: string;
  /** More variables (override the ones set here; undefined removes one), e.g. WORKER_INSTANCE. */
  extraEnv?: Record<string, string | undefined>;
  /** Default 120 s. */
  readyTimeoutMs?: number;
  /** Wait for readiness before returning (default true); either way `ready` tells. */
  waitReady?: boolean;
  /** Grace between SIGTERM and SIGKILL of stop() (default 10 s). */
  stopTimeoutMs?: number;
}

export interface WorkerProcessOptions extends ControlProcessOptions {
  /** WORKFLOW_BUNDLE; default buildWorkflowBundle(). */
  workflowBundle?: string;
  /** POD_GATEWAY_URL (and the preload); unset: no pod network (pod URLs are refused). */
  podGatewayUrl?: string;
  /** SHUTDOWN_GRACE_TIME (default 5s). */
  shutdownGraceTime?: string;
  /** VMAGENT_SCRAPE_TIMEOUT (default: the worker's). */
  scrapeTimeout?: string;
  /** TEMPORAL_METRICS_BIND port of the SDK's Prometheus exporter; default none (empty: disabled). */
  sdkMetricsPort?: number;
}

export interface TriggerProcessOptions extends ControlProcessOptions {
  /** WATCH_NAMESPACES (empty: all). */
  watchNamespaces: string[];
  relistInterval?: string;
  watchIdleTimeout?: string;
  finalizerRecheckInterval?: string;
}

const TERMINATING: NodeJS.Signals[] = ['SIGKILL', 'SIGTERM', 'SIGINT', 'SIGQUIT'];

async function commonEnv(o: ControlProcessOptions, port: number): Promise<NodeJS.ProcessEnv> {
  const kubeconfig = typeof o.kubeConfig === 'string' ? o.kubeConfig : writeKubeconfigFile(o.kubeConfig, harnessTempDir(`${o.name ?? 'process'}-kubeconfig`));
  return {
    ...baseEnv(),
    KUBECONFIG: kubeconfig,
    TEMPORAL_ADDRESS: o.temporalAddress,
    TEMPORAL_NAMESPACE: o.temporalNamespace ?? 'default',
    TASK_QUEUE: o.taskQueue,
    ...(o.payloadKeysFile ? { TEMPORAL_PAYLOAD_KEYS_FILE: o.payloadKeysFile } : {}),
    LOG_LEVEL: o.logLevel ?? 'info',
    CREATE_NAMESPACES: (o.createNamespaces ?? []).join(','),
    ALLOW_CROSS_NAMESPACE_TARGET_REFS: String(o.crossNamespaceTargetRefs ?? false),
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: String(port),
  };
}

function applyExtra(env: NodeJS.ProcessEnv, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

async function startControlProcess(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  port: number,
  o: ControlProcessOptions & { preload?: boolean },
): Promise<ControlProcess> {
  const baseUrl = `http://127.0.0.1:${port}`;
  const readyTimeoutMs = o.readyTimeoutMs ?? 120_000;
  const startups: Startup[] = [];
  const kills: Kill[] = [];
  const logDir = o.logDir ?? harnessTempDir(`${name}-log`);
  let managed: ManagedProcess | undefined;
  let readyP: Promise<void> = Promise.reject(new Error(`${name}: not started`));
  readyP.catch(() => {});
  let spawning: Promise<void> | undefined;

  const spawnIncarnation = async (): Promise<void> => {
    const startedAt = Date.now();
    if (!managed) {
      managed = await startProcess({
        name,
        command: process.execPath,
        args: tsxNodeArgs(entry, { preload: o.preload }),
        cwd: REPO_ROOT,
        env,
        logDir,
        stopTimeoutMs: o.stopTimeoutMs ?? 10_000,
      });
    } else await managed.start();
    const m = managed;
    const rec: Startup = { pid: m.pid, startedAt };
    startups.push(rec);
    readyP = waitFor(
      async () => {
        const r = await httpGet(`${baseUrl}/readyz`, { timeoutMs: 2000 });
        return r.status === 200;
      },
      {
        timeoutMs: readyTimeoutMs,
        intervalMs: 100,
        description: `${name} (pid ${rec.pid}) to answer ${baseUrl}/readyz 200`,
        abortIf: () => (!m.running || m.pid !== rec.pid ? `${name} (pid ${rec.pid}) exited before it was ready` : undefined),
        diagnostics: () => `--- last lines of ${m.logPath} ---\n${m.logTail(60)}`,
      },
    ).then(() => {
      rec.readyAt = Date.now();
    });
    readyP.catch(() => {});
  };

  const handle: ControlProcess = {
    name,
    get pid() {
      return managed?.pid ?? -1;
    },
    get running() {
      return !!managed?.running;
    },
    get ready() {
      return readyP;
    },
    baseUrl,
    metricsUrl: `${baseUrl}/metrics`,
    get logPath() {
      return managed?.logPath ?? path.join(logDir, `${name}.log`);
    },
    get logs() {
      try {
        return fs.readFileSync(this.logPath, 'utf8').split('\n');
      } catch {
        return [];
      }
    },
    startups,
    kills,
    env,
    async kill(signal = 'SIGKILL') {
      const m = managed;
      if (!m || !m.running) return undefined;
      const pid = m.pid;
      const k: Kill = { pid, signal, at: Date.now() };
      kills.push(k);
      const exited = m.exited();
      try {
        process.kill(-pid, signal); // the group: whatever the incarnation spawned goes with it
      } catch {
        try {
          process.kill(pid, signal);
        } catch {
          /* already gone */
        }
      }
      if (!TERMINATING.includes(signal)) return undefined;
      const info = await exited;
      k.exitedAt = Date.now();
      return info;
    },
    async start() {
      if (managed?.running) return readyP;
      spawning ??= spawnIncarnation().finally(() => (spawning = undefined));
      await spawning;
      return readyP;
    },
    async restartAfter(ms) {
      await sleep(ms);
      return handle.start();
    },
    async stop() {
      await managed?.stop();
    },
    exited: () => managed?.exited() ?? Promise.resolve({ code: null, signal: null }),
    logTail: (lines = 40) => managed?.logTail(lines) ?? '',
  };

  if (o.waitReady ?? true) await handle.start();
  else {
    spawning ??= spawnIncarnation().finally(() => (spawning = undefined));
    await spawning;
  }
  return handle;
}

/**
 * The real worker (`node [--require pod-network-preload.cjs] --import tsx worker/main.ts`) as a
 * child process. Resolves once it is ready (unless waitReady: false).
 */
export async function startWorkerProcess(o: WorkerProcessOptions): Promise<ControlProcess> {
  const name = o.name ?? 'worker';
  const port = o.metricsPort ?? (await freePort());
  const workflowBundle = o.workflowBundle ?? (await buildWorkflowBundle());
  const env = applyExtra(
    {
      ...(await commonEnv({ ...o, name }, port)),
      WORKFLOW_BUNDLE: workflowBundle,
      TEMPORAL_METRICS_BIND: o.sdkMetricsPort ? `127.0.0.1:${o.sdkMetricsPort}` : '',
      SHUTDOWN_GRACE_TIME: o.shutdownGraceTime ?? '5s',
      ...(o.scrapeTimeout ? { VMAGENT_SCRAPE_TIMEOUT: o.scrapeTimeout } : {}),
      ...(o.podGatewayUrl ? { POD_GATEWAY_URL: o.podGatewayUrl } : {}),
    },
    o.extraEnv,
  );
  return startControlProcess(name, 'worker/main.ts', env, port, { ...o, preload: true });
}

/** The real trigger (`node --import tsx trigger/main.ts`) as a child process. Resolves once it is ready (unless waitReady: false). */
export async function startTriggerProcess(o: TriggerProcessOptions): Promise<ControlProcess> {
  const name = o.name ?? 'trigger';
  const port = o.metricsPort ?? (await freePort());
  const env = applyExtra(
    {
      ...(await commonEnv({ ...o, name }, port)),
      WATCH_NAMESPACES: o.watchNamespaces.join(','),
      ...(o.relistInterval ? { RELIST_INTERVAL: o.relistInterval } : {}),
      ...(o.watchIdleTimeout ? { WATCH_IDLE_TIMEOUT: o.watchIdleTimeout } : {}),
      ...(o.finalizerRecheckInterval ? { FINALIZER_RECHECK_INTERVAL: o.finalizerRecheckInterval } : {}),
    },
    o.extraEnv,
  );
  return startControlProcess(name, 'trigger/main.ts', env, port, o);
}
