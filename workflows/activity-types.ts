// The activities the rollout workflow calls. activities/ implements this interface
// (createActivities(deps): RolloutActivities); the workflow proxies it. Types only.
import type {
  AnalysisMeasurement,
  CanaryAnalysisSpec,
  ReadHealthReading,
  DropReading,
  SampleParity,
  SampleParitySpec,
  JsonObject,
  NormalizedSpec,
  ObjectGeneration,
  VMDistributedClusterStatus,
} from '../api/types';
import type { VMKind } from '../api/constants';
import type { DrainHeartbeat, QueueHeadroom, QueueSample } from '../api/rollout-contract';
import type { RecordedZone, RecordOwner, RouteRef, RouteRemoval } from '../api/route-records';
import type { NamedStorage, StorageRef } from '../api/storage';

/** The routes to read: the spec's, and the VMUsers spec.vmuserSelector selects now. */
export interface ReadRoutesInput {
  namespace: string;
  routes: RouteRef[];
  vmuserSelector?: string;
}

/** The targetRefs of one route as read from the API server. */
export interface RouteSnapshot {
  route: RouteRef;
  targetRefs: JsonObject[];
}

export interface ObjectState {
  exists: boolean;
  generation?: number;
  observedGeneration?: number;
  updateStatus?: string;
  reason?: string;
  spec?: JsonObject;
}

export interface QueueTarget {
  namespace: string;
  vmagentName: string;
  /** The zones' own VMAgents (spec.zones[].vmagent): the zone's queues are read in each too. */
  zoneVmagents?: string[];
  /** The zone's storage object (a VMCluster, or the VMSingle storageKind says): its remote write is the zone's. */
  vmclusterName: string;
  storageKind?: 'VMSingle';
  remoteWriteURL?: string;
  queueEmptyBytes: number;
  /** Optional (additive), for metrics labels only: the zone's name and the VMDistributedCluster's name. */
  zone?: string;
  objectName?: string;
}

/** What readVmagent is asked to read of the zone's queues. */
export interface VmagentReadingInput extends QueueTarget {
  headroomHorizonMs?: number;
  drops?: boolean;
}

/** What readVmagent read: the parts asked for. */
export interface VmagentReading {
  headroom?: QueueHeadroom;
  drops?: DropReading;
}

/** One measurement of the canary against the baseline zone (strategy.canary.analysis). */
export interface CanaryMeasureInput {
  namespace: string;
  canary: { zone: string } & NamedStorage;
  baseline: { zone: string } & NamedStorage;
  analysis: CanaryAnalysisSpec;
}

/** What countSamples counts (strategy.sampleParity): the zone's window [fromMs, toMs] on it and on a zone in reads. */
export interface SampleCountInput {
  namespace: string;
  zone: { zone: string } & NamedStorage;
  healthy: { zone: string } & NamedStorage;
  fromMs: number;
  toMs: number;
  parity: SampleParitySpec;
}

/** Whom readReadHealth reads: every pod of the VMAuth, and the vmselect pods of the zones carrying the reads (strategy.capacityGuard). */
export interface ReadHealthInput {
  namespace: string;
  vmauthName: string;
  /** The carriers' storage objects. */
  carriers: NamedStorage[];
}

/** The read switch to confirm in the vmauth pods (see activities/vmauth/switch.ts). */
export interface SwitchInput extends NamedStorage {
  namespace: string;
  vmauthName: string;
  /** `absent`: the zone left reads; `present`: it is back. */
  expect: 'absent' | 'present';
  /** The routes whose edit is being confirmed. */
  routes: RouteRef[];
  pollIntervalMs: number;
  /** A pod without the content-hash metric is taken as switched this long after the Secret changed, at the latest. */
  fallbackWaitMs: number;
}

/** A read switch awaited whole: the edited route objects, then the pods. */
export interface AwaitSwitchInput {
  namespace: string;
  /** Each awaited operational at its generation after the edit (read afresh when unknown, e.g. after a resume). */
  routes: Array<{ kind: 'VMAuth' | 'VMUser'; name: string; generation?: number }>;
  pollIntervalMs: number;
  confirm: SwitchInput;
}

/** How one vmauth pod was found to run the config. */
export type PodConfirmation = 'content-hash' | 'vmauth-reload' | 'bounded-wait';

export interface SwitchConfirmed {
  /** The confirmed content hash (CRC32 of the Secret's gzipped config); absent when confirmation is switched off. */
  hash?: number;
  pods: Array<{ pod: string; via: PodConfirmation }>;
  message: string;
}

