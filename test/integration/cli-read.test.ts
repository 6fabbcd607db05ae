/**
 * kubectl vmdc's reading verbs against a real kube-apiserver (+ etcd) with our CRD, run as a person
 * runs them (`npx tsx cli/main.ts`, and the built bundle for `version`): list / get -A across
 * namespaces, -o json|yaml, version with the served CRD versions, status -o json and its timeout.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, VM_GROUP, VM_VERSION } from '../../api/constants';
import { workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { kubeFor, setClusterVersion } from '../../cli/kube';
import { mergePatchOptions } from '../../kube/custom-objects';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';

jest.setTimeout(180_000);

const REPO = path.resolve(__dirname, '..', '..');
const VMDC_CRD = path.resolve(REPO, 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');
const PACKAGE_VERSION = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

let kube: KubeCluster;
let custom: k8s.CustomObjectsApi;

type Result = { code: number; stdout: string; stderr: string };

function vmdc(args: string[], command: string[] = ['npx', '--no-install', 'tsx', 'cli/main.ts'], cwd = REPO): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      command[0]!,
      [...command.slice(1), ...args, ...(args.includes('--kubeconfig') ? [] : ['--kubeconfig', kube.kubeconfigPath])],
      { cwd, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const spec = {
  clusterVersion: 'v1.151.0-cluster',
  zones: [
    { name: 'az-a', vmcluster: { name: 'vm-az-a' } },
    { name: 'az-b', vmcluster: { name: 'vm-az-b' } },
  ],
  vmauth: { name: 'g' },
  vmagent: { name: 'g' },
};

/** A status as the rollout of generation 1 writes it: its workflow, and its generation in the Ready condition (cli/rollout-end.ts). */
async function createVmdc(namespace: string, name: string, status?: VMDistributedClusterStatus): Promise<void> {
  const created = (await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: PLURAL,
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec },
  })) as { metadata: { uid: string } };
  if (!status) return;
  const workflow = { id: workflowIdFor({ namespace, name, uid: created.metadata.uid, generation: 1 }), runId: 'run-1' };
  const ready = { type: 'Ready', status: 'False', reason: status.phase!, message: '-', lastTransitionTime: new Date().toISOString(), observedGeneration: 1 };
  await custom.patchNamespacedCustomObjectStatus(
    { group: GROUP, version: VERSION, namespace, plural: PLURAL, name, body: { status: { ...status, workflow, conditions: [ready] } } },
    mergePatchOptions,
  );
}

beforeAll(async () => {
  kube = await startKube();
  await installCRDs(kube.kubeConfig, [VMDC_CRD]);
  custom = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
  for (const ns of ['team-a', 'team-b']) await core.createNamespace({ body: { metadata: { name: ns } } });
  await createVmdc('team-a', 'done', { observedGeneration: 1, phase: 'Succeeded', message: 'all zones at v1.151.0-cluster' });
  await createVmdc('team-b', 'moving', {
    observedGeneration: 1,
    phase: 'Progressing',
    currentZone: 'az-b',
    zonesOutOfRotation: ['az-b'],
    zones: [
      { name: 'az-a', phase: 'Done' },
      { name: 'az-b', phase: 'Upgrading' },
    ],
  });
});

afterAll(async () => {
  await kube?.stop();
});

