// The Kubernetes I/O of the trigger: list for the informer, read-modify-write of the status
// subresource (JSON merge patch with a resourceVersion precondition), Events.
import * as os from 'node:os';
import * as k8s from '@kubernetes/client-node';
import { GROUP, KIND, PLURAL, VERSION, API_VERSION } from '../api/constants';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../api/types';
import type { VmdcObject } from './reconcile';

export interface VmdcList {
  items: VmdcObject[];
  metadata?: { resourceVersion?: string };
}

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

export function apiStatusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}

/** The API path the informer watches: one namespace, or every namespace. */
export function vmdcPath(namespace?: string): string {
  return namespace ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL}` : `/apis/${GROUP}/${VERSION}/${PLURAL}`;
}

/** Default timeout of one API request of the trigger (not the watch). */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Request options that abort a request after `ms`: a request sent on a half-open keep-alive
 * connection would otherwise hang forever, and with it the object's queue and the shutdown.
 */
export function withRequestTimeout(ms: number, opt?: k8s.ConfigurationOptions<k8s.ObservableMiddleware>): k8s.ConfigurationOptions<k8s.ObservableMiddleware> {
  const timeout: k8s.ObservableMiddleware = {
    pre: (req) => {
      req.setSignal(AbortSignal.timeout(ms));
      return new k8s.Observable(Promise.resolve(req));
    },
    post: (rsp) => new k8s.Observable(Promise.resolve(rsp)),
  };
  return { ...opt, middleware: [...(opt?.middleware ?? []), timeout], middlewareMergeStrategy: 'append' };
}

export function createKubeOps(kc: k8s.KubeConfig, instance = os.hostname(), requestTimeoutMs = REQUEST_TIMEOUT_MS): KubeOps {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const timeout = withRequestTimeout(requestTimeoutMs);
  const mergePatch = withRequestTimeout(requestTimeoutMs, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));

  const get = async (namespace: string, name: string): Promise<VmdcObject | undefined> => {
    try {
      return (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name }, timeout)) as VmdcObject;
    } catch (err) {
      if (apiStatusCode(err) === 404) return undefined;
      throw err;
    }
  };

  return {
    async list(namespace) {
      const res = namespace
        ? await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace }, timeout)
        : await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL }, timeout);
      return res as VmdcList;
    },
    get,
    async patchStatus(og, compute) {
      for (let attempt = 0; ; attempt++) {
        const fresh = await get(og.namespace, og.name);
        if (!fresh || fresh.metadata?.uid !== og.uid || fresh.metadata?.generation !== og.generation) return false;
        const status = compute(fresh);
        if (!status) return false;
        try {
          await custom.patchNamespacedCustomObjectStatus(
            {
              group: GROUP,
              version: VERSION,
              plural: PLURAL,
              namespace: og.namespace,
              name: og.name,
              body: { metadata: { resourceVersion: fresh.metadata?.resourceVersion }, status },
            },
            mergePatch,
          );
          return true;
        } catch (err) {
          const code = apiStatusCode(err);
          if (code === 404) return false;
          if (code === 409 && attempt < 10) continue;
          throw err;
        }
      }
    },
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