export interface ReadsDrainInput extends NamedStorage {
  namespace: string;
  /** No new request for this long: drained. */
  quietMs: number;
  /** Give up waiting for quiet after this long (readDrainDelay). */
  maxMs: number;
  pollIntervalMs: number;
}

export interface ReadsDrained {
  /** True when the quiet period was observed; false when maxMs passed first. */
  quiet: boolean;
  message: string;
}

export interface CarriersInput {
  namespace: string;
  carriers: Array<{ zone: string; queue: QueueTarget } & NamedStorage>;
  pollIntervalMs: number;
}

/** What the queue wait writes into the status while it waits: `status` with zone `zone`'s message replaced by the latest progress. */
export interface QueueReport {
  object: ObjectGeneration;
  status: VMDistributedClusterStatus;
  zone: string;
  everyMs: number;
}

/** How an object is managed for a VMDistributedCluster. */
export interface ManagedBy {
  vmdc: { name: string; uid: string; generation: number };
  /** Where the object is in the VMDistributedCluster's spec (e.g. zones[1].vmcluster), for messages. */
  specPath: string;
  /** Full-spec form only: no ownerReference (the object stays when the VMDistributedCluster is deleted). */
  retain: boolean;
  /** Full-spec form only: take over an existing object not owned yet. */
  adopt: boolean;
  /** Take fields other managers own instead of failing. */
  forceConflicts: boolean;
}

export interface ApplyObjectInput {
  kind: VMKind;
  namespace: string;
  name: string;
  patch: JsonObject;
  /** The full-spec form: the object is created when absent, and owned. */
  create: boolean;
  /** Send it with `dryRun=All`: validated and admitted by the API server, stored nowhere (a preflight). */
  dryRun?: boolean;
  managedBy: ManagedBy;
  /** A route object (VMAuth, VMUser) only: these zones' VMClusters taken out of its targetRefs (their trafficMode holds them out of reads). */
  without?: StorageRef[];
}

/**
 * Whether a workflow's input is what its object asks for: `ok`; `stale` (an older generation whose
 * rollout the object no longer asks for: act on nothing); `refused` (the input does not describe the
 * object, or asks for what the trust policy forbids: act on nothing, fail saying why).
 */
export type InputVerdict = { verdict: 'ok' } | { verdict: 'stale'; generation: number; message: string } | { verdict: 'refused'; message: string };

export interface RolloutActivities {
  /** Reads the object the input names and checks the input against it (activities/start/verify-input.ts); before anything else. */
  verifyInput(input: { object: ObjectGeneration; spec: NormalizedSpec; previousWorkflowIds: string[] }): Promise<InputVerdict>;

  /**
   * Supersede every other workflow acting on this object (signal + wait until closed, heartbeating).
   * Returns `stale: true` when a workflow of a newer generation exists: this one must not act.
   */
  takeOverObject(input: { object: ObjectGeneration; ownWorkflowId: string; previousWorkflowIds: string[] }): Promise<{ stale: boolean; superseded: string[] }>;

  /** Write the CR status via the status subresource, only while the object is still at this generation, or while status.workflow names the calling workflow (an adopted paused-only generation). */
  /** `zonesOutOfRotation` is taken from the records on the routes (activities/status/write-status.ts withRecordedZones). */
  writeStatus(input: { object: ObjectGeneration; status: VMDistributedClusterStatus }): Promise<{ written: boolean }>;

  /**
   * A fleet's report on a member generation it queued and will never start (the fleet was
   * cancelled): status Cancelled with `message`, written only while the object names the calling
   * fleet and that generation's child (activities/status/write-status.ts mayReportQueued).
   */
  reportQueuedMember(input: { object: ObjectGeneration; workflowId: string; message: string }): Promise<{ written: boolean }>;

  readObject(input: { kind: VMKind; namespace: string; name: string }): Promise<ObjectState>;

  /**
   * Server-side apply of the object's spec (created only when `create` is set and the object is
   * absent); returns the generation after the change. `patch` is the desired spec as a merge patch
   * (its nulls: keys vmrollout does not set). `changed`: the spec changed (the generation moved).
   */
  applyObject(input: ApplyObjectInput): Promise<{ generation: number; created: boolean; changed: boolean }>;

  /**
   * Wait (heartbeating, polling every pollIntervalMs) until status.observedGeneration >= generation
   * and status.updateStatus == operational. `failed` -> non-retryable ApplicationFailure type 'ObjectFailed'.
   */
  waitOperational(input: { kind: VMKind; namespace: string; name: string; generation: number; pollIntervalMs: number }): Promise<ObjectState>;

  readRoutes(input: ReadRoutesInput): Promise<RouteSnapshot[]>;

