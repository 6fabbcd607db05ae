// The plugin's Temporal side, with the worker's connection settings (the same TEMPORAL_*
// variables, which flags override): the progress query and the queue wait's heartbeat of a running
// rollout, its signals and cancel, and the rollouts of an object from visibility.
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter, type LoadedDataConverter, type Payload } from '@temporalio/common';
import { decodeFromPayloadsAtIndex, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import {
  parseWorkflowId,
  QUERY_PROGRESS,
  SA_CLUSTER_VERSION,
  SA_GENERATION,
  SA_NAME,
  SA_NAMESPACE,
  SIGNAL_RESUME,
  visibilityString,
  WORKFLOW_TYPE,
  type DrainHeartbeat,
  type Progress,
  type AbortRequest,
  type AbortResult,
  type PromoteResult,
  type RolloutResult,
  UPDATE_ABORT,
  UPDATE_PROMOTE,
} from '../api/rollout-contract';
import { commonEnvShape, parseEnv, refineCommonEnv, temporalConfig, temporalConnectionOptions, type TemporalConnectionConfig } from '../process/env';
import { EncryptionCodec } from '../process/payload-codec';
import type { TemporalFlags } from './args';
import { UsageError } from './args';
import type { WorkflowReading } from './view';

/** The variables the worker reads for its connection, and the flag that overrides each. */
const FLAG_OF = {
  TEMPORAL_ADDRESS: 'address',
  TEMPORAL_NAMESPACE: 'namespace',
  TEMPORAL_TLS: 'tls',
  TEMPORAL_TLS_CERT: 'tlsCert',
  TEMPORAL_TLS_KEY: 'tlsKey',
  TEMPORAL_TLS_CA: 'tlsCa',
  TEMPORAL_TLS_SERVER_NAME: 'tlsServerName',
  TEMPORAL_API_KEY: 'apiKey',
  TEMPORAL_PAYLOAD_KEYS_FILE: 'payloadKeysFile',
} as const satisfies Record<string, keyof TemporalFlags>;

const settingsSchema = z.object(commonEnvShape).superRefine(refineCommonEnv);

export interface TemporalSettings {
  connection: TemporalConnectionConfig;
  uiUrl?: string;
}

/**
 * The worker's own parsing (process/env.ts) of the TEMPORAL_* variables, each overridden by its
 * flag: the same defaults, checks and messages. Throws ConfigError naming each variable.
 */
export function temporalSettings(flags: TemporalFlags, env: NodeJS.ProcessEnv): TemporalSettings {
  const merged: NodeJS.ProcessEnv = {};
  for (const [variable, flag] of Object.entries(FLAG_OF)) {
    const v = flags[flag];
    merged[variable] = v === undefined ? env[variable] : String(v);
  }
  const e = parseEnv('Temporal connection (flags --temporal-* override the variables)', settingsSchema, merged);
  const uiUrl = flags.uiUrl ?? (env.TEMPORAL_UI_URL?.trim() || undefined);
  if (uiUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(uiUrl))
    throw new UsageError(`the Temporal Web UI URL must be http(s)://…, got ${JSON.stringify(uiUrl)}`);
  return { connection: temporalConfig(e), ...(uiUrl ? { uiUrl } : {}) };
}

/** A person waits on every call: an unreachable frontend or a worker that does not answer a query must not hang the view. */
const CONNECT_TIMEOUT_MS = 5000;
const CALL_TIMEOUT_MS = 10_000;

export interface Temporal {
  client: Client;
  connection: Connection;
  namespace: string;
  address: string;
  /** Decodes what the codec may have encrypted (heartbeat details, results). */
  converter: LoadedDataConverter;
}

export async function connectTemporal(s: TemporalSettings): Promise<Temporal> {
  const connection = await Connection.connect({ ...temporalConnectionOptions(s.connection), connectTimeout: CONNECT_TIMEOUT_MS });
  // No failure converter path (it would be required at run time, which a single-file bundle cannot
  // do): the plugin only reads failures, and every failure converter decodes encoded attributes.
  const dataConverter = s.connection.payloadKeys ? { payloadCodecs: [new EncryptionCodec(s.connection.payloadKeys)] } : {};
  const client = new Client({ connection, namespace: s.connection.namespace, dataConverter });
  return { client, connection, namespace: s.connection.namespace, address: s.connection.address, converter: loadDataConverter(dataConverter) };
}

const within = <T>(t: Temporal, fn: () => Promise<T>): Promise<T> => t.connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, fn);

