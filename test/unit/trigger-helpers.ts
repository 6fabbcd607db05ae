// Shared fixtures for the trigger-* unit tests.
import { validateSpec, formatIssues } from '../../api/validate';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../../api/types';
import type { SpecValidator } from '../../trigger/decide';
import type { VmdcObject } from '../../kube/vmdc-object';

export const validator: SpecValidator = { validate: validateSpec, format: formatIssues };
export const UID = '0123abcd-ffff-4444-8888-000000000000';

/** A valid raw spec with two bare zone references. */
export function spec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clusterVersion: 'v1.150.0-cluster',
    zones: [
      { name: 'az-a', vmcluster: { name: 'vm-az-a' } },
      { name: 'az-b', vmcluster: { name: 'vm-az-b' } },
    ],
    vmauth: { name: 'vm-global' },
    vmagent: { name: 'vm-global' },
    ...extra,
  };
}

/** One in-memory VMDistributedCluster whose status is written as the API server does (uid and generation guarded). */
export class InMemoryVmdc {
  statusWrites = 0;
  constructor(public obj: VmdcObject) {}
  async patchStatus(og: ObjectGeneration, compute: (fresh: VmdcObject) => VMDistributedClusterStatus | undefined) {
    if (this.obj.metadata?.uid !== og.uid || this.obj.metadata?.generation !== og.generation) return false;
    const patch = compute(this.obj);
    if (!patch) return false;
    this.obj = { ...this.obj, status: { ...this.obj.status, ...patch } };
    this.statusWrites++;
    return true;
  }
}
