// The Temporal worker process: the rollout workflow (from a prebuilt bundle in production) and the
// activities, prom-client /metrics + the SDK's Prometheus exporter, /healthz, /readyz, graceful
// shutdown on SIGTERM/SIGINT.
import { KubeConfig } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogEntry, type LogLevel as SdkLogLevel, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { withKeepAliveAgent } from '../kube/keep-alive';
import { temporalConnectionOptions } from '../process/env';
import { bundleAtStart } from '../process/workflow-bundle';
import { releasePredecessors, workerIdentity, type ReleaseResult } from './predecessor';
import { payloadDataConverter } from '../process/payload-codec';
import { loadConfigOrExit, requireSearchAttributesOrExit, stopOnSignals } from '../process/main';
import { loadConfig, type WorkerConfig } from './config';
import { startMetricsServer, type MetricsServer } from '../process/metrics-server';
import { createWorkerMetrics, workerMetricsText, type WorkerMetrics } from './metrics';
import { inspect } from 'node:util';
import { redactURLsIn } from '../api/url';

export interface RunningWorker {
  worker: Worker;
  metrics: WorkerMetrics;
  server: MetricsServer;
  /** With an instance (WORKER_INSTANCE): what this boot released of an earlier boot's attempts (worker/predecessor.ts). */
  released?: Promise<ReleaseResult>;
  /** Resolves when the worker has stopped (after shutdown() or a fatal error, which it rethrows). */
  done: Promise<void>;
  /** Graceful: stop polling, let running activities finish (shutdownGraceTime), close connections and the HTTP server. */
  shutdown(): Promise<void>;
}

export interface StartWorkerOptions {
  /** Install the process-wide Temporal Runtime (logger + Prometheus exporter). Default true; tests that share a Runtime pass false. */
  installRuntime?: boolean;
  /** Overrides config.kubeconfig / in-cluster loading. */
  kubeConfig?: KubeConfig;
  /** Workflows source when no bundle is configured (default: this repo's workflows/). */
  workflowsPath?: string;
  fetch?: typeof fetch;
}

export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/** The SDK's stderr format, with credentials in URLs never shown (a remoteWriteURL may carry them). */
function logRedacted({ level, timestampNanos, message, meta }: LogEntry): void {
  const date = new Date(Number(timestampNanos / 1_000_000n)).toISOString();
  process.stderr.write(redactURLsIn(`${date} [${level}] ${message}${meta === undefined ? '' : ` ${inspect(meta)}`}`) + '\n');
}

let runtimeInstalled = false;

/**
 * Worker Versioning (docs/upgrading.md): a rollout is PINNED to the build that started it, so a
 * new vmrollout version never replays a rollout in flight; it drains on its own build's workers.
 */
export function workerDeploymentOptions(config: Pick<WorkerConfig, 'deploymentVersion'>): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  return config.deploymentVersion
    ? { workerDeploymentOptions: { useWorkerVersioning: true, version: config.deploymentVersion, defaultVersioningBehavior: 'PINNED' } }
    : {};
}

