/**
 * vmrollout against the REAL VictoriaMetrics operator (test/harness/operator-bed/): its own binary
 * and CRDs on kube-apiserver + kube-controller-manager + kube-scheduler + kwok, real vmauth pods
 * with the operator's config-reloader, real vmagent and zones, in a network namespace of their own.
 *
 * Under read load through the vmauth pods (a fresh sample written every 200 ms, read on every route
 * through both pods in turn), a 3-zone clusterVersion rollout:
 *  - Succeeded, with zero failed and zero stale reads;
 *  - every vmauth pod's LOADED config (its config-reloader's content hash) excluded each zone before
 *    that zone's VMCluster changed, never more than one zone out, every zone back at the end;
 *  - the negative control: the same rollout with the pod confirmation switched off by the test-only
 *    knob changes a VMCluster while a pod's loaded config still routes reads to it.
 */
import type * as k8s from '@kubernetes/client-node';
import { startRealOperatorBed, type RealOperatorBed } from '../harness/operator-bed';
import { startVmrollout, type Vmrollout } from '../harness/operator-bed/vmrollout';
import { waitFor } from '../harness/processes';
import { zonesOutOfRotation } from '../simulator/render';
import {
  createObjects,
  DEMO_CLUSTERS,
  DEMO_MANIFESTS_DIR,
  DEMO_TOKENS,
  getObject,
  loadManifests,
  mergePatch,
  startTraffic,
  STALE_AFTER_MS,
  V1,
  V2,
  V3,
  waitVmdcPhase,
  writeUrlVar,
  type Traffic,
} from '../e2e/support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const VMAUTH = 'vm-global';
const VMDC = 'real';
const VMAUTH_PODS = 2;

let bed: RealOperatorBed;
let vr: Vmrollout;
let kc: k8s.KubeConfig;
let traffic: Traffic;
/** Route → zones of the operator's config with every zone in rotation. */
let baseline: Record<string, string[]>;

const log = (m: string) => {
  if (process.env.E2E_VERBOSE) console.log(`${new Date().toISOString()} ${m}`);
};

/** The vmauth pods whose loaded config (config-reloader content hash) at time t still routed reads to `zone`. */
function podsRoutingTo(zone: string, t: number): string[] {
  const loaded = bed.observer.loadedAt(t);
  return bed.kubelet.pods('vmauth').map((p) => p.name).filter((p) => {
    const routes = loaded[p] === undefined ? undefined : bed.observer.routesOf(loaded[p]!);
    return !routes || !zonesOutOfRotation(baseline, routes).includes(zone);
  });
}

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

async function rollout(version: string, generation: number) {
  const t0 = Date.now();
  await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: version } });
  const final = await waitVmdcPhase(kc, NS, VMDC, generation, ['Succeeded', 'Failed'], {
    timeoutMs: 8 * 60_000,
    diagnostics: () => `kubelet errors: ${bed.kubelet.errors.slice(-5).join('\n')}; zones: ${JSON.stringify(bed.zones.events.slice(-6))}`,
  });
  return { t0, t1: Date.now(), final };
}

