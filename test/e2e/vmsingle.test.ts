/**
 * End to end, a fleet of VMCluster and VMSingle zones (spec.zones[].vmsingle, spec.singleVersion) on
 * real processes: real Temporal, kube-apiserver, the real worker and trigger, real vmagent and
 * vmauth; 2 VMCluster zones (a real VictoriaMetrics behind a vmselect front each) and 2 VMSingle
 * zones (a real single-node VictoriaMetrics, the VMSingle's pod itself); the zone simulator plays
 * the operator for both kinds (test/infra/simulator/).
 *
 * The operator renders one url_map entry per targetRef, each of one kind, so a read is load-balanced
 * only across zones of one kind: the VMAuth sends vmselect paths to the VMClusters and everything
 * else (`/prometheus/...`, the VMSingle ref's default paths) to the VMSingles; a VMUser selected by
 * spec.vmuserSelector reads from the VMSingles alone (the operator's single-ref fast path). The
 * VMAgent writes to the VMSingles through their service host `vmsingle-<name>`, with no
 * zones[].remoteWriteURL: the worker finds their queues by that host.
 *
 * Bumping clusterVersion and singleVersion upgrades every zone once, one at a time, each out of
 * reads while it restarts, with no failed or stale read on either path; the VMSingles get
 * spec.image.tag; the worker reads the VMSingles' own request counters to see their reads drained.
 * Negative controls: the same VMSingle named as a zone's `vmcluster` is not taken for one (nothing
 * rolled out, its reads never taken away); and the VMUser reading from the VMSingles, no longer
 * selected, reads from each VMSingle while it is down or behind (the readers do see a VMSingle's
 * outage: the first test's "no failed or stale read" is not vacuous).
 */
import type * as k8s from '@kubernetes/client-node';
import { DEFAULT_TASK_QUEUE } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { queueDirName } from '../../activities/vmagent/url';
import { httpRequest, waitFor } from '../infra/harness/processes';
import type { VmEnvironment } from '../infra/simulator/environment';
import {
  createObjects,
  E2E_STRATEGY,
  eventNames,
  getObject,
  mergePatch,
  startControlPlane,
  startTraffic,
  V1,
  V2,
  V3,
  waitVmdcPhase,
  watchVmdc,
  workerEvents,
  type ControlPlane,
  type KubeObject,
  type Traffic,
} from './support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const VMDC = 'mixed';
const CLUSTERS = ['vm-az-a', 'vm-az-b'];
const SINGLES = ['vm-single-c', 'vm-single-d'];
const ZONES = [...CLUSTERS, ...SINGLES];
/** singleVersion: single-node releases have no -cluster suffix. */
const S1 = 'v1.150.0';
const S2 = 'v1.151.0';
const S3 = 'v1.152.0';
const SINGLE_TOKEN = 'token-singles';
/** A VMSingle's read path through vmauth: its one tenant's Prometheus API. */
const SINGLE_READ_PATH = '/prometheus/api/v1/query';
/** Longer than STALE_AFTER_MS: a zone back in reads before its backlog is searchable reads stale. */
const ZONE_DOWNTIME_MS = 12_000;

const VM_API = 'operator.victoriametrics.com/v1beta1';

let cp: ControlPlane & { onStop(f: () => Promise<void>): void };
let kc: k8s.KubeConfig;
let vm: VmEnvironment;
/** Writes, and reads through the VMClusters' path (vmselect paths, anonymous). */
let clusterReads: Traffic;
/** Reads through the VMSingles' path: anonymous (`/prometheus/...`) and the VMUser's token. */
let singleReads: Traffic;

const waitPhase = (generation: number, phases: string[]) =>
  waitVmdcPhase(kc, NS, VMDC, generation, phases, {
    diagnostics: () =>
      `simulator errors: ${vm.simulator.errors.slice(-5).join('\n')}; reconcile errors: ${JSON.stringify(vm.simulator.reconcileErrors.slice(-3))}`,
  });

