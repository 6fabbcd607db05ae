// What `kubectl vmdc get` shows, built from the object and, when Temporal answered, from the
// workflow itself. Pure: the same inputs and `now` give the same view (the renderers and the golden
// tests rely on it).
import { vmDistributedClusterStatusSchema, zoneStatusSchema } from '../api/status-schema';
import { validateSpec } from '../api/validate';
import type { Awaiting, CanaryAnalysisStatus, CapacityCheck, DataCompleteness, Phase, QueueHeadroom, SampleParity, ZonePhase, ZoneStatus } from '../api/types';
import { ZONE_STEPS, type ZoneStep } from '../api/types';
import type { HeldMode } from '../api/traffic-mode';
import type { VmdcObject } from '../kube/vmdc-object';
import type { DrainHeartbeat, Progress } from '../api/rollout-contract';
import { endedPhase, statusIsCurrent } from './rollout-end';
import { zoneSteps } from '../workflows/plan';
import { namedStorage } from '../api/storage';

/** What the workflow in status.workflow told about itself. */
export interface WorkflowReading {
  progress: Progress;
  /** The heartbeat of its running queue wait: a fresher sample than the status's (written every 10 s). */
  queueHeartbeat?: DrainHeartbeat;
}

export interface ViewInput {
  object: VmdcObject;
  workflow?: WorkflowReading;
  /** Why the workflow was not asked, or did not answer (shown in the header). */
  workflowNote?: string;
  /** clusterVersion of the last rollout of this object that Succeeded before the current one. */
  previousVersion?: string;
  /** Temporal Web UI base URL and namespace, for a link to the workflow. */
  webUI?: { baseUrl: string; namespace: string };
}

export interface QueueView {
  /** Where the numbers come from: the wait's heartbeat, the progress query, or the status message. */
  source: 'heartbeat' | 'progress' | 'status';
  sampleAt?: string;
  pods: Array<{ pod: string; bytes: number }>;
  /** Pods with a backlog figure not listed (the status message lists five). */
  unlistedPods: number;
  unreadablePods: number;
  emptySince?: string;
  /** How long the backlog has been empty as of the sample. */
  emptyForMs?: number;
  /** strategy.queueDrainedFor: how long it must stay empty. */
  drainedForMs?: number;
}

export interface ZoneView {
  name: string;
  /** The zone's storage object (a VMCluster, or the VMSingle storageKind says). */
  vmcluster?: string;
  storageKind?: 'VMSingle';
  phase: ZonePhase;
  /** The step running, about to run, or (Failed) the one that failed. */
  step?: ZoneStep;
  /** 1-based position of `step` among the zone's steps (the canary's include Analyzing). */
  stepIndex?: number;
  /** How many steps the zone has: 6, or 7 for the canary. */
  stepCount: number;
  /** Since when the zone is in `step`; an upper bound (the zone's start) unless `stepSinceExact`. */
  stepSince?: string;
  stepSinceExact: boolean;
  outOfReads: boolean;
  /** Its trafficMode holds it out of reads. */
  held?: HeldMode;
  vmclusterGeneration?: number;
  startedAt?: string;
  finishedAt?: string;
  message?: string;
  queue?: QueueView;
  /** The zone's latest queue headroom preflight (strategy.queueHeadroom). */
  headroom?: QueueHeadroom;
  /** Whether vmagent dropped anything for the zone while it was out (strategy.dataCompleteness). */
  completeness?: DataCompleteness;
  /** Whether it has the samples a zone in reads has for its window (strategy.sampleParity). */
  samples?: SampleParity;
  /** The canary's analysis (strategy.canary). */
  analysis?: CanaryAnalysisStatus;
  /** The capacity guard's latest look while the zone was out (strategy.capacityGuard). */
  capacity?: CapacityCheck;
}

