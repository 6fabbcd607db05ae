// The Helm chart on real parts: `helm lint`, `helm template`, the rendered objects created in a
// real kube-apiserver (Pod Security "restricted" enforced by its PodSecurity admission), and the
// RBAC of each ServiceAccount checked by the API server's own authorizer and with their own tokens.
import { execFileSync } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import { z } from 'zod';
import { STRICT_TRUST_POLICY, type TrustPolicy } from '../../api/trust-policy';
import { commonEnvShape, trustPolicy } from '../../process/env';
import { toolPath } from '../infra/harness/tools';
import { startKube, installCRDs, type KubeCluster } from '../infra/harness/kube';
import {
  CHART_DIR,
  CHART_VM_CRDS,
  installChartIdentities,
  renderChart,
  renderedRbacRules,
  serviceAccountName,
  withoutRule,
} from '../infra/harness/chart-identities';

const NAMESPACE = 'vmrollout-system';
const WORKER_SA = serviceAccountName('worker');
const TRIGGER_SA = serviceAccountName('trigger');
const VM_GROUP = 'operator.victoriametrics.com';
const VM_RESOURCES = ['vmclusters', 'vmsingles', 'vmauths', 'vmusers', 'vmagents'];
const RESTRICTED = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/warn-version': 'latest',
};

