// Custom objects of the VM operator (and our own CR) through @kubernetes/client-node 1.x:
// get, JSON merge patch (application/merge-patch+json) and server-side apply, each request bounded by a timeout.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, VM_GROUP, VM_KINDS, VM_VERSION, type VMKind } from '../api/constants';
import type { JsonObject } from '../api/types';
import { isNotFound } from './errors';
import { FIELD_MANAGER } from './field-managers';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from './request-timeout';

/** A kind's API coordinates. */
export interface KindRef {
  group: string;
  version: string;
  plural: string;
  kind: string;
}

export function vmKind(kind: VMKind): KindRef {
  return { group: VM_GROUP, version: VM_VERSION, plural: VM_KINDS[kind], kind };
}

export const VMDC_KIND: KindRef = { group: GROUP, version: VERSION, plural: PLURAL, kind: 'VMDistributedCluster' };

export interface KubeObject extends JsonObject {
  apiVersion: string;
  kind: string;
  metadata: JsonObject & { name: string; namespace?: string; generation?: number; resourceVersion?: string; uid?: string };
}

/** Every request is bounded (a half-open connection must not hang a step until its timeout). */
const withTimeout = withRequestTimeout(REQUEST_TIMEOUT_MS);
/** Options that make a patch call send `Content-Type: application/merge-patch+json`, bounded too. */
export const mergePatchOptions = withRequestTimeout(REQUEST_TIMEOUT_MS, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
const applyOptions = withRequestTimeout(REQUEST_TIMEOUT_MS, setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply));

/** `dryRun: true` sends the write with `dryRun=All`: the API server validates and admits it, and stores nothing. */
export interface WriteOptions {
  dryRun?: boolean;
}
const dryRunParam = (o: WriteOptions) => (o.dryRun ? { dryRun: 'All' } : {});

export class KubeObjects {
  readonly api: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  /** The object, or undefined when it does not exist. */
  async get(k: KindRef, namespace: string, name: string): Promise<KubeObject | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject({ group: k.group, version: k.version, namespace, plural: k.plural, name }, withTimeout)) as KubeObject;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The objects of the namespace whose labels match `labelSelector`, at most `limit` (more: `more` is true). */
  async listSelected(k: KindRef, namespace: string, labelSelector: string, limit: number): Promise<{ items: KubeObject[]; more: boolean }> {
    const page = (await this.api.listNamespacedCustomObject(
      { group: k.group, version: k.version, namespace, plural: k.plural, labelSelector, limit },
      withTimeout,
    )) as { items?: KubeObject[]; metadata?: { continue?: string; _continue?: string } };
    return { items: page.items ?? [], more: !!(page.metadata?.continue ?? page.metadata?._continue) };
  }

  /**
   * JSON merge patch (RFC 7386) of the object as `fieldManager` (whose edit it is: kube/field-managers.ts);
   * include metadata.resourceVersion for a precondition (409 on mismatch).
   */
  async mergePatch(k: KindRef, namespace: string, name: string, patch: JsonObject, opts: WriteOptions & { fieldManager: string }): Promise<KubeObject> {
    return (await this.api.patchNamespacedCustomObject(
      { group: k.group, version: k.version, namespace, plural: k.plural, name, body: patch, fieldManager: opts.fieldManager, ...dryRunParam(opts) },
      mergePatchOptions,
    )) as KubeObject;
  }

  /**
   * Server-side apply of `config` (apiVersion and kind are filled in) as field manager `vmrollout` (unless told another):
   * the fields it sets become vmrollout's, the ones it no longer sets are removed unless another
   * manager owns them too. `force` takes fields other managers own; `metadata.uid` in `config` makes
   * it a precondition (409 when the object is gone or another one).
   */
  async apply(
    k: KindRef,
    namespace: string,
    name: string,
    config: JsonObject & { metadata: JsonObject },
    opts: WriteOptions & { force?: boolean; fieldManager?: string } = {},
  ): Promise<KubeObject> {
    const body = { apiVersion: `${k.group}/${k.version}`, kind: k.kind, ...config };
    return (await this.api.patchNamespacedCustomObject(
      {
        group: k.group,
        version: k.version,
        namespace,
        plural: k.plural,
        name,
        body,
        fieldManager: opts.fieldManager ?? FIELD_MANAGER,
        ...(opts.force ? { force: true } : {}),
        ...dryRunParam(opts),
      },
      applyOptions,
    )) as KubeObject;
  }
}