describe('kubectl vmdc list / get -A', () => {
  it('every namespace with -A (get -A is the same), one namespace without; -o json and yaml', async () => {
    const all = await vmdc(['list', '-A']);
    expect([all.code, all.stderr]).toEqual([0, '']);
    const lines = all.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAMESPACE +NAME +PHASE +ZONE\(S\) +OUT +GENERATION +AGE$/);
    expect(lines.slice(1).map((l) => l.split(/ {2,}/).slice(0, 6))).toEqual([
      ['team-a', 'done', 'Succeeded', '2', '-', '1'],
      ['team-b', 'moving', 'Progressing', '2/2 az-b', 'az-b', '1'],
    ]);
    const withoutAge = (out: string) => out.replace(/\S+\n/g, '\n');
    expect(withoutAge((await vmdc(['get', '-A'])).stdout)).toBe(withoutAge(all.stdout));

    const one = await vmdc(['list', '-n', 'team-b']);
    expect(one.stdout.trimEnd().split('\n')).toEqual([expect.stringMatching(/^NAME +PHASE/), expect.stringMatching(/^moving +Progressing/)]);

    const json = JSON.parse((await vmdc(['get', '-A', '-o', 'json'])).stdout) as { items: Array<{ namespace: string; name: string; phase: string }> };
    expect(json.items.map((i) => [i.namespace, i.name, i.phase])).toEqual([
      ['team-a', 'done', 'Succeeded'],
      ['team-b', 'moving', 'Progressing'],
    ]);
    const ageless = (doc: unknown) => ({ items: (doc as typeof json).items.map((i) => ({ ...i, ageSeconds: null })) });
    expect(ageless(parseYaml((await vmdc(['list', '-A', '-o', 'yaml'])).stdout))).toEqual(ageless(json));
    expect((await vmdc(['list', '-n', 'nobody'])).stdout.trim()).toBe('no VMDistributedCluster in namespace nobody');
  });

  it('get NAME -o yaml is the -o json document', async () => {
    const json = JSON.parse((await vmdc(['get', 'moving', '-n', 'team-b', '-o', 'json'])).stdout) as Record<string, unknown>;
    const yaml = parseYaml((await vmdc(['get', 'moving', '-n', 'team-b', '-o', 'yaml'])).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ name: 'moving', phase: 'Progressing', currentZone: 'az-b' });
    expect({ ...yaml, observedAt: null, sourceNote: null }).toEqual({ ...json, observedAt: null, sourceNote: null });
  });
});

describe('kubectl vmdc status', () => {
  it('-o json: one document a line, exit 0 for Succeeded; a rollout that does not end times out (2)', async () => {
    const done = await vmdc(['status', 'done', '-n', 'team-a', '-o', 'json']);
    expect(done.code).toBe(0);
    const docs = done.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { phase: string; ended: string });
    expect(docs.at(-1)).toMatchObject({ phase: 'Succeeded', ended: 'Succeeded' });

    const moving = await vmdc(['status', 'moving', '-n', 'team-b', '--timeout', '2s', '-o', 'json']);
    expect(moving.code).toBe(2);
    expect(JSON.parse(moving.stdout.trim().split('\n')[0]!)).toMatchObject({ phase: 'Progressing', ended: null });
    expect(moving.stderr).toMatch(/timed out after 2s/);
  });
});

describe('kubectl vmdc version', () => {
  it('from the bundle outside the checkout: the version baked at build, and the served CRD versions', async () => {
    execFileSync('npx', ['--no-install', 'tsx', 'cli/build.ts'], { cwd: REPO, stdio: 'pipe' });
    // A copy with no package.json anywhere above it: only the baked constant can name the version.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vmdc-version-'));
    const plugin = path.join(dir, 'kubectl-vmdc');
    fs.copyFileSync(path.join(REPO, 'dist', 'kubectl-vmdc.cjs'), plugin);
    const r = await vmdc(['version'], [process.execPath, plugin], dir);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.trimEnd().split('\n')).toEqual([
      `Plugin:   kubectl-vmdc ${PACKAGE_VERSION}`,
      `Cluster:  ${kube.server}`,
      `CRD:      ${PLURAL}.${GROUP}: served ${VERSION} (preferred ${VERSION})`,
    ]);
    expect(PACKAGE_VERSION).not.toBe('unknown');
    const doc = JSON.parse((await vmdc(['version', '-o', 'json'], [process.execPath, plugin], dir)).stdout) as unknown;
    expect(doc).toMatchObject({ plugin: { version: PACKAGE_VERSION }, cluster: { servedVersions: [VERSION], error: null } });
  });
});

