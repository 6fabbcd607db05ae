/**
 * vmrollout against the REAL VictoriaMetrics operator (test/infra/harness/operator-bed/): its own binary
 * and CRDs on kube-apiserver + kube-controller-manager + kube-scheduler + kwok, real vmauth pods
 * with the operator's config-reloader, real vmagent and zones, in a network namespace of their own
 * (run by `make test-operator`).
 *
 * Under read load through the vmauth pods (a fresh sample written every 200 ms, read on every route
 * through both pods in turn), every 3-zone clusterVersion rollout:
 *  - Succeeded, with zero failed and zero stale reads;
 *  - every vmauth pod's LOADED config (its config-reloader's content hash) excluded each zone before
 *    that zone's VMCluster changed and while its storage was down, never more than one zone out,
 *    every zone back at the end;
 * first as the demo objects are, then with VMAuth.spec.waitForConfigReload, a VMUser whose
 * targetRef names its zone in crd.name and the next in crd.objects, and a team's VMUser the spec does
 * not name, selected by its label (spec.vmuserSelector), read through with no failed or stale read. Then spec.paused while a zone
 * is out and `temporal workflow cancel`: Cancelled, the zone back in every pod. Last, the negative
 * control: with the pod confirmation switched off by the test-only knob, a VMCluster changes while
 * a pod's loaded config still routes reads to it. Between them, a zone in trafficMode maintenance
 * leaves every pod's loaded config, its VMCluster untouched, and rejoins once read-write again.
 */
import type * as k8s from '@kubernetes/client-node';
import type { VMDistributedClusterStatus, ZonePhase } from '../../api/types';
import { startRealOperatorBed, type RealOperatorBed } from '../infra/harness/operator-bed';
import { UNPULLABLE_TAG_SUFFIX } from '../infra/harness/operator-bed/control-plane';
import { applyDemo } from '../infra/harness/operator-bed/demo';
import { startVmrollout, type Vmrollout } from '../infra/harness/operator-bed/vmrollout';
import { waitFor } from '../infra/harness/processes';
import { zonesOutOfRotation } from '../infra/simulator/render';
import {
  createObjects,
  DEMO_CLUSTERS,
  DEMO_TOKENS,
  getObject,
  mergePatch,
  startTraffic,
  STALE_AFTER_MS,
  V1,
  V2,
  V3,
  V4,
  kubectl,
  temporalCli,
  waitVmdcPhase,
  type Traffic,
} from '../e2e/support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
/** Past the e2e files' V1-V4. */
const V5 = 'v1.154.0-cluster';
const V6 = 'v1.155.0-cluster';
const V7 = 'v1.156.0-cluster';
const VMAUTH = 'vm-global';
const VMDC = 'real';
const VMAUTH_PODS = 2;

let bed: RealOperatorBed;
let vr: Vmrollout;
let kc: k8s.KubeConfig;
let traffic: Traffic;
/** Where the bed's vmagent and vmauth pods answer (readers beyond `traffic`). */
let endpoints: { vmagentURL: string; vmauthURL: string[] };
/** Route → zones of the operator's config with every zone in rotation. */
let baseline: Record<string, string[]>;
/** The VMDistributedCluster's zone name of each VMCluster (the status names zones; the config, VMClusters). */
const zoneOf = new Map<string, string>();

const log = (m: string) => {
  if (process.env.E2E_VERBOSE) console.log(`${new Date().toISOString()} ${m}`);
};

const podsRoutingTo = (zone: string, t: number): string[] => bed.observer.podsRoutingTo(zone, t, baseline);

/** For each zone whose VMCluster changed in [t0, t1]: the vmauth pods whose loaded config still routed reads to it then. */
function podsRoutingAtChange(t0: number, t1: number): Array<{ zone: string; at: number; pods: string[] }> {
  const out: Array<{ zone: string; at: number; pods: string[] }> = [];
  for (const zone of DEMO_CLUSTERS) {
    for (const change of bed.observer.specChanges(zone).filter((c) => c.at >= t0 && c.at <= t1)) {
      out.push({ zone, at: change.at, pods: podsRoutingTo(zone, change.at) });
    }
  }
  return out;
}

