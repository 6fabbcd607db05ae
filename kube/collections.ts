// The API collections vmrollout lists and watches: the VMDistributedClusters, and the VM operator's
// kinds (for drift). Shared by the trigger's informers and the CLI's watch of one object.
import type * as k8s from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, VM_GROUP, VM_KINDS, VM_VERSION, type VMKind } from '../api/constants';
import type { withRequestTimeout } from './request-timeout';

export interface Collection {
  group: string;
  version: string;
  plural: string;
}

export const VMDC_COLLECTION: Collection = { group: GROUP, version: VERSION, plural: PLURAL };
export const vmCollection = (kind: VMKind): Collection => ({ group: VM_GROUP, version: VM_VERSION, plural: VM_KINDS[kind] });

/** The API path an informer watches: one namespace, or every namespace. */
function collectionPath(c: Collection, namespace?: string): string {
  return namespace ? `/apis/${c.group}/${c.version}/namespaces/${namespace}/${c.plural}` : `/apis/${c.group}/${c.version}/${c.plural}`;
}

export const vmdcPath = (namespace?: string): string => collectionPath(VMDC_COLLECTION, namespace);

export const vmObjectPath = (kind: VMKind, namespace?: string): string => collectionPath(vmCollection(kind), namespace);

/** Lists one collection: one namespace, or every namespace. */
export async function listCollection(
  custom: k8s.CustomObjectsApi,
  c: Collection,
  namespace: string | undefined,
  options: ReturnType<typeof withRequestTimeout>,
): Promise<unknown> {
  return namespace ? custom.listNamespacedCustomObject({ ...c, namespace }, options) : custom.listClusterCustomObject(c, options);
}
