// `helm install`, `helm upgrade` and `helm uninstall` of the released chart (the packaged .tgz
// scripts/release.sh makes, not the chart directory; its image reference checked against the
// release's image archive, the plugin run from the release file) into a real kube-apiserver, in a
// namespace where Pod Security "restricted" is enforced and warned about, with the temporalSetup hook
// against a real Temporal dev server started WITHOUT vmrollout's search attributes, and the
// worker-version hook making each build current (Worker Versioning, docs/upgrading.md).
//
// No controllers run there: no Pod ever starts (so no `helm install --wait`: nothing would become
// ready), and nothing runs the hooks' Jobs. The test plays the Job controller: it runs each Job's
// container as rendered (its command, arguments and environment; the `temporal` CLI of the version
// the hook's image is) on this machine, then records the Job complete, and helm, waiting for its hook,
// goes on as in a cluster. It plays the ServiceAccount controller too (the namespace's `default`
// ServiceAccount, which the hook's pods run as), and the worker's pods for the worker-version hook:
// a Temporal worker configured from the build's Deployment's environment polls while the hook runs.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundle } from '@temporalio/worker';
import { parse as parseYaml, parseAllDocuments, stringify } from 'yaml';
import { SEARCH_ATTRIBUTE_KEYS } from '../../api/rollout-contract';
import { CHART_DIR, CHART_VM_CRDS, KUBE_VERSION_ARGS } from '../infra/harness/chart-identities';
import { installCRDs, startKube, type KubeCluster } from '../infra/harness/kube';
import { harnessTempDir, waitFor } from '../infra/harness/processes';
import { startTemporalDevEnv } from '../infra/harness/temporal';
import { toolPath } from '../infra/harness/tools';
import { archivedImage, releaseArtefacts, type ReleaseArtefacts } from '../infra/harness/release';
import { workflowBundleOptions } from '../../process/workflow-bundle';
import { loadConfig } from '../../worker/config';
import { workerDeploymentOptions } from '../../worker/main';

const NAMESPACE = 'vmrollout';
const TEMPORAL_NAMESPACE = 'vmrollout';
const RELEASE = 'rel';
const HOOK_JOB = `${RELEASE}-vmrollout-temporal-setup`;
const VERSION_JOB = `${RELEASE}-vmrollout-worker-version`;
const APP_VERSION = (parseYaml(fs.readFileSync(path.join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { appVersion: string }).appVersion;
/** The payload keys Secret the chart generates when no payloadKeysSecret is set. */
const PAYLOAD_KEYS = `${RELEASE}-vmrollout-payload-keys`;
/** The build an upgrade moves to (another image tag). */
const NEXT_BUILD = '9.9.9';
const WORKER_PODS = `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=worker`;
const CRD = 'vmdistributedclusters.vmrollout.io';
const RESTRICTED = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/warn-version': 'latest',
};
const CLUSTER_SCOPED = ['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface HookRun extends Run {
  job: string;
  /** Whether a worker Deployment existed when helm created the hook's Job. */
  workerExisted: boolean;
}

/** Runs a command to its end; a failure is a result (code, output), not an exception. */
async function run(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {}): Promise<Run> {
  const child = promisify(execFile)(command, args, { env: opts.env ?? process.env, maxBuffer: 16 * 1024 * 1024, cwd: opts.cwd });
  if (opts.input !== undefined) child.child.stdin!.end(opts.input);
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

const parseObjects = (manifest: string) =>
  parseAllDocuments(manifest)
    .map((d) => d.toJS() as k8s.KubernetesObject | null)
    .filter((o): o is k8s.KubernetesObject => !!o);

const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (err: { code?: number }) => err.code,
  );

/** The Pod a pod template makes (what PodSecurity admission judges). */
function podOf(template: k8s.V1PodTemplateSpec, name: string): k8s.V1Pod {
  const t = JSON.parse(JSON.stringify(template)) as k8s.V1PodTemplateSpec;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { ...t.metadata, name, namespace: NAMESPACE }, spec: t.spec };
}

