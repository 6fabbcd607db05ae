// The contract between the rollout workflow and those who start it, run it and watch it (the
// trigger, the worker, the CLI): names, ids, search attributes, the workflow input, and the shapes
// the CLI reads (what the workflow returns, the progress query, the queue wait's heartbeat). Plain
// values only, so every side can import it.
import { defineSearchAttributeKey } from '@temporalio/common';
import type { HeldMode } from './traffic-mode';
import type { NamedStorage } from './storage';
import type {
  Awaiting,
  CanaryAnalysisStatus,
  CapacityCheck,
  DataCompleteness,
  SampleParity,
  Gate,
  NormalizedSpec,
  ObjectGeneration,
  Phase,
  QueueHeadroom,
  ZonePhase,
  ZoneStep,
} from './types';

export type { QueueHeadroom } from './types';

export const WORKFLOW_TYPE = 'rolloutWorkflow';
export const DEFAULT_TASK_QUEUE = 'vmrollout';

export const SIGNAL_PAUSE = 'pause';
export const SIGNAL_RESUME = 'resume';
/** Sent to a running workflow when a newer generation of its object exists. */
export const SIGNAL_SUPERSEDE = 'supersede';
/** Sent by the queue wait to its own workflow with its latest sample (LastQueueSample), for the progress query. */
export const SIGNAL_QUEUE_SAMPLE = 'queueSample';
export const QUERY_PROGRESS = 'progress';
/**
 * Update: go on from the zone boundary the rollout waits at (`kubectl vmdc promote`): a gate
 * (strategy.gates) or the pauseBetweenZones wait. Its validator refuses, saying why, when neither is
 * in progress; the result says which.
 */
export const UPDATE_PROMOTE = 'promote';
/** The pauseBetweenZones wait ended early (the only result of builds before gates). */
export interface PausePromoted {
  /** The zone that finished before the wait. */
  after: string;
  /** How much of the wait was left (ms), skipped. */
  skippedMs: number;
}
/** A gate was passed. */
export interface GatePromoted {
  gates: Gate[];
  /** The zone that starts now. */
  nextZone: string;
}
export type PromoteResult = PausePromoted | GatePromoted;

/**
 * Update: end the rollout at the zone boundary it waits at (`kubectl vmdc abort`), every zone in
 * reads: phase Aborted. Its validator refuses, saying why, anywhere else (a zone in flight is
 * stopped by pause or cancel).
 */
export const UPDATE_ABORT = 'abort';
export interface AbortRequest {
  /** Why, in the status and the Event (at most ABORT_REASON_MAX_LENGTH characters). */
  reason?: string;
}
export const ABORT_REASON_MAX_LENGTH = 256;
export interface AbortResult {
  /** The gates waited at; absent: the pauseBetweenZones wait. */
  gates?: Gate[];
  /** The zone that would have been next. */
  nextZone: string;
  /** Zones upgraded before the abort. */
  upgraded: number;
}

export interface SupersedeSignal {
  generation: number;
}

export const SA_NAMESPACE = defineSearchAttributeKey('VmdcNamespace', 'KEYWORD');
export const SA_NAME = defineSearchAttributeKey('VmdcName', 'KEYWORD');
export const SA_GENERATION = defineSearchAttributeKey('VmdcGeneration', 'INT');
export const SA_CLUSTER_VERSION = defineSearchAttributeKey('VmdcClusterVersion', 'KEYWORD');
export const SEARCH_ATTRIBUTE_KEYS = [SA_NAMESPACE, SA_NAME, SA_GENERATION, SA_CLUSTER_VERSION];

/**
 * The Temporal priority every rollout workflow starts with (its activities inherit it): the fairness
 * key is its Kubernetes namespace, the tenant. On a server with task queue fairness, one namespace's
 * many rollouts (a fleet) get their share of the shared task queue, not all of it; elsewhere the key
 * is ignored. Never from the spec: a tenant cannot raise its own weight or priority.
 */
export const rolloutPriority = (namespace: string): { fairnessKey: string } => ({ fairnessKey: namespace });

/** The part of an object's uid its workflow ids carry (the only place that says how long it is). */
export function uidPrefix(uid: string): string {
  return uid.slice(0, 8);
}

/** Readable, and unique across delete-and-recreate thanks to the uid prefix. */
export function workflowIdFor(obj: ObjectGeneration): string {
  return `vmdc/${obj.namespace}/${obj.name}/g${obj.generation}-${uidPrefix(obj.uid)}`;
}

/** The parts of an id made by workflowIdFor, or undefined for any other id. */
export function parseWorkflowId(id: string): { namespace: string; name: string; generation: number; uidPrefix: string } | undefined {
  const m = /^vmdc\/([^/]+)\/([^/]+)\/g(\d+)-([^/]+)$/.exec(id);
  if (!m) return undefined;
  return { namespace: m[1]!, name: m[2]!, generation: Number(m[3]), uidPrefix: m[4]! };
}