describe('a 3-zone rollout under the real operator', () => {
  // Inside the describe block: test/harness/processes.ts stops every process in a root afterAll.
  beforeAll(async () => {
    const t0 = Date.now();
    bed = await startRealOperatorBed({ namespace: NS, zones: DEMO_CLUSTERS, vmauth: VMAUTH, log });
    kc = bed.kc;
    vr = await startVmrollout({ kc, namespace: NS, vmauth: VMAUTH });
    const vars: Record<string, string> = { NAMESPACE: NS, INITIAL_VERSION: V1 };
    for (const z of bed.zones.all()) vars[writeUrlVar(z.name)] = z.writeURL;
    const manifests = loadManifests(DEMO_MANIFESTS_DIR, vars);
    for (const o of manifests) {
      if (o.kind === 'VMAuth') o.spec = { ...o.spec, replicaCount: VMAUTH_PODS };
      // As the simulated bed's vmagent (test/simulator/environment.ts says why), rendered by the operator.
      if (o.kind === 'VMAgent') o.spec = { ...o.spec, extraArgs: { 'remoteWrite.flushInterval': '200ms', 'remoteWrite.retryMinInterval': '2s', 'remoteWrite.retryMaxInterval': '2s', loggerLevel: 'WARN' } };
    }
    const vmdc = manifests.find((o) => o.kind === 'VMDistributedCluster')!;
    vmdc.metadata.name = VMDC;
    vmdc.spec!.strategy = { order: 'Declared', readDrainDelay: '2s', queueDrainedFor: '6s', pollInterval: '250ms', zoneTimeout: '3m' };
    await createObjects(kc, manifests.filter((o) => o !== vmdc));

    // The operator's pods run: both vmauth pods loaded the config with every zone, vmagent writes.
    await bed.kubelet.waitPods('vmauth', VMAUTH_PODS, 120_000);
    await bed.kubelet.waitPods('vmagent', 1, 120_000);
    await bed.kubelet.waitPods('vmselect', DEMO_CLUSTERS.length, 120_000);
    await waitFor(
      () => {
        const last = bed.observer.secrets.at(-1);
        const loaded = Object.values(bed.observer.loadedAt(Date.now()));
        return last && last.routes.unauthorized?.length === DEMO_CLUSTERS.length && loaded.length === VMAUTH_PODS && loaded.every((h) => h === last.hash) ? last : undefined;
      },
      { timeoutMs: 120_000, description: 'every vmauth pod to load the operator config with every zone', diagnostics: () => JSON.stringify({ s: bed.observer.secrets.slice(-2), l: bed.observer.loaded.slice(-4), k: bed.kubelet.errors.slice(-3) }) },
    );
    baseline = bed.observer.secrets.at(-1)!.routes;
    const vmagent = bed.kubelet.pods('vmagent')[0]!;
    traffic = startTraffic({ vmagentURL: `http://${vmagent.ip}:8429`, vmauthURL: bed.kubelet.pods('vmauth').map((p) => `http://${p.ip}:8427`), bearerTokens: DEMO_TOKENS, staleAfterMs: STALE_AFTER_MS });
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
    const r = await rollout(V2, 2);
    expect(r.final.phase).toBe('Succeeded');
    for (const c of DEMO_CLUSTERS) expect(((await getObject(kc, 'VMCluster', NS, c)).spec as { clusterVersion?: string }).clusterVersion).toBe(V2);
    log(`rollout took ${r.t1 - r.t0} ms; zone events ${JSON.stringify(bed.zones.events)}`);

    // The operator really rolled every zone (its storage pods replaced: the zone was down a while).
    expect([...new Set(bed.zones.events.filter((e) => e.at >= r.t0 && e.event === 'down').map((e) => e.zone))].sort()).toEqual(DEMO_CLUSTERS);

    // Zero failed and zero stale reads, through both pods, on every route.
    expect(traffic.reads.filter((x) => x.at >= r.t0 && x.at <= r.t1).length).toBeGreaterThan(100);
    expect(traffic.failed(r.t0, r.t1)).toEqual([]);
    expect(traffic.stale(r.t0, r.t1)).toEqual([]);

    // Each VMCluster changed only once every vmauth pod had LOADED a config without it.
    const atChange = podsRoutingAtChange(r.t0, r.t1);
    expect(atChange.map((c) => c.zone).sort()).toEqual(DEMO_CLUSTERS);
    expect(atChange.filter((c) => c.pods.length > 0)).toEqual([]);
    // ...and no zone was down while a pod's loaded config still routed reads to it.
    expect(podsRoutingWhenDown(r.t0, r.t1)).toEqual([]);

    // Never more than one zone out, every zone back at the end.
    const written = bed.observer.secrets.filter((s) => s.at >= r.t0 && s.at <= r.t1);
    expect(Math.max(...written.map((s) => zonesOutOfRotation(baseline, s.routes).length))).toBe(1);
    expect(bed.observer.secrets.at(-1)!.routes).toEqual(baseline);
  });

  it('negative control — pod confirmation off by the test-only knob: a VMCluster changes while a vmauth pod still routes reads to it', async () => {
    vr.knobs.confirmSwitchInPods = false;
    try {
      const t0 = Date.now();
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V3 } });
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