describe('helm install, upgrade and uninstall on a real API server', () => {
  let kube: KubeCluster;
  let temporal: TestWorkflowEnvironment;
  let dir: string;
  let valuesFile: string;
  const hookRuns: HookRun[] = [];
  /** By build id: the one worker of each build (a process may run one worker per version and task queue). */
  const workers = new Map<string, { worker: Worker; run: Promise<void> }>();
  let bundle: WorkflowBundle;
  /** The release's artefacts; `chart` is what every helm command here installs. */
  let release: ReleaseArtefacts;
  let chart: string;

  const helm = (...args: string[]) => run(toolPath('helm'), [...args, '--kubeconfig', kube.kubeconfigPath]);
  const temporalCli = (...args: string[]) => run(toolPath('temporal'), [...args, '--address', temporal.address]);
  const core = () => kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
  const batch = () => kube.kubeConfig.makeApiClient(k8s.BatchV1Api);
  const objects = () => k8s.KubernetesObjectApi.makeApiClient(kube.kubeConfig);
  const apps = () => kube.kubeConfig.makeApiClient(k8s.AppsV1Api);
  const workerDeployments = async () => (await apps().listNamespacedDeployment({ namespace: NAMESPACE, labelSelector: WORKER_PODS })).items;

  /** A pod of the build's worker Deployment, as far as Temporal sees it: a worker configured from the Deployment's environment, polling. */
  async function startBuildWorker(buildId: string): Promise<void> {
    if (workers.has(buildId)) return;
    const d = (await workerDeployments()).find((x) => x.metadata!.labels!['vmrollout.io/build-id'] === buildId);
    if (!d) throw new Error(`no worker Deployment of build ${buildId}`);
    const env = Object.fromEntries(
      d.spec!.template.spec!.containers[0]!.env!.filter((e) => e.name.startsWith('TEMPORAL_') || e.name === 'TASK_QUEUE').map((e) => [e.name, e.value]),
    );
    // The keys file as the kubelet mounts it from the payload keys Secret.
    const keysVolume = d.spec!.template.spec!.volumes?.find((v) => v.name === 'payload-keys')?.secret?.secretName;
    if (env.TEMPORAL_PAYLOAD_KEYS_FILE && keysVolume) {
      env.TEMPORAL_PAYLOAD_KEYS_FILE = path.join(dir, `${buildId}-payload-keys`);
      fs.writeFileSync(env.TEMPORAL_PAYLOAD_KEYS_FILE, await payloadKeys(keysVolume));
    }
    const config = loadConfig(env);
    const worker = await Worker.create({
      connection: temporal.nativeConnection,
      namespace: config.temporal.namespace,
      taskQueue: config.taskQueue,
      workflowBundle: bundle,
      ...workerDeploymentOptions(config),
    });
    workers.set(buildId, { worker, run: worker.run() });
  }

  /** The `keys` of a payload keys Secret (by default the one the chart generates). */
  const payloadKeys = async (name = PAYLOAD_KEYS) =>
    Buffer.from((await core().readNamespacedSecret({ name, namespace: NAMESPACE })).data!.keys!, 'base64').toString('utf8');
  let keysAtInstall: string;

  const currentBuild = async () => {
    const r = await temporalCli('worker', 'deployment', 'describe', '--namespace', TEMPORAL_NAMESPACE, '--name', `${RELEASE}-vmrollout`, '-o', 'json');
    expect(r).toMatchObject({ code: 0 });
    return (JSON.parse(r.stdout) as { routingConfig: { currentVersionBuildID: string } }).routingConfig.currentVersionBuildID;
  };

  /** Whether the object exists (404: it does not). */
  const exists = async (o: k8s.KubernetesObject) => {
    const namespace = CLUSTER_SCOPED.includes(o.kind!) ? undefined : (o.metadata!.namespace ?? NAMESPACE);
    const code = await statusOf(objects().read({ apiVersion: o.apiVersion!, kind: o.kind!, metadata: { name: o.metadata!.name!, namespace } }));
    if (code !== 200 && code !== 404) throw new Error(`reading ${o.kind} ${o.metadata!.name}: ${code}`);
    return code === 200;
  };

  /**
   * The Job controller's part for one run of the hook: waits for helm to create the Job, checks its
   * Pod would be admitted, runs its container here, and records the outcome in the Job's status.
   */
  async function playJobController(name: string, helmEnded: () => string | undefined): Promise<HookRun> {
    // A Job of this run: not one an earlier run left behind (helm replaces it: before-hook-creation).
    const fresh = async () => {
      const j = await batch().readNamespacedJob({ name, namespace: NAMESPACE });
      return !j.status?.conditions?.length && j;
    };
    const job = await waitFor(fresh, { timeoutMs: 60_000, description: `helm to create Job ${name}`, abortIf: helmEnded });
    const workerExisted = (await workerDeployments()).length > 0;
    // Its Pod would be admitted under Pod Security "restricted".
    await core().createNamespacedPod({ namespace: NAMESPACE, body: podOf(job.spec!.template, `${name}-probe`), dryRun: 'All' });
    const container = job.spec!.template.spec!.containers[0]!;
    const env: NodeJS.ProcessEnv = { PATH: `${path.dirname(toolPath('temporal'))}:${process.env.PATH}`, HOME: harnessTempDir('hook-home') };
    for (const e of container.env ?? []) {
      if (e.value === undefined) throw new Error(`the hook's ${e.name} is not a plain value: this test cannot provide it`);
      env[e.name] = e.value;
    }
    const result = await run(container.command![0]!, [...container.command!.slice(1), ...(container.args ?? [])], { env });
    // As the Job controller writes it (the API server requires the interim condition first); a
    // failure is recorded too, so that helm ends at once rather than at its timeout.
    const now = new Date();
    const ok = result.code === 0;
    const condition = (type: string): k8s.V1JobCondition => ({
      type,
      status: 'True',
      lastProbeTime: now,
      lastTransitionTime: now,
      reason: 'RunByTest',
      message: 'run by the test',
    });
    const conditions = ok ? [condition('SuccessCriteriaMet'), condition('Complete')] : [condition('FailureTarget'), condition('Failed')];
    const status: k8s.V1JobStatus = { startTime: now, conditions, ...(ok ? { succeeded: 1, completionTime: now } : { failed: 1 }) };
    await batch().replaceNamespacedJobStatus({ name, namespace: NAMESPACE, body: { ...job, status } });
    hookRuns.push({ ...result, job: name, workerExisted });
    return hookRuns[hookRuns.length - 1]!;
  }

  /**
   * `helm install|upgrade` with the hooks: helm and the test's Job controller side by side, the
   * build's worker started once helm has created its Deployment, some seconds after the version hook
   * (which waits for it).
   */
  async function withHooks(buildId: string, ...args: string[]): Promise<Run> {
    let ended: Run | undefined;
    const helmRun = helm(...args).then((r) => (ended = r));
    const helmEnded = () => ended && `helm ${args[0]} ended (${ended.code}) before its hook Job was created: ${ended.stderr}`;
    for (const name of [HOOK_JOB, VERSION_JOB]) {
      const hookRun = playJobController(name, helmEnded);
      if (name === VERSION_JOB)
        setTimeout(() => startBuildWorker(buildId).catch((err: unknown) => process.stderr.write(`build ${buildId}'s worker: ${String(err)}\n`)), 3000);
      const r = await hookRun;
      if (r.code !== 0) throw new Error(`the hook's container failed (${r.code}):\n${r.stdout}${r.stderr}`);
    }
    return helmRun;
  }

  const customAttributes = async () => {
    const r = await temporalCli('operator', 'search-attribute', 'list', '--namespace', TEMPORAL_NAMESPACE, '-o', 'json');
    expect(r).toMatchObject({ code: 0 });
    const all = (JSON.parse(r.stdout) as { customAttributes?: Record<string, string> }).customAttributes ?? {};
    return Object.fromEntries(Object.entries(all).filter(([k]) => k.startsWith('Vmdc')));
  };

  beforeAll(async () => {
    kube = await startKube();
    // The VM operator's CRDs, as in a cluster where it runs (the chart's VMServiceScrape and VMRule).
    await installCRDs(kube.kubeConfig, CHART_VM_CRDS);
    release = releaseArtefacts(APP_VERSION);
    chart = release.chart;
    temporal = await startTemporalDevEnv({ searchAttributes: [] });
    bundle = await bundleWorkflowCode({ ...workflowBundleOptions(), logger: new DefaultLogger('WARN') });
    await core().createNamespace({ body: { metadata: { name: NAMESPACE, labels: RESTRICTED } } });
    await core().createNamespacedServiceAccount({ namespace: NAMESPACE, body: { metadata: { name: 'default' } } });
    // The namespace of the VMAuth and of created objects: helm creates Roles there, not the namespace.
    await core().createNamespace({ body: { metadata: { name: 'monitoring' } } });
    dir = harnessTempDir('chart-install');
    valuesFile = path.join(dir, 'values.yaml');
    fs.writeFileSync(
      valuesFile,
      stringify({
        temporal: { address: temporal.address, namespace: TEMPORAL_NAMESPACE },
        temporalSetup: { enabled: true, createNamespace: true },
        // Under helm's --timeout: a version hook that never sees its workers fails before helm gives up.
        workerVersioning: { pollTimeoutSeconds: 60 },
        watchNamespaces: ['monitoring'],
        createNamespaces: ['monitoring'],
        vmauths: ['monitoring/vm-global'],
        vmagentMetricsAuthSecret: 'vmagent-auth',
        networkPolicy: { enabled: true, egress: { kubeAPIServer: { to: [{ ipBlock: { cidr: '10.0.0.10/32' } }], ports: [{ port: 6443, protocol: 'TCP' }] } } },
      }),
    );
  }, 180_000);
  afterAll(async () => {
    for (const w of workers.values()) w.worker.shutdown();
    await Promise.all([...workers.values()].map((w) => w.run));
    await temporal?.teardown();
    await kube?.stop();
  }, 60_000);

  // sha256sum over the image archive and a few processes: seconds on a loaded machine.
  test("the release: checksums hold; the chart is the checkout's at the release version and defaults to the archive's image; the SBOM lists what the image holds; the plugin runs from its file and its krew manifest names its archive", async () => {
    expect(await run('sha256sum', ['-c', '--quiet', release.sums], { cwd: release.dir })).toMatchObject({ code: 0 });
    const listed = fs
      .readFileSync(release.sums, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+\*?/)[1])
      .sort();
    expect(listed).toEqual(
      fs
        .readdirSync(release.dir)
        .filter((f) => f !== 'SHA256SUMS')
        .sort(),
    );

    const image = archivedImage(release.imageArchive);
    expect(image.refName).toBe(`vmrollout:${APP_VERSION}`);
    expect(fs.readFileSync(release.digest, 'utf8').trim()).toBe(image.digest);
    const shown = parseYaml((await helm('show', 'chart', chart)).stdout) as { version: string; appVersion: string; kubeVersion: string };
    expect(shown).toMatchObject({ version: APP_VERSION, appVersion: APP_VERSION, kubeVersion: '>=1.29.0-0' });
    const rendered = parseObjects((await helm('template', 'r', chart, '--namespace', NAMESPACE, ...KUBE_VERSION_ARGS)).stdout);
    const images = new Set(rendered.flatMap((o) => ((o as k8s.V1Deployment).spec?.template?.spec?.containers ?? []).map((c) => c.image)));
    // The image the chart runs by default is the archive's, under the registry the release is pushed to (docs/releasing.md).
    expect([...images].filter((i) => i?.includes('vmrollout:'))).toEqual([`ghcr.io/vmrollout/vmrollout:${APP_VERSION}`]);

    const sbom = JSON.parse(fs.readFileSync(release.sbom, 'utf8')) as { spdxVersion: string; packages: Array<{ name: string; versionInfo?: string }> };
    expect(sbom.spdxVersion).toMatch(/^SPDX-2\./);
    const inSbom = (name: string) => sbom.packages.find((p) => p.name === name)?.versionInfo;
    const lock = JSON.parse(fs.readFileSync(path.join(CHART_DIR, '..', '..', 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    expect(inSbom('@temporalio/worker')).toBe(lock.packages['node_modules/@temporalio/worker']!.version);
    expect(inSbom('zod')).toBe(lock.packages['node_modules/zod']!.version);
    expect(inSbom('base-files')).toBeDefined(); // a Debian package of the base

    const plugin = await run(process.execPath, [release.plugin, '--help']);
    expect(plugin).toMatchObject({ code: 0 });
    expect(plugin.stdout + plugin.stderr).toContain('kubectl vmdc');
    const krew = parseYaml(fs.readFileSync(release.krewManifest, 'utf8')) as {
      spec: { version: string; platforms: Array<{ uri: string; sha256: string; bin: string }> };
    };
    expect(krew.spec.version).toBe(`v${APP_VERSION}`);
    const sha = (await run('sha256sum', [release.pluginArchive])).stdout.split(' ')[0];
    expect(krew.spec.platforms.map((p) => [p.sha256, p.bin, path.basename(p.uri)])).toEqual([[sha, 'kubectl-vmdc', path.basename(release.pluginArchive)]]);
    const inArchive = (await run('tar', ['-tzf', release.pluginArchive])).stdout.trim().split('\n').sort();
    expect(inArchive).toEqual(['LICENSE', 'kubectl-vmdc', 'kubectl_complete-vmdc']);
    // As kubectl runs it for `kubectl vmdc <TAB>`: the shim from the archive on the PATH, beside the plugin.
    const unpacked = harnessTempDir('plugin-archive');
    expect(await run('tar', ['-xzf', release.pluginArchive, '-C', unpacked])).toMatchObject({ code: 0 });
    const tab = await run('kubectl_complete-vmdc', ['undo', 'x', '-o', ''], {
      env: { PATH: `${unpacked}:${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: unpacked },
    });
    expect(tab).toEqual({ code: 0, stdout: 'json\nyaml\n:4\n', stderr: '' });
  }, 60_000);

  test('bad values: helm install refuses them by name and creates nothing', async () => {
    const r = await helm('install', 'bad', chart, '--namespace', NAMESPACE, '--set', 'image.pullPolicy=Sometimes', '--set', 'worker.replicas=0');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/- at '\/image\/pullPolicy': value must be one of/);
    expect(r.stderr).toMatch(/- at '\/worker\/replicas': minimum: got 0, want 1/);
    expect((await helm('list', '--all', '--namespace', NAMESPACE, '-q')).stdout.trim()).toBe('');
    expect(await exists({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'bad-vmrollout-worker' } })).toBe(false);
  });

  test('helm install: the hook creates the Temporal namespace and registers the search attributes, then every object is created, the Deployments without a PodSecurity warning', async () => {
    // Before: no such Temporal namespace (the dev server has only `default`, with no Vmdc attribute).
    expect((await temporalCli('operator', 'namespace', 'describe', '--namespace', TEMPORAL_NAMESPACE)).code).not.toBe(0);

    const install = await withHooks(APP_VERSION, 'install', RELEASE, chart, '--namespace', NAMESPACE, '--values', valuesFile, '--timeout', '2m');
    expect(install).toMatchObject({ code: 0 });
    expect(install.stderr).not.toMatch(/PodSecurity|[Ww]arning/);
    // pre-install: the setup hook ran before the worker existed; post-install: the version hook after.
    expect(hookRuns.map((r) => [r.job, r.workerExisted])).toEqual([
      [HOOK_JOB, false],
      [VERSION_JOB, true],
    ]);
    // The build's workers polled: it is the current version, new rollouts start on it.
    expect(await currentBuild()).toBe(APP_VERSION);
    expect(await statusOf(batch().readNamespacedJob({ name: VERSION_JOB, namespace: NAMESPACE }))).toBe(404);

    expect(await customAttributes()).toEqual(Object.fromEntries(SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, `INDEXED_VALUE_TYPE_${k.type}`])));
    // The hook Job was removed once it succeeded.
    expect(await statusOf(batch().readNamespacedJob({ name: HOOK_JOB, namespace: NAMESPACE }))).toBe(404);

    const manifest = parseObjects((await helm('get', 'manifest', RELEASE, '--namespace', NAMESPACE)).stdout);
    const kinds = new Set(manifest.map((o) => o.kind));
    // watchNamespaces is set: Roles there, no ClusterRole.
    for (const kind of [
      'ServiceAccount',
      'Role',
      'RoleBinding',
      'Deployment',
      'Service',
      'PodDisruptionBudget',
      'NetworkPolicy',
      'VMServiceScrape',
      'VMRule',
      'ConfigMap',
    ]) {
      expect([kind, kinds.has(kind)]).toEqual([kind, true]);
    }
    for (const o of manifest) expect([o.kind, o.metadata!.name, await exists(o)]).toEqual([o.kind, o.metadata!.name, true]);
    // crds/: created by helm before the templates.
    expect(await exists({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: CRD } })).toBe(true);
    // No payloadKeysSecret in the values: the chart generated the payload key (docs/install.md).
    keysAtInstall = await payloadKeys();
    expect(keysAtInstall).toMatch(/^k-[0-9-]+:[A-Za-z0-9+/]{43}=\n$/);

    // PodSecurity enforces on Pods: each Deployment's Pod is admitted (a dry run: nothing would start it).
    for (const d of manifest.filter((o): o is k8s.V1Deployment => o.kind === 'Deployment')) {
      const pod = await core().createNamespacedPod({ namespace: NAMESPACE, body: podOf(d.spec!.template, `${d.metadata!.name}-probe`), dryRun: 'All' });
      expect(pod.spec?.securityContext?.runAsNonRoot).toBe(true);
    }
  }, 240_000);

  test("negative control: a release whose pods are not hardened is installed with helm printing the API server's PodSecurity warnings", async () => {
    // activation=manual: no version hook to wait for (no worker polls here).
    const r = await helm(
      'install',
      'bare',
      chart,
      '--namespace',
      NAMESPACE,
      '--set',
      'podSecurityContext=null',
      '--set',
      'securityContext=null',
      '--set',
      'networkPolicy.enabled=false',
      '--set',
      'workerVersioning.activation=manual',
    );
    expect(r).toMatchObject({ code: 0 });
    expect(r.stderr).toMatch(/would violate PodSecurity \\?"restricted:latest/); // klog quotes it
    expect(await helm('uninstall', 'bare', '--namespace', NAMESPACE)).toMatchObject({ code: 0 });
    await run(toolPath('kubectl'), [
      '--kubeconfig',
      kube.kubeconfigPath,
      'delete',
      'deployment',
      '-n',
      NAMESPACE,
      '-l',
      'app.kubernetes.io/instance=bare,app.kubernetes.io/component=worker',
    ]);
  }, 120_000);

  test('helm upgrade to another build runs the hooks again (nothing left to create: no error), makes the new build current and keeps the old one running; the documented CRD upgrade applies', async () => {
    const upgrade = await withHooks(
      NEXT_BUILD,
      'upgrade',
      RELEASE,
      chart,
      '--namespace',
      NAMESPACE,
      '--values',
      valuesFile,
      '--set',
      `image.tag=${NEXT_BUILD}`,
      '--set',
      'worker.replicas=3',
      '--set',
      'trigger.replicas=2',
      '--timeout',
      '2m',
    );
    expect(upgrade).toMatchObject({ code: 0 });
    expect(upgrade.stderr).not.toMatch(/PodSecurity|[Ww]arning/);
    expect(hookRuns.slice(2).map((r) => [r.job, r.workerExisted])).toEqual([
      [HOOK_JOB, true],
      [VERSION_JOB, true],
    ]);
    expect(await customAttributes()).toEqual(expect.objectContaining({ VmdcGeneration: 'INDEXED_VALUE_TYPE_INT' }));
    expect(await currentBuild()).toBe(NEXT_BUILD);
    // The generated payload key is the one of the install (lookup): histories written with it stay readable.
    expect(await payloadKeys()).toBe(keysAtInstall);
    // The old build's Deployment is left as it was, for the rollouts pinned to it; the new one has the new values.
    const builds = Object.fromEntries((await workerDeployments()).map((d) => [d.metadata!.labels!['vmrollout.io/build-id'], d.spec!.replicas]));
    expect(builds).toEqual({ [APP_VERSION]: 2, [NEXT_BUILD]: 3 });
    const policy = kube.kubeConfig.makeApiClient(k8s.PolicyV1Api);
    expect((await policy.readNamespacedPodDisruptionBudget({ name: `${RELEASE}-vmrollout-trigger`, namespace: NAMESPACE })).spec!.maxUnavailable).toBe(1);

    // docs/install.md#upgrade-and-uninstall: helm does not upgrade crds/; this applies them.
    const crds = await helm('show', 'crds', chart);
    expect(crds).toMatchObject({ code: 0 });
    const apply = await run(toolPath('kubectl'), ['--kubeconfig', kube.kubeconfigPath, 'apply', '--server-side', '--force-conflicts', '-f', '-'], {
      input: crds.stdout,
    });
    expect(apply).toMatchObject({ code: 0, stdout: expect.stringContaining(`customresourcedefinition.apiextensions.k8s.io/${CRD} serverside-applied`) });
  }, 240_000);

  // `helm rollback` would refuse the old build's Deployment: kept, it is in no release's manifest (docs/upgrading.md#rollback).
  test('rollback, an upgrade to the old tag, makes the old build current again, its Deployment adopted; the new build keeps running', async () => {
    const back = await withHooks(APP_VERSION, 'upgrade', RELEASE, chart, '--namespace', NAMESPACE, '--values', valuesFile, '--timeout', '2m');
    expect(back).toMatchObject({ code: 0 });
    expect(hookRuns.slice(4).map((r) => r.job)).toEqual([HOOK_JOB, VERSION_JOB]);
    expect(await currentBuild()).toBe(APP_VERSION);
    const builds = Object.fromEntries((await workerDeployments()).map((d) => [d.metadata!.labels!['vmrollout.io/build-id'], d.spec!.replicas]));
    expect(builds).toEqual({ [APP_VERSION]: 2, [NEXT_BUILD]: 3 });
  }, 240_000);

  test('helm uninstall removes every object of the release but the worker Deployments, and keeps the CRD; the documented command deletes those', async () => {
    const manifest = parseObjects((await helm('get', 'manifest', RELEASE, '--namespace', NAMESPACE)).stdout);
    expect(await helm('uninstall', RELEASE, '--namespace', NAMESPACE, '--timeout', '2m')).toMatchObject({ code: 0 });
    const isWorker = (o: k8s.KubernetesObject) => o.kind === 'Deployment' && o.metadata!.labels?.['app.kubernetes.io/component'] === 'worker';
    const isKeys = (o: k8s.KubernetesObject) => o.kind === 'Secret' && o.metadata!.name === PAYLOAD_KEYS;
    for (const o of manifest.filter((x) => !isWorker(x) && !isKeys(x)))
      expect([o.kind, o.metadata!.name, await exists(o)]).toEqual([o.kind, o.metadata!.name, false]);
    // Kept (helm.sh/resource-policy): the payload key, for the histories still in Temporal and a reinstall.
    expect(await payloadKeys()).toBe(keysAtInstall);
    // Kept (helm.sh/resource-policy): the workers of both builds. docs/upgrading.md deletes them.
    expect((await workerDeployments()).length).toBe(2);
    const del = await run(toolPath('kubectl'), ['--kubeconfig', kube.kubeconfigPath, 'delete', 'deployment', '-n', NAMESPACE, '-l', WORKER_PODS]);
    expect(del).toMatchObject({ code: 0 });
    expect(await workerDeployments()).toEqual([]);
    expect((await helm('list', '--all', '--namespace', NAMESPACE, '-q')).stdout.trim()).toBe('');
    expect(await exists({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: CRD } })).toBe(true);
    // Nothing of the hooks is left either.
    for (const name of [HOOK_JOB, VERSION_JOB]) expect(await statusOf(batch().readNamespacedJob({ name, namespace: NAMESPACE }))).toBe(404);
  }, 120_000);
});
