/**
 * `kubectl vmdc plan` against a real kube-apiserver (+ etcd) with our CRD and the VM operator's:
 * run through the plugin's run() as a person runs it, on a VMDistributedCluster of three zones (one
 * VMCluster already at the desired spec and operational: skipped), a VMAuth and a VMUser. The plan
 * names the workflow's order, the skipped zone, each other zone's route removals, where the gates
 * hold and the predicted duration; and nothing is changed (every resourceVersion as it was).
 */
import * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, VM_GROUP, VM_VERSION } from '../../api/constants';
import type { JsonObject } from '../../api/types';
import { run } from '../../cli/main';
import type { PlannedZone, RolloutPlan } from '../../cli/rollout-plan';
import { mergePatchOptions } from '../../kube/custom-objects';
import { planZoneOrder } from '../../workflows/plan';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { fakeIo } from '../support/fake-io';

jest.setTimeout(180_000);

const VMDC_CRD = require.resolve('../../charts/vmrollout/crds/vmdistributedclusters.vmrollout.io.yaml');
const NS = 'plan';
const ZONES = ['az-a', 'az-b', 'az-c'];

let kube: KubeCluster;
let custom: k8s.CustomObjectsApi;

const plural = (kind: string) => `${kind.toLowerCase()}s`;

async function create(kind: 'VMCluster' | 'VMAuth' | 'VMUser', name: string, spec: JsonObject): Promise<void> {
  await custom.createNamespacedCustomObject({
    group: VM_GROUP,
    version: VM_VERSION,
    namespace: NS,
    plural: plural(kind),
    body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind, metadata: { name }, spec },
  });
}

type Read = { metadata: { resourceVersion: string; generation: number; uid: string } };
const getVM = async (kind: string, name: string) =>
  (await custom.getNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, namespace: NS, plural: plural(kind), name })) as Read;
const getVmdc = async (name: string) =>
  (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name })) as Read;
const createVmdc = (name: string, spec: unknown) =>
  custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NS,
    plural: PLURAL,
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec },
  });

/** Every object's resourceVersion: a plan changes none of them. */
async function versions(): Promise<string[]> {
  const vm = [...ZONES.map((z) => ['VMCluster', `vm-${z}`]), ['VMAuth', 'g'], ['VMUser', 'u']];
  return [
    (await getVmdc('dc')).metadata.resourceVersion,
    ...(await Promise.all(vm.map(async ([k, n]) => `${k}/${n} ${(await getVM(k!, n!)).metadata.resourceVersion}`))),
  ];
}

// The real CRD requires crd.name and crd.namespace: "" when only crd.objects routes.
const objectsRef = (...names: string[]): JsonObject => ({
  crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: names.map((name) => ({ name, namespace: NS })) },
  paths: ['/select/.*'],
});
const nameRef = (name: string): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', name, namespace: NS }, paths: ['/select/.*'] });

const at = (m: number) => new Date(Date.UTC(2026, 11, 1, 10, m)).toISOString();

beforeAll(async () => {
  kube = await startKube();
  await installCRDs(kube.kubeConfig, [VMDC_CRD, VM_OPERATOR_CRDS]);
  custom = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  await kube.kubeConfig.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });

  await create('VMCluster', 'vm-az-a', { clusterVersion: 'v1.150.0-cluster', retentionPeriod: '1' });
  // At the desired spec and operational at its generation: the rollout skips it.
  await create('VMCluster', 'vm-az-b', { clusterVersion: 'v1.151.0-cluster', retentionPeriod: '1' });
  const b = await getVM('VMCluster', 'vm-az-b');
  await custom.patchNamespacedCustomObjectStatus(
    {
      group: VM_GROUP,
      version: VM_VERSION,
      namespace: NS,
      plural: 'vmclusters',
      name: 'vm-az-b',
      body: { status: { updateStatus: 'operational', observedGeneration: b.metadata.generation } },
    },
    mergePatchOptions,
  );
  await create('VMCluster', 'vm-az-c', { clusterVersion: 'v1.150.0-cluster', retentionPeriod: '1' });
  await create('VMAuth', 'g', { unauthorizedUserAccessSpec: { targetRefs: [objectsRef('vm-az-a', 'vm-az-b', 'vm-az-c')] } });
  await create('VMUser', 'u', { username: 'u', targetRefs: [nameRef('vm-az-a'), objectsRef('vm-az-b', 'vm-az-c')] });

  await createVmdc('dc', {
    clusterVersion: 'v1.151.0-cluster',
    zones: [
      { name: 'az-a', vmcluster: { name: 'vm-az-a' }, vmuser: { name: 'u' } },
      { name: 'az-b', vmcluster: { name: 'vm-az-b' } },
      { name: 'az-c', vmcluster: { name: 'vm-az-c' } },
    ],
    vmauth: { name: 'g' },
    vmagent: { name: 'g' },
    strategy: { order: 'Shuffle', gates: ['BeforeFirstZone', 'AfterFirstZone'], pauseBetweenZones: '1m' },
  });
  // The last rollout recorded: two zones upgraded in 4 and 6 minutes (mean 5m), one skipped.
  const status = {
    observedGeneration: 1,
    phase: 'Succeeded',
    zones: [
      { name: 'az-a', phase: 'Done', startedAt: at(0), finishedAt: at(4) },
      { name: 'az-b', phase: 'Skipped' },
      { name: 'az-c', phase: 'Done', startedAt: at(5), finishedAt: at(11) },
    ],
  };
  await custom.patchNamespacedCustomObjectStatus(
    { group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name: 'dc', body: { status } },
    mergePatchOptions,
  );
});

