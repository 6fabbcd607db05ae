// The free-form bodies of a VMDistributedCluster spec the trust policy judges: every full spec and
// every overlay, with the kind of object it becomes (or changes) and where it sits in the spec.
import type { JsonObject, ManagedObject, NormalizedSpec } from '../types';
import { storageField, zoneStorage } from '../storage';

export type VmKind = 'VMCluster' | 'VMSingle' | 'VMUser' | 'VMAuth' | 'VMAgent';

export interface ManagedBody {
  kind: VmKind;
  /** `spec`: the whole object as written; `overrideSpec`: a JSON merge patch onto an object that exists. */
  form: 'spec' | 'overrideSpec';
  /** Path of the body in the VMDistributedCluster spec (for formatPath). */
  path: (string | number)[];
  body: JsonObject;
}

function bodiesOf(kind: VmKind, path: (string | number)[], m: ManagedObject): ManagedBody[] {
  const out: ManagedBody[] = [];
  if (m.spec) out.push({ kind, form: 'spec', path: [...path, 'spec'], body: m.spec });
  if (m.overrideSpec) out.push({ kind, form: 'overrideSpec', path: [...path, 'overrideSpec'], body: m.overrideSpec });
  return out;
}

/** Every body of `spec`, the global VMCluster overlay (spec.overrideSpec, applied to every zone) included. */
export function managedBodies(spec: NormalizedSpec): ManagedBody[] {
  return [
    { kind: 'VMCluster', form: 'overrideSpec', path: ['overrideSpec'], body: spec.overrideSpec },
    ...spec.zones.flatMap((z, i) => {
      const { kind, object } = zoneStorage(z);
      return [...bodiesOf(kind, ['zones', i, storageField(kind)], object), ...(z.vmuser ? bodiesOf('VMUser', ['zones', i, 'vmuser'], z.vmuser) : [])];
    }),
    ...bodiesOf('VMAuth', ['vmauth'], spec.vmauth),
    ...bodiesOf('VMAgent', ['vmagent'], spec.vmagent),
  ];
}
