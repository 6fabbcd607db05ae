// The chart values a real cluster needs (issue 30): registry credentials, extra environment and
// volumes, pod metadata, priority and placement per component, the worker's default spread, name
// overrides within the DNS limits, and Temporal TLS without a client certificate — each rendered with
// the real helm and read back from the objects, its schema refusing wrong types (and a copy of the
// chart without the schema accepting them: the negative control). NOTES.txt: chart.test.ts (it needs
// an API server for `helm install --dry-run`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { z } from 'zod';
import { commonEnvShape, refineCommonEnv, temporalConfig, temporalConnectionOptions } from '../../process/env';
import { CHART_DIR, renderChart } from '../infra/harness/chart-identities';
import { harnessTempDir } from '../infra/harness/processes';

const NAMESPACE = 'vmrollout-system';
const render = (...values: string[]) => renderChart({ releaseNamespace: NAMESPACE, values });
const renderWith = (release: string, ...values: string[]) => renderChart({ releaseNamespace: NAMESPACE, values, release });

type Workload = k8s.V1Deployment | k8s.V1Job;
const POD_KINDS = ['Deployment', 'Job'];
const workloads = (objs: k8s.KubernetesObject[]) => objs.filter((o) => POD_KINDS.includes(o.kind ?? '')) as Workload[];
const componentOf = (w: Workload) => w.metadata!.labels!['app.kubernetes.io/component']!;
const byComponent = (objs: k8s.KubernetesObject[], component: string) => workloads(objs).find((w) => componentOf(w) === component)!;
const podOf = (objs: k8s.KubernetesObject[], component: string) => byComponent(objs, component).spec!.template;
const envOf = (objs: k8s.KubernetesObject[], component: string) => podOf(objs, component).spec!.containers[0]!.env!;
const envValue = (objs: k8s.KubernetesObject[], component: string, name: string) => envOf(objs, component).find((e) => e.name === name)?.value;
/** With both hook Jobs: every pod the chart makes. */
const WITH_JOBS = ['temporalSetup.enabled=true'];
const ALL_PODS = ['worker', 'trigger', 'temporal-setup', 'worker-version'];

