// The Helm chart on real parts: `helm lint`, `helm template`, the rendered objects created in a
// real kube-apiserver, and the ClusterRole checked by the API server's own RBAC authorizer.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT, toolPath } from '../harness/tools';
import { startKube, installCRDs, VM_OPERATOR_CRDS, type KubeCluster } from '../harness/kube';

const CHART = path.join(REPO_ROOT, 'charts', 'vmrollout');
const NAMESPACE = 'vmrollout-system';

function helm(...args: string[]): string {
  return execFileSync(toolPath('helm'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function render(...set: string[]): k8s.KubernetesObject[] {
  const out = helm('template', 'rel', CHART, '--namespace', NAMESPACE, '--include-crds', ...set.flatMap((s) => ['--set', s]));
  return parseAllDocuments(out)
    .map((d) => d.toJS() as k8s.KubernetesObject | null)
    .filter((o): o is k8s.KubernetesObject => !!o);
}

describe('helm chart', () => {
  let kube: KubeCluster;
  beforeAll(async () => {
    kube = await startKube();
    await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'test', 'fixtures', 'crds', 'vm-servicescrape-crd.yaml')]);
  }, 180_000);
  afterAll(async () => kube?.stop());

  test('passes helm lint', () => {
    expect(helm('lint', CHART)).toMatch(/0 chart\(s\) failed/);
  });

  test('renders the generated CRD, RBAC, and a Deployment + Service per component', () => {
    const objs = render();
    const kinds = objs.map((o) => `${o.kind}/${o.metadata?.name}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'CustomResourceDefinition/vmdistributedclusters.vmrollout.io',
        'ServiceAccount/rel-vmrollout',
        'ClusterRole/rel-vmrollout',
        'ClusterRoleBinding/rel-vmrollout',
        'Deployment/rel-vmrollout-worker',
        'Deployment/rel-vmrollout-trigger',
        'Service/rel-vmrollout-worker',
        'Service/rel-vmrollout-trigger',
        'VMServiceScrape/rel-vmrollout',
      ]),
    );
    const worker = objs.find((o) => o.metadata?.name === 'rel-vmrollout-worker' && o.kind === 'Deployment') as k8s.V1Deployment;
    const env = worker.spec!.template.spec!.containers[0]!.env!.map((e) => e.name);
    expect(env).toEqual(expect.arrayContaining(['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TASK_QUEUE', 'METRICS_PORT', 'WORKFLOW_BUNDLE']));
  });

  test('TLS, API key and vmagent credentials values wire secrets into the pods', () => {
    const objs = render('temporal.tlsSecret=temporal-tls', 'temporal.apiKeySecret=temporal-key', 'vmagentMetricsAuthSecret=vmagent-auth');
    const worker = objs.find((o) => o.metadata?.name === 'rel-vmrollout-worker' && o.kind === 'Deployment') as k8s.V1Deployment;
    const pod = worker.spec!.template.spec!;
    expect(pod.volumes?.[0]?.secret?.secretName).toBe('temporal-tls');
    const env = pod.containers[0]!.env!;
    expect(env.find((e) => e.name === 'TEMPORAL_API_KEY')?.valueFrom?.secretKeyRef?.name).toBe('temporal-key');
    expect(env.find((e) => e.name === 'VMAGENT_METRICS_AUTH_SECRET')?.value).toBe(`${NAMESPACE}/vmagent-auth`);
    const role = objs.find((o) => o.kind === 'ClusterRole') as k8s.V1ClusterRole;
    expect(role.rules!.some((r) => r.resources?.includes('secrets') && r.resourceNames?.includes('vmagent-auth'))).toBe(true);
  });

  test('the rendered objects are accepted by a real kube-apiserver and RBAC grants what vmrollout does', async () => {
    const api = k8s.KubernetesObjectApi.makeApiClient(kube.kubeConfig);
    const core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    for (const obj of render()) {
      if (obj.kind !== 'CustomResourceDefinition' && obj.kind !== 'ClusterRole' && obj.kind !== 'ClusterRoleBinding') {
        obj.metadata = { ...obj.metadata, namespace: NAMESPACE };
      }
      await api.create(obj);
    }
    const authz = kube.kubeConfig.makeApiClient(k8s.AuthorizationV1Api);
    const user = `system:serviceaccount:${NAMESPACE}:rel-vmrollout`;
    const can = async (attrs: k8s.V1ResourceAttributes) =>
      (await authz.createSubjectAccessReview({ body: { spec: { user, resourceAttributes: { namespace: 'prod', ...attrs } } } })).status!.allowed;
    expect(await can({ group: 'vmrollout.io', resource: 'vmdistributedclusters', verb: 'watch' })).toBe(true);
    expect(await can({ group: 'vmrollout.io', resource: 'vmdistributedclusters', subresource: 'status', verb: 'patch' })).toBe(true);
    // The trigger's finalizer: a merge patch of metadata.finalizers (resourceVersion precondition).
    expect(await can({ group: 'vmrollout.io', resource: 'vmdistributedclusters', verb: 'patch' })).toBe(true);
    // The route records the finalizer waits for: listed on every VMAuth and VMUser of a namespace.
    for (const resource of ['vmauths', 'vmusers']) expect(await can({ group: 'operator.victoriametrics.com', resource, verb: 'list' })).toBe(true);
    for (const resource of ['vmclusters', 'vmauths', 'vmusers', 'vmagents']) {
      expect(await can({ group: 'operator.victoriametrics.com', resource, verb: 'patch' })).toBe(true);
    }
    expect(await can({ group: 'discovery.k8s.io', resource: 'endpointslices', verb: 'list' })).toBe(true);
    expect(await can({ group: '', resource: 'events', verb: 'create' })).toBe(true);
    // Least privilege: no full replace of our own CR (only the finalizer patch above), no deletes,
    // no Secrets unless configured, no pods.
    expect(await can({ group: 'vmrollout.io', resource: 'vmdistributedclusters', verb: 'update' })).toBe(false);
    expect(await can({ group: 'vmrollout.io', resource: 'vmdistributedclusters', verb: 'delete' })).toBe(false);
    expect(await can({ group: '', resource: 'secrets', verb: 'get' })).toBe(false);
    // The config Secret of each configured VMAuth (read to confirm switches in the vmauth pods), no other.
    expect(await can({ group: '', resource: 'secrets', verb: 'get', name: 'vmauth-config-vm-global' })).toBe(true);
    expect(await can({ group: '', resource: 'secrets', verb: 'get', name: 'vmauth-config-other' })).toBe(false);
    expect(await can({ group: '', resource: 'secrets', verb: 'list' })).toBe(false);
    expect(await can({ group: '', resource: 'pods', verb: 'delete' })).toBe(false);
  }, 60_000);
});