/** A string literal for a Temporal visibility query. */
export function visibilityString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Running rollout workflows, of one object when `object` is given. */
export function runningWorkflowsQuery(object?: { namespace: string; name: string }): string {
  const q = `WorkflowType = ${visibilityString(WORKFLOW_TYPE)} AND ExecutionStatus = 'Running'`;
  return object ? `${q} AND ${SA_NAMESPACE.name} = ${visibilityString(object.namespace)} AND ${SA_NAME.name} = ${visibilityString(object.name)}` : q;
}

export interface RolloutInput {
  object: ObjectGeneration;
  spec: NormalizedSpec;
  /**
   * Workflow ids the trigger knows may still act on this object (e.g. `status.workflow.id`).
   * The workflow also finds running ones through visibility; it supersedes and awaits them all
   * before it acts.
   */
  previousWorkflowIds: string[];
}

/** One look at a zone's vmagent queues: what the queue wait decides by, and what the status and the CLI show. */
export interface QueueSample {
  /** ISO time of the sample. */
  at: string;
  /** Pending bytes for this zone summed over all vmagent pods (only meaningful when complete). */
  pendingBytes: number;
  /** Pods whose pending bytes could not be read (scrape error, missing series, not ready). */
  unreadablePods: number;
  totalPods: number;
  drained: boolean;
  message: string;
  /**
   * Per pod, vmagent_remotewrite_retries_count_total of the zone's queues. A block being sent or
   * retried is not in the pending bytes, so a counter that grew between samples breaks the streak.
   */
  sendRetries?: Record<string, number>;
  /** Per pod that holds any, the zone's blocks waiting out a send-retry backoff (not drained while any). */
  blocksInBackoff?: Record<string, number>;
  /** Per readable pod, its pending bytes for the zone (what the status shows while waiting). */
  podPendingBytes?: Record<string, number>;
}

/** A queue-drain streak: the last sample, and since when the queues have been empty without a break. */
export interface DrainHeartbeat {
  last: QueueSample;
  emptySince?: string;
}

/** The latest queue sample of the zone in its queue wait. */
export interface LastQueueSample extends QueueSample {
  zone: string;
  /** Since when the zone's queues have been empty without a break (the streak). */
  emptySince?: string;
}

/** Where a run is: a zone's step, preparing, the pause between zones, or a gate. */
export type CurrentStep = ZoneStep | 'Preparing' | 'PauseBetweenZones' | 'AwaitingApproval';

/** A zone as the workflow tracks it and the progress query shows it (the workflow's ZoneState adds what it says in words). */
export interface ZoneProgress extends NamedStorage {
  name: string;
  phase: ZonePhase;
  /** The step running or about to run (while the zone is in flight or Failed). */
  step?: ZoneStep;
  vmclusterGeneration?: number;
  startedAt?: string;
  /** When `step` began; a Failed zone keeps its failed step's. */
  stepStartedAt?: string;
  finishedAt?: string;
  /** True from the moment a route removal may have been applied until the restore completed. */
  outOfRotation: boolean;
  /** True from the moment the VMCluster patch may have been sent. */
  patchAttempted: boolean;
  /** Set once waitQueueDrained succeeded after the zone became operational at the patched generation. */
  drainedConfirmed: boolean;
  /** The step that failed (phase Failed). */
  failedStep?: ZoneStep;
  /**
   * The VMCluster's generation before this run could have patched it (undefined: unknown, e.g. a
   * zone found out of reads by an earlier generation). Cleanup decides "patched?" against it.
   */
  baseGeneration?: number;
  /** How the last read switch of the zone was confirmed in the vmauth pods. */
  switchConfirmed?: string;
  /** The latest queue headroom preflight (strategy.queueHeadroom). */
  queueHeadroom?: QueueHeadroom;
  /** Whether vmagent dropped anything for the zone while it was out (strategy.dataCompleteness). */
  dataCompleteness?: DataCompleteness;
  /** Whether it has the samples a zone in reads has for its window (strategy.sampleParity). */
  sampleParity?: SampleParity;
  /** The canary of this rollout (strategy.canary): analysed before it rejoins reads. */
  canary?: true;
  /** Its analysis. */
  analysis?: CanaryAnalysisStatus;
  /** The capacity guard's latest judgement while the zone was out (strategy.capacityGuard). */
  capacity?: CapacityCheck;
  /** Its spec.zones[].trafficMode holds it out of reads: it leaves and never rejoins in this rollout. */
  held?: HeldMode;
}

/** What the workflow returns. */
export interface RolloutResult {
  phase: Phase;
  message: string;
  zones: Array<{ name: string; phase: string; vmclusterGeneration?: number }>;
  zonesOutOfRotation: string[];
}

/** What the `progress` query returns. */
export interface Progress {
  phase: Phase;
  message: string;
  paused: boolean;
  pauseRequested: boolean;
  supersededBy?: number;
  currentZone?: string;
  currentStep?: CurrentStep;
  order: string[];
  zones: Array<ZoneProgress & { message?: string; removedRefs: number }>;
  zonesOutOfRotation: string[];
  lastQueueSample?: LastQueueSample;
  statusError?: string;
  /** The gate the run waits at (status.awaiting). */
  awaiting?: Awaiting;
}