describe('values every pod takes: registry credentials, metadata, priority, placement', () => {
  test('defaults: none of them on any pod, and the worker spread softly across zones and nodes', () => {
    const objs = render(...WITH_JOBS);
    expect(workloads(objs).map(componentOf).sort()).toEqual([...ALL_PODS].sort());
    for (const c of ALL_PODS) {
      const pod = podOf(objs, c);
      expect([c, pod.metadata!.annotations, pod.spec!.imagePullSecrets, pod.spec!.priorityClassName, pod.spec!.nodeSelector]).toEqual([
        c,
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      expect([c, pod.spec!.tolerations, pod.spec!.affinity]).toEqual([c, undefined, undefined]);
      if (c !== 'worker') expect([c, pod.spec!.topologySpreadConstraints]).toEqual([c, undefined]);
    }
    const buildId = podOf(objs, 'worker').metadata!.labels!['vmrollout.io/build-id'];
    const selector = { matchLabels: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'worker', 'vmrollout.io/build-id': buildId } };
    expect(podOf(objs, 'worker').spec!.topologySpreadConstraints).toEqual([
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: selector },
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: selector },
    ]);
    // The spread's selector selects the worker's own pods (those of its build), nothing else.
    expect(podOf(objs, 'worker').metadata!.labels).toMatchObject(selector.matchLabels);
  });

  test('chart-wide values land on every pod, the hook Jobs included', () => {
    const objs = render(
      ...WITH_JOBS,
      'imagePullSecrets[0].name=regcred',
      'podAnnotations.example\\.com/owner=sre',
      'podLabels.team=sre',
      'priorityClassName=vmrollout-critical',
      'nodeSelector.pool=infra',
      'tolerations[0].key=infra',
      'tolerations[0].operator=Exists',
      'tolerations[0].effect=NoSchedule',
      'affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1',
      'affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key=pool',
      'affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].operator=Exists',
    );
    for (const c of ALL_PODS) {
      const pod = podOf(objs, c);
      expect([c, pod.spec!.imagePullSecrets]).toEqual([c, [{ name: 'regcred' }]]);
      expect([c, pod.metadata!.annotations]).toEqual([c, { 'example.com/owner': 'sre' }]);
      expect([c, pod.metadata!.labels!.team, pod.metadata!.labels!['app.kubernetes.io/component']]).toEqual([c, 'sre', c]);
      expect([c, pod.spec!.priorityClassName, pod.spec!.nodeSelector]).toEqual([c, 'vmrollout-critical', { pool: 'infra' }]);
      expect([c, pod.spec!.tolerations]).toEqual([c, [{ key: 'infra', operator: 'Exists', effect: 'NoSchedule' }]]);
      expect([c, pod.spec!.affinity!.nodeAffinity!.preferredDuringSchedulingIgnoredDuringExecution![0]!.weight]).toEqual([c, 1]);
    }
  });

  test("a component's own values come before the chart-wide ones, for its pods only", () => {
    const objs = render(
      ...WITH_JOBS,
      'podAnnotations.a=global',
      'podAnnotations.b=global',
      'worker.podAnnotations.b=worker',
      'podLabels.team=sre',
      'trigger.podLabels.tier=control',
      'priorityClassName=low',
      'worker.priorityClassName=high',
      'nodeSelector.pool=infra',
      'trigger.nodeSelector.pool=control',
      'tolerations[0].key=infra',
      'tolerations[0].operator=Exists',
      'worker.tolerations[0].key=workers',
      'worker.tolerations[0].operator=Exists',
      'worker.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=50',
      'worker.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey=kubernetes.io/hostname',
    );
    const worker = podOf(objs, 'worker');
    const trigger = podOf(objs, 'trigger');
    const setup = podOf(objs, 'temporal-setup');
    expect(worker.metadata!.annotations).toEqual({ a: 'global', b: 'worker' });
    expect(trigger.metadata!.annotations).toEqual({ a: 'global', b: 'global' });
    expect([worker.metadata!.labels!.tier, trigger.metadata!.labels!.tier, trigger.metadata!.labels!.team]).toEqual([undefined, 'control', 'sre']);
    expect([worker.spec!.priorityClassName, trigger.spec!.priorityClassName, setup.spec!.priorityClassName]).toEqual(['high', 'low', 'low']);
    expect([worker.spec!.nodeSelector, trigger.spec!.nodeSelector, setup.spec!.nodeSelector]).toEqual([
      { pool: 'infra' },
      { pool: 'control' },
      { pool: 'infra' },
    ]);
    expect(worker.spec!.tolerations).toEqual([{ key: 'workers', operator: 'Exists' }]);
    expect(trigger.spec!.tolerations).toEqual([{ key: 'infra', operator: 'Exists' }]);
    expect(worker.spec!.affinity!.podAntiAffinity!.preferredDuringSchedulingIgnoredDuringExecution![0]!.weight).toBe(50);
    expect(trigger.spec!.affinity).toBeUndefined();
  });

  test("a pod label the chart's selectors use is refused, by name", () => {
    expect(() => render('podLabels.app\\.kubernetes\\.io/component=other')).toThrow(/podLabels: app.kubernetes.io\/component is set by the chart/);
    expect(() => render('worker.podLabels.vmrollout\\.io/build-id=x')).toThrow(/podLabels: vmrollout.io\/build-id is set by the chart/);
    // Negative control: a label of its own is taken.
    expect(podOf(render('worker.podLabels.app\\.example\\.com/tier=workers'), 'worker').metadata!.labels!['app.example.com/tier']).toBe('workers');
  });
});

