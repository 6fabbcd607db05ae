// Shared shapes of the VMDistributedCluster resource. The zod schemas of ./spec-schema.ts and
// ./status-schema.ts (validation: ./validate.ts) are the source of truth; these types are what
// every other module programs against.

import type { HeldMode, TrafficMode } from './traffic-mode';

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/**
 * An object the spec manages: either an existing object plus an overlay (`overrideSpec`),
 * or a full `spec` created under `name` when absent. Exactly one of the two forms is set.
 */
export interface ManagedObject {
  name: string;
  overrideSpec?: JsonObject;
  spec?: JsonObject;
  /** Full-spec form only: take over an existing object this VMDistributedCluster does not own yet. */
  adopt?: boolean;
}

export interface ZoneSpec {
  name: string;
  /** The zone's storage: exactly one of vmcluster and vmsingle (api/storage.ts zoneStorage). */
  vmcluster?: ManagedObject;
  vmsingle?: ManagedObject;
  vmuser?: ManagedObject;
  /** Its own VMAgent (one per zone), read beside spec.vmagent. */
  vmagent?: ManagedObject;
  remoteWriteURL?: string;
  /** Unset: read-write. */
  trafficMode?: TrafficMode;
}

export type ZoneOrder = 'Shuffle' | 'Declared';

/**
 * Where a rollout stops for a person (`kubectl vmdc promote` / `abort`): before the first zone it
 * upgrades, after the first zone it upgraded (before the next), before every zone. Always at a zone
 * boundary, with every zone in reads.
 */
export const GATES = ['BeforeFirstZone', 'AfterFirstZone', 'BeforeEachZone'] as const;
export type Gate = (typeof GATES)[number];

/** Strategy with defaults applied and durations in milliseconds. */
export interface Strategy {
  order: ZoneOrder;
  readDrainDelayMs: number;
  queueDrainedForMs: number;
  queueEmptyBytes: number;
  pollIntervalMs: number;
  zoneTimeoutMs: number;
  pauseBetweenZonesMs: number;
  /** Absent when none (specs without gates normalize, and hash, as before gates existed). */
  gates?: Gate[];
  /** Present only when Off: absent is Enforce (specs from before the check normalize, and hash, as before). */
  queueHeadroom?: 'Off';
  /** Absent when 0s (zoneTimeout is the horizon), for the same reason. */
  expectedDowntimeMs?: number;
  /** Present only when Off: absent is Enforce (as queueHeadroom). */
  dataCompleteness?: 'Off';
  /** Present only when true: plan the rollout into status.plan and change nothing (phase Planned). */
  dryRun?: true;
  canary?: Canary;
  /** Present: the capacity guard is on. */
  capacityGuard?: CapacityGuard;
  /** Present: each zone's samples are counted against a zone in reads before it rejoins. */
  sampleParity?: SampleParitySpec;
}

/** strategy.sampleParity, defaults applied. */
export interface SampleParitySpec {
  /** Empty: every tenant the healthy zone lists for the window. */
  tenants: string[];
  selector: string;
  tolerance: number;
  lagMs: number;
}

/** One tenant's samples over a zone's window, on the zone and on the healthy zone. */
export interface TenantSamples {
  tenant: string;
  samples: number;
  healthySamples: number;
  /** healthySamples − samples, never below 0. */
  missing: number;
}

/** Whether a zone has the samples a zone in reads has for its window (strategy.sampleParity). */
export interface SampleParity {
  at: string;
  complete: boolean;
  /** The zone compared with (absent: none in reads: not compared, `message` says). */
  healthy?: string;
  from: string;
  to: string;
  /** The tenants short first, at most 20. */
  tenants: TenantSamples[];
  /** Tenants compared in all. */
  tenantCount: number;
  message: string;
}

/** strategy.capacityGuard, defaults applied. */
export interface CapacityGuard {
  maxErrorRatio: number;
  maxLatencyRatio: number;
}