function helm(...args: string[]): string {
  return execFileSync(toolPath('helm'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const render = (...values: string[]) => renderChart({ releaseNamespace: NAMESPACE, values, includeCRDs: true });

const find = <T extends k8s.KubernetesObject>(objs: k8s.KubernetesObject[], kind: string, name: string, namespace?: string) =>
  objs.find((o) => o.kind === kind && o.metadata?.name === name && (namespace === undefined || o.metadata?.namespace === namespace)) as T | undefined;

/** A component's Deployment (the worker's is named after its build: chart-values.test.ts). */
const deployment = (objs: k8s.KubernetesObject[], component: 'worker' | 'trigger') =>
  objs.find((o) => o.kind === 'Deployment' && o.metadata?.labels?.['app.kubernetes.io/component'] === component) as k8s.V1Deployment;

const envOf = (d: k8s.V1Deployment) => d.spec!.template.spec!.containers[0]!.env!;

/** The Pod a Deployment's template makes (what PodSecurity admission judges). */
function podOf(d: k8s.V1Deployment, namespace: string): k8s.V1Pod {
  const t = JSON.parse(JSON.stringify(d.spec!.template)) as k8s.V1PodTemplateSpec;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { ...t.metadata, name: `${d.metadata!.name}-probe`, namespace }, spec: t.spec };
}

/** The same Deployment with no securityContext anywhere (the negative control). */
function unhardened(d: k8s.V1Deployment): k8s.V1Deployment {
  const copy = JSON.parse(JSON.stringify(d)) as k8s.V1Deployment;
  delete copy.spec!.template.spec!.securityContext;
  for (const c of copy.spec!.template.spec!.containers) delete c.securityContext;
  return copy;
}

/** The API server's message of a failed request (the Status in the body). */
const errorText = (err: unknown): string => {
  const body = (err as { body?: unknown } | undefined)?.body;
  try {
    return (JSON.parse(String(body)) as { message?: string }).message ?? String(body);
  } catch {
    return String(body ?? err);
  }
};

const warningsOf = (headers: Record<string, string>) =>
  Object.entries(headers)
    .filter(([k]) => k.toLowerCase() === 'warning')
    .map(([, v]) => v);

describe('helm chart', () => {
  let kube: KubeCluster;
  beforeAll(async () => {
    kube = await startKube();
    await installCRDs(kube.kubeConfig, CHART_VM_CRDS);
  }, 180_000);
  afterAll(async () => kube?.stop());

  test('passes helm lint, with the defaults and with every RBAC value set', () => {
    expect(helm('lint', CHART_DIR)).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    const set = [
      'watchNamespaces={prod,staging}',
      'createNamespaces={prod}',
      'vmauths={prod/vm-global}',
      'vmagentMetricsAuthSecret=vmagent-auth',
      'allowCrossNamespaceTargetRefs=true',
    ];
    expect(helm('lint', CHART_DIR, ...set.flatMap((s) => ['--set', s]))).toMatch(/0 chart\(s\) failed/);
  });

  test('renders the CRD, one ServiceAccount and one ClusterRole per component, a Deployment + Service per component', () => {
    const objs = render();
    const kinds = objs.map((o) => `${o.kind}/${o.metadata?.name}`);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'CustomResourceDefinition/vmdistributedclusters.vmrollout.io',
        `ServiceAccount/${WORKER_SA}`,
        `ServiceAccount/${TRIGGER_SA}`,
        `ClusterRole/${WORKER_SA}`,
        `ClusterRoleBinding/${WORKER_SA}`,
        `ClusterRole/${TRIGGER_SA}`,
        `ClusterRoleBinding/${TRIGGER_SA}`,
        `Deployment/${deployment(objs, 'worker').metadata!.name}`,
        'Deployment/rel-vmrollout-trigger',
        'Service/rel-vmrollout-worker',
        'Service/rel-vmrollout-trigger',
        'VMServiceScrape/rel-vmrollout',
        'VMRule/rel-vmrollout',
        'ConfigMap/rel-vmrollout-dashboard',
      ]),
    );
    // No shared identity any more, no Role in any namespace (createNamespaces, vmauths and
    // vmagentMetricsAuthSecret are empty by default), and no Secret in any rule.
    expect(kinds).not.toContain('ServiceAccount/rel-vmrollout');
    expect(deployment(objs, 'worker').metadata!.name).toMatch(/^rel-vmrollout-worker-/);
    expect(objs.filter((o) => o.kind === 'Role' || o.kind === 'RoleBinding')).toEqual([]);
    expect(renderedRbacRules(objs).filter((r) => r.rule.resources?.includes('secrets'))).toEqual([]);
    for (const component of ['worker', 'trigger'] as const) {
      const d = deployment(objs, component);
      const pod = d.spec!.template.spec!;
      expect(pod.serviceAccountName).toBe(serviceAccountName(component));
      expect(pod.automountServiceAccountToken).toBe(true);
      const env = envOf(d);
      expect(env.find((e) => e.name === 'METRICS_HOST')?.valueFrom?.fieldRef?.fieldPath).toBe('status.podIP');
      expect(env.find((e) => e.name === 'CREATE_NAMESPACES')?.value).toBe('');
      expect(env.find((e) => e.name === 'ALLOW_CROSS_NAMESPACE_TARGET_REFS')?.value).toBe('false');
      // The probes go to the pod IP (no host: kubelet uses the pod IP), where the server listens.
      expect(pod.containers[0]!.livenessProbe?.httpGet?.host).toBeUndefined();
      // A writable /tmp: the root filesystem is read-only.
      expect(pod.containers[0]!.securityContext?.readOnlyRootFilesystem).toBe(true);
      expect(pod.containers[0]!.volumeMounts).toEqual(expect.arrayContaining([expect.objectContaining({ mountPath: '/tmp' })]));
    }
    for (const sa of objs.filter((o) => o.kind === 'ServiceAccount') as k8s.V1ServiceAccount[]) expect(sa.automountServiceAccountToken).toBe(false);
    expect(envOf(deployment(objs, 'worker')).map((e) => e.name)).toEqual(
      expect.arrayContaining(['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TASK_QUEUE', 'METRICS_PORT', 'WORKFLOW_BUNDLE']),
    );
  });

  /** The trust policy a component builds from its rendered environment (process/env.ts, as both processes do). */
  const policyOf = (objs: k8s.KubernetesObject[], component: 'worker' | 'trigger'): TrustPolicy => {
    const vars = envOf(deployment(objs, component)).filter((e) => /^(TRUST_|CREATE_NAMESPACES$|ALLOW_CROSS_NAMESPACE_TARGET_REFS$)/.test(e.name));
    return trustPolicy(z.object(commonEnvShape).parse(Object.fromEntries(vars.map((e) => [e.name, e.value]))));
  };

  test('the trust policy: unset, both processes are strict; every trustPolicy value reaches both, which build the same policy', () => {
    const strict = render();
    for (const component of ['worker', 'trigger'] as const) {
      expect(envOf(deployment(strict, component)).filter((e) => e.name.startsWith('TRUST_'))).toEqual([
        { name: 'TRUST_ALLOWED_ROUTE_HOSTS', value: '' },
        { name: 'TRUST_ALLOWED_REMOTE_WRITE_HOSTS', value: '' },
        { name: 'TRUST_ALLOWED_IMAGE_REPOSITORIES', value: '' },
        { name: 'TRUST_ALLOWED_SERVICE_ACCOUNT_NAMES', value: '' },
        { name: 'TRUST_ALLOW_HOST_ACCESS', value: 'false' },
        { name: 'TRUST_ALLOW_EXTRA_CONTAINERS', value: 'false' },
        { name: 'TRUST_ALLOW_CROSS_NAMESPACE_SELECTORS', value: 'false' },
        { name: 'TRUST_ALLOW_OTHER_DESTINATIONS', value: 'false' },
      ]);
      expect(policyOf(strict, component)).toEqual(STRICT_TRUST_POLICY);
    }

    const objs = render(
      'trustPolicy.allowedRouteHosts={vmselect.shared.svc,*.reads.example.com,[::1]}',
      'trustPolicy.allowedRemoteWriteHosts={vminsert.shared.svc,10.0.0.5,vminsert.shared.svc}',
      'trustPolicy.allowedImageRepositories={registry.internal:5000/mirror/*}',
      'trustPolicy.allowedServiceAccountNames={vmagent-scraper}',
      'trustPolicy.allowHostAccess=true',
      'trustPolicy.allowExtraContainers=true',
      'trustPolicy.allowCrossNamespaceSelectors=true',
      'trustPolicy.allowOtherDestinations=true',
      'createNamespaces={prod}',
      'allowCrossNamespaceTargetRefs=true',
    );
    const expected: TrustPolicy = {
      createNamespaces: ['prod'],
      crossNamespaceTargetRefs: true,
      routeHosts: ['vmselect.shared.svc', '*.reads.example.com', '[::1]'],
      remoteWriteHosts: ['vminsert.shared.svc', '10.0.0.5'],
      imageRepositories: ['registry.internal:5000/mirror/*'],
      serviceAccountNames: ['vmagent-scraper'],
      hostAccess: true,
      extraContainers: true,
      crossNamespaceSelectors: true,
      otherDestinations: true,
    };
    for (const component of ['worker', 'trigger'] as const) {
      const env = envOf(deployment(objs, component));
      expect(env.find((e) => e.name === 'TRUST_ALLOWED_ROUTE_HOSTS')?.value).toBe('vmselect.shared.svc,*.reads.example.com,[::1]');
      expect(env.find((e) => e.name === 'TRUST_ALLOWED_REMOTE_WRITE_HOSTS')?.value).toBe('vminsert.shared.svc,10.0.0.5');
      expect(env.find((e) => e.name === 'TRUST_ALLOWED_IMAGE_REPOSITORIES')?.value).toBe('registry.internal:5000/mirror/*');
      expect(env.find((e) => e.name === 'TRUST_ALLOW_HOST_ACCESS')?.value).toBe('true');
      expect(policyOf(objs, component)).toEqual(expected);
    }
  });

  test('trustPolicy values are typed: a URL is not a host, * is not a repository, a flag is a boolean', () => {
    expect(() => render('trustPolicy.allowedRouteHosts={http://evil.example.com}')).toThrow(/trustPolicy\/allowedRouteHosts\/0/);
    expect(() => render('trustPolicy.allowedImageRepositories={*}')).toThrow(/trustPolicy\/allowedImageRepositories\/0/);
    expect(() => render('trustPolicy.allowedServiceAccountNames={System:Admin}')).toThrow(/trustPolicy\/allowedServiceAccountNames\/0/);
    expect(() => render('trustPolicy.allowHostAccess=maybe')).toThrow(/trustPolicy\/allowHostAccess/);
    expect(() => render('trustPolicy.allowEverything=true')).toThrow(/allowEverything/);
  });

  test('createNamespaces, allowCrossNamespaceTargetRefs and metricsHost reach both processes', () => {
    const objs = render('createNamespaces={prod,staging}', 'allowCrossNamespaceTargetRefs=true', 'worker.metricsHost=0.0.0.0');
    for (const component of ['worker', 'trigger'] as const) {
      const env = envOf(deployment(objs, component));
      expect(env.find((e) => e.name === 'CREATE_NAMESPACES')?.value).toBe('prod,staging');
      expect(env.find((e) => e.name === 'ALLOW_CROSS_NAMESPACE_TARGET_REFS')?.value).toBe('true');
    }
    expect(envOf(deployment(objs, 'worker')).find((e) => e.name === 'METRICS_HOST')).toEqual({ name: 'METRICS_HOST', value: '0.0.0.0' });
    expect(envOf(deployment(objs, 'trigger')).find((e) => e.name === 'METRICS_HOST')?.valueFrom?.fieldRef?.fieldPath).toBe('status.podIP');
    for (const ns of ['prod', 'staging']) {
      const role = find<k8s.V1Role>(objs, 'Role', `${WORKER_SA}-create`, ns)!;
      expect(role.rules).toEqual([{ apiGroups: [VM_GROUP], resources: VM_RESOURCES, verbs: ['create'] }]);
      const binding = find<k8s.V1RoleBinding>(objs, 'RoleBinding', `${WORKER_SA}-create`, ns)!;
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: WORKER_SA, namespace: NAMESPACE }]);
    }
    // `create` on VM objects nowhere else.
    const creates = renderedRbacRules(objs).filter((r) => r.rule.apiGroups?.includes(VM_GROUP) && r.rule.verbs.includes('create'));
    expect(creates.map((r) => `${r.kind} ${r.namespace}/${r.name}`)).toEqual([`Role prod/${WORKER_SA}-create`, `Role staging/${WORKER_SA}-create`]);
  });

  test('TLS, API key and vmagent credentials values wire secrets into the pods, the credentials readable by name in the release namespace only', () => {
    const objs = render(
      'temporal.tlsSecret=temporal-tls',
      'temporal.apiKeySecret=temporal-key',
      'temporal.payloadKeysSecret=payload-keys',
      'vmagentMetricsAuthSecret=vmagent-auth',
    );
    const pod = deployment(objs, 'worker').spec!.template.spec!;
    expect(pod.volumes?.find((v) => v.name === 'temporal-tls')?.secret?.secretName).toBe('temporal-tls');
    const env = pod.containers[0]!.env!;
    // both processes encrypt payloads with the same keys, mounted from the Secret
    for (const component of ['worker', 'trigger'] as const) {
      const spec = deployment(objs, component).spec!.template.spec!;
      const keysFile = spec.containers[0]!.env!.find((e) => e.name === 'TEMPORAL_PAYLOAD_KEYS_FILE')?.value;
      const mount = spec.containers[0]!.volumeMounts!.find((m) => m.name === 'payload-keys')!;
      expect(keysFile).toBe(`${mount.mountPath}/keys`);
      expect(spec.volumes?.find((v) => v.name === 'payload-keys')?.secret?.secretName).toBe('payload-keys');
    }
    expect(env.find((e) => e.name === 'TEMPORAL_API_KEY')?.valueFrom?.secretKeyRef?.name).toBe('temporal-key');
    expect(env.find((e) => e.name === 'VMAGENT_METRICS_AUTH_SECRET')?.value).toBe(`${NAMESPACE}/vmagent-auth`);
    const secretRules = renderedRbacRules(objs).filter((r) => r.rule.resources?.includes('secrets'));
    expect(secretRules).toEqual([
      {
        kind: 'Role',
        namespace: NAMESPACE,
        name: `${WORKER_SA}-vmagent-metrics-auth`,
        ruleIndex: 0,
        rule: { apiGroups: [''], resources: ['secrets'], resourceNames: ['vmagent-auth'], verbs: ['get'] },
        components: ['worker'],
      },
    ]);
  });

  test('vmauths: <namespace>/<name> → get on vmauth-config-<name> in that namespace; a bare name (values.schema.json) or a namespace vmrollout does not watch fails rendering', () => {
    const objs = render('vmauths={prod/vm-global,prod/vm-other,staging/vm-global}');
    const secretRules = renderedRbacRules(objs).filter((r) => r.rule.resources?.includes('secrets'));
    expect(secretRules.map((r) => [r.namespace, r.name, r.rule.resourceNames, r.rule.verbs, r.components])).toEqual([
      ['prod', `${WORKER_SA}-vmauth-config`, ['vmauth-config-vm-global', 'vmauth-config-vm-other'], ['get'], ['worker']],
      ['staging', `${WORKER_SA}-vmauth-config`, ['vmauth-config-vm-global'], ['get'], ['worker']],
    ]);
    expect(() => render('vmauths={vm-global}')).toThrow(/- at '\/vmauths\/0': 'vm-global' does not match pattern/);
    expect(() => render('vmauths={a/b/c}')).toThrow(/- at '\/vmauths\/0'/);
    expect(() => render('watchNamespaces={prod}', 'vmauths={staging/vm-global}')).toThrow(/vmauths: namespace "staging" is not in watchNamespaces/);
    expect(() => render('watchNamespaces={prod}', 'createNamespaces={staging}')).toThrow(/createNamespaces: "staging" is not in watchNamespaces/);
    expect(() => render('createNamespaces={Not_A_Namespace}')).toThrow(/- at '\/createNamespaces\/0'/);
  });

  test('notificationSecrets: <namespace>/<name> → get on exactly those Secrets, per namespace; a namespace vmrollout does not watch fails rendering', () => {
    const objs = render('notificationSecrets={prod/rollout-slack,prod/rollout-grafana,staging/rollout-slack}', 'vmauths={prod/vm-global}');
    const secretRules = renderedRbacRules(objs).filter((r) => r.rule.resources?.includes('secrets'));
    expect(secretRules.map((r) => [r.namespace, r.name, r.rule.resourceNames, r.rule.verbs, r.components])).toEqual([
      ['prod', `${WORKER_SA}-vmauth-config`, ['vmauth-config-vm-global'], ['get'], ['worker']],
      ['prod', `${WORKER_SA}-notifications`, ['rollout-slack', 'rollout-grafana'], ['get'], ['worker']],
      ['staging', `${WORKER_SA}-notifications`, ['rollout-slack'], ['get'], ['worker']],
    ]);
    expect(() => render('notificationSecrets={rollout-slack}')).toThrow(/- at '\/notificationSecrets\/0'/);
    expect(() => render('watchNamespaces={prod}', 'notificationSecrets={staging/s}')).toThrow(
      /notificationSecrets: namespace "staging" is not in watchNamespaces/,
    );
  });

  test('watchNamespaces=[a,b]: a Role + RoleBinding per component in a and in b, nothing cluster-wide', () => {
    const objs = render('watchNamespaces={a,b}');
    for (const ns of ['a', 'b']) {
      for (const sa of [WORKER_SA, TRIGGER_SA]) {
        expect(find(objs, 'Role', sa, ns)).toBeDefined();
        const binding = find<k8s.V1RoleBinding>(objs, 'RoleBinding', sa, ns)!;
        expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: sa });
        expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: sa, namespace: NAMESPACE }]);
      }
    }
    expect(objs.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')).toEqual([]);
    expect(renderedRbacRules(objs).filter((r) => r.kind === 'ClusterRole' && r.rule.apiGroups?.includes(VM_GROUP))).toEqual([]);
    expect(new Set(objs.filter((o) => o.kind === 'Role').map((o) => o.metadata?.namespace))).toEqual(new Set(['a', 'b']));
  });

  test('the rendered Deployments are accepted under Pod Security "restricted"; without their securityContext they are refused', async () => {
    const core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
    const apps = kube.kubeConfig.makeApiClient(k8s.AppsV1Api);
    const api = k8s.KubernetesObjectApi.makeApiClient(kube.kubeConfig);
    await core.createNamespace({ body: { metadata: { name: NAMESPACE, labels: RESTRICTED } } });
    // A keys Secret of its own: the generated key differs at each render, and two renders are compared.
    const values = [
      'temporal.tlsSecret=temporal-tls',
      'temporal.payloadKeysSecret=payload-keys',
      'vmagentMetricsAuthSecret=vmagent-auth',
      'vmauths={prod/vm-global}',
      'createNamespaces={prod}',
    ];
    // The identities first (a Pod's ServiceAccount must exist), then everything else rendered.
    const { rendered } = await installChartIdentities(kube.kubeConfig, { releaseNamespace: NAMESPACE, values });
    const all = renderChart({ releaseNamespace: NAMESPACE, values, includeCRDs: true });
    expect(all).toEqual(expect.arrayContaining(rendered));
    for (const obj of all) {
      if (['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'Deployment'].includes(obj.kind!)) continue;
      await api.create(obj);
    }
    for (const component of ['worker', 'trigger'] as const) {
      const d = deployment(all, component);
      // PodSecurity enforces on Pods: the template as a Pod (dry run) must be admitted.
      const pod = await core.createNamespacedPod({ namespace: NAMESPACE, body: podOf(d, NAMESPACE), dryRun: 'All' });
      expect(pod.spec?.securityContext?.runAsNonRoot).toBe(true);
      // On Deployments it only warns: none.
      const created = await apps.createNamespacedDeploymentWithHttpInfo({ namespace: NAMESPACE, body: d });
      expect(created.httpStatusCode).toBe(201);
      expect(warningsOf(created.headers)).toEqual([]);

      // Negative control: the same template without its securityContext is refused, and the Deployment warned about.
      const bare = unhardened(d);
      let refused: unknown;
      try {
        await core.createNamespacedPod({ namespace: NAMESPACE, body: podOf(bare, NAMESPACE), dryRun: 'All' });
      } catch (err) {
        refused = err;
      }
      expect((refused as { code?: number } | undefined)?.code).toBe(403);
      expect(errorText(refused)).toMatch(/violates PodSecurity "restricted/);
      const warned = await apps.createNamespacedDeploymentWithHttpInfo({
        namespace: NAMESPACE,
        body: { ...bare, metadata: { ...bare.metadata, name: `${d.metadata!.name}-bare` } },
        dryRun: 'All',
      });
      expect(warningsOf(warned.headers).join('\n')).toMatch(/would violate PodSecurity \\?"restricted/); // the Warning header quotes it
    }
  }, 120_000);

  test('with every placement, metadata and extra value set, the API server takes the Deployments and the hook Jobs, with no Pod Security warning', async () => {
    const namespace = 'vmrollout-fit';
    const core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
    const apps = kube.kubeConfig.makeApiClient(k8s.AppsV1Api);
    const batch = kube.kubeConfig.makeApiClient(k8s.BatchV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace, labels: RESTRICTED } } });
    const objs = renderChart({
      releaseNamespace: namespace,
      values: [
        'temporalSetup.enabled=true',
        'temporal.payloadKeysSecret=payload-keys',
        'temporal.tls.caSecret=temporal-ca',
        'temporal.tls.serverName=temporal.example.com',
        'imagePullSecrets[0].name=regcred',
        'podAnnotations.example\\.com/owner=sre',
        'podLabels.team=sre',
        'priorityClassName=vmrollout',
        'nodeSelector.pool=infra',
        'tolerations[0].key=infra',
        'tolerations[0].operator=Exists',
        'tolerations[0].effect=NoSchedule',
        'affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1',
        'affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key=pool',
        'affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].operator=Exists',
        'worker.extraEnv[0].name=HTTPS_PROXY',
        'worker.extraEnv[0].value=http://proxy:3128',
        'worker.extraVolumes[0].name=ca',
        'worker.extraVolumes[0].configMap.name=ca-bundle',
        'worker.extraVolumeMounts[0].name=ca',
        'worker.extraVolumeMounts[0].mountPath=/etc/ca',
        'trigger.topologySpreadConstraints[0].maxSkew=1',
        'trigger.topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname',
        'trigger.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule',
        'fullnameOverride=fit',
      ],
    });
    const taken: string[] = [];
    for (const d of objs.filter((o) => o.kind === 'Deployment') as k8s.V1Deployment[]) {
      const r = await apps.createNamespacedDeploymentWithHttpInfo({ namespace, body: d, dryRun: 'All' });
      expect([d.metadata!.name, r.httpStatusCode, warningsOf(r.headers)]).toEqual([d.metadata!.name, 201, []]);
      taken.push(d.metadata!.name!);
    }
    for (const j of objs.filter((o) => o.kind === 'Job') as k8s.V1Job[]) {
      const r = await batch.createNamespacedJobWithHttpInfo({ namespace, body: j, dryRun: 'All' });
      expect([j.metadata!.name, r.httpStatusCode, warningsOf(r.headers)]).toEqual([j.metadata!.name, 201, []]);
      taken.push(j.metadata!.name!);
    }
    expect(taken).toHaveLength(4);
    // Negative control: the API server does judge these fields (a spread without its topology key is refused).
    const worker = JSON.parse(JSON.stringify(deployment(objs, 'worker'))) as k8s.V1Deployment;
    worker.spec!.template.spec!.topologySpreadConstraints![0]!.topologyKey = '';
    await expect(apps.createNamespacedDeployment({ namespace, body: worker, dryRun: 'All' })).rejects.toMatchObject({ code: 422 });
  }, 60_000);

  test('RBAC: each ServiceAccount gets what its process does and nothing more (SubjectAccessReview and its own token)', async () => {
    const ns = 'rbac-release';
    const values = ['vmauths={prod/vm-global}', 'createNamespaces={prod}', 'vmagentMetricsAuthSecret=vmagent-auth'];
    const ids = await installChartIdentities(kube.kubeConfig, { releaseNamespace: ns, values });
    const authz = kube.kubeConfig.makeApiClient(k8s.AuthorizationV1Api);
    const can = async (sa: string, attrs: k8s.V1ResourceAttributes) =>
      (
        await authz.createSubjectAccessReview({
          body: { spec: { user: `system:serviceaccount:${ns}:${sa}`, resourceAttributes: { namespace: 'prod', ...attrs } } },
        })
      ).status!.allowed;
    const trigger = (attrs: k8s.V1ResourceAttributes) => can(TRIGGER_SA, attrs);
    const worker = (attrs: k8s.V1ResourceAttributes) => can(WORKER_SA, attrs);
    const vmdc = { group: 'vmrollout.io', resource: 'vmdistributedclusters' };
    const status = { ...vmdc, subresource: 'status' };

    // The trigger: its informer, its finalizer (merge patch), the status, Events, the drift watches.
    for (const verb of ['get', 'list', 'watch', 'patch']) expect(await trigger({ ...vmdc, verb })).toBe(true);
    expect(await trigger({ ...vmdc, verb: 'list', namespace: '' })).toBe(true); // cluster-wide watch
    expect(await trigger({ ...status, verb: 'patch' })).toBe(true);
    expect(await trigger({ group: '', resource: 'events', verb: 'create' })).toBe(true);
    for (const resource of VM_RESOURCES) {
      for (const verb of ['list', 'watch']) expect(await trigger({ group: VM_GROUP, resource, verb })).toBe(true);
      for (const verb of ['get', 'patch', 'update', 'create', 'delete']) expect(await trigger({ group: VM_GROUP, resource, verb })).toBe(false);
    }
    for (const verb of ['update', 'delete', 'create']) expect(await trigger({ ...vmdc, verb })).toBe(false);
    for (const verb of ['get', 'update']) expect(await trigger({ ...status, verb })).toBe(false);
    for (const name of [undefined, 'vmauth-config-vm-global', 'vmagent-auth']) {
      expect(await trigger({ group: '', resource: 'secrets', verb: 'get', name })).toBe(false);
      expect(await trigger({ group: '', resource: 'secrets', verb: 'get', name, namespace: ns })).toBe(false);
    }
    expect(await trigger({ group: 'discovery.k8s.io', resource: 'endpointslices', verb: 'list' })).toBe(false);
    expect(await trigger({ group: 'events.k8s.io', resource: 'events', verb: 'create' })).toBe(false);
    expect(await trigger({ group: '', resource: 'events', verb: 'patch' })).toBe(false);

    // The worker: the object by name and its status, the VM objects (get + patch; list of the
    // route objects for the records), EndpointSlices, Services and pods, the configured Secrets by name.
    expect(await worker({ ...vmdc, verb: 'get' })).toBe(true);
    for (const verb of ['list', 'watch', 'patch', 'update', 'create', 'delete']) expect(await worker({ ...vmdc, verb })).toBe(false);
    expect(await worker({ ...status, verb: 'patch' })).toBe(true);
    for (const verb of ['get', 'update']) expect(await worker({ ...status, verb })).toBe(false);
    for (const resource of VM_RESOURCES) {
      for (const verb of ['get', 'patch']) expect(await worker({ group: VM_GROUP, resource, verb })).toBe(true);
      for (const verb of ['watch', 'update', 'delete']) expect(await worker({ group: VM_GROUP, resource, verb })).toBe(false);
      expect(await worker({ group: VM_GROUP, resource, verb: 'list' })).toBe(resource === 'vmauths' || resource === 'vmusers');
      // create only in createNamespaces
      expect(await worker({ group: VM_GROUP, resource, verb: 'create' })).toBe(true);
      expect(await worker({ group: VM_GROUP, resource, verb: 'create', namespace: 'staging' })).toBe(false);
    }
    expect(await worker({ group: 'discovery.k8s.io', resource: 'endpointslices', verb: 'list' })).toBe(true);
    expect(await worker({ group: 'discovery.k8s.io', resource: 'endpointslices', verb: 'get' })).toBe(false);
    // Events of its status writes (zone transitions), and nothing else on Events.
    expect(await worker({ group: '', resource: 'events', verb: 'create' })).toBe(true);
    expect(await worker({ group: '', resource: 'events', verb: 'patch' })).toBe(false);
    expect(await worker({ group: 'events.k8s.io', resource: 'events', verb: 'create' })).toBe(false);
    expect(await worker({ group: '', resource: 'secrets', verb: 'get', name: 'vmauth-config-vm-global' })).toBe(true);
    expect(await worker({ group: '', resource: 'secrets', verb: 'get', name: 'vmauth-config-vm-global', namespace: 'staging' })).toBe(false);
    expect(await worker({ group: '', resource: 'secrets', verb: 'get', name: 'vmauth-config-other' })).toBe(false);
    expect(await worker({ group: '', resource: 'secrets', verb: 'get' })).toBe(false);
    expect(await worker({ group: '', resource: 'secrets', verb: 'list' })).toBe(false);
    expect(await worker({ group: '', resource: 'secrets', verb: 'watch', name: 'vmauth-config-vm-global' })).toBe(false);
    expect(await worker({ group: '', resource: 'secrets', verb: 'get', name: 'vmagent-auth', namespace: ns })).toBe(true);
    expect(await worker({ group: '', resource: 'secrets', verb: 'get', name: 'vmagent-auth' })).toBe(false);
    // Each endpoint verified: its Service read by name, the pods its selector selects listed (docs/security.md#pods-are-identified-not-listed).
    expect(await worker({ group: '', resource: 'services', verb: 'get' })).toBe(true);
    expect(await worker({ group: '', resource: 'pods', verb: 'list' })).toBe(true);
    for (const verb of ['list', 'watch', 'patch', 'update', 'create', 'delete']) expect(await worker({ group: '', resource: 'services', verb })).toBe(false);
    for (const verb of ['get', 'watch', 'patch', 'update', 'create', 'delete']) expect(await worker({ group: '', resource: 'pods', verb })).toBe(false);

    // The same with the ServiceAccounts' own tokens against the API server.
    const admin = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await admin.createNamespace({ body: { metadata: { name: 'staging' } } }).catch(() => {});
    for (const n of ['prod', 'staging'])
      await admin.createNamespacedSecret({ namespace: n, body: { metadata: { name: 'vmauth-config-vm-global' }, stringData: { 'config.yaml.gz': 'x' } } });
    await admin.createNamespacedSecret({ namespace: 'prod', body: { metadata: { name: 'other' }, stringData: { k: 'v' } } });
    const asWorker = ids.worker.makeApiClient(k8s.CoreV1Api);
    const asTrigger = ids.trigger.makeApiClient(k8s.CoreV1Api);
    const statusOf = (p: Promise<unknown>) =>
      p.then(
        () => 200,
        (err: { code?: number }) => err.code,
      );
    expect((await asWorker.readNamespacedSecret({ namespace: 'prod', name: 'vmauth-config-vm-global' })).metadata?.name).toBe('vmauth-config-vm-global');
    expect(await statusOf(asWorker.readNamespacedSecret({ namespace: 'staging', name: 'vmauth-config-vm-global' }))).toBe(403);
    expect(await statusOf(asWorker.readNamespacedSecret({ namespace: 'prod', name: 'other' }))).toBe(403);
    expect(await statusOf(asWorker.listNamespacedSecret({ namespace: 'prod' }))).toBe(403);
    expect(await statusOf(asTrigger.readNamespacedSecret({ namespace: 'prod', name: 'vmauth-config-vm-global' }))).toBe(403);
    const customAs = (kc: k8s.KubeConfig) => kc.makeApiClient(k8s.CustomObjectsApi);
    expect(await statusOf(customAs(ids.trigger).listClusterCustomObject({ group: VM_GROUP, version: 'v1beta1', plural: 'vmclusters' }))).toBe(200);
    expect(await statusOf(customAs(ids.worker).listClusterCustomObject({ group: VM_GROUP, version: 'v1beta1', plural: 'vmclusters' }))).toBe(403);
  }, 120_000);

  test('RBAC with watchNamespaces: rights in the watched namespaces only', async () => {
    const ns = 'rbac-scoped';
    await installChartIdentities(kube.kubeConfig, { releaseNamespace: ns, values: ['watchNamespaces={a,b}', 'createNamespaces={a}'], release: 'scoped' });
    const authz = kube.kubeConfig.makeApiClient(k8s.AuthorizationV1Api);
    const can = async (component: 'worker' | 'trigger', attrs: k8s.V1ResourceAttributes) =>
      (
        await authz.createSubjectAccessReview({
          body: { spec: { user: `system:serviceaccount:${ns}:${serviceAccountName(component, 'scoped')}`, resourceAttributes: attrs } },
        })
      ).status!.allowed;
    const vmdc = { group: 'vmrollout.io', resource: 'vmdistributedclusters' };
    for (const namespace of ['a', 'b']) {
      expect(await can('trigger', { ...vmdc, verb: 'watch', namespace })).toBe(true);
      expect(await can('worker', { group: VM_GROUP, resource: 'vmclusters', verb: 'patch', namespace })).toBe(true);
    }
    expect(await can('trigger', { ...vmdc, verb: 'watch', namespace: 'c' })).toBe(false);
    expect(await can('trigger', { ...vmdc, verb: 'list' })).toBe(false); // no cluster-wide list
    expect(await can('worker', { group: VM_GROUP, resource: 'vmclusters', verb: 'patch', namespace: 'c' })).toBe(false);
    expect(await can('worker', { group: VM_GROUP, resource: 'vmclusters', verb: 'create', namespace: 'a' })).toBe(true);
    expect(await can('worker', { group: VM_GROUP, resource: 'vmclusters', verb: 'create', namespace: 'b' })).toBe(false);
  }, 60_000);

  test('withoutRule renders a copy without exactly one rule (for the minimality test)', () => {
    const objs = render('vmauths={prod/vm-global}');
    const rules = renderedRbacRules(objs);
    const target = rules.find((r) => r.kind === 'ClusterRole' && r.name === WORKER_SA && r.ruleIndex === 1)!;
    const rest = renderedRbacRules(withoutRule(objs, target));
    expect(rest).toHaveLength(rules.length - 1);
    expect(rest.filter((r) => r.name === WORKER_SA && r.kind === 'ClusterRole').map((r) => r.rule)).toEqual(
      rules.filter((r) => r.name === WORKER_SA && r.kind === 'ClusterRole' && r.ruleIndex !== 1).map((r) => r.rule),
    );
    expect(() => withoutRule(objs, { ...target, ruleIndex: 99 })).toThrow(/no ClusterRole/);
  });

  /**
   * The NOTES helm prints after an install (`helm template` renders no NOTES.txt; a client dry run
   * does, and needs an API server). A release of its own: the dry run refuses names other tests'
   * objects hold.
   */
  const notes = (...values: string[]): string => {
    const out = helm(
      'install',
      'notes',
      CHART_DIR,
      '--dry-run=client',
      '--kubeconfig',
      kube.kubeconfigPath,
      '--namespace',
      NAMESPACE,
      ...values.flatMap((v) => ['--set', v]),
    );
    expect(out).toContain('NOTES:');
    return out.slice(out.indexOf('NOTES:'));
  };
  /** Values with none of the pitfalls NOTES.txt warns about. */
  const READY = [
    'temporal.address=temporal.example.com:7233',
    'temporalSetup.enabled=true',
    'vmauths={prod/vm-global}',
    'createNamespaces={prod}',
    'temporal.payloadKeysSecret=payload-keys',
  ];
  /** [the READY value replaced (by its key), the value instead (none: left unset, the default), the warning]. */
  const WARNINGS: Array<[string, string | undefined, RegExp]> = [
    ['temporal.address', undefined, /- temporal.address is the chart's default/],
    ['temporalSetup.enabled', undefined, /- temporalSetup is disabled: the search attributes .* must exist in Temporal namespace "default"/],
    ['vmauths', undefined, /- vmauths is empty: .* every rollout fails at its first read switch \(403\)/],
    ['createNamespaces', undefined, /- createNamespaces is empty: .* Invalid/],
    [
      'workerVersioning.activation',
      'workerVersioning.activation=manual',
      /- workerVersioning.activation is manual: .*set-current-version --deployment-name notes-vmrollout --build-id \S+`/,
    ],
  ];

  test('NOTES.txt: no warning once nothing stops the first rollout; each pitfall its own warning', () => {
    const ready = notes(...READY);
    expect(ready).toContain('kubectl -n vmrollout-system get pods -l app.kubernetes.io/instance=notes');
    expect(ready).not.toContain('WARNING');
    for (const [key, instead, warning] of WARNINGS) {
      const got = notes(...READY.filter((v) => !v.startsWith(`${key}=`)), ...(instead ? [instead] : []));
      expect([key, warning.test(got), got.match(/^ {2}- /gm)?.length]).toEqual([key, true, 1]);
    }
    // The defaults have four of them.
    expect(notes().match(/^ {2}- /gm)).toHaveLength(4);
  });

  test('NOTES.txt: plaintext payloads warned about; the generated key named to back up', () => {
    const plaintext = notes(...READY.filter((v) => !v.startsWith('temporal.payloadKeysSecret')), 'temporal.insecurePlaintextPayloads=true');
    expect(plaintext).toMatch(/- temporal.insecurePlaintextPayloads is true: .* PLAINTEXT/);
    expect(plaintext).not.toContain('key the chart generated');
    const generated = notes(...READY.filter((v) => !v.startsWith('temporal.payloadKeysSecret')));
    expect(generated).toMatch(/encrypted with the key the chart generated, Secret notes-vmrollout-payload-keys/);
    expect(generated).not.toContain('WARNING');
    expect(notes(...READY)).not.toContain('key the chart generated');
  });
});
