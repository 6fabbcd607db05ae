import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { REPO_ROOT } from '../infra/harness/tools';
import { followAuditLog, readAuditLog, type AuditEvent, type AuditFollower } from '../infra/chaos/audit-log';
import { judge } from '../infra/chaos/oracle';

const GROUP = 'operator.victoriametrics.com';
const VERSION = 'v1beta1';
const NS = 'default';
const SECRET_VALUE = 'do-not-log-this-password';

describe('kube-apiserver audit log (startKube audit: true) read back as typed events', () => {
  let kube: KubeCluster | undefined;
  let follower: AuditFollower | undefined;
  beforeAll(async () => {
    kube = await startKube({ audit: true });
    await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds')]);
    follower = followAuditLog(kube.auditLogPath!, { intervalMs: 50 });
  }, 180_000);
  afterAll(async () => {
    follower?.stop();
    await kube?.stop();
  });

  const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  const find = (match: (e: AuditEvent) => boolean) => follower!.waitFor(match, 15_000);

  it('logs writes to VM operator objects with user, verb, generation and bodies; reads not at all', async () => {
    const kc = kube!.kubeConfig;
    expect(kube!.auditLogPath).toBe(path.join(path.dirname(kube!.kubeconfigPath), 'audit.log'));
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const vmc = { group: GROUP, version: VERSION, namespace: NS, plural: 'vmclusters' };
    await api.createNamespacedCustomObject({
      ...vmc,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'VMCluster',
        metadata: { name: 'vm-az-a' },
        spec: { clusterVersion: 'v1.150.0-cluster', vmstorage: { replicaCount: 1 } },
      },
    });
    await api.patchNamespacedCustomObject({ ...vmc, name: 'vm-az-a', body: { spec: { clusterVersion: 'v1.151.0-cluster' } } }, mergePatch);
    // a dry run is logged, and flagged
    await api.patchNamespacedCustomObject({ ...vmc, name: 'vm-az-a', dryRun: 'All', body: { spec: { clusterVersion: 'v9' } } }, mergePatch);
    await api.patchNamespacedCustomObjectStatus(
      { ...vmc, name: 'vm-az-a', body: { status: { updateStatus: 'operational', observedGeneration: 2 } } },
      mergePatch,
    );
    await api.getNamespacedCustomObject({ ...vmc, name: 'vm-az-a' });
    // server-side apply, as the worker applies a VMCluster (the request body is JSON sent as apply-patch+yaml)
    await api.patchNamespacedCustomObject(
      {
        ...vmc,
        name: 'vm-az-a',
        fieldManager: 'vmrollout',
        force: true,
        body: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'VMCluster',
          metadata: { name: 'vm-az-a', annotations: { 'vmrollout.io/applied': '{"x":1}' } },
          spec: { clusterVersion: 'v1.152.0-cluster' },
        },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
    );

    const vmauth = { group: GROUP, version: VERSION, namespace: NS, plural: 'vmauths' };
    const targetRefs = [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: NS }, paths: ['/select/.*'] }];
    await api.createNamespacedCustomObject({
      ...vmauth,
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'VMAuth', metadata: { name: 'vm-global' }, spec: { unauthorizedUserAccessSpec: { targetRefs } } },
    });
    await api.patchNamespacedCustomObject(
      {
        ...vmauth,
        name: 'vm-global',
        body: {
          metadata: { annotations: { 'vmrollout.io/out-of-rotation': '{}' } },
          spec: { unauthorizedUserAccessSpec: { targetRefs: [{ static: { url: 'http://x:8481' } }] } },
        },
      },
      mergePatch,
    );

    const created = await find((e) => e.resource === 'vmclusters' && e.verb === 'create');
    expect(created).toMatchObject({ user: 'admin', group: GROUP, version: VERSION, namespace: NS, name: 'vm-az-a', subresource: '', code: 201, dryRun: false });
    expect(created.requestObject).toMatchObject({ spec: { clusterVersion: 'v1.150.0-cluster' } });
    expect(created.responseObject).toMatchObject({ metadata: { name: 'vm-az-a', generation: 1 } });
    expect(Number.isFinite(created.at) && created.at >= created.receivedAt).toBe(true);

    const patched = await find((e) => e.resource === 'vmclusters' && e.verb === 'patch' && e.subresource === '' && !e.dryRun);
    expect(patched).toMatchObject({ user: 'admin', code: 200, name: 'vm-az-a' });
    expect(patched.requestObject).toEqual({ spec: { clusterVersion: 'v1.151.0-cluster' } });
    expect(patched.responseObject).toMatchObject({ metadata: { generation: 2 }, spec: { clusterVersion: 'v1.151.0-cluster', vmstorage: { replicaCount: 1 } } });
    expect(patched.seq).toBeGreaterThan(created.seq);

    const applied = await find((e) => e.resource === 'vmclusters' && e.verb === 'patch' && /fieldManager=vmrollout/.test(e.requestURI));
    expect(applied.requestObject).toMatchObject({
      metadata: { annotations: { 'vmrollout.io/applied': '{"x":1}' } },
      spec: { clusterVersion: 'v1.152.0-cluster' },
    });
    expect(applied.responseObject).toMatchObject({ metadata: { generation: 3 } });

    const dry = await find((e) => e.resource === 'vmclusters' && e.dryRun);
    expect(dry.requestURI).toMatch(/dryRun=All/);

    const status = await find((e) => e.resource === 'vmclusters' && e.subresource === 'status');
    expect(status).toMatchObject({ verb: 'patch', code: 200 });
    expect(status.responseObject).toMatchObject({ metadata: { generation: 2 }, status: { updateStatus: 'operational', observedGeneration: 2 } });

    const authCreate = await find((e) => e.resource === 'vmauths' && e.verb === 'create');
    expect(authCreate.responseObject).toMatchObject({ spec: { unauthorizedUserAccessSpec: { targetRefs } } });
    const authPatch = await find((e) => e.resource === 'vmauths' && e.verb === 'patch');
    expect(authPatch.responseObject).toMatchObject({
      metadata: { annotations: { 'vmrollout.io/out-of-rotation': '{}' } },
      spec: { unauthorizedUserAccessSpec: { targetRefs: [{ static: { url: 'http://x:8481' } }] } },
    });

    // the oracle reads the real events: the admin's edit took vm-az-a out of the VMAuth and never put it back
    const v = judge({
      events: follower!.events,
      namespace: NS,
      vmdc: { name: 'dc' },
      zoneOf: { 'vm-az-a': 'az-a' },
      initialRoutes: { 'VMAuth/vm-global': targetRefs },
    });
    expect(v.counts).toMatchObject({ routeEdits: 1, maxZonesOut: 1, vmclusterPatches: {}, statusWrites: 0 });
    expect(v.breaches.map((b) => b.check)).toEqual(['e', 'd']);

    // reads (get, list, watch) are not logged at all
    expect(follower!.events.filter((e) => !['create', 'update', 'patch', 'delete', 'deletecollection'].includes(e.verb))).toEqual([]);
  });

  it('logs Secret writes at Metadata level: who and what, never the data', async () => {
    const core = kube!.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'creds' }, stringData: { password: SECRET_VALUE } } });
    await core.patchNamespacedSecret(
      { namespace: NS, name: 'creds', body: { data: { password: Buffer.from(`${SECRET_VALUE}-2`).toString('base64') } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    );
    const created = await find((e) => e.resource === 'secrets' && e.verb === 'create');
    const patched = await find((e) => e.resource === 'secrets' && e.verb === 'patch');
    for (const e of [created, patched]) {
      expect(e).toMatchObject({ user: 'admin', group: '', namespace: NS, name: 'creds' });
      expect(e.requestObject).toBeUndefined();
      expect(e.responseObject).toBeUndefined();
    }
    const text = fs.readFileSync(kube!.auditLogPath!, 'utf8');
    for (const v of [SECRET_VALUE, Buffer.from(SECRET_VALUE).toString('base64'), Buffer.from(`${SECRET_VALUE}-2`).toString('base64')])
      expect(text).not.toContain(v);
    // the one-shot reader sees what the follower saw
    follower!.poll();
    expect(readAuditLog(kube!.auditLogPath!).map((e) => e.auditID)).toEqual(follower!.events.map((e) => e.auditID));
  });
});