/** Cumulative read counters of one pod (vmauth: its users' requests, errors and durations; vmselect: its /select/ requests and errors). */
export interface ReadCounters {
  requests: number;
  errors: number;
  durationSeconds: number;
  durationCount: number;
}

/** One reading of the pods that serve reads: every vmauth pod and the carriers' vmselect pods. */
export interface ReadHealthReading {
  at: string;
  /** `vmauth/<pod>` or `vmselect/<pod>`: a list (pod names are others' input). */
  pods: Array<{ pod: string; counters: ReadCounters }>;
  /** Why some pods could not be read (none judged then). */
  unreadable?: string;
}

/** The capacity guard's latest judgement of a zone's window (strategy.capacityGuard). */
export interface CapacityCheck {
  at: string;
  breached: boolean;
  /** Reads in the window judged (over every pod read). */
  requests: number;
  errorRatio?: number;
  latencyMs?: number;
  /** vmauth's mean read latency before the zone left (since each pod's last config reload). */
  baselineLatencyMs?: number;
  message: string;
}

/** strategy.canary, defaults applied. */
export interface Canary {
  /** Absent: the first zone of the order. */
  zone?: string;
  bakeMs: number;
  analysis: CanaryAnalysisSpec;
}

export interface CanaryAnalysisSpec {
  intervalMs: number;
  tenant: string;
  queries: string[];
  recentQueries: number;
  maxLatencyRatio: number;
  tolerance: number;
  freshnessSelector?: string;
  maxIngestionLagMs: number;
}

/** spec.fleet */
export interface FleetMembership {
  name: string;
  region: string;
}

/** A validated spec: defaults applied, durations parsed. This is what a workflow receives. */
export interface NormalizedSpec {
  paused: boolean;
  clusterVersion: string;
  /** spec.singleVersion: the VMSingle zones' image tag (present exactly when some zone is a VMSingle). */
  singleVersion?: string;
  overrideSpec: JsonObject;
  zones: ZoneSpec[];
  vmauth: ManagedObject;
  vmagent: ManagedObject;
  /** spec.vmuserSelector: VMUsers whose labels match are read routes too (absent: none; specs from before it hash as before). */
  vmuserSelector?: string;
  /** spec.fleet: rollouts wait for their region's turn in the fleet's parent workflow (absent: started at once). */
  fleet?: FleetMembership;
  /**
   * false: objects created from full specs carry an ownerReference to the VMDistributedCluster (they
   * go with it). Absent in inputs recorded before server-side apply: read as false.
   */
  retainOnDelete?: boolean;
  /** Take over fields another field manager owns (server-side apply force). Absent in older inputs: false. */
  forceConflicts?: boolean;
  strategy: Strategy;
}