afterAll(async () => {
  await kube?.stop();
});

async function plan(...args: string[]) {
  const io = fakeIo();
  const code = await run(['plan', 'dc', '-n', NS, '--kubeconfig', kube.kubeconfigPath, ...args], io);
  return { code, out: io.out, err: io.err };
}

describe('kubectl vmdc plan', () => {
  it('the order, the skipped zone, the route refs per zone, the gates and the duration; nothing changed', async () => {
    const before = await versions();
    const dc = await getVmdc('dc');
    const order = planZoneOrder(ZONES, 'Shuffle', `${dc.metadata.uid}/${dc.metadata.generation}`);

    const r = await plan('-o', 'json');
    expect([r.code, r.err]).toEqual([0, []]);
    const doc = JSON.parse(r.out.join('\n')) as Omit<RolloutPlan, 'object'> & { verb: string; result: string; generation: number };
    expect(doc).toMatchObject({ verb: 'plan', namespace: NS, name: 'dc', result: 'planned', generation: dc.metadata.generation });
    expect(doc.order.zones).toEqual(order);
    expect(doc.zones.map((z) => z.zone)).toEqual(order);

    const zone = (name: string) => doc.zones.find((z) => z.zone === name)!;
    expect(ZONES.map((z) => [z, zone(z).would])).toEqual([
      ['az-a', 'upgrade'],
      ['az-b', 'skip'],
      ['az-c', 'upgrade'],
    ]);
    const refs = (z: PlannedZone) => z.removals.map((x) => [`${x.route.kind}/${x.route.name}`, x.removed.map((y) => y.ref)]);
    expect(refs(zone('az-a'))).toEqual([
      ['VMAuth/g', ['targetRefs[0].crd.objects[0]']],
      ['VMUser/u', ['targetRefs[0]']],
    ]);
    expect(refs(zone('az-b'))).toEqual([]);
    expect(refs(zone('az-c'))).toEqual([
      ['VMAuth/g', ['targetRefs[0].crd.objects[2]']],
      ['VMUser/u', ['targetRefs[1].crd.objects[1]']],
    ]);
    expect(doc.routes.map((x) => x.readable)).toEqual([true, true]);

    // The skipped zone is no upgrade: BeforeFirstZone holds before the first zone upgraded, AfterFirstZone before the second.
    const upgraded = order.filter((z) => z !== 'az-b');
    expect(order.map((z) => [z, zone(z).gates])).toEqual(
      order.map((z) => [z, z === upgraded[0] ? ['BeforeFirstZone'] : z === upgraded[1] ? ['AfterFirstZone'] : []]),
    );
    // A pause after each zone upgraded but the last in the order.
    expect(order.map((z) => zone(z).pauseAfterMs)).toEqual(order.map((z, i) => (z !== 'az-b' && i < order.length - 1 ? 60_000 : 0)));
    const pauses = upgraded.filter((z) => order.indexOf(z) < order.length - 1).length;
    expect(doc.duration).toEqual({
      predictedMs: 2 * 5 * 60_000 + pauses * 60_000,
      meanZoneMs: 5 * 60_000,
      pastZones: 2,
      zonesToUpgrade: 2,
      pauses,
      pauseBetweenZonesMs: 60_000,
      plusGateWaits: true,
      canaryBakeMs: 0,
    });

    const text = await plan();
    expect(text.code).toBe(0);
    expect(text.out).toContain(`Order: ${order.join(', ')} (Shuffle, seeded by uid/generation ${dc.metadata.generation})`);
    expect(text.out).toContainEqual(expect.stringMatching(/^ {2}\d\. az-b \(VMCluster vm-az-b\): skip — already at the desired spec and operational$/));
    expect(text.out).toContain(`     ⏸ waits at gate BeforeFirstZone before ${upgraded[0]}, for kubectl vmdc promote dc -n ${NS}`);
    expect(text.out.join('\n').replace(/\n +/g, ' ')).toMatch(/\nDuration: about \d+m00s \(2 zones × 5m00s, .*\) \+ the gates' waits\n/);
    const yaml = await plan('-o', 'yaml');
    expect(parseYaml(yaml.out.join('\n'))).toEqual(doc);

    expect(await versions()).toEqual(before);
  });

  it('cannot plan an invalid spec: exit 1 saying which field', async () => {
    // What the CRD's schema lets through and only validateSpec refuses: an overlay nested deeper than vmrollout takes.
    let deep: JsonObject = {};
    for (let i = 0; i < 1000; i++) deep = { a: deep };
    const spec = {
      clusterVersion: 'v1',
      overrideSpec: deep,
      zones: ['az-a', 'az-b'].map((name) => ({ name, vmcluster: { name: `vm-${name}` } })),
      vmauth: { name: 'g' },
      vmagent: { name: 'g' },
    };
    await createVmdc('bad', spec);
    const io = fakeIo();
    expect(await run(['plan', 'bad', '-n', NS, '--kubeconfig', kube.kubeconfigPath], io)).toBe(1);
    expect(io.err).toEqual([expect.stringMatching(/^error: cannot plan: invalid spec: spec\.overrideSpec: is nested too deep/)]);
    expect(io.out).toEqual([]);
  });

  it('a route object that cannot be read is said in the plan (exit 0), the others still planned', async () => {
    const zones = [
      { name: 'az-a', vmcluster: { name: 'vm-az-a' }, vmuser: { name: 'u' } },
      { name: 'az-b', vmcluster: { name: 'vm-az-b' }, vmuser: { name: 'gone' } },
    ];
    await createVmdc('no-user', { clusterVersion: 'v1.151.0-cluster', zones, vmauth: { name: 'g' }, vmagent: { name: 'g' } });
    const io = fakeIo();
    expect(await run(['plan', 'no-user', '-n', NS, '--kubeconfig', kube.kubeconfigPath, '-o', 'json'], io)).toBe(0);
    const doc = JSON.parse(io.out.join('\n')) as RolloutPlan;
    expect(doc.routes.map((r) => [r.route.name, r.readable])).toEqual([
      ['g', true],
      ['u', true],
      ['gone', false],
    ]);
    expect(doc.routes[2]!.reason).toMatch(/^not found: the rollout would fail/);
    const a = doc.zones.find((z) => z.zone === 'az-a')!;
    expect([a.removals.map((r) => r.route.name), a.unknownRoutes.map((r) => r.route.name)]).toEqual([['g', 'u'], ['gone']]);
  });

  it('spec.vmuserSelector: the VMUsers it selects now are planned beside the named routes (others are not)', async () => {
    await custom.createNamespacedCustomObject({
      group: VM_GROUP,
      version: VM_VERSION,
      namespace: NS,
      plural: 'vmusers',
      body: {
        apiVersion: `${VM_GROUP}/${VM_VERSION}`,
        kind: 'VMUser',
        metadata: { name: 'team', labels: { 'vmrollout.io/reads': 'global' } },
        spec: { username: 'team', targetRefs: [objectsRef('vm-az-a', 'vm-az-c')] },
      },
    });
    await create('VMUser', 'unlabelled', { username: 'unlabelled', targetRefs: [objectsRef('vm-az-a', 'vm-az-c')] });
    const zones = [
      { name: 'az-a', vmcluster: { name: 'vm-az-a' } },
      { name: 'az-c', vmcluster: { name: 'vm-az-c' } },
    ];
    await createVmdc('selecting', {
      clusterVersion: 'v1.151.0-cluster',
      zones,
      vmauth: { name: 'g' },
      vmagent: { name: 'g' },
      vmuserSelector: 'vmrollout.io/reads=global',
    });
    const io = fakeIo();
    expect(await run(['plan', 'selecting', '-n', NS, '--kubeconfig', kube.kubeconfigPath, '-o', 'json'], io)).toBe(0);
    const doc = JSON.parse(io.out.join('\n')) as RolloutPlan;
    expect(doc.routes.map((r) => [r.route.kind, r.route.name, r.readable])).toEqual([
      ['VMAuth', 'g', true],
      ['VMUser', 'team', true],
    ]);
    expect(doc.zones.find((z) => z.zone === 'az-a')!.removals.map((r) => r.route.name)).toEqual(['g', 'team']);
  });
});
