/**
 * Real child processes for tests and the demo: spawn in their own process group, log to a
 * file, wait for a real readiness condition (never a sleep), and always clean up: on
 * stop(), in a jest afterAll registered by this module, on process exit, SIGINT and SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { isPortOpen } from './ports';

export type ReadinessCheck = () => Promise<boolean>;

export interface StartProcessOptions {
  /** Short name used in log file names and error messages. */
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Directory for the log file; default: a fresh dir under the run's temp dir. */
  logDir?: string;
  /** Polled until it resolves true (errors count as "not yet"). */
  ready?: ReadinessCheck;
  /** Default 60 s. */
  readyTimeoutMs?: number;
  /** Grace period between SIGTERM and SIGKILL on stop(). Default 5 s. */
  stopTimeoutMs?: number;
}

export interface ManagedProcess {
  readonly name: string;
  /** pid of the current incarnation (changes on restart). */
  readonly pid: number;
  readonly logPath: string;
  readonly running: boolean;
  /** Stops the whole process group: SIGTERM, then SIGKILL after the grace period. Idempotent. */
  stop(): Promise<void>;
  /** Starts it again with the same command, args and log file (appended), and waits until ready. */
  start(): Promise<void>;
  /** stop() then start(); with `args`, started with those from now on. */
  restart(args?: string[]): Promise<void>;
  /** Sends a signal to the process (not the group), e.g. SIGHUP to reload a config. */
  signal(sig: NodeJS.Signals): void;
  /** Last `lines` lines of the log file. */
  logTail(lines?: number): string;
  /** Resolves with the exit code/signal once the current incarnation exits. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

// ---------------------------------------------------------------------------------------
// registry + cleanup

interface Entry {
  name: string;
  pid(): number | undefined;
  stop(): Promise<void>;
}
const registry = new Set<Entry>();
/** pids of processes started by someone else (e.g. the Temporal SDK) killed on exit/signal only. */
const guardedPids = new Map<number, string>();

function killGroupSync(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  }
}

