/**
 * Real Temporal servers: the dev server (through @temporalio/testing or as a plain process
 * for `make demo`) with the project's search attributes, and the time-skipping test server.
 */
import { Connection } from '@temporalio/client';
import { SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import { SEARCH_ATTRIBUTE_KEYS } from '../../../api/rollout-contract';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';
import { freePort } from './ports';
import { childPidsMatching, guardPid, harnessTempDir, startProcess, type ManagedProcess } from './processes';
import { toolPath } from './tools';

/** `--search-attribute Name=Type` flags for `temporal server start-dev`. */
export function searchAttributeFlags(keys: SearchAttributeKey<SearchAttributeType>[] = SEARCH_ATTRIBUTE_KEYS): string[] {
  return keys.flatMap((k) => ['--search-attribute', `${k.name}=${TypedSearchAttributes.toMetadataType(k.type)}`]);
}

let runtimeInstalled = false;
/** Receivers of every SDK Runtime log entry (worker, workflow and activity logs) at INFO and above. */
const runtimeLogSinks = new Set<(entry: LogEntry) => void>();

/** Calls `sink` with every Runtime log entry of this test file (INFO and above) until the returned function is called. */
export function onRuntimeLog(sink: (entry: LogEntry) => void): () => void {
  runtimeLogSinks.add(sink);
  return () => runtimeLogSinks.delete(sink);
}

/**
 * Installs the SDK Runtime with a quieter logger (default WARN, or $VMROLLOUT_TEMPORAL_LOG_LEVEL)
 * so test output is not flooded with worker state changes; entries from INFO up still reach the
 * onRuntimeLog sinks (e.g. a test that greps the logs). No-op if a Runtime already exists.
 */
export function installQuietRuntime(level: LogLevel = (process.env.VMROLLOUT_TEMPORAL_LOG_LEVEL as LogLevel | undefined) ?? 'WARN'): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const printed = new DefaultLogger(level);
  try {
    Runtime.install({
      logger: new DefaultLogger('INFO', (entry) => {
        for (const sink of runtimeLogSinks) sink(entry);
        printed.log(entry.level, entry.message, entry.meta);
      }),
    });
  } catch {
    /* a Runtime was already instantiated by other code: keep it */
  }
}

/** Kill the server the SDK spawned if this process exits or is interrupted before teardown(). */
function guardSpawnedServer(binPath: string, name: string): () => void {
  const releases = childPidsMatching(binPath).map((pid) => guardPid(pid, name));
  return () => releases.forEach((r) => r());
}

function withGuard(env: TestWorkflowEnvironment, release: () => void): TestWorkflowEnvironment {
  const teardown = env.teardown.bind(env);
  env.teardown = async () => {
    try {
      await teardown();
    } finally {
      release();
    }
  };
  return env;
}

export interface DevEnvOptions {
  port?: number;
  /** Enable the Web UI (default false). */
  ui?: boolean;
  uiPort?: number;
  namespace?: string;
  extraArgs?: string[];
  /** Default: the VMDC search attributes. */
  searchAttributes?: SearchAttributeKey<SearchAttributeType>[];
}

/** TestWorkflowEnvironment on a real `temporal server start-dev` (existing-path executable) with the VMDC search attributes registered. Call env.teardown() in afterAll. */
export async function startTemporalDevEnv(opts: DevEnvOptions = {}): Promise<TestWorkflowEnvironment> {
  const bin = toolPath('temporal');
  installQuietRuntime();
  const ui = opts.ui ?? false;
  const uiPort = ui ? (opts.uiPort ?? (await freePort())) : undefined;
  const env = await startSpawned(bin, async () =>
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: bin },
        ip: '127.0.0.1',
        port: opts.port ?? (await freePort()),
        ui,
        uiPort,
        namespace: opts.namespace,
        searchAttributes: opts.searchAttributes ?? SEARCH_ATTRIBUTE_KEYS,
        extraArgs: opts.extraArgs,
        log: { format: 'pretty', level: 'warn' },
      },
    }),
  );
  return withGuard(env, guardSpawnedServer(bin, 'temporal'));
}

/** One Temporal dev server for the calling test file (or describe block), started in beforeAll and torn down in afterAll; returns its getter. */
export function useTemporalDevEnv(opts: DevEnvOptions = {}): () => TestWorkflowEnvironment {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await startTemporalDevEnv(opts);
  }, 120_000);
  afterAll(async () => {
    await env?.teardown();
  });
  return () => env!;
}

/** TestWorkflowEnvironment on the real time-skipping test server (existing-path executable). Call env.teardown() in afterAll. */
export async function startTimeSkippingEnv(opts: { port?: number; extraArgs?: string[] } = {}): Promise<TestWorkflowEnvironment> {
  const bin = toolPath('temporal-test-server');
  installQuietRuntime();
  const env = await startSpawned(bin, async () =>
    TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: bin }, port: opts.port ?? (await freePort()), extraArgs: opts.extraArgs },
    }),
  );
  return withGuard(env, guardSpawnedServer(bin, 'temporal-test-server'));
}

/**
 * The SDK gives a server it spawns 5 s to answer (fixed in its core); on a loaded machine (the
 * suites run side by side) a start can take longer. Such a start is tried again, up to 3 times,
 * the process it left behind killed; any other failure is thrown at once.
 */
async function startSpawned<T>(bin: string, start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const before = new Set(childPidsMatching(bin));
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3 || !/did not start within/.test((err as Error)?.message ?? '')) throw err;
      for (const pid of childPidsMatching(bin).filter((p) => !before.has(p))) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone already */
        }
      }
    }
  }
}

export interface DevServerHandle {
  /** host:port for clients and workers */
  address: string;
  namespace: string;
  /** Web UI URL, if enabled */
  uiUrl?: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

export interface DevServerOptions {
  port?: number;
  ui?: boolean;
  uiPort?: number;
  namespace?: string;
  /** SQLite file to persist state across restarts; default in-memory. */
  dbFilename?: string;
  logDir?: string;
  extraArgs?: string[];
}

/** `temporal server start-dev` as a plain managed process (used by `make demo`); ready when the namespace can be described. */
export async function startTemporalDevServer(opts: DevServerOptions = {}): Promise<DevServerHandle> {
  const bin = toolPath('temporal');
  const port = opts.port ?? (await freePort());
  const namespace = opts.namespace ?? 'default';
  const ui = opts.ui ?? true;
  const uiPort = opts.uiPort ?? (await freePort());
  const address = `127.0.0.1:${port}`;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    ...(ui ? ['--ui-ip', '127.0.0.1', '--ui-port', String(uiPort), '--ui-disable-news-fetch'] : ['--headless']),
    ...(opts.dbFilename ? ['--db-filename', opts.dbFilename] : []),
    ...searchAttributeFlags(),
    ...(opts.extraArgs ?? []),
  ];
  const proc = await startProcess({
    name: 'temporal-dev-server',
    command: bin,
    args,
    logDir: opts.logDir ?? harnessTempDir('temporal'),
    readyTimeoutMs: 60_000,
    ready: async () => {
      const conn = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await conn.workflowService.describeNamespace({ namespace });
        return true;
      } finally {
        await conn.close();
      }
    },
  });
  return { address, namespace, uiUrl: ui ? `http://127.0.0.1:${uiPort}` : undefined, process: proc, stop: () => proc.stop() };
}
