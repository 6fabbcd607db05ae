// The simulated VM operator on a real kube-apiserver, as the integration suites that test against
// it start it: the operator's CRDs and ours installed, the zone simulator with its vmauth pods and
// vmselect fronts for two zones, and the object builders they create their VM objects with.
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { VM_GROUP, VM_VERSION } from '../../api/constants';
import { startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { installCrdFiles, REPO_ROOT, type KubeObject } from '../e2e/support';
import { startVmEnvironment, type VmEnvironment, type VmEnvironmentOptions } from '../infra/simulator/environment';

export const NS = 'default';
export const VMAUTH = 'vm-global';
export const ZONES = ['vm-az-a', 'vm-az-b'];

export interface OperatorBed {
  kube: KubeCluster;
  kc: k8s.KubeConfig;
  vm: VmEnvironment;
  stop(): Promise<void>;
}

export async function startOperatorBed(opts: Partial<Omit<VmEnvironmentOptions, 'kubeConfig' | 'namespace'>> = {}): Promise<OperatorBed> {
  const kube = await startKube();
  try {
    const kc = kube.kubeConfig;
    await installCrdFiles(kc, VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds'));
    const vm = await startVmEnvironment({ kubeConfig: kc, namespace: NS, vmclusters: ZONES, vmagentName: 'vm-global', vmauthName: VMAUTH, ...opts });
    return { kube, kc, vm, stop: async () => (await vm.stop(), await kube.stop()) };
  } catch (err) {
    await kube.stop();
    throw err;
  }
}

/** A VM operator object of NS. */
export const vmObject = (kind: string, name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: `${VM_GROUP}/${VM_VERSION}`,
  kind,
  metadata: { name, namespace: NS },
  spec,
});

/** A VMCluster/vmselect targetRef: `objects` of NS, plus crd.name/namespace (the operator's CRD requires both keys). */
export const vmselectRef = (objects: string[], name = '', namespace = '') => ({
  crd: { kind: 'VMCluster/vmselect', name, namespace, objects: objects.map((n) => ({ name: n, namespace: NS })) },
});