export interface RolloutView {
  namespace: string;
  name: string;
  generation?: number;
  observedGeneration?: number;
  /** The status describes the current generation (see statusIsCurrent). */
  current: boolean;
  /** The phase the current spec's rollout ended with (the `status` exit code follows it). */
  ended?: Phase;
  phase?: Phase;
  message?: string;
  specPaused: boolean;
  pauseRequested?: boolean;
  source: 'workflow' | 'status';
  sourceNote?: string;
  currentZone?: string;
  currentStep?: string;
  /** 1-based position of the current zone in the rollout order. */
  zoneIndex?: number;
  zoneCount: number;
  version: { from?: string; to?: string };
  workflow?: { id: string; runId: string; webUI?: string };
  zonesOutOfRotation: string[];
  statusError?: string;
  /** The gate the rollout waits at for a person (promote or abort). */
  awaiting?: Awaiting;
  zones: ZoneView[];
}

/** `<ui>/namespaces/<temporal ns>/workflows/<id>/<runId>`; ids contain slashes, so each part is encoded. */
function webUIUrl(baseUrl: string, namespace: string, id: string, runId: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(id)}/${encodeURIComponent(runId)}`;
}

const isStep = (s: unknown): s is ZoneStep => ZONE_STEPS.includes(s as ZoneStep);

/**
 * status.awaiting as far as it has the shape vmrollout writes (its status schema): the status
 * subresource can be written by others, and an object served through a CRD without the field may
 * carry anything.
 */
function awaitingOf(raw: unknown): Awaiting | undefined {
  const parsed = vmDistributedClusterStatusSchema.shape.awaiting.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** The checks a zone's status carries, each under its own key of status.zones[]. */
type ZoneCheckKey = 'queueHeadroom' | 'dataCompleteness' | 'sampleParity' | 'analysis' | 'capacity';

/**
 * A zone's check `key` as far as it has the shape vmrollout writes (see awaitingOf), from the
 * workflow's progress when it answered, else from the status.
 */
function zoneCheck<K extends ZoneCheckKey>(key: K, fromWorkflow: ProgressZone | undefined, fromStatus: ZoneStatus | undefined): ZoneStatus[K] | undefined {
  const parsed = zoneStatusSchema.shape[key].safeParse(fromWorkflow ? fromWorkflow[key] : fromStatus?.[key]);
  return parsed.success ? (parsed.data as ZoneStatus[K]) : undefined;
}

/** A zone's steps: Analyzing only for the canary. */

/** The step a Failed zone failed at, as its message says (`failed at <Step>…`, workflows/zone-runner.ts). */
function failedStepOf(message: string | undefined): ZoneStep | undefined {
  const m = /failed at (\w+)/.exec(message ?? '');
  return m && isStep(m[1]) ? m[1] : undefined;
}

const QUEUE_MESSAGE = /^waiting for the vmagent backlog \(sample at (\S+)\): .*?(?: \[([^\]]*)\])?; (?:empty since (\S+) \((\d+) s of (\d+) s\)|not empty)$/s;

/**
 * The backlog as the queue wait writes it into the zone's message (workflows/status.ts
 * queueProgressMessage): what is left to show when Temporal cannot be asked.
 */
function queueFromMessage(message: string | undefined): QueueView | undefined {
  const m = QUEUE_MESSAGE.exec(message ?? '');
  if (!m) return undefined;
  const pods = [...(m[2] ?? '').matchAll(/(\S+) (\d+) B/g)].map((p) => ({ pod: p[1]!, bytes: Number(p[2]) }));
  return {
    source: 'status',
    sampleAt: m[1],
    pods,
    unlistedPods: 0,
    unreadablePods: 0,
    ...(m[3] ? { emptySince: m[3], emptyForMs: Number(m[4]) * 1000 } : {}),
    ...(m[5] ? { drainedForMs: Number(m[5]) * 1000 } : {}),
  };
}

function queueFromStreak(streak: DrainHeartbeat, source: 'heartbeat' | 'progress', drainedForMs: number | undefined): QueueView {
  const s = streak.last;
  const pods = Object.entries(s.podPendingBytes ?? {}).map(([pod, bytes]) => ({ pod, bytes }));
  const emptyForMs = streak.emptySince ? Math.max(0, Date.parse(s.at) - Date.parse(streak.emptySince)) : undefined;
  return {
    source,
    sampleAt: s.at,
    pods,
    unlistedPods: Math.max(0, s.totalPods - s.unreadablePods - pods.length),
    unreadablePods: s.unreadablePods,
    ...(streak.emptySince ? { emptySince: streak.emptySince, emptyForMs } : {}),
    ...(drainedForMs !== undefined ? { drainedForMs } : {}),
  };
}

interface SpecFacts {
  clusterVersion?: string;
  zones: Array<{ name: string; vmcluster?: string; storageKind?: 'VMSingle' }>;
  queueDrainedForMs?: number;
}

/** The spec as the workflow gets it (defaults applied); an invalid one is read as far as it goes. */
function specFacts(spec: unknown): SpecFacts {
  const v = validateSpec(spec);
  if (v.success) {
    return {
      clusterVersion: v.spec.clusterVersion,
      zones: v.spec.zones.map((z) => ({ name: z.name, ...namedStorage(z) })),
      queueDrainedForMs: v.spec.strategy.queueDrainedForMs,
    };
  }
  const raw = (spec ?? {}) as { clusterVersion?: unknown; zones?: unknown };
  const zones = Array.isArray(raw.zones) ? raw.zones : [];
  return {
    clusterVersion: typeof raw.clusterVersion === 'string' ? raw.clusterVersion : undefined,
    zones: zones.flatMap((z: { name?: unknown }) => (typeof z?.name === 'string' ? [{ name: z.name }] : [])),
  };
}

type ProgressZone = Progress['zones'][number];

function zoneView(
  name: string,
  fromStatus: ZoneStatus | undefined,
  fromWorkflow: ProgressZone | undefined,
  input: ViewInput,
  facts: SpecFacts,
  outOfReads: boolean,
): ZoneView {
  const phase: ZonePhase = fromWorkflow?.phase ?? fromStatus?.phase ?? 'Pending';
  const message = fromWorkflow ? (fromWorkflow.message ?? fromStatus?.message) : fromStatus?.message;
  const inFlight = phase !== 'Done' && phase !== 'Skipped' && phase !== 'Pending';
  const step = !inFlight ? undefined : (fromWorkflow?.step ?? (isStep(phase) ? phase : failedStepOf(message)));
  const startedAt = fromWorkflow?.startedAt ?? fromStatus?.startedAt;
  // The rollout dates the step its zone's phase is in (a Failed zone: the failed one); a step only
  // about to run (paused before it) has not begun. Rollouts started before the step-started-at
  // workflow version date no step: the zone's start bounds it.
  const dated = phase === 'Failed' || phase === step;
  const analysis = zoneCheck('analysis', fromWorkflow, fromStatus);
  const held = fromWorkflow?.held ?? fromStatus?.trafficMode;
  const steps = zoneSteps({ canary: !!(fromWorkflow?.canary || analysis), ...(held ? { held } : {}) });
  const stepStartedAt = !dated ? undefined : fromWorkflow ? fromWorkflow.stepStartedAt : fromStatus?.stepStartedAt;
  const z: ZoneView = {
    name,
    vmcluster: fromWorkflow?.vmcluster ?? facts.zones.find((s) => s.name === name)?.vmcluster,
    ...((fromWorkflow ?? facts.zones.find((s) => s.name === name) ?? fromStatus)?.storageKind ? { storageKind: 'VMSingle' as const } : {}),
    phase,
    step,
    stepIndex: step ? steps.indexOf(step) + 1 : undefined,
    stepCount: steps.length,
    stepSince: step ? (stepStartedAt ?? startedAt) : undefined,
    stepSinceExact: !!(step && stepStartedAt),
    outOfReads,
    ...(outOfReads && held ? { held } : {}),
    vmclusterGeneration: fromWorkflow?.vmclusterGeneration ?? fromStatus?.vmclusterGeneration,
    startedAt,
    finishedAt: fromWorkflow?.finishedAt ?? fromStatus?.finishedAt,
    message,
  };
  if (step === 'WaitingForQueue' && phase !== 'Failed') z.queue = queueOf(z, input, facts);
  const headroom = zoneCheck('queueHeadroom', fromWorkflow, fromStatus);
  if (headroom) z.headroom = headroom;
  const completeness = zoneCheck('dataCompleteness', fromWorkflow, fromStatus);
  if (completeness) z.completeness = completeness;
  const samples = zoneCheck('sampleParity', fromWorkflow, fromStatus);
  if (samples) z.samples = samples;
  if (analysis) z.analysis = analysis;
  const capacity = zoneCheck('capacity', fromWorkflow, fromStatus);
  if (capacity) z.capacity = capacity;
  return z;
}

/** The freshest backlog figures there are for a zone in its queue wait. */
function queueOf(z: ZoneView, input: ViewInput, facts: SpecFacts): QueueView | undefined {
  const w = input.workflow;
  const candidates: QueueView[] = [];
  if (w?.queueHeartbeat && w.progress.currentZone === z.name) candidates.push(queueFromStreak(w.queueHeartbeat, 'heartbeat', facts.queueDrainedForMs));
  const last = w?.progress.lastQueueSample;
  if (last && last.zone === z.name)
    candidates.push(queueFromStreak({ last, ...(last.emptySince ? { emptySince: last.emptySince } : {}) }, 'progress', facts.queueDrainedForMs));
  const fromMessage = queueFromMessage(z.message);
  if (fromMessage) candidates.push({ ...fromMessage, drainedForMs: fromMessage.drainedForMs ?? facts.queueDrainedForMs });
  return candidates.reduce<QueueView | undefined>((best, q) => (!best || Date.parse(q.sampleAt ?? '') > Date.parse(best.sampleAt ?? '') ? q : best), undefined);
}

export function buildView(input: ViewInput): RolloutView {
  const { object } = input;
  const st = object.status ?? {};
  const facts = specFacts(object.spec);
  const progress = input.workflow?.progress;
  const byStatus = new Map((st.zones ?? []).map((z) => [z.name, z]));
  const byWorkflow = new Map((progress?.zones ?? []).map((z) => [z.name, z]));
  const order = progress?.order.length ? progress.order : st.zones?.length ? st.zones.map((z) => z.name) : facts.zones.map((z) => z.name);
  const out = progress?.zonesOutOfRotation ?? st.zonesOutOfRotation ?? [];
  const zones = order.map((n) => zoneView(n, byStatus.get(n), byWorkflow.get(n), input, facts, out.includes(n)));
  const currentZone = progress?.currentZone ?? st.currentZone;
  const index = currentZone ? order.indexOf(currentZone) : -1;
  const workflowRef = st.workflow;
  const view: RolloutView = {
    namespace: object.metadata?.namespace ?? '',
    name: object.metadata?.name ?? '',
    generation: object.metadata?.generation,
    observedGeneration: st.observedGeneration,
    current: statusIsCurrent(object),
    ended: endedPhase(object),
    phase: progress?.phase ?? st.phase,
    message: progress?.message ?? st.message,
    specPaused: (object.spec as { paused?: unknown } | undefined)?.paused === true,
    source: progress ? 'workflow' : 'status',
    zoneCount: order.length,
    version: { to: facts.clusterVersion },
    zonesOutOfRotation: out,
    zones,
  };
  if (progress) view.pauseRequested = progress.pauseRequested;
  if (input.workflowNote) view.sourceNote = input.workflowNote;
  if (currentZone) view.currentZone = currentZone;
  const step = progress?.currentStep ?? zones[index]?.step;
  if (step) view.currentStep = step;
  if (index >= 0) view.zoneIndex = index + 1;
  if (input.previousVersion) view.version.from = input.previousVersion;
  if (workflowRef) {
    view.workflow = { id: workflowRef.id, runId: workflowRef.runId };
    if (input.webUI) view.workflow.webUI = webUIUrl(input.webUI.baseUrl, input.webUI.namespace, workflowRef.id, workflowRef.runId);
  }
  if (progress?.statusError) view.statusError = progress.statusError;
  // The workflow's own answer is the fresher; an ended rollout waits for nobody.
  const awaiting = awaitingOf(progress ? progress.awaiting : st.awaiting);
  if (awaiting && !view.ended) view.awaiting = awaiting;
  return view;
}

/**
 * What must differ for an appended view (a log, the demo) to be printed again: not the clocks, and
 * of a queue wait only whether the backlog is empty yet (its figures change with every sample).
 */
export function changeKey(v: RolloutView): string {
  return JSON.stringify({
    ...v,
    zones: v.zones.map(({ queue, message, stepSince: _s, ...z }) => ({ ...z, ...(queue ? { backlogEmpty: queue.emptySince !== undefined } : { message }) })),
  });
}