describe('the worker spread', () => {
  test('disabled: no constraint; other topology keys: one constraint each', () => {
    expect(podOf(render('worker.defaultTopologySpread.enabled=false'), 'worker').spec!.topologySpreadConstraints).toBeUndefined();
    const keys = podOf(render('worker.defaultTopologySpread.topologyKeys={rack}'), 'worker').spec!.topologySpreadConstraints!;
    expect(keys.map((k) => [k.topologyKey, k.whenUnsatisfiable])).toEqual([['rack', 'ScheduleAnyway']]);
  });

  test("topologySpreadConstraints replaces it (a hard zone spread), per component; a constraint's labelSelector defaults to the component's pods", () => {
    const objs = render(
      'worker.topologySpreadConstraints[0].maxSkew=1',
      'worker.topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone',
      'worker.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule',
      'worker.topologySpreadConstraints[0].matchLabelKeys={pod-template-hash}',
      'trigger.topologySpreadConstraints[0].maxSkew=2',
      'trigger.topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname',
      'trigger.topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway',
      'trigger.topologySpreadConstraints[0].labelSelector.matchLabels.team=sre',
    );
    const buildId = podOf(objs, 'worker').metadata!.labels!['vmrollout.io/build-id'];
    expect(podOf(objs, 'worker').spec!.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'DoNotSchedule',
        matchLabelKeys: ['pod-template-hash'],
        labelSelector: { matchLabels: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'worker', 'vmrollout.io/build-id': buildId } },
      },
    ]);
    // A labelSelector of its own is kept as it is.
    expect(podOf(objs, 'trigger').spec!.topologySpreadConstraints).toEqual([
      { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { team: 'sre' } } },
    ]);
  });
});

describe('extraEnv, extraVolumes, extraVolumeMounts', () => {
  test("each component's land in its own pod, after the chart's", () => {
    const objs = render(
      'worker.extraEnv[0].name=HTTPS_PROXY',
      'worker.extraEnv[0].value=http://proxy:3128',
      'worker.extraEnv[1].name=NODE_EXTRA_CA_CERTS',
      'worker.extraEnv[1].value=/etc/ca/bundle.pem',
      'worker.extraVolumes[0].name=ca',
      'worker.extraVolumes[0].configMap.name=ca-bundle',
      'worker.extraVolumeMounts[0].name=ca',
      'worker.extraVolumeMounts[0].mountPath=/etc/ca',
      'worker.extraVolumeMounts[0].readOnly=true',
      'trigger.extraEnv[0].name=NODE_OPTIONS',
      'trigger.extraEnv[0].valueFrom.configMapKeyRef.name=node',
      'trigger.extraEnv[0].valueFrom.configMapKeyRef.key=options',
    );
    const worker = podOf(objs, 'worker').spec!;
    expect(worker.containers[0]!.env!.slice(-2)).toEqual([
      { name: 'HTTPS_PROXY', value: 'http://proxy:3128' },
      { name: 'NODE_EXTRA_CA_CERTS', value: '/etc/ca/bundle.pem' },
    ]);
    expect(worker.volumes!.at(-1)).toEqual({ name: 'ca', configMap: { name: 'ca-bundle' } });
    expect(worker.containers[0]!.volumeMounts!.at(-1)).toEqual({ name: 'ca', mountPath: '/etc/ca', readOnly: true });
    // The chart's own volumes stay (a writable /tmp under a read-only root).
    expect(worker.containers[0]!.volumeMounts!.map((m) => m.name)).toEqual(expect.arrayContaining(['tmp', 'payload-keys', 'ca']));
    const trigger = podOf(objs, 'trigger').spec!;
    expect(trigger.containers[0]!.env!.at(-1)).toEqual({ name: 'NODE_OPTIONS', valueFrom: { configMapKeyRef: { name: 'node', key: 'options' } } });
    expect(trigger.volumes!.map((v) => v.name)).not.toContain('ca');
    expect(trigger.containers[0]!.env!.map((e) => e.name)).not.toContain('HTTPS_PROXY');
  });

  test('a variable the chart sets is refused (the trust policy is set by its values); defaults add nothing', () => {
    expect(() => render('worker.extraEnv[0].name=TRUST_ALLOW_HOST_ACCESS', 'worker.extraEnv[0].value=yes')).toThrow(
      /worker.extraEnv: TRUST_ALLOW_HOST_ACCESS is set by the chart; set it with its chart value/,
    );
    expect(() => render('trigger.extraEnv[0].name=WATCH_NAMESPACES', 'trigger.extraEnv[0].value=')).toThrow(
      /trigger.extraEnv: WATCH_NAMESPACES is set by the chart/,
    );
    // WATCH_NAMESPACES is the trigger's only: the worker may take it as an extra.
    expect(envValue(render('worker.extraEnv[0].name=WATCH_NAMESPACES', 'worker.extraEnv[0].value=x'), 'worker', 'WATCH_NAMESPACES')).toBe('x');
    const defaults = render();
    expect(envOf(defaults, 'worker').at(-1)!.name).toBe('MAX_CONCURRENT_ACTIVITIES');
    expect(envOf(defaults, 'trigger').at(-1)!.name).toBe('RECONCILE_CONCURRENCY');
  });
});