function objects(): KubeObject[] {
  const ref = (name: string) => ({ name, namespace: NS });
  return [
    ...CLUSTERS.map((name) => ({
      apiVersion: VM_API,
      kind: 'VMCluster',
      metadata: { name, namespace: NS },
      spec: { clusterVersion: V1, retentionPeriod: '1', vmselect: {}, vminsert: { replicaCount: 2 }, vmstorage: { replicaCount: 2 } },
    })),
    ...SINGLES.map((name) => ({ apiVersion: VM_API, kind: 'VMSingle', metadata: { name, namespace: NS }, spec: { image: { tag: S1 }, retentionPeriod: '1' } })),
    {
      apiVersion: VM_API,
      kind: 'VMAuth',
      metadata: { name: 'vm-global', namespace: NS },
      spec: {
        selectAllByDefault: true,
        unauthorizedUserAccessSpec: {
          targetRefs: [
            { crd: { kind: 'VMCluster/vmselect', ...ref(CLUSTERS[0]!), objects: [ref(CLUSTERS[1]!)] }, paths: ['/select/.+/prometheus/api/v1/query.*'] },
            // No paths: the operator's default for a VMSingle, ["/.*"].
            { crd: { kind: 'VMSingle', ...ref(SINGLES[0]!), objects: [ref(SINGLES[1]!)] } },
          ],
        },
      },
    },
    {
      apiVersion: VM_API,
      kind: 'VMUser',
      metadata: { name: 'reads-singles', namespace: NS, labels: { 'vmrollout.io/reads': 'global' } },
      spec: { bearerToken: SINGLE_TOKEN, targetRefs: [{ crd: { kind: 'VMSingle', name: '', namespace: '', objects: SINGLES.map(ref) } }] },
    },
    {
      apiVersion: VM_API,
      kind: 'VMAgent',
      metadata: { name: 'vm-global', namespace: NS },
      // The real vmagent's flags, in order; a VMSingle's entry is its Service (vmsingle-<name>):
      // the worker finds that queue by host.
      spec: { replicaCount: 1, remoteWrite: ZONES.map((z) => ({ url: vm.remoteWriteURLs[z]! })) },
    },
  ];
}

type Zone = Record<string, unknown> & { name: string };
const ZONE_SPECS: Zone[] = [
  ...CLUSTERS.map((c, i) => ({ name: `az-${'ab'[i]}`, vmcluster: { name: c } })),
  ...SINGLES.map((s, i) => ({ name: `az-${'cd'[i]}`, vmsingle: { name: s } })),
];

beforeAll(async () => {
  cp = await startControlPlane({
    namespace: NS,
    clusters: CLUSTERS,
    singles: SINGLES,
    zoneDowntimeMs: ZONE_DOWNTIME_MS,
    taskQueue: `${DEFAULT_TASK_QUEUE}-e2e-vmsingle`,
  });
  ({ kc, vm } = cp);
  cp.onStop(async () => {
    await clusterReads?.stop();
    await singleReads?.stop();
  });
  await createObjects(kc, objects());
  await waitFor(
    () =>
      vm.simulator.currentConfig?.routes.unauthorized?.length === ZONES.length &&
      vm.simulator.currentConfig.routes[`user:${SINGLE_TOKEN}`]?.length === SINGLES.length &&
      vm.simulator.allPodsServeCurrent(),
    {
      timeoutMs: 30_000,
      description: 'the simulator to render vmauth with every zone (both kinds) and the VMUser, served by the vmauth pod',
      diagnostics: () =>
        `simulator errors: ${vm.simulator.errors.slice(-5).join('\n')}; reconcile errors: ${JSON.stringify(vm.simulator.reconcileErrors.slice(-3))}`,
    },
  );
  const vmauthURL = vm.vmauthPods.map((p) => p.vmauth.url);
  clusterReads = startTraffic({ vmagentURL: vm.vmagent.url, vmauthURL });
  singleReads = startTraffic({ vmagentURL: vm.vmagent.url, vmauthURL, readPath: SINGLE_READ_PATH, bearerTokens: [SINGLE_TOKEN], writes: false });
  await clusterReads.waitHealthy();
  await singleReads.waitHealthy();

  // Generation 1 at the versions every zone runs: nothing to upgrade.
  await createObjects(kc, [
    {
      apiVersion: 'vmrollout.io/v1alpha1',
      kind: 'VMDistributedCluster',
      metadata: { name: VMDC, namespace: NS },
      spec: {
        clusterVersion: V1,
        singleVersion: S1,
        zones: ZONE_SPECS.map((z) => (z.vmcluster ? { ...z, remoteWriteURL: vm.remoteWriteURLs[(z.vmcluster as { name: string }).name] } : z)),
        vmauth: { name: 'vm-global' },
        vmagent: { name: 'vm-global' },
        vmuserSelector: 'vmrollout.io/reads=global',
        strategy: E2E_STRATEGY,
      },
    },
  ]);
  const st = await waitPhase(1, ['Succeeded', 'Failed']);
  expect(st.phase).toBe('Succeeded');
}, 5 * 60_000);

afterAll(() => cp?.stop(), 120_000);

const specOf = async (kind: string, name: string) => (await getObject(kc, kind, NS, name)).spec;

