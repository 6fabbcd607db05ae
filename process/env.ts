// The environment contract shared by the worker and the trigger processes: zod helpers for
// environment variables, the Temporal connection variables (TEMPORAL_*, TASK_QUEUE), LOG_LEVEL,
// ConfigError with its issue formatting, and the connection options built from them.
// Only the processes import this (it reads files); workflows must not.
import * as fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { z } from 'zod';
import { parseDuration } from '../api/duration';
import { DEFAULT_TASK_QUEUE } from '../api/rollout-contract';
import { PayloadKeysError, readPayloadKeys, type PayloadKeys } from './payload-codec';
import { DNS1123_LABEL_PATTERN } from '../api/limits';
import type { TrustPolicy } from '../api/trust-policy';
import { hostEntryProblem } from '../api/trust/hosts';
import { repositoryEntryProblem } from '../api/trust/pod-fields';

/** One LOG_LEVEL vocabulary for both processes; the variable is read case-insensitively (`WARN` = `warn`). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Thrown by a process's loadConfig; the message lists every problem, one a line. */
export class ConfigError extends Error {
  constructor(
    readonly issues: string[],
    process = 'process',
  ) {
    super(`invalid ${process} configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Whether a variable's value may not be echoed in an issue: default, names ending in KEY or containing TOKEN. */
export type SecretTest = (key: string) => boolean;
export const looksSecret: SecretTest = (key) => /KEY$|TOKEN/.test(key);

/** A ConfigError naming each variable, its problem and (unless secret) the value it had. */
export function configError(process: string, error: z.ZodError, env: NodeJS.ProcessEnv, isSecret: SecretTest = looksSecret): ConfigError {
  return new ConfigError(
    error.issues.map((i) => {
      const key = i.path.join('.') || '(environment)';
      const raw = typeof i.path[0] === 'string' ? env[i.path[0]] : undefined;
      return `${key}: ${i.message}${raw !== undefined && !isSecret(key) ? ` (got ${JSON.stringify(raw)})` : ''}`;
    }),
    process,
  );
}

/** Parses `env` with `schema` or throws the ConfigError listing every problem. */
export function parseEnv<S extends z.ZodType>(process: string, schema: S, env: NodeJS.ProcessEnv, isSecret?: SecretTest): z.output<S> {
  const r = schema.safeParse(env);
  if (!r.success) throw configError(process, r.error, env, isSecret);
  return r.data;
}

export const emptyToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** Unset or blank → `dflt`. */
export const withDefault = <T extends z.ZodType>(dflt: string, schema: T) => z.preprocess((v) => emptyToUndefined(v) ?? dflt, schema);

export const optionalString = z.preprocess(emptyToUndefined, z.string().trim().optional());

/** A path to a readable regular file, or unset. */
export const readableFile = z.preprocess(
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

/** A payload keys file (process/payload-codec), read and checked at start; unset → payloads in plaintext. */
export const payloadKeysFile = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .trim()
    .transform((path, ctx) => {
      try {
        return readPayloadKeys(path);
      } catch (err) {
        if (!(err instanceof PayloadKeysError)) throw err;
        for (const message of err.problems) ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
    })
    .optional(),
);

const formatMin = (ms: number) => (ms > 0 && ms % 1000 === 0 ? `${ms / 1000}s` : `${ms} ms`);

/** A duration (`30s`, `1m30s`, …) in ms, at least `minMs`; unset → `dflt`. */
export const duration = (dflt: string, minMs: number) =>
  withDefault(
    dflt,
    z.string().transform((s, ctx) => {
      const r = parseDuration(s);
      if (!r.ok) {
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(s)} ${r.message}` });
        return z.NEVER;
      }
      if (r.ms < minMs) {
        ctx.addIssue({ code: 'custom', message: `${JSON.stringify(s)} must be at least ${formatMin(minMs)}` });
        return z.NEVER;
      }
      return r.ms;
    }),
  );

