// The Kubernetes I/O of the trigger: list for the informer, GET, status writes (the shared writer of
// kube/status-writer.ts, guarded by "same uid at the same generation"), Events.
import * as os from 'node:os';
import * as k8s from '@kubernetes/client-node';
import { GROUP, KIND, PLURAL, VERSION, API_VERSION } from '../api/constants';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../api/types';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../kube/request-timeout';
import { vmdcStatusClient, writeVmdcStatus } from '../kube/status-writer';
import type { VmdcList, VmdcObject } from './vmdc-object';

export interface KubeOps {
  list(namespace?: string): Promise<VmdcList>;
  get(namespace: string, name: string): Promise<VmdcObject | undefined>;
  /**
   * Reads the object fresh and, while it is still this uid at this generation, merge-patches the
   * status with what `compute` returns (nothing when it returns undefined). Retries on conflicts.
   * Returns whether a patch was written.
   */
  patchStatus(og: ObjectGeneration, compute: (fresh: VmdcObject) => VMDistributedClusterStatus | undefined): Promise<boolean>;
  createEvent(obj: VmdcObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}

export const EVENT_COMPONENT = 'vmrollout-trigger';

/** The API path the informer watches: one namespace, or every namespace. */
export function vmdcPath(namespace?: string): string {
  return namespace ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL}` : `/apis/${GROUP}/${VERSION}/${PLURAL}`;
}

export function createKubeOps(kc: k8s.KubeConfig, instance = os.hostname(), requestTimeoutMs = REQUEST_TIMEOUT_MS): KubeOps {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const timeout = withRequestTimeout(requestTimeoutMs);
  const vmdc = vmdcStatusClient<VmdcObject>(kc, { requestTimeoutMs });

  return {
    async list(namespace) {
      const res = namespace
        ? await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace }, timeout)
        : await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL }, timeout);
      return res as VmdcList;
    },
    get: (namespace, name) => vmdc.get(namespace, name),
    patchStatus: (og, compute) =>
      writeVmdcStatus(vmdc, og, (fresh) => (fresh.metadata?.uid === og.uid && fresh.metadata?.generation === og.generation ? compute(fresh) : undefined)),
    async createEvent(obj, type, reason, message) {
      const md = obj.metadata ?? {};
      const now = new Date();
      await core.createNamespacedEvent({
        namespace: md.namespace ?? 'default',
        body: {
          metadata: { generateName: `${md.name ?? 'vmdc'}.`, namespace: md.namespace },
          involvedObject: {
            apiVersion: obj.apiVersion ?? API_VERSION,
            kind: obj.kind ?? KIND,
            name: md.name,
            namespace: md.namespace,
            uid: md.uid,
            resourceVersion: md.resourceVersion,
          },
          type,
          reason,
          message: message.length > 1000 ? `${message.slice(0, 997)}...` : message,
          source: { component: EVENT_COMPONENT },
          reportingComponent: `${GROUP}/trigger`,
          reportingInstance: instance,
          action: reason,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      }, timeout);
    },
  };
}
