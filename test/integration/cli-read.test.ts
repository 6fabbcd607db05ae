/**
 * kubectl vmdc's reading verbs against a real kube-apiserver (+ etcd) with our CRD, run as a person
 * runs them (`npx tsx cli/main.ts`, and the built bundle for `version`): list / get -A across
 * namespaces, -o json|yaml, version with the served CRD versions, status -o json and its timeout.
 */
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION } from '../../api/constants';
import { workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { mergePatchOptions } from '../../kube/custom-objects';
import { installCRDs, startKube, type KubeCluster } from '../infra/harness/kube';

jest.setTimeout(180_000);

const REPO = path.resolve(__dirname, '..', '..');
const VMDC_CRD = path.resolve(REPO, 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');
const PACKAGE_VERSION = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

let kube: KubeCluster;
let custom: k8s.CustomObjectsApi;

type Result = { code: number; stdout: string; stderr: string };

function vmdc(args: string[], command: string[] = ['npx', '--no-install', 'tsx', 'cli/main.ts'], cwd = REPO): Promise<Result> {
  return new Promise((resolve) => {
    execFile(command[0]!, [...command.slice(1), ...args, '--kubeconfig', kube.kubeconfigPath], { cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
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
