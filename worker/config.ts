// Worker configuration from the environment, validated once at start with a clear error.
import * as fs from 'node:fs';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from '../api/rollout-contract';
import { parseDuration } from '../api/duration';
import type { VmagentAuthConfig } from '../activities/vmagent-auth';

export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface WorkerConfig {
  temporal: {
    address: string;
    namespace: string;
    /** TLS to the frontend: mTLS client cert/key and/or a CA; `{}` = TLS with system roots. */
    tls?: { certPath?: string; keyPath?: string; caPath?: string; serverName?: string };
    apiKey?: string;
  };
  taskQueue: string;
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
}

/** Where the Temporal SDK's Prometheus exporter listens unless TEMPORAL_METRICS_BIND says otherwise. */
export const DEFAULT_SDK_METRICS_BIND = '127.0.0.1:9091';

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid worker configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const emptyToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const optionalString = z.preprocess(emptyToUndefined, z.string().trim().optional());

const readableFile = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .trim()
    .refine((p) => {
      try {
        fs.accessSync(p, fs.constants.R_OK);
        return fs.statSync(p).isFile();
      } catch {
        return false;
      }
    }, 'file does not exist or is not readable')
    .optional(),
);

const duration = (dflt: string, minMs: number) =>
  z.preprocess(
    (v) => emptyToUndefined(v) ?? dflt,
    z.string().transform((s, ctx) => {
      const r = parseDuration(s);
      if (!r.ok) {
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(s)} ${r.message}` });
        return z.NEVER;
      }
      if (r.ms < minMs) {
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(s)} must be at least ${minMs} ms` });
        return z.NEVER;
      }
      return r.ms;
    }),
  );

const port = (dflt: string) =>
  z.preprocess(
    (v) => emptyToUndefined(v) ?? dflt,
    z.string().regex(/^\d+$/, 'must be a port number').transform(Number).pipe(z.number().int().min(0).max(65535, 'must be at most 65535')),
  );

const hostPort = z.string().regex(/^[^\s/]+:\d{1,5}$/, 'must be host:port, e.g. temporal-frontend:7233');
const bool = z.preprocess(
  (v) => (typeof v === 'string' ? v.trim().toLowerCase() || 'false' : (v ?? 'false')),
  z.enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' }).transform((s) => ['true', '1', 'yes'].includes(s)),
);
const secretKey = z.preprocess(emptyToUndefined, z.string().trim().regex(/^[-._a-zA-Z0-9]+$/, 'must be a Secret data key').optional());

