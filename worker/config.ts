// Worker configuration from the environment, validated once at start with a clear error.
import { z } from 'zod';
import {
  commonEnvShape,
  duration,
  emptyToUndefined,
  hostPort,
  looksSecret,
  parseEnv,
  port,
  positiveInteger,
  readableFile,
  refineCommonEnv,
  temporalConfig,
  trustPolicy,
  withDefault,
  type LogLevel,
  type TemporalConnectionConfig,
} from '../process/env';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { VmagentAuthConfig } from '../activities/vmagent/auth';
import type { TrustPolicy } from '../api/trust-policy';

export { ConfigError, LOG_LEVELS, type LogLevel } from '../process/env';

export interface WorkerConfig {
  temporal: TemporalConnectionConfig;
  taskQueue: string;
  /** What a workflow's input may ask for (checked again on the object before anything is done). */
  policy: TrustPolicy;
  /** Path of a kubeconfig; undefined → in-cluster service account (or the default kubeconfig outside a cluster). */
  kubeconfig?: string;
  metrics: {
    host: string;
    /** 0 picks a free port (tests). */
    port: number;
    /** host:port of the Temporal SDK's Prometheus exporter (its series are appended to /metrics); undefined disables it. */
    sdkBindAddress?: string;
  };
  logLevel: LogLevel;
  /** A prebuilt workflow bundle (production); undefined → bundle workflows/ at start. */
  workflowBundlePath?: string;
  vmagentAuth?: VmagentAuthConfig;
  scrapeTimeoutMs: number;
  shutdownGraceTimeMs: number;
  maxConcurrentActivities?: number;
  maxCachedWorkflows?: number;
  /**
   * What stays the same when this worker restarts (the pod name): its boots are identified as
   * `<instance>/<boot>`, and a boot releases at once what an earlier one held (worker/predecessor.ts).
   * Undefined: the SDK's default identity, and attempts of a killed worker end at their heartbeat timeout.
   */
  instance?: string;
  /**
   * Temporal Worker Versioning (docs/upgrading.md): this worker's Worker Deployment and build id;
   * every rollout it starts is pinned to this build and runs on its workers only, to the end.
   * Undefined: an unversioned worker, which takes every task of the queue (tests, `make demo`, a
   * single build); the chart always sets both.
   */
  deploymentVersion?: WorkerDeploymentVersion;
}

/** Where the Temporal SDK's Prometheus exporter listens unless TEMPORAL_METRICS_BIND says otherwise. */
export const DEFAULT_SDK_METRICS_BIND = '127.0.0.1:9091';

const optionalPositiveInteger = z.preprocess(emptyToUndefined, positiveInteger().optional());

const secretKey = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .trim()
    .regex(/^[-._a-zA-Z0-9]+$/, 'must be a Secret data key')
    .optional(),
);