/** Why Temporal did not answer, in words a person can act on. */
export function temporalProblem(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  if (/binary\/encrypted|Unknown encoding/i.test(msg))
    return 'its answers are encrypted: give the keys file (TEMPORAL_PAYLOAD_KEYS_FILE or --temporal-payload-keys-file)';
  if (/DEADLINE_EXCEEDED|deadline/i.test(msg)) return 'no answer in time (is a worker running?)';
  return msg.split('\n')[0]!.slice(0, 300);
}

/** The activities that wait for a zone's vmagent backlog, heartbeating their streak (activities/vmagent/drain.ts). */
const QUEUE_ACTIVITIES = ['watchQueue', 'waitQueueDrained'];

function isDrainHeartbeat(d: unknown): d is DrainHeartbeat {
  const h = d as DrainHeartbeat | undefined;
  return !!h && typeof h === 'object' && !!h.last && typeof h.last.at === 'string';
}

/** The progress query, and the streak of a running queue wait (fresher than its last status write). */
export async function readWorkflow(t: Temporal, workflowId: string): Promise<WorkflowReading> {
  return within(t, async () => {
    const progress = await t.client.workflow.getHandle(workflowId).query<Progress>(QUERY_PROGRESS);
    // The raw call: describe() would decode the memo too, which fails without the keys.
    const d = await t.client.workflowService.describeWorkflowExecution({ namespace: t.namespace, execution: { workflowId } });
    const waiting = d.pendingActivities?.find((a) => QUEUE_ACTIVITIES.includes(a.activityType?.name ?? '') && a.heartbeatDetails?.payloads?.length);
    const details = waiting ? await decodeFromPayloadsAtIndex<unknown>(t.converter, 0, waiting.heartbeatDetails!.payloads as Payload[]) : undefined;
    return { progress, ...(isDrainHeartbeat(details) ? { queueHeartbeat: details } : {}) };
  });
}

/** What retry sends: the workflow's own signal to retry a Failed zone (docs/operations.md#runbook-failed-zone). */
export async function signalResume(t: Temporal, workflowId: string): Promise<void> {
  await within(t, () => t.client.workflow.getHandle(workflowId).signal(SIGNAL_RESUME));
}

/**
 * `promote`: the workflow's promote Update, which passes the gate it waits at or ends its
 * pauseBetweenZones wait (builds before gates: the wait only). Its validator refuses when neither
 * runs: that comes back as WorkflowUpdateFailedError, its cause the reason.
 */
export async function promoteWait(t: Temporal, workflowId: string): Promise<PromoteResult> {
  return within(t, () => t.client.workflow.getHandle(workflowId).executeUpdate<PromoteResult, []>(UPDATE_PROMOTE));
}

/**
 * `abort`: the workflow's abort Update, which ends the rollout at the gate or pauseBetweenZones wait
 * it is in. Refused (WorkflowUpdateFailedError, its cause the reason) anywhere else; a build before
 * gates has no such Update, and Temporal refuses it the same way.
 */
export async function abortRollout(t: Temporal, workflowId: string, request: AbortRequest): Promise<AbortResult> {
  return within(t, () => t.client.workflow.getHandle(workflowId).executeUpdate<AbortResult, [AbortRequest]>(UPDATE_ABORT, { args: [request] }));
}

/** The request `temporal workflow cancel` sends, to the latest run of the id. */
export async function requestCancel(t: Temporal, workflowId: string): Promise<void> {
  await within(t, () => t.client.workflow.getHandle(workflowId).cancel());
}

export type ExecutionStatus = 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELED' | 'TERMINATED' | 'CONTINUED_AS_NEW' | 'TIMED_OUT' | 'UNSPECIFIED';

/** One rollout (one workflow id: its runs after continue-as-new together). */
export interface RolloutRecord {
  workflowId: string;
  /** The latest run. */
  runId: string;
  uidPrefix?: string;
  generation?: number;
  clusterVersion?: string;
  status: ExecutionStatus;
  startedAt?: string;
  closedAt?: string;
  /** The phase the workflow returned (Succeeded, Superseded, …), when it completed and could be read. */
  resultPhase?: string;
}

