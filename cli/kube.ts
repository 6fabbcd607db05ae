// The plugin's Kubernetes side: the kubeconfig as kubectl picks it, reading, patching and watching
// one VMDistributedCluster.
import * as k8s from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION } from '../api/constants';
import { VMDC_COLLECTION, vmdcPath } from '../kube/collections';
import { isNotFound } from '../kube/errors';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../kube/request-timeout';
import { vmdcStatusClient, type VmdcStatusClient } from '../kube/status-writer';
import type { VmdcObject } from '../kube/vmdc-object';
import type { KubeFlags } from './args';
import { UsageError } from './args';

export interface Kube {
  kc: k8s.KubeConfig;
  api: k8s.CustomObjectsApi;
  /** Reads the object as the trigger and the activities do (kube/status-writer.ts). */
  vmdc: VmdcStatusClient<VmdcObject>;
  namespace: string;
}

/** --kubeconfig, else $KUBECONFIG, ~/.kube/config or in-cluster; --context; the namespace of that context unless -n. */
export function loadKube(flags: KubeFlags, verb?: string): Kube {
  const kc = new k8s.KubeConfig();
  if (flags.kubeconfig) kc.loadFromFile(flags.kubeconfig);
  else kc.loadFromDefault();
  if (flags.context) {
    if (!kc.getContextObject(flags.context)) throw new UsageError(`no context ${JSON.stringify(flags.context)} in the kubeconfig`, verb);
    kc.setCurrentContext(flags.context);
  }
  return kubeFor(kc, flags.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default');
}

/** For a KubeConfig already at hand (`make demo`'s). */
export function kubeFor(kc: k8s.KubeConfig, namespace: string): Kube {
  return { kc, api: kc.makeApiClient(k8s.CustomObjectsApi), vmdc: vmdcStatusClient<VmdcObject>(kc), namespace };
}

const mergePatch = withRequestTimeout(REQUEST_TIMEOUT_MS, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));

/** The object does not exist: exit 3 like an API error (release-zone: 1, as it always had). */
export class NotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFound';
  }
}

function notFound(k: Kube, name: string): NotFound {
  return new NotFound(`VMDistributedCluster ${k.namespace}/${name} not found`);
}

export async function getVmdc(k: Kube, name: string): Promise<VmdcObject> {
  const obj = await k.vmdc.get(k.namespace, name);
  if (!obj) throw notFound(k, name);
  return obj;
}

const LIST_PAGE = 500;
const requestTimeout = withRequestTimeout(REQUEST_TIMEOUT_MS);

/** Every VMDistributedCluster of the namespace, or of every namespace (page by page). */
export async function listVmdcs(k: Kube, allNamespaces: boolean): Promise<VmdcObject[]> {
  const out: VmdcObject[] = [];
  let cont: string | undefined;
  do {
    const request = { ...VMDC_COLLECTION, limit: LIST_PAGE, ...(cont ? { _continue: cont } : {}) };
    const page = (await (allNamespaces
      ? k.api.listClusterCustomObject(request, requestTimeout)
      : k.api.listNamespacedCustomObject({ ...request, namespace: k.namespace }, requestTimeout))) as {
      items?: VmdcObject[];
      metadata?: { continue?: string; _continue?: string };
    };
    out.push(...(page.items ?? []));
    cont = page.metadata?.continue ?? page.metadata?._continue;
  } while (cont);
  return out;
}

/** The one change pause and resume make: spec.paused, which the trigger forwards as signals. */
export async function setPaused(k: Kube, name: string, paused: boolean): Promise<VmdcObject> {
  try {
    return (await k.api.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, namespace: k.namespace, name, body: { spec: { paused } } },
      mergePatch,
    )) as VmdcObject;
  } catch (err) {
    throw isNotFound(err) ? notFound(k, name) : err;
  }
}

/**
 * `undo`'s one change: spec.clusterVersion, with the person's credentials. The resourceVersion read
 * makes it conditional: if the object changed since (another edit, a new spec), the API server
 * answers 409 and nothing is written.
 */
export async function setClusterVersion(k: Kube, name: string, clusterVersion: string, resourceVersion: string): Promise<VmdcObject> {
  try {
    return (await k.api.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, namespace: k.namespace, name, body: { metadata: { resourceVersion }, spec: { clusterVersion } } },
      mergePatch,
    )) as VmdcObject;
  } catch (err) {
    throw isNotFound(err) ? notFound(k, name) : err;
  }
}

/** Seconds after which the API server ends a watch; it is then started again from a fresh GET. */
const WATCH_SECONDS = 60;

/**
 * Follows one object: `onObject` with its state at the start and after every change, `onGone`
 * when it is deleted. A watch that ends (its timeout, a dropped connection) is started again from a
 * fresh GET after `retryMs`; errors of that GET go to `onError` and are retried too.
 */
export function followVmdc(
  k: Kube,
  name: string,
  handlers: { onObject(obj: VmdcObject): void; onGone(): void; onError(err: unknown): void },
  retryMs = 1000,
): { stop(): void } {
  let stopped = false;
  let abort: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  const again = () => {
    if (!stopped) timer = setTimeout(() => void start(), retryMs);
  };
  const start = async () => {
    let resourceVersion: string | undefined;
    try {
      const obj = await getVmdc(k, name);
      resourceVersion = obj.metadata?.resourceVersion;
      handlers.onObject(obj);
    } catch (err) {
      if (err instanceof NotFound) return handlers.onGone();
      handlers.onError(err);
      return again();
    }
    if (stopped) return;
    try {
      abort = await new k8s.Watch(k.kc).watch(
        vmdcPath(k.namespace),
        { fieldSelector: `metadata.name=${name}`, resourceVersion, timeoutSeconds: WATCH_SECONDS },
        (type: string, obj: VmdcObject) => {
          if (type === 'DELETED') handlers.onGone();
          else if (type === 'ADDED' || type === 'MODIFIED') handlers.onObject(obj);
        },
        () => again(),
      );
    } catch (err) {
      handlers.onError(err);
      again();
    }
  };
  void start();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      abort?.abort();
    },
  };
}
