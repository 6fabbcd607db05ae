// The trigger process: config → Temporal client + KubeConfig (keep-alive agents) → watch →
// per-object serial reconciliation (at most RECONCILE_CONCURRENCY at once, failures retried with
// jittered backoff), and watches of the VM operator's objects → drift reports; /metrics and
// /healthz; graceful shutdown on SIGTERM/SIGINT.
import * as k8s from '@kubernetes/client-node';
import { Client, Connection, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { PLURAL, VM_KINDS } from '../api/constants';
import { temporalConnectionOptions } from '../process/env';
import { payloadDataConverter } from '../process/payload-codec';
import { loadConfigOrExit, requireSearchAttributesOrExit, stopOnSignals } from '../process/main';
import { formatIssues } from '../api/validate';
import { validateUnderPolicy, type TrustPolicy } from '../api/trust-policy';
import { DEFAULT_RETRY_BACKOFF, type Backoff, type Random } from './backoff';
import { DEFAULT_FINALIZER_RECHECK_INTERVAL_MS, loadConfig, type TriggerConfig } from './config';
import { DRIFT_KINDS } from './drift';
import { DriftReporter } from './drift-reporter';
import { vmdcPath, vmObjectPath } from '../kube/collections';
import { defaultKubeConfig } from '../kube/keep-alive';
import { createKubeOps, createVmObjectLister, type KubeOps } from './kube';
import { createLogger, type Logger } from './log';
import { startMetricsServer, type MetricsServer } from '../process/metrics-server';
import { createMetrics, type TriggerMetrics } from './metrics';
import { DEFAULT_CONCURRENCY, KeyedSerialQueue } from './queue';
import { RetrySchedule } from './retries';
import type { SpecValidator } from './decide';
import { Reconciler } from './execute';
import type { VmdcObject } from '../kube/vmdc-object';
import { objectKey, startWatch, type WatchEventType, type WatchHandle, type WatchSettings } from './watch';

/** The spec's own rules, then what `policy` allows in the object's namespace. */
export const validatorFor = (policy: TrustPolicy): SpecValidator => ({
  validate: (spec, namespace) => validateUnderPolicy(spec, namespace, policy),
  format: formatIssues,
});

export interface TriggerDeps {
  /**
   * Default: KubeConfig.loadFromDefault() on shared keep-alive agents (keep-alive.ts). A given one
   * is used as it is (withKeepAliveAgent makes it keep connections too).
   */
  kubeConfig?: k8s.KubeConfig;
  /** Default: a client on a new Connection from config.temporal (closed on stop). */
  temporalClient?: Client;
  log?: Logger;
  metrics?: TriggerMetrics;
  validator?: SpecValidator;
  kube?: KubeOps;
  /** Serve /metrics and /healthz (default true). */
  serveMetrics?: boolean;
  /** Backoff of failed reconciliations (default 1 s doubling to 60 s), fully jittered. */
  retryBackoff?: Backoff;
  /** The jitter's random source (default Math.random; tests pass a seeded one). */
  random?: Random;
  watchBackoff?: { initialMs: number; maxMs: number };
}

export interface TriggerHandle {
  readonly metrics: TriggerMetrics;
  readonly watch: WatchHandle;
  readonly reconciler: Reconciler;
  readonly drift: DriftReporter;
  /** Port of the metrics server, when serving. */
  readonly metricsPort?: number;
  /** Resolves once every watched scope listed once. */
  readonly synced: Promise<void>;
  /** Resolves once no reconciliation is queued or running (retries may follow later). */
  idle(): Promise<void>;
  /** Stops watching, waits for in-flight reconciliations, closes what it opened. Idempotent. */
  stop(): Promise<void>;
}

export async function connectTemporal(cfg: TriggerConfig['temporal']): Promise<Connection> {
  return Connection.connect(temporalConnectionOptions(cfg));
}

/** Starts the trigger in this process. */
export async function startTrigger(config: TriggerConfig, deps: TriggerDeps = {}): Promise<TriggerHandle> {
  const log = deps.log ?? createLogger(config.logLevel).child({ component: 'trigger' });
  const metrics = deps.metrics ?? createMetrics({ defaultMetrics: true });
  const kubeConfig = deps.kubeConfig ?? defaultKubeConfig();
  const kube = deps.kube ?? createKubeOps(kubeConfig);
  let connection: Connection | undefined;
  let temporal = deps.temporalClient;
  if (!temporal) {
    connection = await connectTemporal(config.temporal);
    temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter: payloadDataConverter(config.temporal.payloadKeys) });
  }
  const reconciler = new Reconciler({ temporal, kube, validator: deps.validator ?? validatorFor(config.policy), taskQueue: config.taskQueue, log, metrics });
  const concurrency = config.reconcileConcurrency ?? DEFAULT_CONCURRENCY;

  let stopped = false;
  // Every reconciliation, drift report and orphan cancel goes through this queue: serial per object,
  // at most `concurrency` at once over all objects.
  const queue = new KeyedSerialQueue((key, err) => log.error('unexpected error in reconciliation queue', { object: key, err }), concurrency);
  const latestUpsert = new Map<string, VmdcObject>();
  const scheduled = new Set<string>();
  const retries = new RetrySchedule(deps.retryBackoff ?? DEFAULT_RETRY_BACKOFF, deps.random ?? Math.random);
  const rechecks = new Map<string, NodeJS.Timeout>();
  const recheckMs = config.finalizerRecheckIntervalMs ?? DEFAULT_FINALIZER_RECHECK_INTERVAL_MS;

  // A workflow of an object being deleted is usually still running its cancellation cleanup when
  // the trigger first looks; its close changes nothing the watch sees, so its result is awaited
  // (long poll, aborted on stop) and the object reconciled again as soon as it has closed.
  const awaitingClose = new Set<string>();
  const stopWaiting = new AbortController();
  const recheckOnClose = (key: string, workflowIds: string[]): void => {
    for (const id of workflowIds) {
      if (awaitingClose.has(id) || stopped) continue;
      awaitingClose.add(id);
      temporal
        .withAbortSignal(stopWaiting.signal, () => temporal.workflow.getHandle(id).result())
        .then(
          () => true,
          // Closed with another outcome (cancelled, failed, terminated, gone): look again. Any other
          // error (Temporal unreachable, aborted): the recheck timer looks again.
          (err: unknown) => err instanceof WorkflowFailedError || err instanceof WorkflowNotFoundError,
        )
        .then((closed) => {
          awaitingClose.delete(id);
          const latest = latestUpsert.get(key);
          if (closed && latest && !stopped) enqueueUpsert(key, latest);
        });
    }
  };

  // An object held by its finalizer is also looked at again on a timer: a person's release of a
  // zone changes only the route objects, nothing the watch sees. Its latest state is reconciled
  // (finalize reads everything it decides on fresh); a delete event forgets it.
  const scheduleRecheck = (key: string): void => {
    if (rechecks.has(key) || stopped) return;
    const t = setTimeout(() => {
      rechecks.delete(key);
      const latest = latestUpsert.get(key);
      if (latest && !stopped) enqueueUpsert(key, latest);
    }, recheckMs);
    t.unref();
    rechecks.set(key, t);
  };

  const run = async (key: string, type: WatchEventType, obj: VmdcObject): Promise<void> => {
    try {
      const outcome = await reconciler.reconcile(type, obj);
      if (outcome.blocked) {
        scheduleRecheck(key);
        recheckOnClose(key, outcome.running);
      }
      retries.succeeded(key);
    } catch (err) {
      if (stopped) return;
      metrics.reconcileErrors.inc();
      // Jittered: objects that failed together (an overloaded API server) must not retry together.
      const { attempt, delayMs } = retries.failed(key, () => {
        if (type === 'delete') enqueueDelete(key, obj);
        else {
          const latest = latestUpsert.get(key);
          if (latest) enqueueUpsert(key, latest);
        }
      });
      log.warn('reconciliation failed; will retry', { object: key, event: type, attempt, delayMs, err });
    }
  };

  // Upserts of one object coalesce to its latest state (level-triggered); deletes never do, so a
  // delete followed by a re-create still cancels the old uid's workflow.
  function enqueueUpsert(key: string, obj: VmdcObject): void {
    latestUpsert.set(key, obj);
    if (scheduled.has(key)) return;
    scheduled.add(key);
    void queue.push(key, async () => {
      scheduled.delete(key);
      const latest = latestUpsert.get(key);
      if (latest && !stopped) await run(key, 'update', latest);
    });
  }
  function enqueueDelete(key: string, obj: VmdcObject): void {
    latestUpsert.delete(key);
    void queue.push(key, async () => {
      if (!stopped) await run(key, 'delete', obj);
    });
  }

  const drift = new DriftReporter({ kube, queue, log: log.child({ component: 'drift' }), metrics });

  const sweepOrphans = async (namespace: string | undefined, objects: VmdcObject[]): Promise<void> => {
    const orphans = await reconciler.orphans(objects, namespace ? [namespace] : config.watchNamespaces);
    for (const o of orphans) {
      const key = `${o.namespace}/${o.name}`;
      void queue.push(key, async () => {
        if (stopped) return;
        const cur = await kube.get(o.namespace, o.name);
        if (cur?.metadata?.uid?.startsWith(o.uid)) return;
        log.info('workflow of a deleted object is still running: cancelling it', { object: key, workflowId: o.workflowId });
        await reconciler.cancel({ namespace: o.namespace, name: o.name, uid: o.uid }, [o.workflowId]);
      });
    }
  };

  const watchSettings: WatchSettings = {
    kubeConfig,
    namespaces: config.watchNamespaces,
    relistIntervalMs: config.relistIntervalMs,
    idleTimeoutMs: config.watchIdleTimeoutMs,
    log,
    metrics,
    backoff: deps.watchBackoff,
  };
  const watch = startWatch({
    ...watchSettings,
    resource: { name: PLURAL, path: vmdcPath, list: (namespace) => kube.list(namespace) },
    onEvent(type, obj) {
      if (stopped) return;
      metrics.eventsSeen.inc({ type });
      metrics.objectStatus(obj, type === 'delete');
      reconciler.seen(type, obj);
      const key = objectKey(obj);
      log.debug('watch event', { type, object: key, generation: obj.metadata?.generation, resourceVersion: obj.metadata?.resourceVersion });
      if (type === 'delete') enqueueDelete(key, obj);
      else enqueueUpsert(key, obj);
      drift.vmdcChanged(type, obj);
    },
    onList(namespace, objects) {
      if (stopped) return;
      reconciler.forgetSignals();
      sweepOrphans(namespace, objects).catch((err: unknown) => log.warn('orphan sweep failed', { err }));
    },
  });

  // Drift is a report: neither readiness nor `synced` waits for these watches, so a VM CRD or a
  // permission they lack never keeps rollouts from starting (their restarts are counted and logged).
  const listVmObjects = createVmObjectLister(kubeConfig);
  const driftWatches = DRIFT_KINDS.map((kind) =>
    startWatch({
      ...watchSettings,
      resource: { name: VM_KINDS[kind], path: (namespace) => vmObjectPath(kind, namespace), list: (namespace) => listVmObjects(kind, namespace) },
      onEvent(type, obj) {
        if (!stopped) drift.objectChanged(kind, type, obj);
      },
    }),
  );
  void Promise.all(driftWatches.map((w) => w.synced)).then(() => drift.objectsListed());
  const stopWatches = async (): Promise<void> => {
    drift.stop();
    await Promise.all([watch, ...driftWatches].map((w) => w.stop()));
  };

  let server: MetricsServer | undefined;
  if (deps.serveMetrics ?? true) {
    try {
      server = await startMetricsServer({
        host: config.metricsHost ?? '0.0.0.0',
        port: config.metricsPort,
        metrics: () => metrics.registry.metrics(),
        contentType: metrics.registry.contentType,
        live: () => !stopped,
        ready: () => !stopped && watch.healthy(),
      });
    } catch (err) {
      await stopWatches();
      await connection?.close();
      throw err;
    }
  }
  log.info('trigger started', {
    namespaces: config.watchNamespaces.length ? config.watchNamespaces : 'all',
    taskQueue: config.taskQueue,
    temporal: config.temporal.address,
    temporalNamespace: config.temporal.namespace,
    metricsPort: server?.port,
    finalizerRecheckIntervalMs: recheckMs,
    reconcileConcurrency: concurrency,
  });

  let stopping: Promise<void> | undefined;
  return {
    metrics,
    watch,
    reconciler,
    drift,
    metricsPort: server?.port,
    synced: watch.synced,
    idle: () => queue.drain(),
    stop() {
      stopping ??= (async () => {
        stopped = true;
        retries.stop();
        for (const t of rechecks.values()) clearTimeout(t);
        stopWaiting.abort();
        await stopWatches();
        await queue.drain();
        await server?.close();
        await connection?.close();
        log.info('trigger stopped');
      })();
      return stopping;
    },
  };
}

/** CLI entry point. */
export async function main(): Promise<void> {
  const config = loadConfigOrExit(() => loadConfig());
  const log = createLogger(config.logLevel).child({ component: 'trigger' });
  if (!config.temporal.payloadKeys) log.warn('TEMPORAL_PAYLOAD_KEYS_FILE is not set: specs (and any credentials in them) are stored in Temporal in plaintext');
  await requireSearchAttributesOrExit(config.temporal, (warning) => log.warn(warning));
  const trigger = await startTrigger(config, { log });
  stopOnSignals(() => trigger.stop(), {
    stopping: (signal) => log.info('shutting down', { signal }),
    secondSignal: (signal) => log.warn('second signal: exiting now', { signal }),
    stopFailed: (err) => log.error('shutdown failed', { err }),
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    createLogger('error').error('trigger failed to start', { err });
    process.exit(1);
  });
}