  /**
   * Take the zone of `record` out of the routes of `removals` (`direction: 'remove'`) or put it back
   * (`'restore'`), idempotently, with a resourceVersion precondition and retry on conflict. A removal
   * that would leave a route with no backend fails with non-retryable ApplicationFailure type
   * 'EmptyRoute' naming the route, before any route is edited.
   *
   * The removal is computed again from each freshly read route, and the same patch that removes the
   * entries writes the record of exactly what it removed on that route (a route that already carries
   * the zone's record is left alone); a restore puts back what the records of the zone say, on every
   * route of the namespace that carries one, and deletes them in the same patch (`removals` only add
   * VMUsers to report then). The result lists the zones recorded after the edit.
   */
  editRoutes(input: { namespace: string; vmauthName: string; removals: RouteRemoval[]; direction: 'remove' | 'restore'; record: RecordOwner }): Promise<{
    vmauthGeneration: number;
    /** Generation of every VMUser the edit changed (or the removals name), after the edit: each must apply its new routes too. */
    vmuserGenerations?: Record<string, number>;
    /** The zones of this VMDistributedCluster recorded out of reads after the edit. */
    recorded: RecordedZone[];
  }>;

  /** The zones of one VMDistributedCluster (by uid) that the records on the namespace's VMAuths and VMUsers show out of reads. */
  readRecords(input: { namespace: string; uid: string }): Promise<RecordedZone[]>;

  /**
   * Poll vmagent queues inside one heartbeating activity until every pod's pending bytes for the zone
   * stay <= queueEmptyBytes for queueDrainedForMs. Heartbeat details: { last: QueueSample, emptySince?: string }.
   */
  waitQueueDrained(input: QueueTarget & { queueDrainedForMs: number; pollIntervalMs: number }): Promise<QueueSample>;

  /** One queue sample (used by cancellation cleanup to decide whether a patched zone may rejoin). */
  sampleQueue(input: QueueTarget): Promise<QueueSample>;

  /**
   * waitQueueDrained that shows its progress (and returns the streak that completed the wait): to
   * the end in this one activity, writing the latest
   * sample into the zone's status message itself every `report.everyMs` (a long drain costs
   * heartbeats, not history events).
   */
  watchQueue(input: QueueTarget & { queueDrainedForMs: number; pollIntervalMs: number; report: QueueReport }): Promise<DrainHeartbeat>;

  /**
   * One reading of every vmagent pod's page for the zone (activities/vmagent/reading.ts): with
   * `headroomHorizonMs`, whether each queue can hold its intake over that long (the verdict, fitting
   * or not); with `drops`, the drop counters, compared by the workflow before and after the zone's
   * window (workflows/drops.ts). A page that cannot be read or judged (a pod just started) is a
   * retryable error: nothing is decided on part of the pods.
   */
  readVmagent(input: VmagentReadingInput): Promise<VmagentReading>;

  /**
   * One measurement of the canary (activities/analysis/measure.ts): the same queries on a vmselect pod
   * of the canary and of the baseline zone, compared and timed, and the canary's ingestion lag. Its
   * verdict, whatever the zones answer: a zone that cannot be asked makes it Inconclusive.
   */
  measureCanary(input: CanaryMeasureInput): Promise<AnalysisMeasurement>;

  /**
   * The zone's samples per tenant over its window against a zone in reads' (activities/analysis/
   * count-samples.ts): never throws for what a zone answers; what cannot be counted holds the zone.
   */
  countSamples(input: SampleCountInput): Promise<SampleParity>;

  /**
   * One reading of the pods that serve the reads while a zone is out (activities/reads/read-health.ts):
   * every vmauth pod's and the carriers' vmselect pods' read counters, cumulative; `unreadable` says
   * why when some pod cannot be listed, verified or read.
   */
  readReadHealth(input: ReadHealthInput): Promise<ReadHealthReading>;

  /** Wait until the zones that will carry the reads are operational with empty vmagent backlogs. */
  waitCarriersReady(input: CarriersInput): Promise<{ message: string }>;

  /** Wait until the operator's config and every ready vmauth pod show the switch (see SwitchInput). */
  confirmSwitch(input: SwitchInput): Promise<SwitchConfirmed>;

  /** Wait until the zone's vmselect pods count no new /select/ request for quietMs (at most maxMs). */
  waitReadsDrained(input: ReadsDrainInput): Promise<ReadsDrained>;

  /** waitOperational of each edited route object, then confirmSwitch: one activity per read switch. */
  awaitSwitch(input: AwaitSwitchInput): Promise<{ confirmed: SwitchConfirmed }>;
}