/** Every rollout workflow of one object name (any uid), by the search attributes the trigger sets. */
function rolloutsQuery(namespace: string, name: string): string {
  return `WorkflowType = ${visibilityString(WORKFLOW_TYPE)} AND ${SA_NAMESPACE.name} = ${visibilityString(namespace)} AND ${SA_NAME.name} = ${visibilityString(name)}`;
}

const MAX_EXECUTIONS = 2000;

function attribute(fields: Record<string, Payload> | null | undefined, name: string): unknown {
  const p = fields?.[name];
  if (!p) return undefined;
  const v = defaultPayloadConverter.fromPayload<unknown>(p);
  return Array.isArray(v) ? v[0] : v;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The object's rollouts, newest generation first. Results are not read here (see readResult). */
export async function listRollouts(t: Temporal, namespace: string, name: string): Promise<RolloutRecord[]> {
  const runs: temporal.api.workflow.v1.IWorkflowExecutionInfo[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await within(t, () =>
      t.client.workflowService.listWorkflowExecutions({ namespace: t.namespace, query: rolloutsQuery(namespace, name), pageSize: 500, nextPageToken }),
    );
    runs.push(...(page.executions ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken && runs.length < MAX_EXECUTIONS);

  const byId = new Map<string, RolloutRecord & { startMs: number; latestMs: number }>();
  for (const r of runs) {
    const workflowId = r.execution?.workflowId ?? '';
    const startMs = optionalTsToMs(r.startTime) ?? 0;
    const fields = r.searchAttributes?.indexedFields as Record<string, Payload> | undefined;
    const status = (temporal.api.enums.v1.WorkflowExecutionStatus[r.status ?? 0] ?? 'UNSPECIFIED').replace('WORKFLOW_EXECUTION_STATUS_', '') as ExecutionStatus;
    const prev = byId.get(workflowId);
    const earliest = Math.min(startMs, prev?.startMs ?? Infinity);
    if (prev && startMs < prev.latestMs) {
      Object.assign(prev, { startMs: earliest, startedAt: iso(earliest) });
      continue;
    }
    const generation = attribute(fields, SA_GENERATION.name);
    const version = attribute(fields, SA_CLUSTER_VERSION.name);
    byId.set(workflowId, {
      workflowId,
      runId: r.execution?.runId ?? '',
      uidPrefix: parseWorkflowId(workflowId)?.uidPrefix,
      generation: typeof generation === 'number' ? generation : parseWorkflowId(workflowId)?.generation,
      clusterVersion: typeof version === 'string' ? version : undefined,
      status,
      startedAt: iso(earliest),
      closedAt: iso(optionalTsToMs(r.closeTime)),
      startMs: earliest,
      latestMs: startMs,
    });
  }
  return [...byId.values()].sort((a, b) => (b.generation ?? 0) - (a.generation ?? 0) || b.startMs - a.startMs).map(({ startMs: _s, latestMs: _l, ...r }) => r);
}

/** The phase a completed rollout returned; undefined when it cannot be read (e.g. encrypted, no keys). */
export async function readResult(t: Temporal, r: RolloutRecord): Promise<string | undefined> {
  if (r.status !== 'COMPLETED') return undefined;
  try {
    const result = await within(t, () => t.client.workflow.getHandle<() => Promise<RolloutResult>>(r.workflowId, r.runId, { followRuns: false }).result());
    return result?.phase;
  } catch {
    return undefined;
  }
}

/** How many completed rollouts `previousVersion` reads the result of before it gives up. */
const PREVIOUS_RESULTS = 3;

/**
 * The clusterVersion the object ran before the rollout `workflowId`: that of the newest earlier
 * rollout of the same object (uid) that Succeeded.
 */
export async function previousVersion(t: Temporal, namespace: string, name: string, workflowId: string): Promise<string | undefined> {
  const own = parseWorkflowId(workflowId);
  if (!own) return undefined;
  const earlier = (await listRollouts(t, namespace, name)).filter(
    (r) => r.uidPrefix === own.uidPrefix && (r.generation ?? 0) < own.generation && r.status === 'COMPLETED',
  );
  for (const r of earlier.slice(0, PREVIOUS_RESULTS)) if ((await readResult(t, r)) === 'Succeeded') return r.clusterVersion;
  return undefined;
}
