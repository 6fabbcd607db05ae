/**
 * VMSingle zones (spec.zones[].vmsingle) against the REAL VictoriaMetrics operator
 * (test/infra/harness/operator-bed/): two zones, each a VMSingle the operator runs as a Deployment
 * (its container run as rendered: single-node victoria-metrics), behind a VMAuth whose read route
 * names both in one `VMSingle` targetRef (crd.objects, as VMDistributed writes it), written by a
 * vmagent with one remote write per VMSingle (`vmsingle-<name>`, as VMDistributed writes it).
 *
 * Under read load through both vmauth pods (a fresh sample written every 200 ms), a rollout of
 * spec.singleVersion: Succeeded with zero failed and zero stale reads; the operator really replaced
 * each VMSingle's pod with the new image tag; each VMSingle's spec changed, and its pod stopped,
 * only once every vmauth pod had LOADED a config without it; never both out; both back at the end.
 * Negative control: with the pod confirmation switched off by the test-only knob, a VMSingle changes
 * while a pod's loaded config still routes reads to it.
 */
import type * as k8s from '@kubernetes/client-node';
import { startRealOperatorBed, type RealOperatorBed } from '../infra/harness/operator-bed';
import { startVmrollout, type Vmrollout } from '../infra/harness/operator-bed/vmrollout';
import { waitFor } from '../infra/harness/processes';
import { zonesOutOfRotation } from '../infra/simulator/render';
import { createObjects, getObject, mergePatch, startTraffic, STALE_AFTER_MS, waitVmdcPhase, type KubeObject, type Traffic } from '../e2e/support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const VMAUTH = 'vm-global';
const VMDC = 'singles';
const SINGLES = ['single-a', 'single-b'];
const FROM = 'v1.150.0';
const TO = 'v1.151.0';
/** Reads come in as a client of single-node VictoriaMetrics asks: its Prometheus API. */
const READ_PATH = '/prometheus/api/v1/query';

let bed: RealOperatorBed;
let vr: Vmrollout;
let kc: k8s.KubeConfig;
let traffic: Traffic;
let baseline: Record<string, string[]>;

const log = (m: string) => {
  if (process.env.E2E_VERBOSE) console.log(`${new Date().toISOString()} ${m}`);
};

const meta = (name: string) => ({ name, namespace: NS });

function objects(): KubeObject[] {
  const vm = (kind: string, name: string, spec: Record<string, unknown>): KubeObject => ({
    apiVersion: 'operator.victoriametrics.com/v1beta1',
    kind,
    metadata: meta(name),
    spec,
  });
  return [
    // port 8428 and a headless Service (the operator's serviceSpec knob): the bed has no kube-proxy, its
    // DNS maps a headless Service's name to the pod, and the VMAuth config names the Service's port.
    // No latency offset and no response cache, as the bed's zones (./zones.ts): a read shows what it holds now.
    ...SINGLES.map((s) =>
      vm('VMSingle', s, {
        image: { tag: FROM },
        port: '8428',
        serviceSpec: { useAsDefault: true, spec: { clusterIP: 'None' } },
        extraArgs: { 'search.latencyOffset': '0s', 'search.disableCache': 'true' },
      }),
    ),
    vm('VMAuth', VMAUTH, {
      replicaCount: 2,
      unauthorizedUserAccessSpec: {
        targetRefs: [{ crd: { kind: 'VMSingle', name: '', namespace: '', objects: SINGLES.map(meta) }, paths: ['/prometheus/api/v1/.+'] }],
      },
    }),
    vm('VMAgent', 'vm-global', {
      replicaCount: 1,
      remoteWrite: SINGLES.map((s) => ({ url: `http://vmsingle-${s}.${NS}.svc:8428/api/v1/write` })),
      extraArgs: { 'remoteWrite.flushInterval': '200ms', 'remoteWrite.retryMinInterval': '2s', 'remoteWrite.retryMaxInterval': '2s', loggerLevel: 'WARN' },
    }),
  ];
}

function vmdc(): KubeObject {
  return {
    apiVersion: 'vmrollout.io/v1alpha1',
    kind: 'VMDistributedCluster',
    metadata: meta(VMDC),
    spec: {
      clusterVersion: 'v1.150.0-cluster',
      singleVersion: FROM,
      zones: SINGLES.map((s, i) => ({ name: `az-${'ab'[i]}`, vmsingle: { name: s } })),
      vmauth: { name: VMAUTH },
      vmagent: { name: 'vm-global' },
      strategy: { order: 'Declared', readDrainDelay: '2s', queueDrainedFor: '6s', pollInterval: '250ms', zoneTimeout: '3m' },
    },
  };
}

const podsRoutingTo = (single: string, t: number): string[] => bed.observer.podsRoutingTo(single, t, baseline);

