// Who owns an object a full spec names: the VMDistributedCluster through its ownerReference (so that
// the API server's garbage collector deletes the object with it), or, with spec.retainOnDelete, through
// the applied record alone. Pure.
import { API_VERSION } from '../api/constants';
import type { JsonObject } from '../api/types';
import { readAppliedRecord } from './applied-fields';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
}

/** The ownerReference a full-spec object carries (controller: at most one per object, so no two VMDistributedClusters own it). */
export function vmdcOwnerReference(vmdc: { name: string; uid: string }): OwnerReference {
  return { apiVersion: API_VERSION, kind: 'VMDistributedCluster', name: vmdc.name, uid: vmdc.uid, controller: true };
}

type ObjectMeta = { metadata?: JsonObject & { ownerReferences?: unknown } };

function ownerReferences(obj: ObjectMeta): Array<Partial<OwnerReference>> {
  const refs = obj.metadata?.ownerReferences;
  return Array.isArray(refs) ? (refs as Array<Partial<OwnerReference>>) : [];
}

/**
 * Why vmrollout may not apply a full spec to the existing object `obj` for the VMDistributedCluster
 * `uid`, or undefined when it may: another controller owns it (never taken over); or it is not this
 * VMDistributedCluster's (no ownerReference, no full-spec applied record of it) and adoption was
 * not asked for.
 */
export function ownershipProblem(obj: ObjectMeta, uid: string, adopt: boolean): string | undefined {
  const refs = ownerReferences(obj);
  const other = refs.find((r) => r.controller === true && r.uid !== uid);
  if (other)
    return `it is controlled by ${other.kind ?? 'an object'} ${other.name ?? ''} (uid ${other.uid ?? '?'}); vmrollout never takes over another controller's object`;
  const record = readAppliedRecord(obj);
  const ours = refs.some((r) => r.uid === uid) || (record?.vmdc.uid === uid && record.form === 'spec');
  if (ours || adopt) return undefined;
  return 'it exists and this VMDistributedCluster does not own it: set adopt: true next to its spec to take it over, or manage it as a reference (name + overrideSpec)';
}
