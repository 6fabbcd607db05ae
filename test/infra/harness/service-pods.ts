/**
 * A component's pods in a real kube-apiserver without kubelet, scheduler or controllers: what the
 * VM operator, the workload controllers, kubelet and the EndpointSlice controller would have
 * written, written by hand. The operator's Service; its workload (Deployment → ReplicaSet, or
 * StatefulSet) as controller owner of each Pod; each Pod's status.podIPs (the status subresource,
 * as kubelet reports it); the EndpointSlice listing the pods with their uids. The pod addresses are
 * TEST-NET-2 (./pod-network.ts). With the garbage collector running, every owner exists, so
 * nothing is collected. The builders are test/fixtures/pod-objects.ts.
 */
import * as k8s from '@kubernetes/client-node';
import type { Workload } from '../../../activities/pods/pod-identity';
import { controllerSlice, podEndpoint, podObject, replicaSetOf, selectorLabels, serviceObject } from '../../fixtures/pod-objects';

const statusOf = (err: unknown): number | undefined => (err as { code?: number }).code;

/** `create()`, or when the object exists already (409), `read()`. */
async function createOrRead<T>(create: () => Promise<T>, read: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
    return await read();
  }
}

export interface ComponentRef {
  namespace: string;
  /** `vmagent`, `vmauth`, `vmselect`: the Service, workload and pods are `<component>-<instance>…`. */
  component: string;
  instance: string;
}

const nameOf = (c: ComponentRef) => `${c.component}-${c.instance}`;

/** The operator's Service `<component>-<instance>` (port `http`), created once; its uid. */
export async function ensureService(kc: k8s.KubeConfig, c: ComponentRef & { port: number }): Promise<string> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const name = nameOf(c);
  const body = serviceObject({ namespace: c.namespace, name, selector: selectorLabels(c.component, c.instance), port: c.port });
  const svc = await createOrRead(
    () => core.createNamespacedService({ namespace: c.namespace, body }),
    () => core.readNamespacedService({ name, namespace: c.namespace }),
  );
  return svc.metadata!.uid!;
}

/** The workload's controller object of its pods (the ReplicaSet of a Deployment); its uid. */
async function ensureWorkload(kc: k8s.KubeConfig, c: ComponentRef, workload: Workload, replicas: number): Promise<string> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const { namespace } = c;
  const labels = selectorLabels(c.component, c.instance);
  const template = { metadata: { labels }, spec: { containers: [{ name: c.component, image: `victoriametrics/${c.component}` }] } };
  const spec = { replicas, selector: { matchLabels: labels }, template };
  if (workload.kind === 'StatefulSet') {
    const body: k8s.V1StatefulSet = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: workload.name, namespace },
      spec: { ...spec, serviceName: nameOf(c) },
    };
    const sts = await createOrRead(
      () => apps.createNamespacedStatefulSet({ namespace, body }),
      () => apps.readNamespacedStatefulSet({ namespace, name: workload.name }),
    );
    return sts.metadata!.uid!;
  }
  if (workload.kind !== 'Deployment') throw new Error(`service-pods harness: no ${workload.kind} here`);
  const dep = await createOrRead(
    () =>
      apps.createNamespacedDeployment({ namespace, body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: workload.name, namespace }, spec } }),
    () => apps.readNamespacedDeployment({ namespace, name: workload.name }),
  );
  const rsName = replicaSetOf(workload.name);
  const rs = await createOrRead(
    () =>
      apps.createNamespacedReplicaSet({
        namespace,
        body: {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            name: rsName,
            namespace,
            ownerReferences: [
              { apiVersion: 'apps/v1', kind: 'Deployment', name: workload.name, uid: dep.metadata!.uid!, controller: true, blockOwnerDeletion: true },
            ],
          },
          spec,
        },
      }),
    () => apps.readNamespacedReplicaSet({ namespace, name: rsName }),
  );
  return rs.metadata!.uid!;
}

/** The namespace's `default` ServiceAccount, as kube-controller-manager creates it (pods need one to be admitted). */
async function ensureDefaultServiceAccount(core: k8s.CoreV1Api, namespace: string): Promise<void> {
  await createOrRead(
    () => core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } }),
    async () => ({}),
  );
}

/**
 * The Pods `pods` of `workload` (created once, with the operator's selector labels, the workload's
 * controller as controller owner, and status.podIPs [ip] as kubelet reports it); pod name → uid.
 */
export async function ensureWorkloadPods(
  kc: k8s.KubeConfig,
  c: ComponentRef & { workload: Workload; pods: Array<{ name: string; ip: string }> },
): Promise<Map<string, string>> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await ensureDefaultServiceAccount(core, c.namespace);
  const ownerUid = await ensureWorkload(kc, c, c.workload, c.pods.length);
  const uids = new Map<string, string>();
  for (const p of c.pods) {
    const body = podObject({ namespace: c.namespace, name: p.name, ip: p.ip, labels: selectorLabels(c.component, c.instance), workload: c.workload, ownerUid });
    const created = await createOrRead(
      () => core.createNamespacedPod({ namespace: c.namespace, body }),
      () => core.readNamespacedPod({ namespace: c.namespace, name: p.name }),
    );
    // The status is kubelet's to write: only the status subresource takes it.
    if (!(created.status?.podIPs ?? []).some((i) => i.ip === p.ip)) {
      await core.replaceNamespacedPodStatus({ namespace: c.namespace, name: p.name, body: { ...created, status: body.status } });
    }
    uids.set(p.name, created.metadata!.uid!);
  }
  return uids;
}

/**
 * Service `<component>-<instance>`, `workload` and its pods, and the EndpointSlice `sliceName`
 * (default the Service's name) listing them as the EndpointSlice controller would: everything a
 * verified pod needs. Returns the pods' uids.
 */
export async function publishServicePods(
  kc: k8s.KubeConfig,
  c: ComponentRef & { port: number; workload: Workload; pods: Array<{ name: string; ip: string; ready?: boolean }>; sliceName?: string },
): Promise<Map<string, string>> {
  const serviceUid = await ensureService(kc, c);
  const uids = await ensureWorkloadPods(kc, c);
  const service = nameOf(c);
  const name = c.sliceName ?? service;
  const body = controllerSlice({
    namespace: c.namespace,
    name,
    service,
    serviceUid,
    port: c.port,
    endpoints: c.pods.map((p) => podEndpoint({ pod: p.name, ip: p.ip, uid: uids.get(p.name), ready: p.ready }, c.namespace)),
  });
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  try {
    await discovery.createNamespacedEndpointSlice({ namespace: c.namespace, body });
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
    await discovery.replaceNamespacedEndpointSlice({ namespace: c.namespace, name, body });
  }
  return uids;
}