/** Zone outages in [t0, t1] (its storage pods replaced) that began while a vmauth pod's loaded config routed reads to the zone. */
function podsRoutingWhenDown(t0: number, t1: number): Array<{ zone: string; at: number; pods: string[] }> {
  return bed.zones.events
    .filter((e) => e.event === 'down' && e.at >= t0 && e.at <= t1)
    .map((e) => ({ zone: e.zone, at: e.at, pods: podsRoutingTo(e.zone, e.at) }))
    .filter((d) => d.pods.length > 0);
}

async function rollout(version: string, spec: Record<string, unknown> = {}) {
  const t0 = Date.now();
  const generation = (await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: version, paused: false, ...spec } })).metadata
    .generation!;
  const final = await waitVmdcPhase(kc, NS, VMDC, generation, ['Succeeded', 'Failed'], {
    timeoutMs: 8 * 60_000,
    diagnostics: () => `kubelet errors: ${bed.kubelet.errors.slice(-5).join('\n')}; zones: ${JSON.stringify(bed.zones.events.slice(-6))}`,
  });
  return { t0, t1: Date.now(), final };
}

async function vmdcStatus(): Promise<VMDistributedClusterStatus | undefined> {
  return (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status as VMDistributedClusterStatus | undefined;
}

/** Waits until the rollout of `generation` has the zone of VMCluster `cluster` in one of `phases`; returns the status. */
function zoneIn(generation: number, cluster: string, phases: ZonePhase[], timeoutMs = 180_000): Promise<VMDistributedClusterStatus> {
  const zone = zoneOf.get(cluster)!;
  return waitFor(
    async () => {
      const st = await vmdcStatus();
      const z = st?.zones?.find((x) => x.name === zone);
      return st?.observedGeneration === generation && z && phases.includes(z.phase) ? st : undefined;
    },
    { timeoutMs, intervalMs: 100, description: `generation ${generation}: zone ${zone} in ${phases.join('/')}` },
  );
}

/**
 * What every rollout under the real operator must show (the file's header). `downBefore`: zones
 * already down when it began (their storage pods were being replaced), so not seen going down.
 */
async function expectSafeRollout(r: { t0: number; t1: number; final: { phase?: string } }, version: string, downBefore: string[] = []): Promise<void> {
  expect(r.final.phase).toBe('Succeeded');
  for (const c of DEMO_CLUSTERS) expect(((await getObject(kc, 'VMCluster', NS, c)).spec as { clusterVersion?: string }).clusterVersion).toBe(version);
  log(`rollout to ${version} took ${r.t1 - r.t0} ms; zone events ${JSON.stringify(bed.zones.events.filter((e) => e.at >= r.t0))}`);

  // The operator really rolled every zone (its storage pods replaced: the zone was down a while).
  const wentDown = bed.zones.events.filter((e) => e.at >= r.t0 && e.at <= r.t1 && e.event === 'down').map((e) => e.zone);
  expect([...new Set([...wentDown, ...downBefore])].sort()).toEqual(DEMO_CLUSTERS);

  // Zero failed and zero stale reads, through both pods, on every route.
  expect(traffic.reads.filter((x) => x.at >= r.t0 && x.at <= r.t1).length).toBeGreaterThan(100);
  expect(traffic.failed(r.t0, r.t1)).toEqual([]);
  expect(traffic.stale(r.t0, r.t1)).toEqual([]);

  // Each VMCluster changed only once every vmauth pod had LOADED a config without it...
  const atChange = podsRoutingAtChange(r.t0, r.t1);
  expect(atChange.map((c) => c.zone).sort()).toEqual(DEMO_CLUSTERS);
  expect(atChange.filter((c) => c.pods.length > 0)).toEqual([]);
  // ...and no zone was down while a pod's loaded config still routed reads to it.
  expect(podsRoutingWhenDown(r.t0, r.t1)).toEqual([]);

  // Never more than one zone out, every zone back at the end.
  const written = bed.observer.secrets.filter((s) => s.at >= r.t0 && s.at <= r.t1);
  expect(Math.max(...written.map((s) => zonesOutOfRotation(baseline, s.routes).length))).toBe(1);
  expect(bed.observer.secrets.at(-1)!.routes).toEqual(baseline);
}

describe('a 3-zone rollout under the real operator', () => {
  // Inside the describe block: test/infra/harness/processes.ts stops every process in a root afterAll.
  beforeAll(async () => {
    const t0 = Date.now();
    bed = await startRealOperatorBed({ namespace: NS, zones: DEMO_CLUSTERS, vmauth: VMAUTH, log });
    kc = bed.kc;
    vr = await startVmrollout({ kc, namespace: NS, vmauth: VMAUTH });
    const demo = await applyDemo(bed, { namespace: NS, initialVersion: V1, vmauthPods: VMAUTH_PODS, vmdcName: VMDC });
    baseline = demo.baseline;
    const vmdc = demo.vmdc;
    for (const z of (vmdc.spec as { zones: Array<{ name: string; vmcluster: { name: string } }> }).zones) zoneOf.set(z.vmcluster.name, z.name);
    vmdc.spec!.strategy = { order: 'Declared', readDrainDelay: '2s', queueDrainedFor: '6s', pollInterval: '250ms', zoneTimeout: '3m' };
    endpoints = { vmagentURL: demo.vmagentURL, vmauthURL: demo.vmauthURLs };
    traffic = startTraffic({ ...endpoints, bearerTokens: DEMO_TOKENS, staleAfterMs: STALE_AFTER_MS });
    await traffic.waitHealthy(60_000);
    log(`bed up in ${Date.now() - t0} ms: ${JSON.stringify(bed.timings)}`);

    // Generation 1 at the version every zone runs: every zone skipped.
    await createObjects(kc, [vmdc]);
    await waitVmdcPhase(kc, NS, VMDC, 1, ['Succeeded'], { timeoutMs: 120_000, fresh: true });
  }, 8 * 60_000);

  afterAll(async () => {
    await traffic?.stop();
    await vr?.stop();
    await bed?.stop();
  }, 120_000);

  it('Succeeded with no failed or stale read; every vmauth pod had loaded a config without the zone before its VMCluster changed', async () => {
    const r = await rollout(V2);
    await expectSafeRollout(r, V2);
  });

  it('the same with VMAuth.spec.waitForConfigReload and a VMUser targetRef naming its zone in crd.name, the others in crd.objects', async () => {
    await mergePatch(kc, 'VMAuth', NS, VMAUTH, { spec: { waitForConfigReload: true } });
    await mergePatch(kc, 'VMUser', NS, 'reads-az-a', {
      spec: { targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: NS, objects: [{ name: 'vm-az-b', namespace: NS }] } }] },
    });
    await waitFor(
      async () => {
        const auth = (await getObject(kc, 'VMAuth', NS, VMAUTH)) as {
          metadata: { generation?: number };
          status?: { observedGeneration?: number; updateStatus?: string };
        };
        const user = (await getObject(kc, 'VMUser', NS, 'reads-az-a')) as { metadata: { generation?: number }; status?: { observedGeneration?: number } };
        const last = bed.observer.secrets.at(-1)!;
        const loaded = Object.values(bed.observer.loadedAt(Date.now()));
        return (
          auth.status?.observedGeneration === auth.metadata.generation &&
          auth.status?.updateStatus === 'operational' &&
          user.status?.observedGeneration === user.metadata.generation &&
          loaded.every((h) => h === last.hash)
        );
      },
      { timeoutMs: 60_000, description: 'the operator to apply the VMAuth and VMUser edits, loaded by every vmauth pod' },
    );
    // The same zones on every route: the new shape names them differently, the config routes them alike.
    expect(bed.observer.secrets.at(-1)!.routes).toEqual(baseline);

    // And a team's own VMUser through every zone, not named in the spec: selected by its label
    // (spec.vmuserSelector), the real operator renders it without each zone in turn.
    await createObjects(kc, [
      {
        apiVersion: 'operator.victoriametrics.com/v1beta1',
        kind: 'VMUser',
        metadata: { name: 'team', namespace: NS, labels: { 'vmrollout.io/reads': 'global' } },
        spec: {
          bearerToken: 'token-team',
          targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: DEMO_CLUSTERS.map((name) => ({ name, namespace: NS })) } }],
        },
      },
    ]);
    const routes = Object.keys(baseline).length;
    await waitFor(
      async () => {
        const last = bed.observer.secrets.at(-1)!;
        return Object.keys(last.routes).length === routes + 1 && Object.values(bed.observer.loadedAt(Date.now())).every((h) => h === last.hash);
      },
      { timeoutMs: 60_000, description: "the operator to render the team's VMUser, loaded by every vmauth pod" },
    );
    baseline = bed.observer.secrets.at(-1)!.routes;
    const team = startTraffic({ ...endpoints, bearerTokens: ['token-team'], staleAfterMs: STALE_AFTER_MS, writes: false });
    try {
      await team.waitHealthy(60_000);
      const r = await rollout(V3, { vmuserSelector: 'vmrollout.io/reads=global' });
      await expectSafeRollout(r, V3);
      expect(team.reads.filter((x) => x.route === 'token-team' && x.at >= r.t0 && x.at <= r.t1).length).toBeGreaterThan(50);
      expect({ failed: team.failed(r.t0, r.t1), stale: team.stale(r.t0, r.t1) }).toEqual({ failed: [], stale: [] });
    } finally {
      await team.stop();
    }
  });

  it('the worker SIGKILLed during its waits, run as the chart runs it (a process, WORKER_INSTANCE): still Succeeded, as safe', async () => {
    const w = await vr.workerAsProcess('vmrollout-worker-7d9f8-x2x4q');
    try {
      const t0 = Date.now();
      const generation = (await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V4 } })).metadata.generation!;
      // Killed in the two long waits of a zone (the operator's own VMCluster rollout; vmagent's queues),
      // each time while that zone is out of reads, and started again as the pod would be.
      const kills: Array<{ cluster: string; step: ZonePhase; out: string[] }> = [];
      for (const [cluster, step] of [
        [DEMO_CLUSTERS[0]!, 'WaitingOperational'],
        [DEMO_CLUSTERS[1]!, 'WaitingForQueue'],
        [DEMO_CLUSTERS[2]!, 'WaitingOperational'],
      ] as const) {
        const st = await zoneIn(generation, cluster, [step]);
        await w.process.kill('SIGKILL');
        kills.push({ cluster, step, out: st.zonesOutOfRotation ?? [] });
        await w.process.restartAfter(1000);
      }
      const [a, b, c] = DEMO_CLUSTERS as [string, string, string];
      expect(kills).toEqual([
        { cluster: a, step: 'WaitingOperational', out: [zoneOf.get(a)] },
        { cluster: b, step: 'WaitingForQueue', out: [zoneOf.get(b)] },
        { cluster: c, step: 'WaitingOperational', out: [zoneOf.get(c)] },
      ]);
      const final = await waitVmdcPhase(kc, NS, VMDC, generation, ['Succeeded', 'Failed'], { timeoutMs: 6 * 60_000 });
      expect(w.process.startups).toHaveLength(4);
      await expectSafeRollout({ t0, t1: Date.now(), final }, V4);
    } finally {
      await w.done();
    }
  });

  it('a VMCluster the real operator fails (its new pods cannot pull their image): the zone stays out, the status says why; a new generation adopts it', async () => {
    const t0 = Date.now();
    const [first, ...rest] = DEMO_CLUSTERS as [string, ...string[]];
    const failed = await rollout(`${V5}${UNPULLABLE_TAG_SUFFIX}`);
    expect(failed.final.phase).toBe('Failed');
    const st = (await vmdcStatus())!;
    const zone = st.zones!.find((z) => z.name === zoneOf.get(first))!;
    // The operator's own reason, from its VMCluster status, in the zone's status.
    expect({ phase: zone.phase, message: zone.message }).toEqual({ phase: 'Failed', message: expect.stringContaining('ErrImagePull') });
    expect(((await getObject(kc, 'VMCluster', NS, first)).status as { updateStatus?: string }).updateStatus).toBe('failed');
    // The zone stays out of reads: in the status, in the operator's config, in every pod's loaded config.
    expect(st.zonesOutOfRotation).toEqual([zoneOf.get(first)]);
    expect(zonesOutOfRotation(baseline, bed.observer.secrets.at(-1)!.routes)).toEqual([first]);
    for (const pod of bed.kubelet.pods('vmauth'))
      expect({ pod: pod.name, out: zonesOutOfRotation(baseline, bed.observer.routesOf(bed.observer.loadedAt(Date.now())[pod.name]!)!) }).toEqual({
        pod: pod.name,
        out: [first],
      });
    // Nothing else was touched.
    for (const c of rest) expect(((await getObject(kc, 'VMCluster', NS, c)).spec as { clusterVersion?: string }).clusterVersion).toBe(V4);

    // The fix, as a new generation: it adopts the zone out of reads (confirms it out in the pods, upgrades it, puts it back).
    const fixed = await rollout(V5);
    await expectSafeRollout(fixed, V5, [first]);
    expect(traffic.failed(t0, Date.now())).toEqual([]);
    expect(traffic.stale(t0, Date.now())).toEqual([]);
  });

  it('trafficMode maintenance: the zone leaves the config every vmauth pod loaded, its VMCluster untouched; back to read-write, it rejoins', async () => {
    const zones = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).spec!.zones as Array<Record<string, unknown>>;
    const withMode = (mode: string | undefined) => zones.map((z) => (z.name === zoneOf.get('vm-az-c') ? { ...z, trafficMode: mode } : z));
    const allLoaded = (description: string) =>
      waitFor(() => Object.values(bed.observer.loadedAt(Date.now())).every((h) => h === bed.observer.secrets.at(-1)!.hash), { timeoutMs: 30_000, description });
    const loadedOut = () =>
      bed.kubelet.pods('vmauth').map((p) => zonesOutOfRotation(baseline, bed.observer.routesOf(bed.observer.loadedAt(Date.now())[p.name]!)!));
    const t0 = Date.now();
    const held = await rollout(V5, { zones: withMode('maintenance') });
    expect(held.final).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: ['az-c'] });
    expect((held.final as VMDistributedClusterStatus).zones!.find((z) => z.name === 'az-c')).toMatchObject({ phase: 'Skipped', trafficMode: 'maintenance' });
    // Out of the operator's config, as every vmauth pod loaded it; its VMCluster not changed.
    await allLoaded('every vmauth pod to load the config without the held zone');
    expect(zonesOutOfRotation(baseline, bed.observer.secrets.at(-1)!.routes)).toEqual(['vm-az-c']);
    expect(loadedOut()).toEqual(bed.kubelet.pods('vmauth').map(() => ['vm-az-c']));
    expect(bed.observer.specChanges('vm-az-c').filter((c) => c.at >= t0)).toEqual([]);
    // Negative control of the hold: read-write again, the zone is taken over from its records and put back.
    const back = await rollout(V5, { zones: withMode(undefined) });
    expect(back.final).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: [] });
    await allLoaded('every vmauth pod to load the config with every zone');
    expect(bed.observer.secrets.at(-1)!.routes).toEqual(baseline);
    expect(loadedOut()).toEqual(bed.kubelet.pods('vmauth').map(() => []));
    expect(traffic.failed(t0, Date.now())).toEqual([]);
    expect(traffic.stale(t0, Date.now())).toEqual([]);
  });

  it('spec.paused while a zone is out, then `temporal workflow cancel`: Cancelled, the zone back, the status what the pods serve', async () => {
    const t0 = Date.now();
    const generation = (await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V6 } })).metadata.generation!;
    const out = await waitFor(
      async () => {
        const st = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status as VMDistributedClusterStatus | undefined;
        return st?.observedGeneration === generation && st.zonesOutOfRotation?.length === 1 ? st : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100, description: 'a zone out of read rotation' },
    );
    const id = out.workflow!.id;
    // Pause as a user would: spec.paused through the API server (the trigger signals the workflow in charge).
    const p = await kubectl(bed.cp.kube.kubeconfigPath, ['-n', NS, 'patch', 'vmdc', VMDC, '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
    expect({ code: p.code, stderr: p.stderr }).toEqual({ code: 0, stderr: '' });
    const paused = await waitFor(
      async () => {
        const st = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status as VMDistributedClusterStatus | undefined;
        return st?.workflow?.id === id && st.phase === 'Paused' ? st : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 200, description: `workflow ${id} Paused` },
    );
    expect(paused.zonesOutOfRotation).toHaveLength(1);
    const c = await temporalCli(vr.temporal.address, vr.temporal.namespace ?? 'default', ['workflow', 'cancel', '-w', id]);
    expect({ code: c.code, stderr: c.stderr }).toEqual({ code: 0, stderr: '' });
    const cancelled = await waitFor(
      async () => {
        const st = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status as VMDistributedClusterStatus | undefined;
        return st?.workflow?.id === id && st.phase === 'Cancelled' ? st : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 200, description: `workflow ${id} Cancelled` },
    );
    // The zone is back: in the operator's config, loaded by every vmauth pod; the status says so.
    expect(cancelled.zonesOutOfRotation ?? []).toEqual([]);
    await waitFor(() => Object.values(bed.observer.loadedAt(Date.now())).every((h) => h === bed.observer.secrets.at(-1)!.hash), {
      timeoutMs: 30_000,
      description: 'every vmauth pod to load the last config',
    });
    expect(bed.observer.secrets.at(-1)!.routes).toEqual(baseline);
    for (const pod of bed.kubelet.pods('vmauth'))
      expect({ pod: pod.name, out: zonesOutOfRotation(baseline, bed.observer.routesOf(bed.observer.loadedAt(Date.now())[pod.name]!)!) }).toEqual({
        pod: pod.name,
        out: [],
      });
    expect(traffic.failed(t0, Date.now())).toEqual([]);
    expect(traffic.stale(t0, Date.now())).toEqual([]);
  });

  it('negative control — pod confirmation off by the test-only knob: a VMCluster changes while a vmauth pod still routes reads to it', async () => {
    // Without waitForConfigReload (the earlier test set it): then the operator marks the VMAuth and
    // VMUsers applied before any pod reloaded, and the statuses alone would let a zone go too early.
    const auth = await mergePatch(kc, 'VMAuth', NS, VMAUTH, { spec: { waitForConfigReload: false } });
    await waitFor(
      async () => {
        const st = (await getObject(kc, 'VMAuth', NS, VMAUTH)).status as { observedGeneration?: number; updateStatus?: string } | undefined;
        return st?.observedGeneration === auth.metadata.generation && st?.updateStatus === 'operational';
      },
      { timeoutMs: 60_000, description: 'the operator to apply waitForConfigReload: false' },
    );
    vr.knobs.confirmSwitchInPods = false;
    try {
      const t0 = Date.now();
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V7, paused: false } });
      await waitFor(() => podsRoutingAtChange(t0, Date.now()).some((c) => c.pods.length > 0), {
        timeoutMs: 4 * 60_000,
        description: 'a VMCluster changed while a vmauth pod still routed reads to it',
      });
      const bad = [...traffic.failed(t0, Date.now()), ...traffic.stale(t0, Date.now())];
      log(`negative control: ${JSON.stringify(podsRoutingAtChange(t0, Date.now()))}; ${bad.length} bad reads`);
    } finally {
      vr.knobs.confirmSwitchInPods = true;
    }
  });
});
