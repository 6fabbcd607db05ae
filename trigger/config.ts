// Trigger configuration from the environment, validated once at start with a clear error.
// The Temporal connection, TASK_QUEUE and LOG_LEVEL are the common block of process/env.
import { z } from 'zod';
import type { TrustPolicy } from '../api/trust-policy';
import {
  commonEnvShape,
  duration,
  emptyToUndefined,
  namespaceList,
  parseEnv,
  port,
  positiveInteger,
  refineCommonEnv,
  temporalConfig,
  trustPolicy,
  withDefault,
  type LogLevel,
  type TemporalConnectionConfig,
} from '../process/env';
import { DEFAULT_CONCURRENCY } from './queue';

export { ConfigError, LOG_LEVELS, type LogLevel } from '../process/env';

export interface TriggerConfig {
  temporal: TemporalConnectionConfig;
  taskQueue: string;
  /** Empty: every namespace (cluster-wide watch). */
  watchNamespaces: string[];
  /** What a VMDistributedCluster may ask for; a spec beyond it is Invalid. */
  policy: TrustPolicy;
  /** Address the metrics server binds (METRICS_HOST); undefined: every interface (0.0.0.0). The chart sets the pod IP. */
  metricsHost?: string;
  /** 0 picks a free port (tests). */
  metricsPort: number;
  logLevel: LogLevel;
  /** Full relist (fresh informer) at least this often. */
  relistIntervalMs: number;
  /** Restart the watch when nothing (event, reconnect, bookmark) arrived for this long. */
  watchIdleTimeoutMs: number;
  /**
   * How often an object being deleted is looked at again while its finalizer stays (a workflow of
   * it still runs, or zones are out of read rotation): a person's release changes only the route
   * objects, not the VMDistributedCluster, so no watch event would tell. Default 30 s.
   */
  finalizerRecheckIntervalMs?: number;
  /**
   * At most this many reconciliations (and drift reports) run at once; the others wait, each
   * object's still in order. Without a cap a trigger meeting thousands of objects calls the API
   * server for all of them at once and falls over (docs/benchmarks.md). Default 32.
   */
  reconcileConcurrency?: number;
}

export const DEFAULT_FINALIZER_RECHECK_INTERVAL_MS = 30_000;
/** A cap beyond this is no cap at all (the failure it prevents starts well below it). */
export const MAX_RECONCILE_CONCURRENCY = 1000;

const envSchema = z
  .object({
    ...commonEnvShape,
    WATCH_NAMESPACES: namespaceList,
    METRICS_HOST: z.preprocess(emptyToUndefined, z.string().trim().optional()),
    METRICS_PORT: port('9464'),
    RELIST_INTERVAL: duration('5m', 1000),
    WATCH_IDLE_TIMEOUT: duration('2m', 1000),
    FINALIZER_RECHECK_INTERVAL: duration('30s', 1000),
    RECONCILE_CONCURRENCY: withDefault(String(DEFAULT_CONCURRENCY), positiveInteger(MAX_RECONCILE_CONCURRENCY)),
  })
  .superRefine(refineCommonEnv);

/** Parses and validates the trigger's environment. Throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TriggerConfig {
  const e = parseEnv('trigger', envSchema, env);
  return {
    temporal: temporalConfig(e),
    taskQueue: e.TASK_QUEUE,
    watchNamespaces: e.WATCH_NAMESPACES,
    policy: trustPolicy(e),
    metricsHost: e.METRICS_HOST,
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    relistIntervalMs: e.RELIST_INTERVAL,
    watchIdleTimeoutMs: e.WATCH_IDLE_TIMEOUT,
    finalizerRecheckIntervalMs: e.FINALIZER_RECHECK_INTERVAL,
    reconcileConcurrency: e.RECONCILE_CONCURRENCY,
  };
}
