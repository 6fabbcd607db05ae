// The chart's values with the real helm: values.schema.json (bad values refused at install time,
// naming the field; the same values accepted by a copy of the chart without the schema), every
// example values file, what the image, PodDisruptionBudget, NetworkPolicy and Temporal setup values
// render to. The objects on a real API server: chart-install.test.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { TypedSearchAttributes } from '@temporalio/common';
import { parse as parseYaml } from 'yaml';
import { SEARCH_ATTRIBUTE_KEYS } from '../../api/rollout-contract';
import { DNS1123_LABEL_PATTERN, DNS1123_SUBDOMAIN_PATTERN, IMAGE_TAG_PATTERN } from '../../api/limits';
import { CONFIG_RELOADER_PORT } from '../../activities/vmauth/config';
import { parsePayloadKeys } from '../../process/payload-codec';
import { CHART_DIR, renderChart } from '../infra/harness/chart-identities';
import { harnessTempDir } from '../infra/harness/processes';
import { REPO_ROOT, toolVersions } from '../infra/harness/tools';

const NAMESPACE = 'vmrollout-system';
const EXAMPLES_DIR = path.join(REPO_ROOT, 'examples', 'chart');
const SCHEMA = JSON.parse(fs.readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8')) as JsonSchema;
const VALUES = parseYaml(fs.readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
const CHART = parseYaml(fs.readFileSync(path.join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { appVersion: string };
const PACKAGE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
const API_SERVER = 'networkPolicy.egress.kubeAPIServer.to[0].ipBlock.cidr=10.0.0.10/32';
/** The worker Deployment of a build (one per build id: Worker Versioning). */
const workerOf = (buildId: string) => `rel-vmrollout-worker-${buildId.toLowerCase().replace(/[._]/g, '-')}`;
const WORKER = workerOf(CHART.appVersion);

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  pattern?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  definitions?: Record<string, JsonSchema>;
}

const render = (...values: string[]) => renderChart({ releaseNamespace: NAMESPACE, values });
const renderFiles = (files: string[]) => renderChart({ releaseNamespace: NAMESPACE, valueFiles: files });

const find = <T extends k8s.KubernetesObject>(objs: k8s.KubernetesObject[], kind: string, name: string) =>
  objs.find((o) => o.kind === kind && o.metadata?.name === name) as T | undefined;
const ofKind = (objs: k8s.KubernetesObject[], kind: string) => objs.filter((o) => o.kind === kind).map((o) => o.metadata!.name);
const containerOf = (objs: k8s.KubernetesObject[], kind: 'Deployment' | 'Job', name: string) =>
  find<k8s.V1Deployment | k8s.V1Job>(objs, kind, name)!.spec!.template.spec!.containers[0]!;

const resolve = (s: JsonSchema): JsonSchema => (s.$ref ? resolve(SCHEMA.definitions![s.$ref.replace('#/definitions/', '')]!) : s);

/**
 * The paths of values.yaml that the schema does not describe: a key of an object whose schema
 * lists its properties must be one of them, and every value must have a type (type, enum, const,
 * anyOf). An object schema without `properties` (a Kubernetes field passed through, or a map) ends
 * the walk there.
 */
function untyped(value: unknown, schema: JsonSchema, at: string): string[] {
  const s = resolve(schema);
  if (s.type === undefined && s.enum === undefined && s.const === undefined && s.anyOf === undefined) return [at];
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !s.properties) return [];
  return Object.entries(value).flatMap(([k, v]) => (s.properties![k] ? untyped(v, s.properties![k]!, `${at}.${k}`) : [`${at}.${k}`]));
}

describe('values.schema.json', () => {
  test('types every value of values.yaml, and refuses unknown keys at the top and in each section', () => {
    expect(untyped(VALUES, SCHEMA, '')).toEqual([]);
    expect(SCHEMA.additionalProperties).toBe(false);
    const sections = Object.keys(VALUES).filter((key) => resolve(SCHEMA.properties![key]!).properties);
    expect(sections.length).toBeGreaterThan(5);
    for (const key of sections) expect([key, resolve(SCHEMA.properties![key]!).additionalProperties]).toEqual([key, false]);
  });

  test('its name patterns are the ones the code validates with', () => {
    expect(SCHEMA.definitions!.dns1123Label!.pattern).toBe(DNS1123_LABEL_PATTERN);
    expect(SCHEMA.definitions!.dns1123Subdomain!.pattern).toBe(DNS1123_SUBDOMAIN_PATTERN);
    expect(SCHEMA.definitions!.imageTag!.pattern).toBe(IMAGE_TAG_PATTERN);
  });

  // [--set value, what helm says after `- at `: the field]
  const BAD: Array<[string, string]> = [
    ['image.pullPolicy=Sometimes', "'/image/pullPolicy'"],
    ['image.tag=v1/2', "'/image/tag'"],
    ['logLevel=verbose', "'/logLevel'"],
    ['worker.replicas=0', "'/worker/replicas'"],
    ['trigger.metricsPort=70000', "'/trigger/metricsPort'"],
    ['vmauths={a/b/c}', "'/vmauths/0'"],
    ['vmauths={Prod/vm-global}', "'/vmauths/0'"],
    ['createNamespaces={Not_A_Namespace}', "'/createNamespaces/0'"],
    ['temporal.address=temporal-frontend', "'/temporal/address'"],
    ['temporal.namespace=', "'/temporal/namespace'"],
    ['temporal.tlsSecret=Bad_Name', "'/temporal/tlsSecret'"],
    ['worker.replicaCount=3', "'/worker': additional properties 'replicaCount'"],
    ['imagePullPolicy=Always', "'': additional properties 'imagePullPolicy'"],
    ['worker.podDisruptionBudget.maxUnavailable=0', "'/worker/podDisruptionBudget/maxUnavailable'"],
    ['networkPolicy.enabled=true', "'/networkPolicy/egress/kubeAPIServer/to'"],
    ['networkPolicy.egress.vmauth.ports[0].port=0', "'/networkPolicy/egress/vmauth/ports/0/port'"],
    ['temporalSetup.namespaceRetention=3days', "'/temporalSetup/namespaceRetention'"],
    ['vmRule.stuckInStepFor=half an hour', "'/vmRule/stuckInStepFor'"],
    ['workerVersioning.deploymentName=rel.vmrollout', "'/workerVersioning/deploymentName'"],
    ['workerVersioning.activation=auto', "'/workerVersioning/activation'"],
    ['workerVersioning.rampPercentage=100', "'/workerVersioning/rampPercentage'"],
    ['temporal.insecurePlaintextPayloads=yes', "'/temporal/insecurePlaintextPayloads'"],
  ];
  const atField = (field: string) =>
    new RegExp(`values don't meet the specifications of the schema[\\s\\S]*- at ${field.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`);

  test.each(BAD)('--set %s is refused, naming %s', (value, field) => {
    expect(() => render(value)).toThrow(atField(field));
  });

  test('negative control: a copy of the chart without the schema renders every one of those values', () => {
    const copy = path.join(harnessTempDir('chart-without-schema'), 'vmrollout');
    fs.cpSync(CHART_DIR, copy, { recursive: true });
    fs.rmSync(path.join(copy, 'values.schema.json'));
    // A build id of its own: a bad image tag would be refused by the template as the default build id too.
    for (const [value] of BAD)
      expect(renderChart({ releaseNamespace: NAMESPACE, values: [value, 'workerVersioning.buildId=b1'], chartDir: copy }).length).toBeGreaterThan(0);
  });

  test('a value a template could not use is refused by the schema first, by name', () => {
    expect(() => render('allowCrossNamespaceTargetRefs=maybe')).toThrow(atField("'/allowCrossNamespaceTargetRefs'"));
    expect(() => render('vmauths={vm-global}')).toThrow(atField("'/vmauths/0'"));
    expect(() => render('workerVersioning.buildId=-1.0')).toThrow(atField("'/workerVersioning/buildId'"));
  });

  test('the cross-value rules stay in the templates', () => {
    expect(() => render('watchNamespaces={prod}', 'vmauths={staging/vm-global}')).toThrow(/vmauths: namespace "staging" is not in watchNamespaces/);
    expect(() => render('watchNamespaces={prod}', 'createNamespaces={staging}')).toThrow(/createNamespaces: "staging" is not in watchNamespaces/);
  });

  const examples = fs.readdirSync(EXAMPLES_DIR).filter((f) => f.endsWith('.yaml'));
  test.each(examples)('examples/chart/%s passes (and enables what it says)', (file) => {
    const objs = renderFiles([path.join(EXAMPLES_DIR, file)]);
    expect(ofKind(objs, 'Deployment')).toEqual([WORKER, 'rel-vmrollout-trigger']);
    expect(ofKind(objs, 'NetworkPolicy')).toEqual(['rel-vmrollout-worker', 'rel-vmrollout-trigger']);
  });
  test('there are example values files', () => expect(examples.length).toBeGreaterThanOrEqual(2));
});

describe('payload encryption (secure by default)', () => {
  const GENERATED = 'rel-vmrollout-payload-keys';
  /** The Secret each pod reads its keys from, undefined when it has no keys file. */
  const keysSecretOf = (objs: k8s.KubernetesObject[]) =>
    [WORKER, 'rel-vmrollout-trigger'].map((name) => {
      const pod = find<k8s.V1Deployment>(objs, 'Deployment', name)!.spec!.template.spec!;
      const file = pod.containers[0]!.env!.find((e) => e.name === 'TEMPORAL_PAYLOAD_KEYS_FILE')?.value;
      const mount = pod.containers[0]!.volumeMounts!.find((m) => m.name === 'payload-keys');
      expect(file === undefined).toBe(mount === undefined);
      if (mount) expect(file).toBe(`${mount.mountPath}/keys`);
      return pod.volumes?.find((v) => v.name === 'payload-keys')?.secret?.secretName;
    });

  test('by default the chart generates a key, kept by helm on uninstall, and both processes encrypt with it', () => {
    const objs = render();
    const secret = find<k8s.V1Secret>(objs, 'Secret', GENERATED)!;
    expect(secret.metadata?.annotations?.['helm.sh/resource-policy']).toBe('keep');
    const keys = parsePayloadKeys(Buffer.from(secret.data!.keys!, 'base64').toString('utf8'));
    expect(keys.byId.size).toBe(1);
    expect(keysSecretOf(objs)).toEqual([GENERATED, GENERATED]);
    // random: two renders without a cluster (no lookup) give two keys (hence: name your own Secret there)
    expect(find<k8s.V1Secret>(render(), 'Secret', GENERATED)!.data!.keys).not.toBe(secret.data!.keys);
  });

  test('a Secret of your own replaces the generated one', () => {
    const objs = render('temporal.payloadKeysSecret=payload-keys');
    expect(ofKind(objs, 'Secret')).not.toContain(GENERATED);
    expect(keysSecretOf(objs)).toEqual(['payload-keys', 'payload-keys']);
  });

  test('plaintext only when asked by its loud name, and never together with a keys Secret', () => {
    const objs = render('temporal.insecurePlaintextPayloads=true');
    expect(ofKind(objs, 'Secret')).not.toContain(GENERATED);
    expect(keysSecretOf(objs)).toEqual([undefined, undefined]);
    expect(() => render('temporal.insecurePlaintextPayloads=true', 'temporal.payloadKeysSecret=payload-keys')).toThrow(/set one of them, not both/);
  });
});

describe('image', () => {
  test('the tag defaults to the chart appVersion, which is the version of the code (package.json); image.tag overrides it', () => {
    expect(CHART.appVersion).toBe(PACKAGE.version);
    const objs = render();
    for (const d of [WORKER, 'rel-vmrollout-trigger']) expect(containerOf(objs, 'Deployment', d).image).toBe(`ghcr.io/vmrollout/vmrollout:${CHART.appVersion}`);
    const own = render('image.repository=registry.example.com:5000/ops/vmrollout', 'image.tag=0.1.0-rc.1', 'image.pullPolicy=Always');
    const worker = containerOf(own, 'Deployment', workerOf('0.1.0-rc.1'));
    expect([worker.image, worker.imagePullPolicy]).toEqual(['registry.example.com:5000/ops/vmrollout:0.1.0-rc.1', 'Always']);
  });
});

describe('PodDisruptionBudget', () => {
  const budgets = (...values: string[]) =>
    render(...values)
      .filter((o) => o.kind === 'PodDisruptionBudget')
      .map((o) => {
        const spec = (o as k8s.V1PodDisruptionBudget).spec!;
        return [o.metadata!.name, spec.maxUnavailable, spec.selector?.matchLabels?.['app.kubernetes.io/component'], spec.unhealthyPodEvictionPolicy];
      });

  test('the worker (2 replicas) has one by default, the trigger (1 replica) none', () => {
    expect(budgets()).toEqual([['rel-vmrollout-worker', 1, 'worker', 'AlwaysAllow']]);
  });

  test('one for each component running more than one replica; disabled, or a percentage', () => {
    expect(budgets('trigger.replicas=2', 'worker.podDisruptionBudget.maxUnavailable=50%')).toEqual([
      ['rel-vmrollout-worker', '50%', 'worker', 'AlwaysAllow'],
      ['rel-vmrollout-trigger', 1, 'trigger', 'AlwaysAllow'],
    ]);
    expect(budgets('worker.replicas=1')).toEqual([]);
    expect(budgets('worker.podDisruptionBudget.enabled=false')).toEqual([]);
  });
});

describe('NetworkPolicy', () => {
  /** Each egress rule as "peer → ports" and the ingress ports, of one component's policy. */
  const summary = (objs: k8s.KubernetesObject[], component: string) => {
    const spec = find<k8s.V1NetworkPolicy>(objs, 'NetworkPolicy', `rel-vmrollout-${component}`)!.spec!;
    const peer = (p: k8s.V1NetworkPolicyPeer) =>
      p.ipBlock ? p.ipBlock.cidr : `${JSON.stringify(p.namespaceSelector?.matchLabels ?? {})} ${JSON.stringify(p.podSelector?.matchLabels ?? {})}`;
    return {
      podSelector: spec.podSelector?.matchLabels,
      policyTypes: spec.policyTypes,
      // Parsed from YAML: the field is `from` (the client's model calls it `_from`).
      ingress: spec.ingress!.map((r) => [(r as { from?: unknown }).from, r.ports!.map((p) => `${p.port}/${p.protocol}`)]),
      egress: spec.egress!.map((r) => `${r.to!.map(peer).join(', ')} → ${r.ports!.map((p) => `${p.port}/${p.protocol}`).join(' ')}`),
    };
  };
  const dns = '{"kubernetes.io/metadata.name":"kube-system"} {"k8s-app":"kube-dns"} → 53/UDP 53/TCP';
  const apiServer = '10.0.0.10/32 → 443/TCP 6443/TCP';
  const temporal = '{"kubernetes.io/metadata.name":"temporal"} {"app.kubernetes.io/component":"frontend","app.kubernetes.io/name":"temporal"} → 7233/TCP';

  test('none by default', () => expect(ofKind(render(), 'NetworkPolicy')).toEqual([]));

  test('the worker reaches DNS, the API server, Temporal, and the vmagent, vmauth (and its config-reloader) and vmselect pods; the trigger the first three; ingress only to the metrics port', () => {
    const objs = render('networkPolicy.enabled=true', API_SERVER);
    expect(summary(objs, 'worker')).toEqual({
      podSelector: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'worker' },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [[undefined, ['9464/TCP']]],
      egress: [
        dns,
        apiServer,
        temporal,
        '{} {"app.kubernetes.io/name":"vmagent","managed-by":"vm-operator"} → 8429/TCP',
        `{} {"app.kubernetes.io/name":"vmauth","managed-by":"vm-operator"} → 8427/TCP ${CONFIG_RELOADER_PORT}/TCP`,
        '{} {"app.kubernetes.io/name":"vmselect","managed-by":"vm-operator"} → 8481/TCP',
      ],
    });
    expect(summary(objs, 'trigger')).toEqual({
      podSelector: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'trigger' },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [[undefined, ['9465/TCP']]],
      egress: [dns, apiServer, temporal],
    });
  });

  test('peers and ports are values: Temporal Cloud by address, the metrics port for chosen sources only', () => {
    const objs = render(
      'networkPolicy.enabled=true',
      API_SERVER,
      'networkPolicy.egress.temporal.to[0].ipBlock.cidr=0.0.0.0/0',
      'networkPolicy.metricsFrom[0].podSelector.matchLabels.app\\.kubernetes\\.io/name=vmagent',
      'trigger.metricsPort=9000',
    );
    const trigger = summary(objs, 'trigger');
    expect(trigger.egress[2]).toBe('0.0.0.0/0 → 7233/TCP');
    expect(trigger.ingress).toEqual([[[{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'vmagent' } } }], ['9000/TCP']]]);
  });
});

