import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { waitFor } from '../infra/harness/processes';
import { REPO_ROOT, toolVersions } from '../infra/harness/tools';

const GROUP = 'operator.victoriametrics.com';
const VERSION = 'v1beta1';

describe('kube-apiserver + etcd + garbage collector (real processes)', () => {
  let kube: KubeCluster | undefined;
  beforeAll(async () => {
    kube = await startKube({ garbageCollector: true });
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
    expect(crds.map((c) => c.spec.names.kind).sort()).toEqual(['VMAgent', 'VMAuth', 'VMCluster', 'VMSingle', 'VMUser']);

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
        body: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'VMCluster',
          metadata: { name: 'zone-a' },
          spec: { clusterVersion: 'v1.150.0', vmstorage: { replicaCount: 2 } },
        },
      });
      await waitFor(() => seen.find((s) => s.name === 'zone-a' && s.clusterVersion === 'v1.150.0'), {
        timeoutMs: 15_000,
        description: 'informer add event for zone-a',
        diagnostics: () => JSON.stringify(seen),
      });

      // status subresource works and is kept (preserve-unknown-fields)
      await objects.patchNamespacedCustomObjectStatus(
        {
          group: GROUP,
          version: VERSION,
          namespace: 'default',
          plural,
          name: 'zone-a',
          body: { status: { updateStatus: 'operational', observedGeneration: 1 } },
        },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      const got = (await objects.getNamespacedCustomObjectStatus({ group: GROUP, version: VERSION, namespace: 'default', plural, name: 'zone-a' })) as {
        status?: { updateStatus?: string };
      };
      expect(got.status?.updateStatus).toBe('operational');
    } finally {
      await informer.stop();
    }
  }, 60_000);

  it('garbage-collects a VMCluster owned by a deleted VMDistributedCluster, not an unowned one', async () => {
    const kc = kube!.kubeConfig;
    const gc = kube!.controllerManager!;
    await installCRDs(kc, [VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds')]);
    // The CRDs came after the collector started: without the restart it would watch them only at its next 30 s discovery.
    await gc.restart();

    const objects = kc.makeApiClient(k8s.CustomObjectsApi);
    const vmdc = { group: 'vmrollout.io', version: 'v1alpha1', namespace: 'default', plural: 'vmdistributedclusters' };
    const vmclusters = { group: GROUP, version: VERSION, namespace: 'default', plural: 'vmclusters' };
    const owner = (await objects.createNamespacedCustomObject({
      ...vmdc,
      body: {
        apiVersion: 'vmrollout.io/v1alpha1',
        kind: 'VMDistributedCluster',
        metadata: { name: 'gc-owner' },
        spec: {
          clusterVersion: 'v1.150.0-cluster',
          zones: [
            { name: 'az-a', vmcluster: { name: 'gc-owned' } },
            { name: 'az-b', vmcluster: { name: 'gc-unowned' } },
          ],
          vmauth: { name: 'vm-global' },
          vmagent: { name: 'vm-global' },
        },
      },
    })) as k8s.KubernetesObject;
    const ownerReference = { apiVersion: 'vmrollout.io/v1alpha1', kind: 'VMDistributedCluster', name: 'gc-owner', uid: owner.metadata!.uid!, controller: true };
    for (const [name, ownerReferences] of [
      ['gc-owned', [ownerReference]],
      ['gc-unowned', undefined],
    ] as const) {
      await objects.createNamespacedCustomObject({
        ...vmclusters,
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'VMCluster', metadata: { name, ownerReferences }, spec: { clusterVersion: 'v1.150.0-cluster' } },
      });
    }
    const exists = (name: string) =>
      objects.getNamespacedCustomObject({ ...vmclusters, name }).then(
        () => true,
        (err: unknown) => {
          if ((err as { code?: number }).code === 404) return false;
          throw err;
        },
      );

    await objects.deleteNamespacedCustomObject({ ...vmdc, name: 'gc-owner' });
    // Well under the collector's 30 s rediscovery: fails if the restart did not make it watch the CRDs.
    await waitFor(async () => !(await exists('gc-owned')), {
      timeoutMs: 15_000,
      description: 'the garbage collector to delete VMCluster gc-owned',
      diagnostics: () => gc.logTail(),
    });
    expect(await exists('gc-unowned')).toBe(true);
  }, 60_000);
});