export async function startWorker(config: WorkerConfig, opts: StartWorkerOptions = {}): Promise<RunningWorker> {
  if ((opts.installRuntime ?? true) && !runtimeInstalled) {
    Runtime.install({
      logger: new DefaultLogger(config.logLevel.toUpperCase() as SdkLogLevel, logRedacted),
      telemetryOptions: config.metrics.sdkBindAddress ? { metrics: { prometheus: { bindAddress: config.metrics.sdkBindAddress } } } : undefined,
    });
    runtimeInstalled = true;
  }
  // Keep-alive connections: an activity makes several Kubernetes calls, each would open its own TLS connection.
  const kubeConfig = withKeepAliveAgent(opts.kubeConfig ?? loadKubeConfig(config.kubeconfig));
  const metrics = createWorkerMetrics({ buildId: config.deploymentVersion?.buildId });
  const connectionOptions = temporalConnectionOptions(config.temporal);

  const nativeConnection = await NativeConnection.connect(connectionOptions);
  const clientConnection = await Connection.connect(connectionOptions);
  // The activities' client (take-over signals and queries) reads and writes the same encrypted payloads.
  const dataConverter = payloadDataConverter(config.temporal.payloadKeys);
  const temporalClient = new Client({ connection: clientConnection, namespace: config.temporal.namespace, dataConverter });

  const activities = createActivities({
    kubeConfig,
    temporalClient,
    policy: config.policy,
    metrics,
    fetch: opts.fetch,
    vmagentAuth: config.vmagentAuth,
    scrapeTimeoutMs: config.scrapeTimeoutMs,
    ...(config.instance ? { instance: config.instance } : {}),
  });
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'> = config.workflowBundlePath
    ? { workflowBundle: { codePath: config.workflowBundlePath } }
    : opts.workflowsPath
      ? { workflowsPath: opts.workflowsPath }
      : bundleAtStart();

  const identity = config.instance ? workerIdentity(config.instance) : undefined;
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection: nativeConnection,
      namespace: config.temporal.namespace,
      taskQueue: config.taskQueue,
      ...workflows,
      activities,
      dataConverter,
      shutdownGraceTime: config.shutdownGraceTimeMs,
      maxConcurrentActivityTaskExecutions: config.maxConcurrentActivities,
      maxCachedWorkflows: config.maxCachedWorkflows,
      ...(identity ? { identity } : {}),
      ...workerDeploymentOptions(config),
    });
  } catch (err) {
    await clientConnection.close().catch(() => {});
    await nativeConnection.close().catch(() => {});
    throw err;
  }

  const server = await startMetricsServer({
    host: config.metrics.host,
    port: config.metrics.port,
    metrics: () => workerMetricsText(metrics.registry, config.metrics.sdkBindAddress),
    contentType: metrics.registry.contentType,
    ready: () => worker.getState() === 'RUNNING',
  });

  const done = worker.run().finally(async () => {
    await server.close().catch(() => {});
    await clientConnection.close().catch(() => {});
    await nativeConnection.close().catch(() => {});
  });
  // Alongside the worker's start: only earlier boots' attempts are touched, never this one's.
  // Never rejects: an attempt it cannot release still ends at its heartbeat timeout.
  const released = identity
    ? releasePredecessors(temporalClient, config.taskQueue, identity).catch((err: unknown): ReleaseResult => ({
        workflowsRunning: 0,
        released: [],
        errors: [String(err)],
      }))
    : undefined;
  let stopping: Promise<void> | undefined;
  return {
    worker,
    metrics,
    server,
    done,
    released,
    shutdown() {
      stopping ??= (async () => {
        if (worker.getState() === 'RUNNING' || worker.getState() === 'INITIALIZED') worker.shutdown();
        await done;
      })();
      return stopping;
    },
  };
}

/** CLI entry point. */
export async function main(): Promise<void> {
  const config = loadConfigOrExit(() => loadConfig());
  if (!config.temporal.payloadKeys)
    process.stderr.write('TEMPORAL_PAYLOAD_KEYS_FILE is not set: specs (and any credentials in them) are stored in Temporal in plaintext\n');
  await requireSearchAttributesOrExit(config.temporal, (warning) => process.stderr.write(`${warning}\n`));
  const running = await startWorker(config);
  const version = config.deploymentVersion;
  process.stderr.write(
    `vmrollout worker: task queue ${config.taskQueue} on ${config.temporal.address}/${config.temporal.namespace}; ` +
      `${version ? `Worker Deployment ${version.deploymentName}, build ${version.buildId} (rollouts pinned)` : 'unversioned'}; ` +
      `metrics ${running.server.url}/metrics\n`,
  );
  void running.released?.then((r) => {
    for (const x of r.released) process.stderr.write(`released ${x.workflowId} ${x.activityType} (${x.action}): held by an earlier boot of this worker\n`);
    for (const e of r.errors) process.stderr.write(`could not release an earlier boot's attempt (it ends at its heartbeat timeout): ${e}\n`);
  });
  stopOnSignals(() => running.shutdown(), {
    stopping: (sig) => process.stderr.write(`${sig}: shutting down (grace ${config.shutdownGraceTimeMs} ms)\n`),
    secondSignal: (sig) => process.stderr.write(`second ${sig}: exiting now\n`),
    stopFailed: (err) => process.stderr.write(`shutdown failed: ${String(err)}\n`),
  });
  running.done.catch((err: unknown) => {
    process.stderr.write(`worker failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`worker failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