describe('temporalSetup hook', () => {
  const job = (...values: string[]) => find<k8s.V1Job>(render('temporalSetup.enabled=true', ...values), 'Job', 'rel-vmrollout-temporal-setup')!;
  const script = (j: k8s.V1Job) => j.spec!.template.spec!.containers[0]!.args![0]!;

  test('none by default', () => expect(ofKind(render(), 'Job')).not.toContain('rel-vmrollout-temporal-setup'));

  test('registers exactly the search attributes of api/rollout-contract.ts, each --name with its own --type', () => {
    const line = script(job())
      .split('\n')
      .find((l) => l.startsWith('temporal operator search-attribute create'))!;
    const pairs = [...line.matchAll(/--name (\S+) --type (\S+)/g)].map((m) => [m[1], m[2]]);
    expect(pairs).toEqual(SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, TypedSearchAttributes.toMetadataType(k.type)]));
    expect(line.match(/ --name /g)).toHaveLength(SEARCH_ATTRIBUTE_KEYS.length);
  });

  test("docs/install.md's one-liner for installs without the hook registers the same attributes", () => {
    const pairsOf = (line: string) => [...line.matchAll(/--name (\S+) --type (\S+)/g)].map((m) => `${m[1]}=${m[2]}`);
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'docs/install.md'), 'utf8');
    const oneLiner = readme.split('\n').find((l) => l.trim().startsWith('temporal operator search-attribute create --address'))!;
    const hook = script(job())
      .split('\n')
      .find((l) => l.startsWith('temporal operator search-attribute create'))!;
    expect(pairsOf(oneLiner)).toEqual(pairsOf(hook));
    expect(pairsOf(oneLiner)).toHaveLength(SEARCH_ATTRIBUTE_KEYS.length);
  });

  test('a pre-install and pre-upgrade hook, removed once it succeeded; the CLI image is the version the tests run', () => {
    const j = job();
    expect(j.metadata!.annotations).toEqual({ 'helm.sh/hook': 'pre-install,pre-upgrade', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' });
    expect(j.spec!.template.spec!.containers[0]!.image).toBe(`temporalio/temporal:${toolVersions().TEMPORAL_CLI_VERSION}`);
    expect(j.spec!.template.spec!.automountServiceAccountToken).toBe(false);
  });

  test('creates the namespace only when asked, with the retention asked', () => {
    expect(script(job())).not.toMatch(/namespace create/);
    const created = script(job('temporalSetup.createNamespace=true', 'temporalSetup.namespaceRetention=7d'));
    expect(created).toMatch(/^if ! temporal operator namespace describe --namespace "\$TEMPORAL_NAMESPACE" > \/dev\/null 2>&1; then\n/);
    expect(created).toMatch(/\n  temporal operator namespace create --namespace "\$TEMPORAL_NAMESPACE" --retention 7d\n/);
  });

  test('connects as the worker does: address, namespace, the TLS Secret and the API key', () => {
    const j = job(
      'temporal.address=temporal.example.com:7233',
      'temporal.namespace=ops',
      'temporal.tlsSecret=temporal-tls',
      'temporal.apiKeySecret=temporal-key',
    );
    const pod = j.spec!.template.spec!;
    const env = Object.fromEntries(pod.containers[0]!.env!.map((e) => [e.name, e.value ?? e.valueFrom]));
    const mount = pod.containers[0]!.volumeMounts!.find((m) => m.name === 'temporal-tls')!.mountPath;
    expect(env).toEqual({
      TEMPORAL_ADDRESS: 'temporal.example.com:7233',
      TEMPORAL_NAMESPACE: 'ops',
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_CLIENT_CERT_PATH: `${mount}/tls.crt`,
      TEMPORAL_TLS_CLIENT_KEY_PATH: `${mount}/tls.key`,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: `${mount}/ca.crt`,
      TEMPORAL_API_KEY: { secretKeyRef: { name: 'temporal-key', key: 'api-key' } },
    });
    expect(pod.volumes).toEqual([{ name: 'temporal-tls', secret: { secretName: 'temporal-tls' } }]);
    const worker = find<k8s.V1Deployment>(render('temporal.tlsSecret=temporal-tls', 'temporal.apiKeySecret=temporal-key'), 'Deployment', WORKER)!.spec!.template
      .spec!;
    expect(worker.volumes).toContainEqual(pod.volumes![0]);
    expect(worker.containers[0]!.env).toContainEqual({ name: 'TEMPORAL_API_KEY', valueFrom: env.TEMPORAL_API_KEY });
  });
});