describe('names: nameOverride, fullnameOverride, at most 63 characters', () => {
  const names = (objs: k8s.KubernetesObject[]) => objs.map((o) => o.metadata!.name!);
  const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  /** Every value that renders more objects (Roles of createNamespaces, vmauths, vmagentMetricsAuthSecret; NetworkPolicies; Jobs). */
  const EVERYTHING = [
    ...WITH_JOBS,
    'createNamespaces={prod}',
    'vmauths={prod/vm-global}',
    'vmagentMetricsAuthSecret=vmagent-auth',
    'networkPolicy.enabled=true',
    'networkPolicy.egress.kubeAPIServer.to[0].ipBlock.cidr=10.0.0.10/32',
  ];
  /** The objects named after the release: all but the ones named by the user. */
  const ours = (objs: k8s.KubernetesObject[]) => objs.filter((o) => o.kind !== 'CustomResourceDefinition');

  test('fullnameOverride names every object, nameOverride replaces the chart name and the name label', () => {
    const full = ours(render(...EVERYTHING, 'fullnameOverride=vmr'));
    expect(full.length).toBeGreaterThan(15);
    for (const n of names(full)) expect(n).toMatch(/^vmr(-|$)/);
    const named = ours(render(...EVERYTHING, 'nameOverride=rollout'));
    for (const n of names(named)) expect(n).toMatch(/^rel-rollout(-|$)/);
    for (const o of named) expect([o.kind, o.metadata!.labels?.['app.kubernetes.io/name']]).toEqual([o.kind, 'rollout']);
    // The defaults keep their names (an upgrade renames nothing).
    expect(names(ours(render(...EVERYTHING)))).toEqual(expect.arrayContaining(['rel-vmrollout-worker', 'rel-vmrollout-trigger', 'rel-vmrollout-payload-keys']));
  });

  test('the longest release name helm allows (53) and a 63-character fullnameOverride: every name a DNS label, none cut alike', () => {
    const release = 'r'.repeat(53);
    for (const objs of [renderWith(release, ...EVERYTHING), render(...EVERYTHING, `fullnameOverride=${'f'.repeat(63)}`)]) {
      const all = ours(objs);
      for (const o of all) expect([o.kind, o.metadata!.name!.length <= 63 && DNS_LABEL.test(o.metadata!.name!)]).toEqual([o.kind, true]);
      // Two objects of one kind and namespace never share a name.
      const keys = all.map((o) => `${o.kind}/${o.metadata!.namespace ?? ''}/${o.metadata!.name}`);
      expect(new Set(keys).size).toBe(keys.length);
      // Everything that refers to a name refers to the one rendered.
      const sa = all.filter((o) => o.kind === 'ServiceAccount').map((o) => o.metadata!.name);
      for (const w of workloads(all).filter((x) => x.kind === 'Deployment')) expect(sa).toContain(w.spec!.template.spec!.serviceAccountName);
      const secret = all.find((o) => o.kind === 'Secret')!.metadata!.name!;
      const keysVolume = podOf(all, 'worker').spec!.volumes!.find((v) => v.name === 'payload-keys')!;
      expect(keysVolume.secret!.secretName).toBe(secret);
    }
  });

  test("the alerts' up{job} names the Services as rendered (a scrape's job is its Service's name), cut or not", () => {
    for (const release of ['rel', 'r'.repeat(53)]) {
      const objs = renderWith(release);
      const services = objs.filter((o) => o.kind === 'Service').map((o) => o.metadata!.name!);
      const rule = JSON.stringify(objs.find((o) => o.kind === 'VMRule'));
      const jobs = [...rule.matchAll(/job=\\"([^\\]+)\\"/g)].map((m) => m[1]);
      expect(jobs.length).toBeGreaterThanOrEqual(2);
      expect([release, [...new Set(jobs)].sort()]).toEqual([release, [...services].sort()]);
    }
  });

  test('two builds whose Deployment names are cut stay apart', () => {
    const worker = (buildId: string) => byComponent(renderWith('r'.repeat(53), `workerVersioning.buildId=${buildId}`), 'worker').metadata!.name!;
    const [a, b] = [worker('build-0001'), worker('build-0002')];
    expect(a).not.toBe(b);
    for (const n of [a, b]) expect(n.length).toBeLessThanOrEqual(63);
    expect(a.slice(0, 40)).toBe(b.slice(0, 40));
  });
});