export const PHASES = ['Pending', 'Progressing', 'Paused', 'Succeeded', 'Failed', 'Superseded', 'Cancelled', 'Aborted', 'Invalid', 'Planned'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * The steps of one zone, in order (docs/design.md#the-six-steps-of-a-zone). Each is also the zone's phase while it runs.
 * Analyzing runs for the canary zone only (strategy.canary); every other zone goes from WaitingForQueue to RejoiningReads.
 */
export const ZONE_STEPS = ['LeavingReads', 'WaitingForSwitch', 'Upgrading', 'WaitingOperational', 'WaitingForQueue', 'Analyzing', 'RejoiningReads'] as const;
export type ZoneStep = (typeof ZONE_STEPS)[number];

export const ZONE_PHASES = ['Pending', 'Skipped', ...ZONE_STEPS, 'Done', 'Failed'] as const;
export type ZonePhase = (typeof ZONE_PHASES)[number];

/**
 * The queue headroom preflight of a zone (strategy.queueHeadroom): whether every vmagent pod's queue
 * for the zone can hold what it takes in over the expected downtime. Numbers are of the tightest pod.
 */
export interface QueueHeadroom {
  /** ISO time of the reading. */
  at: string;
  fits: boolean;
  /** The expected downtime the prediction is for (strategy.expectedDowntime, or zoneTimeout). */
  horizonSeconds: number;
  /** vmagent pods read. */
  pods: number;
  /** The tightest pod, and its numbers (absent with no pod). */
  pod?: string;
  /** Bytes per second its queue for the zone takes in (average since the pod started). */
  rateBytesPerSecond?: number;
  /** What that rate adds over the horizon. */
  needBytes?: number;
  /** What its queue can still take: vmagent's vm_persistentqueue_free_disk_space_bytes (0 with the on-disk queue off). */
  roomBytes?: number;
  message: string;
}

/** What one vmagent pod dropped for a zone's remote writes, by its counters (vmagent v1.150.0). */
export interface DropCounters {
  /** vmagent_remotewrite_samples_dropped_total: samples refused by a full in-memory-only queue. */
  samples: number;
  /** vm_persistentqueue_bytes_dropped_total: bytes dropped from a full on-disk queue (-remoteWrite.maxDiskUsagePerURL). */
  bytes: number;
  /** vm_persistentqueue_blocks_dropped_total: the blocks those bytes were in. */
  blocks: number;
  /** vmagent_remotewrite_packets_dropped_total: blocks the zone refused for good (400, 409, 415), never re-sent. */
  packets: number;
}

/** Every vmagent pod's drop counters for a zone at one moment (a list: pod names are others' input). */
export interface DropReading {
  at: string;
  pods: Array<{ pod: string; counters: DropCounters }>;
}

/** Whether vmagent dropped anything for a zone while it was out (strategy.dataCompleteness). */
export interface DataCompleteness {
  at: string;
  complete: boolean;
  /** Since when it was counted (the reading before the zone's upgrade); absent: since each pod started. */
  since?: string;
  /** Dropped in the window, summed over the pods. */
  dropped: DropCounters;
  /** Pods whose counters cannot say (restarted or gone in the window). */
  unverifiedPods: number;
  message: string;
}

/** What a rollout would do to one zone (strategy.dryRun). */
export interface PlannedZoneStatus {
  zone: string;
  /** skip: up to date and operational; upgrade: would leave reads and be upgraded; adopt: out of reads (recorded), taken first; fail: would fail, in reads. */
  would: 'skip' | 'upgrade' | 'adopt' | 'hold' | 'fail';
  reason: string;
  /** The gates that would hold before it. */
  gates: Gate[];
  /** Read route objects its leaving would edit, and how many targetRef entries it would remove from them. */
  routes: string[];
  removedRefs: number;
  /** The queue headroom preflight as it would find the zone now (absent when Off, skipped, or unreadable: `reason` says). */
  queueHeadroom?: QueueHeadroom;
  /** It would be the canary (strategy.canary): analysed for the bake before it rejoins reads. */
  canary?: true;
}

/** A dry run's plan (strategy.dryRun): what a rollout of this generation would do, nothing changed. */
export interface RolloutPlanStatus {
  generation: number;
  at: string;
  order: string[];
  zones: PlannedZoneStatus[];
}

/** How a canary's analysis judged it (Argo Rollouts' analysis phases, plus Running). */
export const ANALYSIS_VERDICTS = ['Running', 'Successful', 'Failed', 'Inconclusive'] as const;
export type AnalysisVerdict = (typeof ANALYSIS_VERDICTS)[number];

/** How one query compared: its result on both zones, the canary's error or slowness, or no verdict. */
export const QUERY_VERDICTS = ['match', 'mismatch', 'canaryError', 'slow', 'lagging', 'inconclusive'] as const;
export type QueryVerdict = (typeof QUERY_VERDICTS)[number];

/** One query of one measurement, on the baseline zone and the canary. */
export interface QueryComparison {
  /** The query (its first 200 characters). */
  query: string;
  /** spec: strategy.canary.analysis.queries; recent: the baseline's top_queries; freshness: freshnessSelector's newest sample. */
  source: 'spec' | 'recent' | 'freshness';
  verdict: QueryVerdict;
  baselineMs?: number;
  canaryMs?: number;
  /** Series in each result. */
  baselineSeries?: number;
  canarySeries?: number;
  detail?: string;
}

/** One measurement of the canary against the baseline zone. */
export interface AnalysisMeasurement {
  at: string;
  verdict: Exclude<AnalysisVerdict, 'Running'>;
  queries: QueryComparison[];
  /** How far the canary's newest sample of freshnessSelector is behind the baseline's, in seconds. */
  lagSeconds?: number;
  message: string;
}

/** The canary's analysis (strategy.canary), as it goes. */
export interface CanaryAnalysisStatus {
  verdict: AnalysisVerdict;
  /** The zone it is compared with: at the previous version, in reads. */
  baseline?: string;
  startedAt: string;
  bakeSeconds: number;
  measurements: number;
  /** The measurements that were Failed, Inconclusive. */
  failed: number;
  inconclusive: number;
  /** The deciding measurement (the first Failed one), else the latest. */
  latest?: AnalysisMeasurement;
  /** Inconclusive, and a person promoted the canary (kubectl vmdc promote): it rejoins reads. */
  promoted?: true;
  message: string;
}

export interface ZoneStatus {
  name: string;
  phase: ZonePhase;
  /** Set when the zone is a VMSingle (absent: a VMCluster). */
  storageKind?: 'VMSingle';
  vmclusterGeneration?: number;
  startedAt?: string;
  /** When the zone's current step began (a Failed zone: the step that failed). */
  stepStartedAt?: string;
  finishedAt?: string;
  message?: string;
  /** Set while its trafficMode holds it out of reads. */
  trafficMode?: HeldMode;
  queueHeadroom?: QueueHeadroom;
  dataCompleteness?: DataCompleteness;
  sampleParity?: SampleParity;
  analysis?: CanaryAnalysisStatus;
  capacity?: CapacityCheck;
}

/** metav1.Condition */
export interface Condition {
  type: 'Ready' | 'Progressing' | 'Paused' | 'Valid' | 'Drifted' | 'RecordsVerified';
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface WorkflowRef {
  id: string;
  runId: string;
}

/** The last rollout of the object that Succeeded: what `kubectl vmdc undo` rolls out again. */
export interface LastSucceeded {
  clusterVersion: string;
  generation: number;
}

/** A gate the rollout waits at (status.awaiting): what a person is asked to promote or abort. */
export interface Awaiting {
  /** The gates that hold here (BeforeFirstZone and BeforeEachZone may coincide). */
  gates: Gate[];
  /** The zone that starts once promoted (for a canary: the canary, which rejoins reads). */
  nextZone: string;
  /** Set when the wait is the canary's: its analysis was Inconclusive; abort fails it, out of reads. */
  canary?: string;
  /** Set when the capacity guard breached while `nextZone` is out (why); promote goes on, abort fails the zone, out of reads. */
  capacity?: string;
  since: string;
}

export interface VMDistributedClusterStatus {
  observedGeneration?: number;
  phase?: Phase;
  message?: string;
  workflow?: WorkflowRef;
  currentZone?: string;
  zonesOutOfRotation?: string[];
  zones?: ZoneStatus[];
  conditions?: Condition[];
  lastSucceeded?: LastSucceeded;
  /** Set while the rollout waits at a gate (strategy.gates). */
  awaiting?: Awaiting;
  /** Written by a dry run (strategy.dryRun). */
  plan?: RolloutPlanStatus;
}

/** Identifies one generation of one VMDistributedCluster object. */
export interface ObjectGeneration {
  namespace: string;
  name: string;
  uid: string;
  generation: number;
}
