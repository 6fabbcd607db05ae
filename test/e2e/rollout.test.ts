/**
 * End to end: real Temporal dev server, real kube-apiserver, 3 real VictoriaMetrics zones,
 * a real vmagent writing every sample to every zone, a real vmauth in front of the zones,
 * the real worker (real rollout workflow + real activities) and the real trigger, in process.
 * The VM operator's part is played by the ZONE SIMULATOR (test/simulator/): it renders the
 * vmauth config from VMAuth/VMUser objects and restarts a zone's process when its VMCluster changes.
 *
 * While a writer pushes a fresh sample every 200 ms and readers query through vmauth (the
 * unauthenticated route and every VMUser's bearer token), bumping clusterVersion must upgrade
 * every zone exactly once with zero failed and zero stale reads, at most one zone out of
 * vmauth's rendered config at any time, and every route restored exactly.
 */
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { DEFAULT_TASK_QUEUE } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { createActivities } from '../../activities';
import { startTrigger, type TriggerHandle } from '../../trigger/main';
import { startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../harness/kube';
import { waitFor } from '../harness/processes';
import { startTemporalDevEnv } from '../harness/temporal';
import { startVmEnvironment, type VmEnvironment } from '../simulator/environment';
import { ANNOTATION_FAIL } from '../simulator/simulator';
import {
  createObjects,
  DEMO_MANIFESTS_DIR,
  getObject,
  installCrdFiles,
  loadManifests,
  mergePatch,
  REPO_ROOT,
  startTraffic,
  watchVmdc,
  writeUrlVar,
  type KubeObject,
  type Traffic,
} from './support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const VMDC = 'demo';
const V1 = 'v1.150.0-cluster';
const V2 = 'v1.151.0-cluster';
const V3 = 'v1.152.0-cluster';
const CLUSTERS = ['vm-az-a', 'vm-az-b', 'vm-az-c'];
const TOKENS = ['token-az-a', 'token-az-b', 'token-az-c'];
const TASK_QUEUE = `${DEFAULT_TASK_QUEUE}-e2e`;
/**
 * Each zone is down this long during its upgrade, well above the normal read lag (VictoriaMetrics
 * makes samples searchable within ~1-5 s; reads older than STALE_AFTER_MS count as stale), so a
 * zone that served reads while down or before its backlog arrived shows up as stale reads.
 */
const ZONE_DOWNTIME_MS = 10_000;
const STALE_AFTER_MS = 7_000;

let kube: KubeCluster;
let kc: k8s.KubeConfig;
let temporal: TestWorkflowEnvironment;
let vm: VmEnvironment;
let worker: Worker | undefined;
let workerRun: Promise<void> | undefined;
let trigger: TriggerHandle | undefined;
let traffic: Traffic | undefined;
let manifests: KubeObject[];

const log = (m: string) => {
  if (process.env.E2E_VERBOSE) console.log(`${Date.now()} ${m}`);
};

async function vmdcStatus(): Promise<{ generation: number; status: VMDistributedClusterStatus }> {
  const o = await getObject(kc, 'VMDistributedCluster', NS, VMDC);
  return { generation: o.metadata.generation ?? 0, status: (o.status ?? {}) as VMDistributedClusterStatus };
}

const TERMINAL = ['Succeeded', 'Failed', 'Cancelled', 'Superseded', 'Invalid'];

/**
 * Waits until the workflow of `generation` reports one of `phases`. The trigger records the new
 * generation (observedGeneration, workflow id) before that workflow writes its first phase, so
 * the previous generation's terminal phase is not taken for this one's: unless `fresh`, an
 * active (non-terminal) phase of this generation must have been seen first.
 */
async function waitPhase(generation: number, phases: string[], { timeoutMs = 5 * 60_000, fresh = false } = {}): Promise<VMDistributedClusterStatus> {
  let seenActive = fresh;
  return waitFor(
    async () => {
      const { status } = await vmdcStatus();
      if (status.observedGeneration !== generation || !status.workflow?.id.includes(`/g${generation}-`)) return undefined;
      if (!TERMINAL.includes(status.phase ?? '')) seenActive = true;
      return seenActive && phases.includes(status.phase ?? '') ? status : undefined;
    },
    {
      timeoutMs,
      intervalMs: 100,
      description: `VMDistributedCluster ${VMDC} generation ${generation} to reach phase ${phases.join('|')}`,
      diagnostics: () => `simulator errors: ${vm.simulator.errors.slice(-5).join('\n')}`,
    },
  );
}

beforeAll(async () => {
  kube = await startKube();
  kc = kube.kubeConfig;
  await installCrdFiles(kc, VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds'));
  temporal = await startTemporalDevEnv();
  vm = await startVmEnvironment({ kubeConfig: kc, namespace: NS, vmclusters: CLUSTERS, vmagentName: 'vm-global', vmauthName: 'vm-global', zoneDowntimeMs: ZONE_DOWNTIME_MS, log });

  const vars: Record<string, string> = { NAMESPACE: NS, INITIAL_VERSION: V1 };
  for (const c of CLUSTERS) vars[writeUrlVar(c)] = vm.remoteWriteURLs[c]!;
  manifests = loadManifests(DEMO_MANIFESTS_DIR, vars);
  const vmdc = manifests.find((o) => o.kind === 'VMDistributedCluster')!;
  vmdc.metadata.name = VMDC;
  vmdc.spec!.strategy = { order: 'Declared', readDrainDelay: '1s', queueDrainedFor: '2s', pollInterval: '250ms', zoneTimeout: '2m' };

  // The VM side first: zones operational, vmauth rendered with every zone, traffic healthy.
  await createObjects(kc, manifests.filter((o) => o.kind !== 'VMDistributedCluster'));
  await waitFor(() => vm.simulator.currentConfig?.routes.unauthorized?.length === 3 && Object.keys(vm.simulator.currentConfig.routes).length === 4, {
    timeoutMs: 30_000,
    description: 'the simulator to render vmauth with every zone and every VMUser',
  });
  traffic = startTraffic({ vmagentURL: vm.vmagent.url, vmauthURL: vm.vmauth.url, bearerTokens: TOKENS, staleAfterMs: STALE_AFTER_MS });
  await traffic.waitHealthy();

  // The control plane: the real worker (workflow + activities) and the real trigger.
  worker = await Worker.create({
    connection: temporal.nativeConnection,
    namespace: temporal.namespace ?? 'default',
    taskQueue: TASK_QUEUE,
    workflowsPath: require.resolve('../../workflows'),
    activities: createActivities({ kubeConfig: kc, temporalClient: temporal.client }),
  });
  workerRun = worker.run();
  trigger = await startTrigger(
    {
      temporal: { address: temporal.address, namespace: temporal.namespace ?? 'default' },
      taskQueue: TASK_QUEUE,
      watchNamespaces: [NS],
      metricsPort: 0,
      logLevel: 'warn',
      relistIntervalMs: 60_000,
      watchIdleTimeoutMs: 60_000,
    },
    { kubeConfig: kc, temporalClient: temporal.client, serveMetrics: false },
  );
  await trigger.synced;

  // Generation 1 at the version every zone already runs: nothing to upgrade, every zone skipped.
  await createObjects(kc, [vmdc]);
  await waitPhase(1, ['Succeeded'], { fresh: true });
}, 5 * 60_000);

afterAll(async () => {
  await traffic?.stop();
  await trigger?.stop().catch(() => {});
  if (worker && worker.getState() === 'RUNNING') worker.shutdown();
  await workerRun?.catch(() => {});
  await vm?.stop();
  await temporal?.teardown();
  await kube?.stop();
}, 120_000);

const specOf = async (kind: string, name: string) => (await getObject(kc, kind, NS, name)).spec;

describe('rollout of a 3-zone VMDistributedCluster', () => {
  it('upgrades every zone once, with no failed or stale read and at most one zone out of reads', async () => {
    const vmauthBefore = await specOf('VMAuth', 'vm-global');
    const usersBefore = await Promise.all(TOKENS.map((_, i) => specOf('VMUser', `reads-${['az-a', 'az-b', 'az-c'][i]}`)));
    const baseline = vm.simulator.currentConfig!;
    const configsBefore = vm.simulator.configs.length;
    const restartsBefore = vm.simulator.restarts.length;
    const watch = watchVmdc(kc, NS, VMDC, (s) => log(`vmdc g${s.generation} ${s.status.phase} zone=${s.status.currentZone} out=${s.status.zonesOutOfRotation}`));

    const t0 = Date.now();
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V2 } });
    const final = await waitPhase(2, ['Succeeded']);
    const t1 = Date.now();
    watch.stop();

    // Every zone's VMCluster carries the new version, and its process was restarted exactly once.
    for (const c of CLUSTERS) expect((await specOf('VMCluster', c))?.clusterVersion).toBe(V2);
    const restarts = vm.simulator.restarts.slice(restartsBefore);
    expect(restarts.map((r) => r.zone).sort()).toEqual(CLUSTERS);
    expect(restarts.filter((r) => r.error)).toEqual([]);

    // No failed and no stale read, on any route, during the whole rollout.
    expect(traffic!.reads.filter((r) => r.at >= t0 && r.at <= t1).length).toBeGreaterThan(50);
    expect(traffic!.failed(t0, t1)).toEqual([]);
    expect(traffic!.stale(t0, t1)).toEqual([]);
    expect(traffic!.writeErrors).toEqual([]);

    // At most one zone out of vmauth's rendered config at any time; each zone left exactly once.
    const configs = vm.simulator.configs.slice(configsBefore);
    const out = configs.map((c) => {
      const missing = new Set<string>();
      for (const [route, zs] of Object.entries(baseline.routes)) for (const z of zs) if (!c.routes[route]?.includes(z)) missing.add(z);
      return [...missing];
    });
    for (const m of out) expect(m.length).toBeLessThanOrEqual(1);
    expect(new Set(out.flat())).toEqual(new Set(CLUSTERS));

    // A zone was restarted only while no route sent reads to it.
    for (const r of restarts) for (const zs of Object.values(r.routesAtStart)) expect(zs).not.toContain(r.zone);

    // Routes restored exactly: the objects and the rendered config are what they were.
    expect(await specOf('VMAuth', 'vm-global')).toEqual(vmauthBefore);
    expect(await Promise.all(['az-a', 'az-b', 'az-c'].map((z) => specOf('VMUser', `reads-${z}`)))).toEqual(usersBefore);
    expect(vm.simulator.currentConfig!.config).toEqual(baseline.config);

    // The status tells the story: every zone Done, nothing out of rotation.
    expect(final.zones?.map((z) => [z.name, z.phase])).toEqual([
      ['az-a', 'Done'],
      ['az-b', 'Done'],
      ['az-c', 'Done'],
    ]);
    expect(final.zonesOutOfRotation ?? []).toEqual([]);
    // And the status said which zone was out while it was out.
    const seenOut = new Set(watch.history.flatMap((s) => s.status.zonesOutOfRotation ?? []));
    expect(seenOut).toEqual(new Set(['az-a', 'az-b', 'az-c']));
    for (const s of watch.history) expect((s.status.zonesOutOfRotation ?? []).length).toBeLessThanOrEqual(1);
  });

  it('a zone whose VMCluster fails: phase Failed, the zone stays out of reads, the status says so, reads stay fresh', async () => {
    await mergePatch(kc, 'VMCluster', NS, 'vm-az-b', { metadata: { annotations: { [ANNOTATION_FAIL]: 'true' } } });
    const t0 = Date.now();
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V3 } });
    const st = await waitPhase(3, ['Failed']);
    const t1 = Date.now();

    expect(st.zonesOutOfRotation).toEqual(['az-b']);
    expect(st.zones?.find((z) => z.name === 'az-a')?.phase).toBe('Done');
    const b = st.zones?.find((z) => z.name === 'az-b');
    expect(b?.phase).toBe('Failed');
    expect(`${st.message ?? ''} ${b?.message ?? ''}`).toMatch(/vm-az-b|az-b/);
    expect(st.zones?.find((z) => z.name === 'az-c')?.phase).not.toBe('Done');
    expect((await specOf('VMCluster', 'vm-az-c'))?.clusterVersion).toBe(V2); // never moved on

    // vmauth no longer routes to the failed zone, on any route; the others still serve fresh reads.
    for (const zs of Object.values(vm.simulator.currentConfig!.routes)) expect(zs).not.toContain('vm-az-b');
    await new Promise((r) => setTimeout(r, 2000));
    expect(traffic!.failed(t0, Date.now())).toEqual([]);
    const stale = traffic!.stale(t0, Date.now());
    if (stale.length) log(`stale: ${JSON.stringify(stale)} restarts: ${JSON.stringify(vm.simulator.restarts)}`);
    expect(stale).toEqual([]);
    expect(t1).toBeGreaterThan(t0);
  });
});