describe('Temporal TLS without a client certificate', () => {
  /** The connection a component builds from its rendered TLS variables (process/env.ts, as the processes do). */
  const connectionOf = (objs: k8s.KubernetesObject[], component: string) => {
    const vars = envOf(objs, component).filter((e) => e.name.startsWith('TEMPORAL_TLS') && e.value !== undefined);
    const env = z
      .object(commonEnvShape)
      .superRefine(refineCommonEnv)
      .parse(Object.fromEntries(vars.map((e) => [e.name, e.value])));
    return temporalConnectionOptions(temporalConfig(env));
  };
  const tlsVars = (objs: k8s.KubernetesObject[], component: string) =>
    Object.fromEntries(
      envOf(objs, component)
        .filter((e) => e.name.startsWith('TEMPORAL_TLS'))
        .map((e) => [e.name, e.value]),
    );

  test('tls.enabled: TLS against the system roots, no certificate, no Secret; the server name when given', () => {
    const objs = render(...WITH_JOBS, 'temporal.tls.enabled=true', 'temporal.tls.serverName=temporal.example.com');
    for (const c of ['worker', 'trigger']) {
      expect(tlsVars(objs, c)).toEqual({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_NAME: 'temporal.example.com' });
      expect(podOf(objs, c).spec!.volumes!.map((v) => v.name)).toEqual(['tmp', 'payload-keys']);
      expect(connectionOf(objs, c).tls).toEqual({ serverNameOverride: 'temporal.example.com', serverRootCACertificate: undefined, clientCertPair: undefined });
    }
    for (const c of ['temporal-setup', 'worker-version']) {
      expect(tlsVars(objs, c)).toEqual({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_NAME: 'temporal.example.com' });
      expect(podOf(objs, c).spec!.volumes).toBeUndefined();
    }
    // Negative control: off by default, nothing of it rendered, no TLS built.
    const plain = render(...WITH_JOBS);
    for (const c of ALL_PODS) expect(tlsVars(plain, c)).toEqual({});
    expect(connectionOf(plain, 'worker').tls).toBeUndefined();
  });

  test('tls.caSecret: the server checked against that CA only (its key caKey), TLS on, still no client certificate', () => {
    const objs = render(...WITH_JOBS, 'temporal.tls.caSecret=temporal-ca', 'temporal.tls.caKey=bundle.pem');
    const pod = podOf(objs, 'worker').spec!;
    const mount = pod.containers[0]!.volumeMounts!.find((m) => m.name === 'temporal-ca')!;
    expect(pod.volumes).toContainEqual({ name: 'temporal-ca', secret: { secretName: 'temporal-ca' } });
    expect(tlsVars(objs, 'worker')).toEqual({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA: `${mount.mountPath}/bundle.pem` });
    expect(tlsVars(objs, 'temporal-setup')).toEqual({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_CA_CERT_PATH: `${mount.mountPath}/bundle.pem` });
    expect(podOf(objs, 'temporal-setup').spec!.volumes).toEqual([{ name: 'temporal-ca', secret: { secretName: 'temporal-ca' } }]);
    expect(() => render('temporal.tls.caSecret=temporal-ca', 'temporal.tls.caKey=')).toThrow(/temporal.tls.caSecret: set temporal.tls.caKey/);
  });

  test("tlsSecret (mTLS): its ca.crt by default as before, another key, or none (caKey '': a Secret without a CA)", () => {
    const mtls = render('temporal.tlsSecret=client');
    expect(tlsVars(mtls, 'worker')).toEqual({
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_CERT: '/etc/temporal-tls/tls.crt',
      TEMPORAL_TLS_KEY: '/etc/temporal-tls/tls.key',
      TEMPORAL_TLS_CA: '/etc/temporal-tls/ca.crt',
    });
    expect(tlsVars(render('temporal.tlsSecret=client', 'temporal.tls.caKey='), 'worker')).toEqual({
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_CERT: '/etc/temporal-tls/tls.crt',
      TEMPORAL_TLS_KEY: '/etc/temporal-tls/tls.key',
    });
    // A CA Secret of its own wins over tlsSecret's key.
    expect(tlsVars(render('temporal.tlsSecret=client', 'temporal.tls.caSecret=ca'), 'worker').TEMPORAL_TLS_CA).toBe('/etc/temporal-ca/ca.crt');
  });
});