describe('VMSingle zones under the real operator', () => {
  beforeAll(async () => {
    bed = await startRealOperatorBed({ namespace: NS, zones: [], vmauth: VMAUTH, log });
    kc = bed.kc;
    vr = await startVmrollout({ kc, namespace: NS, vmauth: VMAUTH });
    await createObjects(kc, objects());
    await bed.kubelet.waitPods('vmsingle', SINGLES.length, 120_000);
    await bed.kubelet.waitPods('vmauth', 2, 120_000);
    await bed.kubelet.waitPods('vmagent', 1, 120_000);
    const served = await waitFor(
      () => {
        const last = bed.observer.secrets.at(-1);
        const loaded = Object.values(bed.observer.loadedAt(Date.now()));
        return last && last.routes.unauthorized?.length === SINGLES.length && loaded.length === 2 && loaded.every((h) => h === last.hash) ? last : undefined;
      },
      {
        timeoutMs: 120_000,
        description: 'every vmauth pod to load the config with both VMSingles',
        diagnostics: () => JSON.stringify(bed.observer.secrets.slice(-2)),
      },
    );
    baseline = served.routes;
    traffic = startTraffic({
      vmagentURL: `http://${bed.kubelet.pods('vmagent')[0]!.ip}:8429`,
      vmauthURL: bed.kubelet.pods('vmauth').map((p) => `http://${p.ip}:8427`),
      readPath: READ_PATH,
      staleAfterMs: STALE_AFTER_MS,
    });
    await traffic.waitHealthy(90_000);
    // Generation 1 at the version both run: both skipped.
    await createObjects(kc, [vmdc()]);
    await waitVmdcPhase(kc, NS, VMDC, 1, ['Succeeded'], { timeoutMs: 120_000, fresh: true });
  }, 8 * 60_000);

  afterAll(async () => {
    await traffic?.stop();
    await vr?.stop();
    await bed?.stop();
  }, 120_000);

  it('a singleVersion rollout: Succeeded with no failed or stale read; each VMSingle changed only once every vmauth pod had loaded a config without it', async () => {
    const t0 = Date.now();
    const generation = (await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { singleVersion: TO } })).metadata.generation!;
    const final = await waitVmdcPhase(kc, NS, VMDC, generation, ['Succeeded', 'Failed'], {
      timeoutMs: 6 * 60_000,
      diagnostics: () => `kubelet errors: ${bed.kubelet.errors.slice(-5).join('\n')}`,
    });
    const t1 = Date.now();
    expect({ phase: final.phase, why: final.phase === 'Succeeded' ? '' : JSON.stringify(final) }).toEqual({ phase: 'Succeeded', why: '' });
    expect(final.zones?.map((z) => [z.name, z.phase, z.storageKind])).toEqual([
      ['az-a', 'Done', 'VMSingle'],
      ['az-b', 'Done', 'VMSingle'],
    ]);

    for (const s of SINGLES) {
      // The operator applied the new tag and replaced the pod (its Deployment rolled: a pod stopped).
      expect(((await getObject(kc, 'VMSingle', NS, s)).spec as { image?: { tag?: string } }).image?.tag).toBe(TO);
      const stopped = bed.kubelet.events.filter((e) => e.component === 'vmsingle' && e.instance === s && e.event === 'stopped' && e.at >= t0 && e.at <= t1);
      expect(stopped.length).toBeGreaterThan(0);
      // ...and only once no vmauth pod's loaded config routed reads to it: when its spec changed, and when its pod went.
      const changes = bed.observer.specChanges(s).filter((c) => c.at >= t0 && c.at <= t1);
      expect(changes.length).toBeGreaterThan(0);
      for (const at of [...changes.map((c) => c.at), ...stopped.map((e) => e.at)]) expect([s, at, podsRoutingTo(s, at)]).toEqual([s, at, []]);
    }

    expect(traffic.reads.filter((x) => x.at >= t0 && x.at <= t1).length).toBeGreaterThan(100);
    expect(traffic.failed(t0, t1)).toEqual([]);
    expect(traffic.stale(t0, t1)).toEqual([]);
    const written = bed.observer.secrets.filter((s) => s.at >= t0 && s.at <= t1);
    expect(Math.max(...written.map((s) => zonesOutOfRotation(baseline, s.routes).length))).toBe(1);
    expect(bed.observer.secrets.at(-1)!.routes).toEqual(baseline);
    log(`rollout took ${t1 - t0} ms`);
  });

  it('negative control — pod confirmation off by the test-only knob: a VMSingle changes while a vmauth pod still routes reads to it', async () => {
    vr.knobs.confirmSwitchInPods = false;
    try {
      const t0 = Date.now();
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { singleVersion: 'v1.152.0' } });
      const early = () => SINGLES.flatMap((s) => bed.observer.specChanges(s).filter((c) => c.at >= t0)).filter((c) => podsRoutingTo(c.name, c.at).length > 0);
      await waitFor(() => early().length > 0, { timeoutMs: 4 * 60_000, description: 'a VMSingle changed while a vmauth pod still routed reads to it' });
      log(`negative control: ${JSON.stringify(early())}`);
    } finally {
      vr.knobs.confirmSwitchInPods = true;
    }
  });
});
