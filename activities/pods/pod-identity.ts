// Whether the Pod an endpoint names is really one of a VictoriaMetrics workload's pods, serving at
// the endpoint's address. An EndpointSlice is only a claim; the Pod object is what kubelet reports
// (status.podIPs) and what the workload's controller made (its controller ownerReference). Pure.
//
// How deep the ownership goes, and why (docs/security.md#pods-are-identified-not-listed): the
// Pod's controller must be the expected workload's own controller object by kind and name: a
// ReplicaSet `<deployment>-<pod-template-hash>` for a Deployment (the Deployment controller's
// naming, k8s.io/kubernetes pkg/controller/deployment/sync.go), the StatefulSet or DaemonSet
// itself. The ReplicaSet is not read: whoever can forge a Pod's ownerReferences can create Pods,
// and a Pod they create with the Service's selector labels is listed by the EndpointSlice
// controller and scraped whatever its owner says; they could as well name the real ReplicaSet's uid.
// The check keeps out what an EndpointSlice writer alone can do (they cannot make a Pod, its
// podIPs or its owner) and a Service whose selector also catches other workloads' pods.
import type { V1Endpoint, V1Pod } from '@kubernetes/client-node';

/** A workload whose pods a component's Service selects, as the VM operator names it. */
export interface Workload {
  kind: 'Deployment' | 'StatefulSet' | 'DaemonSet';
  name: string;
  /** Also `<name>-<shard number>` (a sharded VMAgent: the operator's build/shard.go). */
  sharded?: boolean;
}

/** The Deployment controller's pod-template-hash (rand.SafeEncodeString: consonants and digits). */
const TEMPLATE_HASH = /^[a-z0-9]+$/;
const SHARD = /^\d+$/;

/** Whether `name` is the workload's name (or one of its shards'). */
function namesWorkload(name: string, w: Workload): boolean {
  if (name === w.name) return true;
  return !!w.sharded && name.startsWith(`${w.name}-`) && SHARD.test(name.slice(w.name.length + 1));
}

/** Whether a Pod's controller ownerReference `ref` is the controller object of one of `workloads`. */
function ownedBy(ref: { apiVersion?: string; kind?: string; name?: string }, workloads: readonly Workload[]): boolean {
  if (ref.apiVersion !== 'apps/v1' || !ref.name) return false;
  const name = ref.name;
  return workloads.some((w) => {
    if (w.kind !== 'Deployment') return ref.kind === w.kind && namesWorkload(name, w);
    if (ref.kind !== 'ReplicaSet') return false;
    const dash = name.lastIndexOf('-');
    return dash > 0 && TEMPLATE_HASH.test(name.slice(dash + 1)) && namesWorkload(name.slice(0, dash), w);
  });
}

const describeWorkloads = (ws: readonly Workload[]) => ws.map((w) => `${w.kind} ${w.name}${w.sharded ? ' (or a shard)' : ''}`).join(' or ');

/**
 * Why `pod` (the Pod `endpoint` names, undefined when no Pod of that name is selected by the
 * Service) is not a pod of `workloads` serving at `address` (undefined: it is).
 */
export function podIdentityProblem(pod: V1Pod | undefined, endpoint: V1Endpoint, address: string, workloads: readonly Workload[]): string | undefined {
  const ref = endpoint.targetRef;
  const name = `Pod ${ref?.name ?? '?'}`;
  if (!pod) return `${name} is not a pod the Service selects`;
  if (ref?.uid !== undefined && ref.uid !== pod.metadata?.uid) return `${name} has uid ${pod.metadata?.uid ?? '?'}, the endpoint names uid ${ref.uid}`;
  if (pod.metadata?.deletionTimestamp) return `${name} is being deleted`;
  if (!(pod.status?.podIPs ?? []).some((p) => p.ip === address)) return `${name} does not have address ${address} (status.podIPs)`;
  const owner = pod.metadata?.ownerReferences?.find((o) => o.controller === true);
  if (!owner || !ownedBy(owner, workloads)) {
    const was = owner ? `${owner.kind} ${owner.name} (${owner.apiVersion})` : 'nothing';
    return `${name} is controlled by ${was}, not by ${describeWorkloads(workloads)}`;
  }
  return undefined;
}
