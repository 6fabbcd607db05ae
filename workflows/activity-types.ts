// The activities the rollout workflow calls. activities/ implements this interface
// (createActivities(deps): RolloutActivities); the workflow proxies it. Types only.
import type { JsonObject, ObjectGeneration, VMDistributedClusterStatus } from '../api/types';
import type { VMKind } from '../api/constants';

/** A read route vmrollout may edit: the VMAuth's unauthorizedUserAccessSpec or a VMUser's spec. */
export interface RouteRef {
  kind: 'VMAuth' | 'VMUser';
  name: string;
}

/** The targetRefs of one route as read from the API server. */
export interface RouteSnapshot {
  route: RouteRef;
  targetRefs: JsonObject[];
}

/**
 * What leaving read rotation removed from one route, so that it can be put back exactly.
 * Produced by pure code in workflows/ from a RouteSnapshot; applied and undone by activities
 * as idempotent transforms on the freshly read object (resourceVersion precondition).
 */
export interface RouteRemoval {
  route: RouteRef;
  /** The VMCluster whose vmselect is taken out of this route. */
  vmcluster: { name: string; namespace: string };
  removed: RemovedRef[];
}

export type RemovedRef =
  /** The whole targetRef named only this zone: it is removed and re-inserted at `index`. */
  | { type: 'targetRef'; index: number; targetRef: JsonObject }
  /** This zone was one entry of targetRefs[index].crd.objects, at `objectIndex`. */
  | {
      type: 'object';
      index: number;
      objectIndex: number;
      object: JsonObject;
      /**
       * The whole containing targetRef as read before the removal (optional, additive). Used by
       * undoRemoval to find the container again if the user moved targetRefs meanwhile.
       */
      targetRef?: JsonObject;
    };

export interface ObjectState {
  exists: boolean;
  generation?: number;
  observedGeneration?: number;
  updateStatus?: string;
  reason?: string;
  spec?: JsonObject;
}

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
}

export interface QueueTarget {
  namespace: string;
  vmagentName: string;
  vmclusterName: string;
  remoteWriteURL?: string;
  queueEmptyBytes: number;
  /** Optional (additive), for metrics labels only: the zone's name and the VMDistributedCluster's name. */
  zone?: string;
  objectName?: string;
}

export interface RolloutActivities {
  /**
   * Supersede every other workflow acting on this object (signal + wait until closed, heartbeating).
   * Returns `stale: true` when a workflow of a newer generation exists: this one must not act.
   */
  takeOverObject(input: {
    object: ObjectGeneration;
    ownWorkflowId: string;
    previousWorkflowIds: string[];
  }): Promise<{ stale: boolean; superseded: string[] }>;

  /** Write the CR status via the status subresource, only while the object is still at this generation, or while status.workflow names the calling workflow (an adopted paused-only generation). */
  writeStatus(input: { object: ObjectGeneration; status: VMDistributedClusterStatus }): Promise<{ written: boolean }>;

  readObject(input: { kind: VMKind; namespace: string; name: string }): Promise<ObjectState>;

  /**
   * Create (only when `create` is set and the object is absent) or JSON-merge-patch an object; returns the generation after the change.
   * `patch` is a merge patch of the object's `spec` (sent as `{ spec: patch }`; on create, the spec is `patch` applied to `{}`).
   */
  applyObject(input: {
    kind: VMKind;
    namespace: string;
    name: string;
    patch: JsonObject;
    create: boolean;
  }): Promise<{ generation: number; created: boolean; changed: boolean }>;

  /**
   * Wait (heartbeating, polling every pollIntervalMs) until status.observedGeneration >= generation
   * and status.updateStatus == operational. `failed` -> non-retryable ApplicationFailure type 'ObjectFailed'.
   */
  waitOperational(input: {
    kind: VMKind;
    namespace: string;
    name: string;
    generation: number;
    pollIntervalMs: number;
  }): Promise<ObjectState>;

  readRoutes(input: { namespace: string; routes: RouteRef[] }): Promise<RouteSnapshot[]>;

  /**
   * Apply removals (`direction: 'remove'`) or put them back (`'restore'`), idempotently, with a
   * resourceVersion precondition and retry on conflict. A removal that would leave a route with no
   * backend fails with non-retryable ApplicationFailure type 'EmptyRoute' naming the route.
   * Returns the VMAuth generation after the edit (to wait for the switch).
   */
  editRoutes(input: {
    namespace: string;
    vmauthName: string;
    removals: RouteRemoval[];
    direction: 'remove' | 'restore';
  }): Promise<{
    vmauthGeneration: number;
    /** Generation of every VMUser the removals name, after the edit: each must apply its new routes too. */
    vmuserGenerations?: Record<string, number>;
  }>;

  /**
   * Poll vmagent queues inside one heartbeating activity until every pod's pending bytes for the zone
   * stay <= queueEmptyBytes for queueDrainedForMs. Heartbeat details: { last: QueueSample, emptySince?: string }.
   */
  waitQueueDrained(input: QueueTarget & { queueDrainedForMs: number; pollIntervalMs: number }): Promise<QueueSample>;

  /** One queue sample (used by cancellation cleanup to decide whether a patched zone may rejoin). */
  sampleQueue(input: QueueTarget): Promise<QueueSample>;
}
