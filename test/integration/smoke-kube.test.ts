import * as k8s from '@kubernetes/client-node';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../harness/kube';
import { waitFor } from '../harness/processes';
import { toolVersions } from '../harness/tools';

const GROUP = 'operator.victoriametrics.com';
const VERSION = 'v1beta1';

describe('kube-apiserver + etcd (real processes)', () => {
  let kube: KubeCluster | undefined;
  beforeAll(async () => {
    kube = await startKube();
  }, 180_000);
  afterAll(async () => {
    await kube?.stop();
  });

  it('serves the right version and the default namespace', async () => {
    const version = await kube!.kubeConfig.makeApiClient(k8s.VersionApi).getCode();
    expect(version.gitVersion).toBe(`v${toolVersions().KUBERNETES_VERSION}`);
    const ns = await kube!.kubeConfig.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'default' });
    expect(ns.metadata?.name).toBe('default');
  });

  it('installs CRDs and delivers a custom object to an informer', async () => {
    const kc = kube!.kubeConfig;
    const crds = await installCRDs(kc, VM_OPERATOR_CRDS);
    expect(crds.map((c) => c.spec.names.kind).sort()).toEqual(['VMAgent', 'VMAuth', 'VMCluster', 'VMUser']);

    const objects = kc.makeApiClient(k8s.CustomObjectsApi);
    const plural = 'vmclusters';
    const path = `/apis/${GROUP}/${VERSION}/namespaces/default/${plural}`;
    const informer = k8s.makeInformer<k8s.KubernetesObject & { spec?: { clusterVersion?: string } }>(kc, path, () =>
      objects.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural }),
    );
    const seen: Array<{ name?: string; clusterVersion?: string }> = [];
    informer.on('add', (o) => seen.push({ name: o.metadata?.name, clusterVersion: o.spec?.clusterVersion }));
    informer.on('update', (o) => seen.push({ name: o.metadata?.name, clusterVersion: o.spec?.clusterVersion }));
    informer.on('error', (e) => seen.push({ name: `error: ${String(e)}` }));
    await informer.start();
    try {
      await objects.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: 'default',
        plural,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'VMCluster', metadata: { name: 'zone-a' }, spec: { clusterVersion: 'v1.150.0', vmstorage: { replicaCount: 2 } } },
      });
      await waitFor(() => seen.find((s) => s.name === 'zone-a' && s.clusterVersion === 'v1.150.0'), { timeoutMs: 15_000, description: 'informer add event for zone-a', diagnostics: () => JSON.stringify(seen) });

      // status subresource works and is kept (preserve-unknown-fields)
      await objects.patchNamespacedCustomObjectStatus(
        { group: GROUP, version: VERSION, namespace: 'default', plural, name: 'zone-a', body: { status: { updateStatus: 'operational', observedGeneration: 1 } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      const got = (await objects.getNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace: 'default', plural, name: 'zone-a' })) as { status?: { updateStatus?: string } };
      expect(got.status?.updateStatus).toBe('operational');
    } finally {
      await informer.stop();
    }
  }, 60_000);
});
