// Shared fixtures for the trigger-* unit tests.
import { validateSpec, formatIssues } from '../../api/schema';
import type { SpecValidator } from '../../trigger/reconcile';

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
