// The one writer of the VMDistributedCluster status, for the trigger and the activities: GET the
// object fresh, let the caller decide from it (its guard and its patch), JSON-merge-patch the
// status subresource with a metadata.resourceVersion precondition. A conflict (409: the object
// changed between GET and PATCH) starts over from the GET, so the guard is checked again; an
// object that is gone (404) is "not written". Each request is bounded by a timeout.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION } from '../api/constants';
import { isNotFound } from './errors';
import { readModifyWrite } from './read-modify-write';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from './request-timeout';

/** What the writer needs of the object: its resourceVersion, for the precondition. */
export interface StatusObject {
  metadata?: { resourceVersion?: string };
}

/** The two requests the writer makes (a fake in unit tests). */
export interface VmdcStatusClient<O extends StatusObject> {
  /** The object, or undefined when it does not exist. */
  get(namespace: string, name: string): Promise<O | undefined>;
  /** JSON merge patch (RFC 7386) of the status subresource. */
  mergePatchStatus(namespace: string, name: string, body: object): Promise<unknown>;
}

export interface VmdcStatusClientOptions {
  /** Timeout of each request (default REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
  /** fieldManager of the status patches (default: none, the API server derives one). */
  fieldManager?: string;
}

/** The VMDistributedCluster GET and status PATCH over the API server, each bounded by a timeout. */
export function vmdcStatusClient<O extends StatusObject>(kc: KubeConfig, opts: VmdcStatusClientOptions = {}): VmdcStatusClient<O> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const ms = opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const timeout = withRequestTimeout(ms);
  const mergePatch = withRequestTimeout(ms, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  return {
    async get(namespace, name) {
      try {
        return (await api.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name }, timeout)) as O;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async mergePatchStatus(namespace, name, body) {
      await api.patchNamespacedCustomObjectStatus(
        { group: GROUP, version: VERSION, plural: PLURAL, namespace, name, body, ...(opts.fieldManager ? { fieldManager: opts.fieldManager } : {}) },
        mergePatch,
      );
    },
  };
}

/** How many times a conflict (409) starts the write over from the GET before the writer gives up. */
export const STATUS_CONFLICT_RETRIES = 10;

/**
 * Writes the status of `ref` from a fresh read: `compute(fresh)` is the caller's guard and patch —
 * the `status` part of the merge patch, or undefined to write nothing (the object is no longer the
 * caller's to write, or nothing changed). Returns whether a patch was written; throws after
 * STATUS_CONFLICT_RETRIES conflicts in a row, and on any other error but 404.
 */
export async function writeVmdcStatus<O extends StatusObject>(
  client: VmdcStatusClient<O>,
  ref: { namespace: string; name: string },
  compute: (fresh: O) => object | undefined,
): Promise<boolean> {
  return readModifyWrite<boolean>(
    async () => {
      const fresh = await client.get(ref.namespace, ref.name);
      if (!fresh) return { done: false };
      const status = compute(fresh);
      if (status === undefined) return { done: false };
      const resourceVersion = fresh.metadata?.resourceVersion;
      return {
        write: () => client.mergePatchStatus(ref.namespace, ref.name, resourceVersion ? { metadata: { resourceVersion }, status } : { status }),
        result: true,
        ifGone: false,
      };
    },
    {
      maxAttempts: STATUS_CONFLICT_RETRIES + 1,
      exhausted: (n, cause) => new Error(`status of ${ref.namespace}/${ref.name}: still conflicting after ${n} attempts`, { cause }),
    },
  );
}