describe('VMSingle zones beside VMCluster zones', () => {
  it('upgrades every zone once (VMSingle: spec.image.tag = singleVersion), one out of reads at a time, with no failed or stale read on either path', async () => {
    // The real vmagent writes to each VMSingle at its Service URL: its queue is the one that URL names.
    const page = (await httpRequest('GET', `${vm.vmagent.url}/metrics`)).body;
    for (const [i, z] of ZONES.entries()) if (SINGLES.includes(z)) expect(page).toContain(`/${await queueDirName(i, vm.remoteWriteURLs[z]!)}"`);
    expect(vm.remoteWriteURLs[SINGLES[0]!]).toBe(`http://vmsingle-${SINGLES[0]}.${NS}.svc:8429/api/v1/write`);

    const baseline = vm.simulator.currentConfig!;
    const configsBefore = vm.simulator.configs.length;
    const restartsBefore = vm.simulator.restarts.length;
    const routesBefore = { vmauth: await specOf('VMAuth', 'vm-global'), vmuser: await specOf('VMUser', 'reads-singles') };
    const eventsBefore = await eventNames(kc, NS, VMDC);
    const watch = watchVmdc(kc, NS, VMDC);

    const t0 = Date.now();
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V2, singleVersion: S2 } });
    const final = await waitPhase(2, ['Succeeded', 'Failed']);
    const t1 = Date.now();
    watch.stop();
    expect({ phase: final.phase, message: final.message }).toMatchObject({ phase: 'Succeeded' });

    // The versions: each VMCluster's clusterVersion, each VMSingle's image tag.
    for (const c of CLUSTERS) expect((await specOf('VMCluster', c))?.clusterVersion).toBe(V2);
    for (const s of SINGLES) expect((await specOf('VMSingle', s))?.image).toEqual({ tag: S2 });
    // Each zone process restarted once (the simulator reconciled the VMSingles' spec changes too).
    const restarts = vm.simulator.restarts.slice(restartsBefore);
    expect(restarts.map((r) => r.zone)).toEqual(ZONES);
    expect(restarts.filter((r) => r.error)).toEqual([]);
    // ...and only while no route sent reads to it.
    for (const r of restarts)
      for (const zs of Object.values(r.routesAtStart)) expect({ zone: r.zone, routed: zs.includes(r.zone) }).toEqual({ zone: r.zone, routed: false });

    // No failed and no stale read on any path and route during the rollout.
    for (const [t, routes] of [
      [clusterReads, ['unauthorized']],
      [singleReads, ['unauthorized', SINGLE_TOKEN]],
    ] as const) {
      for (const route of routes)
        expect({ route, reads: t.reads.filter((r) => r.route === route && r.at >= t0 && r.at <= t1).length > 50 }).toEqual({ route, reads: true });
      expect(t.failed(t0, t1)).toEqual([]);
      expect(t.stale(t0, t1)).toEqual([]);
    }
    expect(clusterReads.writeErrors).toEqual([]);

    // One zone out of vmauth's rendered config at a time; every zone was out once.
    const out = vm.simulator.configs.slice(configsBefore).map((c) => {
      const missing = new Set<string>();
      for (const [route, zs] of Object.entries(baseline.routes)) for (const z of zs) if (!c.routes[route]?.includes(z)) missing.add(z);
      return [...missing];
    });
    for (const m of out) expect(m.length).toBeLessThanOrEqual(1);
    expect([...new Set(out.flat())].sort()).toEqual([...ZONES].sort());
    for (const s of watch.history) expect((s.status.zonesOutOfRotation ?? []).length).toBeLessThanOrEqual(1);
    expect(new Set(watch.history.flatMap((s) => s.status.zonesOutOfRotation ?? []))).toEqual(new Set(['az-a', 'az-b', 'az-c', 'az-d']));
    // The worker read the VMSingles' own request counters (the pod of service vmsingle-<name>) to see their reads drained.
    for (const z of ['az-c', 'az-d']) {
      const said = watch.history.flatMap((s) => s.status.zones?.filter((x) => x.name === z).map((x) => x.message ?? '') ?? []);
      expect({
        zone: z,
        read: said.some((m) => /reads (drained: no new|not seen quiet within readDrainDelay \([\d.]+ s\): \w+ pods still counted)/.test(m)),
      }).toEqual({
        zone: z,
        read: true,
      });
    }

    // The worker found each VMSingle zone's queue by its write host and waited on it.
    for (const z of ['az-c', 'az-d'])
      expect({ zone: z, polled: cp.queueSamples.some((q) => q.zone === z && q.at >= t0 && q.at <= t1) }).toEqual({ zone: z, polled: true });

    // The routes restored exactly, and so is the rendered config.
    expect({ vmauth: await specOf('VMAuth', 'vm-global'), vmuser: await specOf('VMUser', 'reads-singles') }).toEqual(routesBefore);
    await waitFor(() => JSON.stringify(vm.simulator.currentConfig!.config) === JSON.stringify(baseline.config), {
      timeoutMs: 10_000,
      description: "vmauth's rendered config to be the baseline again",
    });
    expect(final.zones?.map((z) => [z.name, z.phase])).toEqual(['az-a', 'az-b', 'az-c', 'az-d'].map((z) => [z, 'Done']));
    expect(final.zonesOutOfRotation ?? []).toEqual([]);
    expect(await workerEvents(kc, NS, VMDC, eventsBefore)).toEqual([
      ...['az-a', 'az-b', 'az-c', 'az-d'].flatMap((z) =>
        ['ZoneLeftReads', 'ZoneUpgraded', 'ZoneOperational', 'ZoneDrained', 'ZoneRejoined'].map((r) => `${r} ${z}`),
      ),
      'RolloutSucceeded',
    ]);
  });

  it('negative control: the same VMSingle named as a zone vmcluster is not taken for one: nothing rolled out, its reads never taken away', async () => {
    const configsBefore = vm.simulator.configs.length;
    const restartsBefore = vm.simulator.restarts.length;
    const t0 = Date.now();
    // az-c first: what it does to that zone is the first thing the rollout does.
    const zones = [{ name: 'az-c', vmcluster: { name: SINGLES[0]! } }, ...ZONE_SPECS.filter((z) => z.name !== 'az-c')].map((z) =>
      z.vmcluster
        ? {
            ...z,
            ...(CLUSTERS.includes((z.vmcluster as { name: string }).name)
              ? { remoteWriteURL: vm.remoteWriteURLs[(z.vmcluster as { name: string }).name] }
              : {}),
          }
        : z,
    );
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V3, singleVersion: S3, zones } });
    // It may end before a poll sees it active: generation 3's status is the one listing az-c first.
    const st = await waitFor(
      async () => {
        const s = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status as VMDistributedClusterStatus | undefined;
        const ours = s?.observedGeneration === 3 && s.workflow?.id.includes('/g3-') && s.zones?.[0]?.name === 'az-c';
        return ours && ['Succeeded', 'Failed'].includes(s.phase ?? '') ? s : undefined;
      },
      { timeoutMs: 5 * 60_000, intervalMs: 100, description: 'generation 3 to end' },
    );
    const t1 = Date.now();
    expect(st.message).toMatch(/VMCluster default\/vm-single-c not found/);
    expect(st.phase).not.toBe('Succeeded');
    // The VMSingle was not touched, its zone process not restarted, and no route lost it.
    expect((await specOf('VMSingle', SINGLES[0]!))?.image).toEqual({ tag: S2 });
    expect(vm.simulator.restarts.slice(restartsBefore).map((r) => r.zone)).not.toContain(SINGLES[0]);
    for (const c of vm.simulator.configs.slice(configsBefore)) expect(c.routes.unauthorized).toContain(SINGLES[0]);
    expect(singleReads.failed(t0, t1)).toEqual([]);
  });

  it('negative control: a reader on the VMSingles that the rollout does not manage (no vmuserSelector) reads from a VMSingle being upgraded', async () => {
    const t0 = Date.now();
    // Back to the zones of generation 2; only singleVersion moves: the VMClusters are up to date.
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, {
      spec: {
        clusterVersion: V2,
        singleVersion: S3,
        vmuserSelector: null,
        zones: ZONE_SPECS.map((z) => (z.vmcluster ? { ...z, remoteWriteURL: vm.remoteWriteURLs[(z.vmcluster as { name: string }).name] } : z)),
      },
    });
    const st = await waitPhase(4, ['Succeeded', 'Failed']);
    const t1 = Date.now();
    expect(st.phase).toBe('Succeeded');
    expect(st.zones?.map((z) => [z.name, z.phase])).toEqual([
      ['az-a', 'Skipped'],
      ['az-b', 'Skipped'],
      ['az-c', 'Done'],
      ['az-d', 'Done'],
    ]);
    for (const s of SINGLES) expect((await specOf('VMSingle', s))?.image).toEqual({ tag: S3 });
    // The managed route (the VMAuth's VMSingle targetRef) kept its reads fresh...
    expect(singleReads.failed(t0, t1).filter((r) => r.route === 'unauthorized')).toEqual([]);
    expect(singleReads.stale(t0, t1).filter((r) => r.route === 'unauthorized')).toEqual([]);
    // ...the VMUser nobody manages now read from each VMSingle while it was down or behind.
    const stray = [...singleReads.failed(t0, t1), ...singleReads.stale(t0, t1)].filter((r) => r.route === SINGLE_TOKEN);
    expect(stray.length).toBeGreaterThan(0);
  });
});
