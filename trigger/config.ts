// Trigger configuration from the environment, validated once at start with a clear error.
import * as fs from 'node:fs';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from '../api/rollout-contract';
import { parseDuration } from '../api/duration';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface TriggerConfig {
  temporal: {
    address: string;
    namespace: string;
    tls?: { certPath?: string; keyPath?: string; caPath?: string };
    apiKey?: string;
  };
  taskQueue: string;
  /** Empty: every namespace (cluster-wide watch). */
  watchNamespaces: string[];
  /** 0 picks a free port (tests). */
  metricsPort: number;
  logLevel: LogLevel;
  /** Full relist (fresh informer) at least this often. */
  relistIntervalMs: number;
  /** Restart the watch when nothing (event, reconnect, bookmark) arrived for this long. */
  watchIdleTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid trigger configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

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
        return true;
      } catch {
        return false;
      }
    }, 'file does not exist or is not readable')
    .optional(),
);

const duration = (dflt: string) =>
  z.preprocess(
    (v) => emptyToUndefined(v) ?? dflt,
    z.string().transform((s, ctx) => {
      const r = parseDuration(s);
      if (!r.ok) {
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(s)} ${r.message}` });
        return z.NEVER;
      }
      if (r.ms < 1000) {
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(s)} must be at least 1s` });
        return z.NEVER;
      }
      return r.ms;
    }),
  );

const envSchema = z
  .object({
    TEMPORAL_ADDRESS: z.preprocess(
      (v) => emptyToUndefined(v) ?? 'localhost:7233',
      z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port, e.g. temporal-frontend:7233'),
    ),
    TEMPORAL_NAMESPACE: z.preprocess((v) => emptyToUndefined(v) ?? 'default', z.string().min(1)),
    TEMPORAL_TLS_CERT: readableFile,
    TEMPORAL_TLS_KEY: readableFile,
    TEMPORAL_TLS_CA: readableFile,
    TEMPORAL_API_KEY: optionalString,
    TASK_QUEUE: z.preprocess((v) => emptyToUndefined(v) ?? DEFAULT_TASK_QUEUE, z.string().min(1)),
    WATCH_NAMESPACES: z.preprocess(
      (v) => emptyToUndefined(v) ?? '',
      z
        .string()
        .transform((s) => [...new Set(s.split(',').map((n) => n.trim()).filter((n) => n !== ''))])
        .pipe(z.array(z.string().max(63).regex(DNS1123_LABEL, 'each namespace must be a DNS-1123 label'))),
    ),
    METRICS_PORT: z.preprocess(
      (v) => emptyToUndefined(v) ?? '9464',
      z
        .string()
        .regex(/^\d+$/, 'must be a port number')
        .transform(Number)
        .pipe(z.number().int().min(0).max(65535, 'must be at most 65535')),
    ),
    LOG_LEVEL: z.preprocess(
      (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v) || 'info',
      z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }),
    ),
    RELIST_INTERVAL: duration('5m'),
    WATCH_IDLE_TIMEOUT: duration('2m'),
  })
  .superRefine((env, ctx) => {
    if (!!env.TEMPORAL_TLS_CERT !== !!env.TEMPORAL_TLS_KEY) {
      ctx.addIssue({
        code: 'custom',
        path: [env.TEMPORAL_TLS_CERT ? 'TEMPORAL_TLS_KEY' : 'TEMPORAL_TLS_CERT'],
        message: 'TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (mTLS client certificate)',
      });
    }
  });

/** Parses and validates the trigger's environment. Throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TriggerConfig {
  const r = envSchema.safeParse(env);
  if (!r.success) {
    throw new ConfigError(
      r.error.issues.map((i) => {
        const key = i.path.join('.') || '(environment)';
        const raw = typeof i.path[0] === 'string' ? env[i.path[0]] : undefined;
        return `${key}: ${i.message}${raw !== undefined && !/KEY$/.test(key) ? ` (got ${JSON.stringify(raw)})` : ''}`;
      }),
    );
  }
  const e = r.data;
  const tlsSet = e.TEMPORAL_TLS_CERT || e.TEMPORAL_TLS_CA;
  return {
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      tls: tlsSet ? { certPath: e.TEMPORAL_TLS_CERT, keyPath: e.TEMPORAL_TLS_KEY, caPath: e.TEMPORAL_TLS_CA } : undefined,
      apiKey: e.TEMPORAL_API_KEY,
    },
    taskQueue: e.TASK_QUEUE,
    watchNamespaces: e.WATCH_NAMESPACES,
    metricsPort: e.METRICS_PORT,
    logLevel: e.LOG_LEVEL,
    relistIntervalMs: e.RELIST_INTERVAL,
    watchIdleTimeoutMs: e.WATCH_IDLE_TIMEOUT,
  };
}