const envSchema = z
  .object({
    ...commonEnvShape,
    KUBECONFIG: readableFile,
    METRICS_HOST: withDefault('0.0.0.0', z.string().min(1)),
    METRICS_PORT: port('9090'),
    TEMPORAL_METRICS_BIND: z.preprocess(emptyToUndefined, hostPort.optional()),
    WORKFLOW_BUNDLE: readableFile,
    /** `<namespace>/<name>` (or `<name>`: the object's namespace) of a Secret with vmagent /metrics credentials. */
    VMAGENT_METRICS_AUTH_SECRET: z.preprocess(
      emptyToUndefined,
      z
        .string()
        .trim()
        .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be <namespace>/<secret name> or <secret name>')
        .optional(),
    ),
    VMAGENT_AUTH_TOKEN_KEY: secretKey,
    VMAGENT_AUTH_USERNAME_KEY: secretKey,
    VMAGENT_AUTH_PASSWORD_KEY: secretKey,
    VMAGENT_SCRAPE_TIMEOUT: duration('5s', 100),
    SHUTDOWN_GRACE_TIME: duration('30s', 0),
    MAX_CONCURRENT_ACTIVITIES: optionalPositiveInteger,
    MAX_CACHED_WORKFLOWS: optionalPositiveInteger,
    // The server ignores a deployment whose name has a dot (a version's canonical form is `<name>.<build id>`).
    TEMPORAL_WORKER_DEPLOYMENT_NAME: z.preprocess(
      emptyToUndefined,
      z
        .string()
        .trim()
        .max(255)
        .regex(/^[^.\s]+$/, 'must not contain dots or spaces')
        .optional(),
    ),
    TEMPORAL_WORKER_BUILD_ID: z.preprocess(emptyToUndefined, z.string().trim().max(255).regex(/^\S+$/, 'must not contain spaces').optional()),
    WORKER_INSTANCE: z.preprocess(
      emptyToUndefined,
      z
        .string()
        .trim()
        .regex(/^[-._a-zA-Z0-9]+$/, 'must be a pod name (letters, digits, - . _)')
        .optional(),
    ),
  })
  .superRefine((env, ctx) => {
    refineCommonEnv(env, ctx);
    const authKeys = ['VMAGENT_AUTH_TOKEN_KEY', 'VMAGENT_AUTH_USERNAME_KEY', 'VMAGENT_AUTH_PASSWORD_KEY'] as const;
    for (const k of authKeys) {
      if (env[k] && !env.VMAGENT_METRICS_AUTH_SECRET) ctx.addIssue({ code: 'custom', path: [k], message: 'needs VMAGENT_METRICS_AUTH_SECRET' });
    }
    // One without the other would run unversioned while the operator believes rollouts are pinned.
    if (!!env.TEMPORAL_WORKER_DEPLOYMENT_NAME !== !!env.TEMPORAL_WORKER_BUILD_ID) {
      ctx.addIssue({
        code: 'custom',
        path: [env.TEMPORAL_WORKER_DEPLOYMENT_NAME ? 'TEMPORAL_WORKER_BUILD_ID' : 'TEMPORAL_WORKER_DEPLOYMENT_NAME'],
        message: 'TEMPORAL_WORKER_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID must be set together (Worker Versioning), or neither (unversioned)',
      });
    }
  });

/** Parses and validates the worker's environment. Throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  // VMAGENT_AUTH_*_KEY name keys of a Secret, not secrets
  const e = parseEnv('worker', envSchema, env, (key) => looksSecret(key) && !key.startsWith('VMAGENT_AUTH'));
  const [authNamespace, authSecret] = e.VMAGENT_METRICS_AUTH_SECRET?.includes('/')
    ? e.VMAGENT_METRICS_AUTH_SECRET.split('/')
    : [undefined, e.VMAGENT_METRICS_AUTH_SECRET];
  return {
    temporal: temporalConfig(e),
    taskQueue: e.TASK_QUEUE,
    policy: trustPolicy(e),
    kubeconfig: e.KUBECONFIG,
    metrics: {
      host: e.METRICS_HOST,
      port: e.METRICS_PORT,
      // unset: the default exporter address; set but empty: no SDK exporter
      sdkBindAddress: env.TEMPORAL_METRICS_BIND === undefined ? DEFAULT_SDK_METRICS_BIND : e.TEMPORAL_METRICS_BIND,
    },
    logLevel: e.LOG_LEVEL,
    workflowBundlePath: e.WORKFLOW_BUNDLE,
    vmagentAuth: authSecret
      ? {
          secretName: authSecret,
          secretNamespace: authNamespace,
          tokenKey: e.VMAGENT_AUTH_TOKEN_KEY,
          usernameKey: e.VMAGENT_AUTH_USERNAME_KEY,
          passwordKey: e.VMAGENT_AUTH_PASSWORD_KEY,
        }
      : undefined,
    scrapeTimeoutMs: e.VMAGENT_SCRAPE_TIMEOUT,
    shutdownGraceTimeMs: e.SHUTDOWN_GRACE_TIME,
    maxConcurrentActivities: e.MAX_CONCURRENT_ACTIVITIES,
    maxCachedWorkflows: e.MAX_CACHED_WORKFLOWS,
    instance: e.WORKER_INSTANCE,
    deploymentVersion:
      e.TEMPORAL_WORKER_DEPLOYMENT_NAME && e.TEMPORAL_WORKER_BUILD_ID
        ? { deploymentName: e.TEMPORAL_WORKER_DEPLOYMENT_NAME, buildId: e.TEMPORAL_WORKER_BUILD_ID }
        : undefined,
  };
}