describe('workerVersioning', () => {
  const envOf = (objs: k8s.KubernetesObject[], name = WORKER) =>
    Object.fromEntries(containerOf(objs, 'Deployment', name).env!.map((e) => [e.name, e.value ?? e.valueFrom]));
  const versionJob = (...values: string[]) => find<k8s.V1Job>(render(...values), 'Job', 'rel-vmrollout-worker-version');
  const script = (j: k8s.V1Job) => j.spec!.template.spec!.containers[0]!.args![0]!;

  test('the worker is a version of the Worker Deployment named after the release, its build id the image tag', () => {
    const objs = render();
    expect(envOf(objs)).toMatchObject({ TEMPORAL_WORKER_DEPLOYMENT_NAME: 'rel-vmrollout', TEMPORAL_WORKER_BUILD_ID: CHART.appVersion });
    expect(envOf(render('image.tag=1.2.3_hotfix'), workerOf('1.2.3_hotfix'))).toMatchObject({ TEMPORAL_WORKER_BUILD_ID: '1.2.3_hotfix' });
    const own = render('workerVersioning.deploymentName=vmrollout-prod', 'workerVersioning.buildId=build-42', 'image.tag=1.2.3');
    expect(envOf(own, workerOf('build-42'))).toMatchObject({ TEMPORAL_WORKER_DEPLOYMENT_NAME: 'vmrollout-prod', TEMPORAL_WORKER_BUILD_ID: 'build-42' });
    // The server ignores a deployment name with a dot: a release name's dots become dashes.
    expect(
      envOf(renderChart({ releaseNamespace: NAMESPACE, release: 'rel.v2' }), 'rel.v2-vmrollout-worker-' + CHART.appVersion.replace(/\./g, '-')),
    ).toMatchObject({
      TEMPORAL_WORKER_DEPLOYMENT_NAME: 'rel-v2-vmrollout',
    });
  });

  test('each build has its own Deployment, its pods labelled with the build id, kept by helm when an upgrade moves to another build', () => {
    const d = find<k8s.V1Deployment>(render('image.tag=1.2.3'), 'Deployment', workerOf('1.2.3'))!;
    expect(d.metadata!.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    expect(d.spec!.selector.matchLabels).toEqual({
      'app.kubernetes.io/instance': 'rel',
      'app.kubernetes.io/component': 'worker',
      'vmrollout.io/build-id': '1.2.3',
    });
    expect(d.spec!.template.metadata!.labels).toMatchObject({ 'vmrollout.io/build-id': '1.2.3' });
    // The trigger is not versioned: one Deployment, replaced by upgrades.
    const trigger = find<k8s.V1Deployment>(render('image.tag=1.2.3'), 'Deployment', 'rel-vmrollout-trigger')!;
    expect(trigger.metadata!.annotations).toBeUndefined();
    expect(containerOf([trigger], 'Deployment', 'rel-vmrollout-trigger').env!.map((e) => e.name)).not.toContain('TEMPORAL_WORKER_BUILD_ID');
  });

  test('an image tag that cannot be a build id is refused, naming the value to set', () => {
    expect(() => render(`image.tag=_${'x'.repeat(5)}`)).toThrow(/worker build id "_xxxxx" .* set workerVersioning.buildId/);
    expect(() => render(`image.tag=${'1'.repeat(64)}`)).toThrow(/set workerVersioning.buildId/);
    expect(render(`image.tag=${'1'.repeat(64)}`, 'workerVersioning.buildId=b1').length).toBeGreaterThan(0);
  });

  test('a post-install, post-upgrade and post-rollback hook makes the build current once its workers poll, connecting as the worker does', () => {
    const j = versionJob('temporal.tlsSecret=temporal-tls', 'temporal.apiKeySecret=temporal-key')!;
    expect(j.metadata!.annotations).toEqual({
      'helm.sh/hook': 'post-install,post-upgrade,post-rollback',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    const pod = j.spec!.template.spec!;
    expect(pod.containers[0]!.image).toBe(`temporalio/temporal:${toolVersions().TEMPORAL_CLI_VERSION}`);
    expect(pod.automountServiceAccountToken).toBe(false);
    const env = Object.fromEntries(pod.containers[0]!.env!.map((e) => [e.name, e.value ?? e.valueFrom]));
    const setup = find<k8s.V1Job>(
      render('temporalSetup.enabled=true', 'temporal.tlsSecret=temporal-tls', 'temporal.apiKeySecret=temporal-key'),
      'Job',
      'rel-vmrollout-temporal-setup',
    )!;
    expect(env).toEqual({
      ...Object.fromEntries(setup.spec!.template.spec!.containers[0]!.env!.map((e) => [e.name, e.value ?? e.valueFrom])),
      DEPLOYMENT: 'rel-vmrollout',
      BUILD_ID: CHART.appVersion,
    });
    expect(pod.volumes).toEqual(setup.spec!.template.spec!.volumes);
    expect(script(j)).toContain('temporal worker deployment set-current-version --deployment-name "$DEPLOYMENT" --build-id "$BUILD_ID" --yes');
    expect(script(j)).not.toContain('set-ramping-version');
    expect(script(j)).toContain('$(( $(date +%s) + 240 ))');
  });

  test('ramping: the build ramps at rampPercentage (made current at the first install); manual: no hook', () => {
    const ramp = script(versionJob('workerVersioning.activation=ramping', 'workerVersioning.rampPercentage=5', 'workerVersioning.pollTimeoutSeconds=60')!);
    expect(ramp).toContain('set-ramping-version --deployment-name "$DEPLOYMENT" --build-id "$BUILD_ID" --percentage 5 --yes');
    expect(ramp).toContain('set-current-version');
    expect(ramp).toContain('$(( $(date +%s) + 60 ))');
    expect(versionJob('workerVersioning.activation=manual')).toBeUndefined();
  });
});