/** A TCP port (0 picks a free one); unset → `dflt`. */
export const port = (dflt: string) =>
  withDefault(dflt, z.string().regex(/^\d+$/, 'must be a port number').transform(Number).pipe(z.number().int().min(0).max(65535, 'must be at most 65535')));

/** A whole number from 1 to `max` (spaces around it allowed). */
export const positiveInteger = (max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a positive integer')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be at least 1').max(max, `must be at most ${max}`));

export const hostPort = z.string().regex(/^[^\s/]+:\d{1,5}$/, 'must be host:port, e.g. temporal-frontend:7233');

/** true/false, 1/0, yes/no (any case); unset → false. */
export const bool = z.preprocess(
  (v) => (typeof v === 'string' ? v.trim().toLowerCase() || 'false' : (v ?? 'false')),
  z.enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' }).transform((s) => ['true', '1', 'yes'].includes(s)),
);

/** A comma-separated list of namespaces (blanks and repeats dropped); unset → empty. */
export const namespaceList = withDefault(
  '',
  z
    .string()
    .transform((s) => [
      ...new Set(
        s
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n !== ''),
      ),
    ])
    .pipe(z.array(z.string().max(63).regex(new RegExp(DNS1123_LABEL_PATTERN), 'each namespace must be a DNS-1123 label'))),
);

/** LOG_LEVEL: any case, unset → info; parsed to the lower-case vocabulary. */
export const logLevel = z.preprocess(
  (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v) || 'info',
  z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')} (any case)` }),
);

/** A comma-separated list (blanks and repeats dropped), each entry checked by `problem`; unset → empty. */
const checkedList = (problem: (entry: string) => string | undefined) =>
  withDefault(
    '',
    z.string().transform((s, ctx) => {
      const entries = [
        ...new Set(
          s
            .split(',')
            .map((n) => n.trim())
            .filter((n) => n !== ''),
        ),
      ];
      for (const e of entries) {
        const p = problem(e);
        if (p !== undefined) ctx.addIssue({ code: 'custom', message: p });
      }
      return entries;
    }),
  );

/** A ServiceAccount name: a DNS-1123 subdomain. */
const SERVICE_ACCOUNT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The variables both processes read: the Temporal connection, TASK_QUEUE and LOG_LEVEL. */
export const commonEnvShape = {
  TEMPORAL_ADDRESS: withDefault('localhost:7233', hostPort),
  TEMPORAL_NAMESPACE: withDefault('default', z.string().min(1)),
  TEMPORAL_TLS: bool,
  TEMPORAL_TLS_CERT: readableFile,
  TEMPORAL_TLS_KEY: readableFile,
  TEMPORAL_TLS_CA: readableFile,
  TEMPORAL_TLS_SERVER_NAME: optionalString,
  TEMPORAL_API_KEY: optionalString,
  TEMPORAL_PAYLOAD_KEYS_FILE: payloadKeysFile,
  TASK_QUEUE: withDefault(DEFAULT_TASK_QUEUE, z.string().min(1)),
  LOG_LEVEL: logLevel,
  /** The trust policy (api/trust-policy.ts): both processes enforce it, so both read it. */
  CREATE_NAMESPACES: namespaceList,
  ALLOW_CROSS_NAMESPACE_TARGET_REFS: bool,
  TRUST_ALLOWED_ROUTE_HOSTS: checkedList(hostEntryProblem),
  TRUST_ALLOWED_REMOTE_WRITE_HOSTS: checkedList(hostEntryProblem),
  TRUST_ALLOWED_IMAGE_REPOSITORIES: checkedList(repositoryEntryProblem),
  TRUST_ALLOWED_SERVICE_ACCOUNT_NAMES: checkedList((n) =>
    n.length <= 253 && SERVICE_ACCOUNT_NAME.test(n) ? undefined : `${JSON.stringify(n)} is not a ServiceAccount name (a DNS-1123 subdomain)`,
  ),
  TRUST_ALLOW_HOST_ACCESS: bool,
  TRUST_ALLOW_EXTRA_CONTAINERS: bool,
  TRUST_ALLOW_CROSS_NAMESPACE_SELECTORS: bool,
  TRUST_ALLOW_OTHER_DESTINATIONS: bool,
};