describe('kubectl vmdc get --watch', () => {
  /** The watcher as a process of its own (node --import tsx: Ctrl-C reaches the plugin itself, no npx in between). */
  function watch(args: string[]) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args, '--kubeconfig', kube.kubeconfigPath], { cwd: REPO });
    const docs: Array<{ generation: number; phase: string | null; ended: string | null; workflow: { id: string } | null }> = [];
    let buffered = '';
    const waiters: Array<() => void> = [];
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const l of lines) if (l.trim()) docs.push(JSON.parse(l) as (typeof docs)[number]);
      for (const w of waiters.splice(0)) w();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let exitCode: number | null | undefined;
    void exited.then((c) => {
      exitCode = c;
      for (const w of waiters.splice(0)) w();
    });
    /** Resolves once a document matches (each new line is checked as it comes). */
    async function until(pred: (d: (typeof docs)[number]) => boolean, what: string) {
      const deadline = Date.now() + 30_000;
      while (!docs.some(pred)) {
        if (exitCode !== undefined) throw new Error(`the watch exited (${exitCode}) before ${what}`);
        if (Date.now() > deadline) throw new Error(`no document ${what} in 30 s: ${JSON.stringify(docs)}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    }
    return { child, docs, until, exited, running: () => exitCode === undefined };
  }

  it('keeps watching across rollouts: the next generation is followed through its own workflow, until Ctrl-C (130)', async () => {
    await createVmdc('team-a', 'roll', { observedGeneration: 1, phase: 'Succeeded', message: 'done' });
    const w = watch(['get', 'roll', '-n', 'team-a', '-w', '-o', 'json', '--interval', '500ms', '--temporal-address', '127.0.0.1:1']);
    try {
      await w.until((d) => d.generation === 1 && d.ended === 'Succeeded', 'of generation 1 Succeeded');

      const obj = (await custom.patchNamespacedCustomObject(
        { group: GROUP, version: VERSION, namespace: 'team-a', plural: PLURAL, name: 'roll', body: { spec: { clusterVersion: 'v1.152.0-cluster' } } },
        mergePatchOptions,
      )) as { metadata: { uid: string; generation: number } };
      expect(obj.metadata.generation).toBe(2);
      const g2 = workflowIdFor({ namespace: 'team-a', name: 'roll', uid: obj.metadata.uid, generation: 2 });
      const status = (phase: string) => ({
        observedGeneration: 2,
        phase,
        workflow: { id: g2, runId: 'run-2' },
        conditions: [{ type: 'Ready', status: 'False', reason: phase, message: '-', lastTransitionTime: new Date().toISOString(), observedGeneration: 2 }],
      });
      const writeStatus = (phase: string) =>
        custom.patchNamespacedCustomObjectStatus(
          { group: GROUP, version: VERSION, namespace: 'team-a', plural: PLURAL, name: 'roll', body: { status: status(phase) } },
          mergePatchOptions,
        );
      await writeStatus('Progressing');
      await w.until((d) => d.generation === 2 && d.phase === 'Progressing' && d.workflow?.id === g2, "of generation 2's workflow Progressing");
      await writeStatus('Succeeded');
      await w.until((d) => d.generation === 2 && d.ended === 'Succeeded', 'of generation 2 Succeeded');
      // Still watching after the second rollout ended too: only Ctrl-C ends it.
      expect(w.running()).toBe(true);
      w.child.kill('SIGINT');
      expect(await w.exited).toBe(130);
    } finally {
      w.child.kill('SIGKILL');
    }
  });
});

describe('kubectl vmdc undo', () => {
  it('patches spec.clusterVersion back to status.lastSucceeded as a new generation; refused when nothing is recorded or nothing to undo', async () => {
    await createVmdc('team-b', 'undo-me', { observedGeneration: 1, phase: 'Failed', lastSucceeded: { clusterVersion: 'v1.150.0-cluster', generation: 1 } });
    const r = await vmdc(['undo', 'undo-me', '-n', 'team-b']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.replace(/\n/g, ' ')).toMatch(
      /spec\.clusterVersion v1\.151\.0-cluster → v1\.150\.0-cluster \(the last that succeeded, generation 1\); generation 2/,
    );
    const after = (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'team-b', plural: PLURAL, name: 'undo-me' })) as {
      metadata: { generation: number; resourceVersion: string };
      spec: { clusterVersion: string };
    };
    expect([after.spec.clusterVersion, after.metadata.generation]).toEqual(['v1.150.0-cluster', 2]);

    const again = await vmdc(['undo', 'undo-me', '-n', 'team-b']);
    expect(again.code).toBe(1);
    expect(again.stderr.replace(/\n/g, ' ')).toMatch(/already v1\.150\.0-cluster, the last version that succeeded/);
    const none = await vmdc(['undo', 'moving', '-n', 'team-b']);
    expect(none.code).toBe(1);
    expect(none.stderr.replace(/\n/g, ' ')).toMatch(/no succeeded rollout is recorded in status\.lastSucceeded/);

    // The patch is conditional on what was read: an edit in between is a 409, nothing written.
    const stale = setClusterVersion(kubeFor(kube.kubeConfig, 'team-b'), 'undo-me', 'v1.149.0-cluster', String(Number(after.metadata.resourceVersion) - 1));
    await expect(stale).rejects.toMatchObject({ code: 409 });
  });
});

describe('kubectl vmdc undo / pause -o json|yaml', () => {
  it('undo -o json: one document of the clusterVersion set and the new generation, nothing else on stdout', async () => {
    await createVmdc('team-b', 'undo-json', { observedGeneration: 1, phase: 'Failed', lastSucceeded: { clusterVersion: 'v1.150.0-cluster', generation: 1 } });
    const r = await vmdc(['undo', 'undo-json', '-n', 'team-b', '-o', 'json']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout)).toEqual({
      verb: 'undo',
      namespace: 'team-b',
      name: 'undo-json',
      uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      result: 'set',
      clusterVersion: { from: 'v1.151.0-cluster', to: 'v1.150.0-cluster' },
      succeededGeneration: 1,
      generation: 2,
    });
    // Refused: the reason on stderr, exit 1, and no document.
    const again = await vmdc(['undo', 'undo-json', '-n', 'team-b', '-o', 'json']);
    expect([again.code, again.stdout]).toEqual([1, '']);
  });

  it('pause -o yaml: the spec set, and the signal the trigger sends to the running workflow; again: unchanged; -o wide refused', async () => {
    await createVmdc('team-b', 'pause-me', { observedGeneration: 1, phase: 'Progressing', currentZone: 'az-a' });
    const r = await vmdc(['pause', 'pause-me', '-n', 'team-b', '-o', 'yaml']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const workflowId = workflowIdFor({ namespace: 'team-b', name: 'pause-me', uid: parseYaml(r.stdout).uid, generation: 1 });
    expect(parseYaml(r.stdout)).toEqual({
      verb: 'pause',
      namespace: 'team-b',
      name: 'pause-me',
      uid: expect.any(String),
      paused: true,
      result: 'set',
      generation: 2,
      signal: { name: 'pause', workflowId, sentBy: 'trigger' },
    });
    const again = await vmdc(['pause', 'pause-me', '-n', 'team-b', '-o', 'json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ verb: 'pause', result: 'unchanged', paused: true });
    const wide = await vmdc(['resume', 'pause-me', '-n', 'team-b', '-o', 'wide']);
    expect([wide.code, wide.stdout]).toEqual([3, '']);
    expect(wide.stderr).toMatch(/-o wide: resume prints no table to widen/);
    const resumed = await vmdc(['resume', 'pause-me', '-n', 'team-b', '-o', 'json']);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ result: 'set', paused: false, signal: { name: 'resume', workflowId } });
  });
});

/** A kubeconfig of a new ServiceAccount of `namespace` bound to a Role of `rules` (a token from the TokenRequest API). */
async function serviceAccountKubeconfig(namespace: string, name: string, rules: k8s.V1PolicyRule[]): Promise<string> {
  const core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
  const rbac = kube.kubeConfig.makeApiClient(k8s.RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  });
  const token = (await core.createNamespacedServiceAccountToken({ namespace, name, body: { spec: { audiences: [] } } })).status!.token;
  const cluster = kube.kubeConfig.getCurrentCluster()!;
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vmdc-sa-')), 'kubeconfig');
  fs.writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'c', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData ?? fs.readFileSync(cluster.caFile!).toString('base64') } },
      ],
      users: [{ name, user: { token } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: name, namespace } }],
      'current-context': 'c',
    }),
  );
  return file;
}

describe('kubectl vmdc diff', () => {
  it("each zone's VMCluster spec before/after vmrollout's apply, as a server-side dry run: exit 1 with the diff, 0 when nothing would change, nothing stored", async () => {
    await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS]);
    const ns = 'team-c';
    await kube.kubeConfig.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
    const vmcluster = (name: string, clusterVersion: string) =>
      custom.createNamespacedCustomObject({
        group: VM_GROUP,
        version: VM_VERSION,
        namespace: ns,
        plural: 'vmclusters',
        body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind: 'VMCluster', metadata: { name }, spec: { clusterVersion, retentionPeriod: '1' } },
      });
    await vmcluster('vm-az-a', 'v1.150.0-cluster');
    await vmcluster('vm-az-b', 'v1.151.0-cluster');
    await createVmdc(ns, 'dc');
    const before = (await custom.getNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, namespace: ns, plural: 'vmclusters', name: 'vm-az-a' })) as {
      metadata: { resourceVersion: string };
    };

    const r = await vmdc(['diff', 'dc', '-n', ns]);
    expect(r.code).toBe(1);
    expect(r.stdout.trimEnd().split('\n')).toEqual([
      `--- VMCluster ${ns}/vm-az-a (zone az-a) spec`,
      `+++ VMCluster ${ns}/vm-az-a (zone az-a) spec after vmrollout's apply (server-side dry run)`,
      '@@ -1,2 +1,2 @@',
      '-clusterVersion: v1.150.0-cluster',
      '+clusterVersion: v1.151.0-cluster',
      ' retentionPeriod: "1"',
    ]);
    // A dry run: the object is as it was.
    const after = (await custom.getNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, namespace: ns, plural: 'vmclusters', name: 'vm-az-a' })) as {
      metadata: { resourceVersion: string };
      spec: { clusterVersion: string };
    };
    expect([after.metadata.resourceVersion, after.spec.clusterVersion]).toEqual([before.metadata.resourceVersion, 'v1.150.0-cluster']);

    // The person's own credentials: one who may read but not patch VMClusters is refused the dry run (403, exit 3).
    const reader = await serviceAccountKubeconfig(ns, 'reader', [
      { apiGroups: [GROUP], resources: [PLURAL], verbs: ['get'] },
      { apiGroups: [VM_GROUP], resources: ['vmclusters'], verbs: ['get'] },
    ]);
    const refused = await vmdc(['diff', 'dc', '-n', ns, '--kubeconfig', reader]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/403|forbidden/i);

    await custom.patchNamespacedCustomObject(
      { group: VM_GROUP, version: VM_VERSION, namespace: ns, plural: 'vmclusters', name: 'vm-az-a', body: { spec: { clusterVersion: 'v1.151.0-cluster' } } },
      mergePatchOptions,
    );
    const none = await vmdc(['diff', 'dc', '-n', ns]);
    expect([none.code, none.stdout.trim()]).toEqual([0, "no zone's VMCluster or VMSingle would change (2 dry-run)"]);

    // A zone in maintenance is left alone by rollouts: not dry-run, said (negative control: az-b, the same change, is diffed).
    await custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace: ns,
        plural: PLURAL,
        name: 'dc',
        body: { spec: { clusterVersion: 'v1.152.0-cluster', zones: [{ ...spec.zones[0], trafficMode: 'maintenance' }, spec.zones[1]] } },
      },
      mergePatchOptions,
    );
    const held = await vmdc(['diff', 'dc', '-n', ns]);
    expect(held.code).toBe(1);
    const lines = held.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`# VMCluster ${ns}/vm-az-a (zone az-a): trafficMode maintenance: left alone by rollouts, not diffed`);
    expect(lines).toContain('+clusterVersion: v1.152.0-cluster');
    expect(lines.filter((l) => l.startsWith('---'))).toEqual([`--- VMCluster ${ns}/vm-az-b (zone az-b) spec`]);
  });
});