describe('values.schema.json types every new value', () => {
  // [--set value, the field helm names]
  const BAD: Array<[string, string]> = [
    ['imagePullSecrets[0]=regcred', "'/imagePullSecrets/0'"],
    ['imagePullSecrets[0].name=Reg_Cred', "'/imagePullSecrets/0/name'"],
    ['podAnnotations.a=1', "'/podAnnotations/a'"],
    ['worker.podLabels.team=not a label value', "'/worker/podLabels/team'"],
    ['priorityClassName=High_Priority', "'/priorityClassName'"],
    ['trigger.nodeSelector.pool=1', "'/trigger/nodeSelector/pool'"],
    ['tolerations[0].operator=Maybe', "'/tolerations/0/operator'"],
    ['worker.affinity.nodeAfinity.x=y', "'/worker/affinity': additional properties 'nodeAfinity'"],
    ['worker.topologySpreadConstraints[0].maxSkew=1', "'/worker/topologySpreadConstraints/0'"],
    ['worker.defaultTopologySpread.enabled=yes', "'/worker/defaultTopologySpread/enabled'"],
    ['trigger.defaultTopologySpread.enabled=true', "'/trigger': additional properties 'defaultTopologySpread'"],
    ['worker.extraEnv[0].value=x', "'/worker/extraEnv/0'"],
    ['worker.extraVolumes[0].name=Bad_Volume', "'/worker/extraVolumes/0/name'"],
    ['trigger.extraVolumeMounts[0].name=ca', "'/trigger/extraVolumeMounts/0'"],
    ['nameOverride=Roll.Out', "'/nameOverride'"],
    [`fullnameOverride=${'f'.repeat(64)}`, "'/fullnameOverride'"],
    ['temporal.tls.enabled=yes', "'/temporal/tls/enabled'"],
    ['temporal.tls.serverName=https://temporal', "'/temporal/tls/serverName'"],
    ['temporal.tls.caSecret=Bad_Name', "'/temporal/tls/caSecret'"],
    ['temporal.tls.caKey=a/b', "'/temporal/tls/caKey'"],
    ['temporal.tls.clientKey=x', "'/temporal/tls': additional properties 'clientKey'"],
  ];
  const atField = (field: string) =>
    new RegExp(`values don't meet the specifications of the schema[\\s\\S]*- at ${field.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`);

  test.each(BAD)('--set %s is refused, naming %s', (value, field) => {
    expect(() => render(value)).toThrow(atField(field));
  });

  test('negative control: a copy of the chart without the schema renders every one of those values', () => {
    const copy = path.join(harnessTempDir('chart-fit-without-schema'), 'vmrollout');
    fs.cpSync(CHART_DIR, copy, { recursive: true });
    fs.rmSync(path.join(copy, 'values.schema.json'));
    for (const [value] of BAD) expect([value, renderChart({ releaseNamespace: NAMESPACE, values: [value], chartDir: copy }).length > 0]).toEqual([value, true]);
  });
});