const envSchema = z
  .object({
    TEMPORAL_ADDRESS: z.preprocess((v) => emptyToUndefined(v) ?? 'localhost:7233', hostPort),
    TEMPORAL_NAMESPACE: z.preprocess((v) => emptyToUndefined(v) ?? 'default', z.string().min(1)),
    TEMPORAL_TLS: bool,
    TEMPORAL_TLS_CERT: readableFile,
    TEMPORAL_TLS_KEY: readableFile,
    TEMPORAL_TLS_CA: readableFile,
    TEMPORAL_TLS_SERVER_NAME: optionalString,
    TEMPORAL_API_KEY: optionalString,
    TASK_QUEUE: z.preprocess((v) => emptyToUndefined(v) ?? DEFAULT_TASK_QUEUE, z.string().min(1)),
    KUBECONFIG: readableFile,
    METRICS_HOST: z.preprocess((v) => emptyToUndefined(v) ?? '0.0.0.0', z.string().min(1)),
    METRICS_PORT: port('9090'),
    TEMPORAL_METRICS_BIND: z.preprocess(emptyToUndefined, hostPort.optional()),
    LOG_LEVEL: z.preprocess(
      (v) => (typeof v === 'string' ? v.trim().toUpperCase() : v) || 'INFO',
      z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }),
    ),
    WORKFLOW_BUNDLE: readableFile,
    VMAGENT_AUTH_SECRET: z.preprocess(emptyToUndefined, z.string().trim().max(253).regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Secret name').optional()),
    VMAGENT_AUTH_SECRET_NAMESPACE: z.preprocess(emptyToUndefined, z.string().trim().max(63).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name').optional()),
    /** Helm chart form: `<namespace>/<name>` (or `<name>`); VMAGENT_AUTH_SECRET(_NAMESPACE) take precedence. */
    VMAGENT_METRICS_AUTH_SECRET: z.preprocess(
      emptyToUndefined,
      z.string().trim().regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be <namespace>/<secret name> or <secret name>').optional(),
    ),
    VMAGENT_AUTH_TOKEN_KEY: secretKey,
    VMAGENT_AUTH_USERNAME_KEY: secretKey,
    VMAGENT_AUTH_PASSWORD_KEY: secretKey,
    VMAGENT_SCRAPE_TIMEOUT: duration('5s', 100),
    SHUTDOWN_GRACE_TIME: duration('30s', 0),
    MAX_CONCURRENT_ACTIVITIES: z.preprocess(emptyToUndefined, z.string().regex(/^\d+$/, 'must be a positive integer').transform(Number).pipe(z.number().int().min(1)).optional()),
  })
  .superRefine((env, ctx) => {
    if (!!env.TEMPORAL_TLS_CERT !== !!env.TEMPORAL_TLS_KEY) {
      ctx.addIssue({
        code: 'custom',
        path: [env.TEMPORAL_TLS_CERT ? 'TEMPORAL_TLS_KEY' : 'TEMPORAL_TLS_CERT'],
        message: 'TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (mTLS client certificate)',
      });
    }
    const authKeys = ['VMAGENT_AUTH_SECRET_NAMESPACE', 'VMAGENT_AUTH_TOKEN_KEY', 'VMAGENT_AUTH_USERNAME_KEY', 'VMAGENT_AUTH_PASSWORD_KEY'] as const;
    for (const k of authKeys) {
      if (env[k] && !env.VMAGENT_AUTH_SECRET && !env.VMAGENT_METRICS_AUTH_SECRET) ctx.addIssue({ code: 'custom', path: [k], message: 'needs VMAGENT_AUTH_SECRET' });
    }
  });

/** Parses and validates the worker's environment. Throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const r = envSchema.safeParse(env);
  if (!r.success) {
    throw new ConfigError(
      r.error.issues.map((i) => {
        const key = i.path.join('.') || '(environment)';
        const raw = typeof i.path[0] === 'string' ? env[i.path[0]] : undefined;
        const secret = /KEY$|TOKEN/.test(key) && !key.startsWith('VMAGENT_AUTH');
        return `${key}: ${i.message}${raw !== undefined && !secret ? ` (got ${JSON.stringify(raw)})` : ''}`;
      }),
    );
  }
  const e = r.data;
  const [chartNs, chartName] = e.VMAGENT_METRICS_AUTH_SECRET?.includes('/')
    ? e.VMAGENT_METRICS_AUTH_SECRET.split('/')
    : [undefined, e.VMAGENT_METRICS_AUTH_SECRET];
  const authSecret = e.VMAGENT_AUTH_SECRET ?? chartName;
  const tls =
    e.TEMPORAL_TLS || e.TEMPORAL_TLS_CERT || e.TEMPORAL_TLS_CA || e.TEMPORAL_TLS_SERVER_NAME
      ? { certPath: e.TEMPORAL_TLS_CERT, keyPath: e.TEMPORAL_TLS_KEY, caPath: e.TEMPORAL_TLS_CA, serverName: e.TEMPORAL_TLS_SERVER_NAME }
      : undefined;
  return {
    temporal: { address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE, tls, apiKey: e.TEMPORAL_API_KEY },
    taskQueue: e.TASK_QUEUE,
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
          secretNamespace: e.VMAGENT_AUTH_SECRET ? e.VMAGENT_AUTH_SECRET_NAMESPACE : (e.VMAGENT_AUTH_SECRET_NAMESPACE ?? chartNs),
          tokenKey: e.VMAGENT_AUTH_TOKEN_KEY,
          usernameKey: e.VMAGENT_AUTH_USERNAME_KEY,
          passwordKey: e.VMAGENT_AUTH_PASSWORD_KEY,
        }
      : undefined,
    scrapeTimeoutMs: e.VMAGENT_SCRAPE_TIMEOUT,
    shutdownGraceTimeMs: e.SHUTDOWN_GRACE_TIME,
    maxConcurrentActivities: e.MAX_CONCURRENT_ACTIVITIES,
  };
}
