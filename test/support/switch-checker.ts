// A SwitchChecker (activities/vmauth/switch.ts) for unit tests: the vmauth pods and the config
// Secret are the test's, nothing reaches an API server.
import { SwitchChecker } from '../../activities/vmauth/switch';
import type { ServicePods } from '../../activities/pods/service-pods';
import type { SwitchInput } from '../../workflows/activity-types';
import type { KubeObjects } from '../../kube/custom-objects';
import { unreachableKubeConfig } from '../infra/harness/kube';

/** What readNamespacedSecret returns for the vmauth config Secret. */
export interface ConfigSecret {
  metadata: { creationTimestamp: Date };
  data: { 'config.yaml.gz': string };
}

export function testSwitchChecker(o: { pods: ServicePods; readSecret: () => Promise<ConfigSecret>; now: () => number }): SwitchChecker {
  const checker = new SwitchChecker({ kube: {} as KubeObjects, kubeConfig: unreachableKubeConfig(), pods: o.pods, now: o.now });
  (checker as unknown as { core: unknown }).core = { readNamespacedSecret: o.readSecret };
  return checker;
}

/** The switch the unit tests check: VMCluster vm-az-b gone from VMAuth global's config in namespace monitoring. */
export const B_OUT_OF_GLOBAL: SwitchInput = {
  namespace: 'monitoring',
  vmauthName: 'global',
  vmcluster: 'vm-az-b',
  expect: 'absent',
  routes: [{ kind: 'VMAuth', name: 'global' }],
  pollIntervalMs: 5_000,
  fallbackWaitMs: 60_000,
};