type CommonEnv = z.output<z.ZodObject<typeof commonEnvShape>>;

/** Cross-variable rules of the common block (run from the process schema's superRefine). */
export function refineCommonEnv(env: CommonEnv, ctx: z.RefinementCtx): void {
  if (!!env.TEMPORAL_TLS_CERT !== !!env.TEMPORAL_TLS_KEY) {
    ctx.addIssue({
      code: 'custom',
      path: [env.TEMPORAL_TLS_CERT ? 'TEMPORAL_TLS_KEY' : 'TEMPORAL_TLS_CERT'],
      message: 'TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (mTLS client certificate)',
    });
  }
}

export function trustPolicy(e: CommonEnv): TrustPolicy {
  return {
    createNamespaces: e.CREATE_NAMESPACES,
    crossNamespaceTargetRefs: e.ALLOW_CROSS_NAMESPACE_TARGET_REFS,
    routeHosts: e.TRUST_ALLOWED_ROUTE_HOSTS,
    remoteWriteHosts: e.TRUST_ALLOWED_REMOTE_WRITE_HOSTS,
    imageRepositories: e.TRUST_ALLOWED_IMAGE_REPOSITORIES,
    serviceAccountNames: e.TRUST_ALLOWED_SERVICE_ACCOUNT_NAMES,
    hostAccess: e.TRUST_ALLOW_HOST_ACCESS,
    extraContainers: e.TRUST_ALLOW_EXTRA_CONTAINERS,
    crossNamespaceSelectors: e.TRUST_ALLOW_CROSS_NAMESPACE_SELECTORS,
    otherDestinations: e.TRUST_ALLOW_OTHER_DESTINATIONS,
  };
}

export interface TemporalConnectionConfig {
  address: string;
  namespace: string;
  /** TLS to the frontend: mTLS client cert/key and/or a CA; `{}` = TLS with system roots. */
  tls?: { certPath?: string; keyPath?: string; caPath?: string; serverName?: string };
  apiKey?: string;
  /** Encrypts every payload the process's clients and worker send (TEMPORAL_PAYLOAD_KEYS_FILE); undefined → plaintext. */
  payloadKeys?: PayloadKeys;
}

export function temporalConfig(e: CommonEnv): TemporalConnectionConfig {
  const tls =
    e.TEMPORAL_TLS || e.TEMPORAL_TLS_CERT || e.TEMPORAL_TLS_CA || e.TEMPORAL_TLS_SERVER_NAME
      ? { certPath: e.TEMPORAL_TLS_CERT, keyPath: e.TEMPORAL_TLS_KEY, caPath: e.TEMPORAL_TLS_CA, serverName: e.TEMPORAL_TLS_SERVER_NAME }
      : undefined;
  return { address: e.TEMPORAL_ADDRESS, namespace: e.TEMPORAL_NAMESPACE, tls, apiKey: e.TEMPORAL_API_KEY, payloadKeys: e.TEMPORAL_PAYLOAD_KEYS_FILE };
}

/**
 * Options for Connection.connect / NativeConnection.connect: reads the TLS files; an API key
 * without TLS settings still means TLS (system roots).
 */
export function temporalConnectionOptions(cfg: TemporalConnectionConfig): { address: string; tls?: TLSConfig | boolean; apiKey?: string } {
  const read = (p?: string) => (p ? fs.readFileSync(p) : undefined);
  let tls: TLSConfig | boolean | undefined;
  if (cfg.tls) {
    const cert = read(cfg.tls.certPath);
    const key = read(cfg.tls.keyPath);
    tls = {
      serverNameOverride: cfg.tls.serverName,
      serverRootCACertificate: read(cfg.tls.caPath),
      clientCertPair: cert && key ? { crt: cert, key } : undefined,
    };
  } else if (cfg.apiKey) tls = true;
  return { address: cfg.address, tls, apiKey: cfg.apiKey };
}
