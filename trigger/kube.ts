// The Kubernetes I/O of the trigger: list for the informers (VMDistributedClusters, and the VM
// operator's objects for drift), GET, status writes (the shared writer of kube/status-writer.ts,
// guarded by "same uid at the same generation", or "same uid, being deleted"), its finalizer
// (read-modify-write of metadata.finalizers), the route records of an object
// (kube/route-records.ts), Events.
import * as os from 'node:os';
import * as k8s from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type VMKind } from '../api/constants';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../api/types';
import { listCollection, VMDC_COLLECTION, vmCollection } from '../kube/collections';
import { eventCreator, type EventType } from '../kube/events';
import { readModifyWrite } from '../kube/read-modify-write';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../kube/request-timeout';
import { listRouteRecords } from '../kube/route-records';
import type { RecordExpectation, RecordListing } from '../api/record-verification';
import { STATUS_CONFLICT_RETRIES, vmdcStatusClient, writeVmdcStatus } from '../kube/status-writer';
import type { Logger } from './log';
import type { VmdcList, VmdcObject } from '../kube/vmdc-object';
import type { ObjectList } from './watch';

/** The object a finalizer edit is for: this name, only while it is this uid. */
export type ObjectRef = Pick<ObjectGeneration, 'namespace' | 'name' | 'uid'>;

export interface KubeOps {
  list(namespace?: string): Promise<VmdcList>;
  get(namespace: string, name: string): Promise<VmdcObject | undefined>;
  /**
   * Reads the object fresh and, while it is still this uid at this generation, merge-patches the
   * status with what `compute` returns (nothing when it returns undefined). Retries on conflicts.
   * Returns whether a patch was written.
   */
  patchStatus(og: ObjectGeneration, compute: (fresh: VmdcObject) => VMDistributedClusterStatus | undefined, opts?: { deleting?: boolean }): Promise<boolean>;
  /**
   * Adds `finalizer` to metadata.finalizers (kept: every other finalizer) with a resourceVersion
   * precondition, retried on conflicts. `deleting`: not added, the object has a deletionTimestamp
   * (the API server refuses new finalizers then); `gone`: absent, or another uid.
   */
  addFinalizer(ref: ObjectRef, finalizer: string): Promise<'added' | 'present' | 'deleting' | 'gone'>;
  /** Removes `finalizer` (and nothing else) the same way. */
  removeFinalizer(ref: ObjectRef, finalizer: string): Promise<'removed' | 'absent' | 'gone'>;
  /** The route records of a uid on the namespace's VMAuths and VMUsers, verified (api/record-verification.ts). */
  listRouteRecords(namespace: string, expect: RecordExpectation): Promise<RecordListing>;
  createEvent(obj: VmdcObject, type: EventType, reason: string, message: string): Promise<void>;
}

/** Creates an Event on `obj`. An Event only tells: when it cannot be created, that is logged and nothing else fails. */
export async function tryCreateEvent(
  kube: Pick<KubeOps, 'createEvent'>,
  obj: VmdcObject,
  type: EventType,
  reason: string,
  message: string,
  log: Logger,
): Promise<void> {
  try {
    await kube.createEvent(obj, type, reason, message);
  } catch (err) {
    log.warn('could not create Event', { reason, err });
  }
}

/**
 * May the trigger write the status of `fresh` for `og`? The same object (uid) at the same
 * generation — or, for the deletion report (`deleting`), the same object with a deletionTimestamp
 * at ANY generation: the API server increments metadata.generation when it sets the
 * deletionTimestamp of an object that has finalizers (checked in
 * test/integration/trigger-finalizer.test.ts), and a terminating object's spec can still be
 * edited; none of this starts a rollout any more, and what is reported (the route records) is
 * per uid, not per generation.
 */
export function statusGuard(fresh: VmdcObject, og: ObjectGeneration, deleting: boolean): boolean {
  if (fresh.metadata?.uid !== og.uid) return false;
  return deleting ? !!fresh.metadata?.deletionTimestamp : fresh.metadata?.generation === og.generation;
}

/** Lists one kind of the VM operator's objects (the drift watch's informer list), each request bounded by a timeout. */
export function createVmObjectLister(
  kc: k8s.KubeConfig,
  requestTimeoutMs = REQUEST_TIMEOUT_MS,
): (kind: VMKind, namespace?: string) => Promise<ObjectList<k8s.KubernetesObject>> {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const timeout = withRequestTimeout(requestTimeoutMs);
  return async (kind, namespace) => (await listCollection(custom, vmCollection(kind), namespace, timeout)) as ObjectList<k8s.KubernetesObject>;
}

export function createKubeOps(kc: k8s.KubeConfig, instance = os.hostname(), requestTimeoutMs = REQUEST_TIMEOUT_MS): KubeOps {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const timeout = withRequestTimeout(requestTimeoutMs);
  const vmdc = vmdcStatusClient<VmdcObject>(kc, { requestTimeoutMs });
  const createEvent = eventCreator(kc, { component: 'trigger', instance }, requestTimeoutMs);
  const mergePatch = withRequestTimeout(requestTimeoutMs, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));

  /**
   * Read-modify-write of metadata.finalizers: a merge patch replaces the whole list, so it carries
   * the resourceVersion it was computed from (409 when anyone changed the object since: read again).
   * `edit` returns the list to write and the result it means, or a result without writing.
   */
  async function editFinalizers<R extends string>(
    ref: ObjectRef,
    edit: (fresh: VmdcObject, list: string[]) => { write: string[]; result: R } | R,
  ): Promise<R | 'gone'> {
    return readModifyWrite<R | 'gone'>(
      async () => {
        const fresh = await vmdc.get(ref.namespace, ref.name);
        if (!fresh || fresh.metadata?.uid !== ref.uid) return { done: 'gone' };
        const e = edit(fresh, fresh.metadata?.finalizers ?? []);
        if (typeof e === 'string') return { done: e };
        const body = { metadata: { resourceVersion: fresh.metadata?.resourceVersion, finalizers: e.write } };
        return {
          write: () =>
            custom.patchNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace: ref.namespace, name: ref.name, body }, mergePatch),
          result: e.result,
          ifGone: 'gone',
        };
      },
      {
        maxAttempts: STATUS_CONFLICT_RETRIES + 1,
        exhausted: (n, cause) => new Error(`finalizers of ${ref.namespace}/${ref.name}: still conflicting after ${n} attempts`, { cause }),
      },
    );
  }

  return {
    list: async (namespace) => (await listCollection(custom, VMDC_COLLECTION, namespace, timeout)) as VmdcList,
    get: (namespace, name) => vmdc.get(namespace, name),
    patchStatus: (og, compute, opts = {}) => writeVmdcStatus(vmdc, og, (fresh) => (statusGuard(fresh, og, !!opts.deleting) ? compute(fresh) : undefined)),
    addFinalizer: (ref, finalizer) =>
      editFinalizers(ref, (fresh, list) => {
        if (list.includes(finalizer)) return 'present' as const;
        if (fresh.metadata?.deletionTimestamp) return 'deleting' as const;
        return { write: [...list, finalizer], result: 'added' as const };
      }),
    removeFinalizer: (ref, finalizer) =>
      editFinalizers(ref, (_fresh, list) =>
        list.includes(finalizer) ? { write: list.filter((f) => f !== finalizer), result: 'removed' as const } : ('absent' as const),
      ),
    listRouteRecords: (namespace, expect) => listRouteRecords(custom, namespace, expect, timeout),
    createEvent,
  };
}