// A watchdog: a tiny bash process holding the read end of a pipe from us. When this process
// dies for ANY reason (including SIGKILL, or jest's own SIGINT handling, which exits without
// running our handlers), the pipe closes and the watchdog kills every process group still
// registered with it.
const WATCHDOG_SCRIPT = `
declare -A live
while IFS= read -r l; do
  case "$l" in
    +*) live[\${l#+}]=1 ;;
    -*) unset "live[\${l#-}]" ;;
  esac
done
for p in "\${!live[@]}"; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null; done
`;
let watchdog: ChildProcess | undefined;
function watchdogSend(line: string): void {
  try {
    if (!watchdog) {
      watchdog = spawn('bash', ['-c', WATCHDOG_SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
      watchdog.on('error', () => undefined);
      watchdog.stdin?.on('error', () => undefined);
      watchdog.unref();
      (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    }
    watchdog.stdin?.write(`${line}\n`);
  } catch {
    /* best effort: the exit/signal handlers and afterAll still apply */
  }
}

/** Synchronously SIGKILLs every registered process group (for exit/signal handlers). */
export function killAllSync(): void {
  for (const e of registry) {
    const pid = e.pid();
    if (pid) killGroupSync(pid, 'SIGKILL');
  }
  for (const pid of guardedPids.keys()) killGroupSync(pid, 'SIGKILL');
}

/** Stops every registered process (gracefully, in reverse start order). */
export async function stopAll(): Promise<void> {
  const entries = [...registry].reverse();
  const errors: unknown[] = [];
  for (const e of entries) {
    try {
      await e.stop();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length) throw new AggregateError(errors, `stopAll: ${errors.length} process(es) failed to stop`);
}

/**
 * Runs a command-line entry (a campaign, a benchmark) that starts harness processes: SIGINT/SIGTERM
 * kill them at once and exit 1; an error is printed (`<label>: ...`) and exits 1; either way every
 * process is stopped before the process exits. `main`'s number, if any, is the exit code.
 */
export function runHarnessMain(label: string, main: () => Promise<number | void>): void {
  const interrupted = () => {
    killAllSync();
    process.exit(1);
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  main()
    .then((code) => {
      if (typeof code === 'number') process.exitCode = code;
    })
    .catch((err: unknown) => {
      process.stderr.write(`${label}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    })
    .finally(() => void stopAll().then(() => process.exit()));
}

/** Registers a pid started by other code (e.g. a server spawned by a native SDK) to be killed when this process exits or is interrupted. */
export function guardPid(pid: number, name: string): () => void {
  guardedPids.set(pid, name);
  watchdogSend(`+${pid}`);
  return () => {
    guardedPids.delete(pid);
    watchdogSend(`-${pid}`);
  };
}

export interface ProcStat {
  pid: number;
  /** R, S, D, Z (exited, not yet reaped), X, ... */
  state: string;
  ppid: number;
  pgrp: number;
}

/** The fields of /proc/<pid>/stat read here; undefined when there is no such process (any more). */
export function procStat(pid: number): ProcStat | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name before them is in parentheses and may itself hold spaces and ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, state: fields[0] ?? '', ppid: Number(fields[1]), pgrp: Number(fields[2]) };
}

/** Every process in /proc, but those that exit while it is read. */
export function allProcStats(): ProcStat[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => procStat(Number(d)) ?? []);
}

/** pids of direct children of this process whose command line contains `needle`. */
export function childPidsMatching(needle: string): number[] {
  const out: number[] = [];
  for (const p of allProcStats()) {
    if (p.ppid !== process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes(needle)) out.push(p.pid);
    } catch {
      /* raced with exit */
    }
  }
  return out;
}

let handlersInstalled = false;
function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = () => {
      killAllSync();
      process.removeListener(sig, handler);
      // Re-raise so the default behaviour (or other listeners) still applies.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, handler);
  }
  // In jest, also stop everything when the test file finishes (even after a failing test).
  // This hook sits on the file's root block: it runs after the afterAll hooks inside describe()
  // blocks, but before top-level afterAll hooks declared later in the file (declaration order),
  // so keep your own teardown inside a describe() if it needs the processes alive.
  const g = globalThis as { afterAll?: (fn: () => Promise<void>, timeout?: number) => void };
  if (typeof g.afterAll === 'function') {
    try {
      g.afterAll(async () => {
        await stopAll();
        process.removeListener('exit', killAllSync);
      }, 60_000);
    } catch {
      /* called from inside a hook/test: exit and signal handlers still apply */
    }
  }
}
// Register as early as possible (module load happens at test-file collection time).
installHandlers();

// ---------------------------------------------------------------------------------------
// temp dirs

let runDir: string | undefined;
/** A per-process temp dir for logs and data ($VMROLLOUT_TMPDIR or the OS temp dir). Kept after the run for inspection unless VMROLLOUT_KEEP_TMP=0. */
export function harnessTempDir(prefix: string): string {
  if (!runDir) {
    const base = process.env.VMROLLOUT_TMPDIR ?? os.tmpdir();
    fs.mkdirSync(base, { recursive: true });
    runDir = fs.mkdtempSync(path.join(base, `vmrollout-${process.pid}-`));
    if (process.env.VMROLLOUT_KEEP_TMP === '0') {
      const dir = runDir;
      process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    }
  }
  return fs.mkdtempSync(path.join(runDir, `${prefix.replace(/[^\w.-]/g, '_')}-`));
}

// ---------------------------------------------------------------------------------------
// waiting

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What we wait for, for the error message. */
  description?: string;
  /** Extra diagnostics appended to the timeout error (e.g. a log tail). */
  diagnostics?: () => string;
  /** Abort early (e.g. the process died): return an error message to fail with. */
  abortIf?: () => string | undefined;
}

/** Polls `fn` until it returns a value other than undefined/false; throws on timeout. */
export async function waitFor<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, opts: WaitOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const intervalMs = opts.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    const abort = opts.abortIf?.();
    if (abort) throw new Error(`${abort}${opts.diagnostics ? `\n${opts.diagnostics()}` : ''}`);
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() >= deadline) {
      const why = lastErr instanceof Error ? ` (last error: ${lastErr.message})` : '';
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${opts.description ?? 'condition'}${why}${opts.diagnostics ? `\n${opts.diagnostics()}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export interface HttpGetResult {
  status: number;
  body: string;
}

export interface HttpGetOptions {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** Minimal HTTP(S) request (no keep-alive, so nothing keeps jest open). */
export function httpRequest(method: string, url: string, opts: HttpGetOptions & { body?: string | Buffer } = {}): Promise<HttpGetResult> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(
      u,
      { method, agent: false, headers: opts.headers, ca: opts.ca, cert: opts.cert, key: opts.key, timeout: opts.timeoutMs ?? 5000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timeout`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Minimal HTTP(S) GET (no keep-alive). */
export function httpGet(url: string, opts: HttpGetOptions = {}): Promise<HttpGetResult> {
  return httpRequest('GET', url, opts);
}

/** Readiness: GET url answers `expectStatus` (default 200) and, if given, the body matches. */
export function httpReady(url: string, opts: HttpGetOptions & { expectStatus?: number; bodyMatches?: RegExp } = {}): ReadinessCheck {
  return async () => {
    const r = await httpGet(url, { ...opts, timeoutMs: opts.timeoutMs ?? 2000 });
    return r.status === (opts.expectStatus ?? 200) && (!opts.bodyMatches || opts.bodyMatches.test(r.body));
  };
}

/** Readiness: something accepts TCP connections on 127.0.0.1:port. */
export function tcpReady(port: number, host = '127.0.0.1'): ReadinessCheck {
  return () => isPortOpen(port, host);
}

/** Last lines of a file ('' if missing). */
export function tailFile(file: string, lines = 40): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------
// start

/** Starts a child process, waits until ready, and registers it for cleanup. Throws with the log tail if it exits early or is not ready in time. */
export async function startProcess(opts: StartProcessOptions): Promise<ManagedProcess> {
  const logDir = opts.logDir ?? harnessTempDir(`${opts.name}-log`);
  fs.mkdirSync(logDir, { recursive: true });
  const logPath = path.join(logDir, `${opts.name}.log`);
  const stopTimeoutMs = opts.stopTimeoutMs ?? 5000;

  let child: ChildProcess | undefined;
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let exitPromise: Promise<{ code: number | null; signal: NodeJS.Signals | null }> = Promise.resolve({ code: null, signal: null });

  const logTail = (lines = 40) => tailFile(logPath, lines);
  const describe = () => `${opts.name} (${opts.command} ${opts.args.join(' ')})`;

  const spawnOnce = async () => {
    fs.appendFileSync(logPath, `\n=== ${new Date().toISOString()} start: ${opts.command} ${opts.args.join(' ')}\n`);
    const fd = fs.openSync(logPath, 'a');
    try {
      child = spawn(opts.command, opts.args, {
        cwd: opts.cwd,
        env: opts.env ?? process.env,
        stdio: ['ignore', fd, fd],
        detached: true, // own process group: stop() kills the group, and a terminal Ctrl-C goes through our handler
      });
    } finally {
      fs.closeSync(fd);
    }
    exitInfo = undefined;
    const c = child;
    if (c.pid !== undefined) watchdogSend(`+${c.pid}`);
    exitPromise = new Promise((resolve) => {
      c.once('exit', (code, signal) => {
        exitInfo = { code, signal };
        if (c.pid !== undefined) {
          killGroupSync(c.pid, 'SIGKILL'); // leftovers of the group, if any
          watchdogSend(`-${c.pid}`);
        }
        resolve(exitInfo);
      });
    });
    const spawnError = await new Promise<Error | undefined>((resolve) => {
      c.once('spawn', () => resolve(undefined));
      c.once('error', (err) => resolve(err));
    });
    if (spawnError) throw new Error(`${describe()}: failed to start: ${spawnError.message}`);
    if (opts.ready) {
      try {
        await waitFor(opts.ready, {
          timeoutMs: opts.readyTimeoutMs ?? 60_000,
          intervalMs: 100,
          description: `${opts.name} to become ready`,
          abortIf: () => (exitInfo ? `${describe()} exited before it was ready (code ${exitInfo.code}, signal ${exitInfo.signal})` : undefined),
          diagnostics: () => `--- last lines of ${logPath} ---\n${logTail()}`,
        });
      } catch (err) {
        await stopNow();
        throw err;
      }
    }
  };

  const stopNow = async () => {
    const c = child;
    if (!c || c.pid === undefined || exitInfo) return;
    killGroupSync(c.pid, 'SIGTERM');
    const timer = new Promise<'timeout'>((r) => {
      const t = setTimeout(() => r('timeout'), stopTimeoutMs);
      t.unref();
    });
    if ((await Promise.race([exitPromise, timer])) === 'timeout') {
      killGroupSync(c.pid, 'SIGKILL');
      await exitPromise;
    }
  };

  const entry: Entry = { name: opts.name, pid: () => (exitInfo ? undefined : child?.pid), stop: stopNow };
  registry.add(entry);

  const handle: ManagedProcess = {
    name: opts.name,
    get pid() {
      return child?.pid ?? -1;
    },
    logPath,
    get running() {
      return !!child && !exitInfo;
    },
    stop: stopNow,
    async start() {
      if (child && !exitInfo) return;
      registry.add(entry);
      await spawnOnce();
    },
    async restart(args?: string[]) {
      await stopNow();
      if (args) opts.args = args;
      registry.add(entry);
      await spawnOnce();
    },
    signal(sig) {
      if (child?.pid && !exitInfo) process.kill(child.pid, sig);
    },
    logTail,
    exited: () => exitPromise,
  };

  try {
    await spawnOnce();
  } catch (err) {
    registry.delete(entry);
    throw err;
  }
  return handle;
}
