/**
 * End to end, the read switch confirmed where reads happen. The whole stack of rollout.test.ts, but
 * with TWO vmauth pods whose config-reloaders get the operator's config Secret only after kubelet's
 * propagation delay (15 s), as on a real cluster: the operator (the zone simulator) marks the
 * VMAuth operational and the VMUsers applied right after it writes the Secret, so the statuses say
 * "switched" long before any vmauth pod serves the new routes.
 *
 * Under read load (a fresh sample written every 200 ms, reads through both pods on every route):
 *  - with the pods' switch confirmed (the default), a rollout upgrades every zone with zero failed
 *    and zero stale reads, and no zone is restarted while any vmauth pod still routes reads to it;
 *  - the negative control — the same rollout with the pod confirmation switched off by the test-only
 *    knob — restarts zones that pods still route reads to, and reads go stale or fail: proof that
 *    this test can see the problem the confirmation prevents.
 */
import type * as k8s from '@kubernetes/client-node';
import type { VmEnvironment } from '../infra/simulator/environment';
import type { RestartRecord } from '../infra/simulator/simulator';
import {
  DEMO_CLUSTERS,
  DEMO_TOKENS,
  getObject,
  mergePatch,
  startE2EStack,
  STALE_AFTER_MS,
  waitVmdcPhase,
  watchVmdc,
  type E2EStack,
  V1,
  V2,
  V3,
} from './support';
import { waitFor } from '../infra/harness/processes';

jest.setTimeout(12 * 60_000);

const NS = 'default';
const VMDC = 'switch';
/** Kubelet's Secret propagation delay of both vmauth pods. */
const PROPAGATION_MS = 15_000;
/**
 * Longer than STALE_AFTER_MS (a zone that serves reads right after its outage, before vmagent has
 * delivered its backlog, answers with a sample at least this old: stale), and shorter than
 * PROPAGATION_MS minus readDrainDelay (without the pod confirmation, the zone is back up while the
 * pods still route reads to it).
 */
const ZONE_DOWNTIME_MS = 11_000;

let stack: E2EStack;
let kc: k8s.KubeConfig;
let vm: VmEnvironment;

const log = (m: string) => {
  if (process.env.E2E_VERBOSE) console.log(`${Date.now()} ${m}`);
};

beforeAll(async () => {
  stack = await startE2EStack({
    namespace: NS,
    vmdcName: VMDC,
    clusters: DEMO_CLUSTERS,
    tokens: DEMO_TOKENS,
    initialVersion: V1,
    zoneDowntimeMs: ZONE_DOWNTIME_MS,
    vmauthPods: 2,
    configPropagationDelayMs: PROPAGATION_MS,
    strategy: { order: 'Declared', readDrainDelay: '2s', queueDrainedFor: '6s', pollInterval: '250ms', zoneTimeout: '3m' },
    taskQueue: 'vmrollout-e2e-switch',
    log,
  });
  ({ kc, vm } = stack);
}, 6 * 60_000);

afterAll(() => stack?.stop(), 120_000);

const waitPhase = (generation: number) =>
  waitVmdcPhase(kc, NS, VMDC, generation, ['Succeeded', 'Failed'], {
    timeoutMs: 8 * 60_000,
    diagnostics: () => `simulator errors: ${vm.simulator.errors.slice(-5).join('\n')}`,
  });

/** Restarts of zones that some vmauth pod still routed reads to when the restart began. */
const restartedWhileRouted = (restarts: RestartRecord[]) => restarts.filter((r) => Object.values(r.routesAtStart).some((zs) => zs.includes(r.zone)));

/** Rolls the VMDistributedCluster out to `version`; returns what happened meanwhile. */
async function rollout(version: string, generation: number) {
  const restartsBefore = vm.simulator.restarts.length;
  const watch = watchVmdc(kc, NS, VMDC);
  const t0 = Date.now();
  await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: version } });
  const final = await waitPhase(generation);
  const t1 = Date.now();
  watch.stop();
  return { t0, t1, final, history: watch.history, restarts: vm.simulator.restarts.slice(restartsBefore) };
}

describe('the read switch under a 15 s Secret propagation delay, 2 vmauth pods', () => {
  it('confirmed in the pods: every zone upgraded with no failed or stale read, never restarted while a pod routed reads to it', async () => {
    const r = await rollout(V2, 2);
    expect(r.final.phase).toBe('Succeeded');
    for (const c of DEMO_CLUSTERS) expect(((await getObject(kc, 'VMCluster', NS, c)).spec as { clusterVersion?: string }).clusterVersion).toBe(V2);
    expect(r.restarts.map((x) => x.zone).sort()).toEqual(DEMO_CLUSTERS);

    // Zero failed and zero stale reads, through both pods, on every route.
    expect(stack.traffic.reads.filter((x) => x.at >= r.t0 && x.at <= r.t1).length).toBeGreaterThan(100);
    expect(stack.traffic.failed(r.t0, r.t1)).toEqual([]);
    expect(stack.traffic.stale(r.t0, r.t1)).toEqual([]);

    // No zone restarted while any vmauth pod still served a config routing reads to it...
    expect(restartedWhileRouted(r.restarts)).toEqual([]);
    // ...although the operator's Secret (and so the statuses) had switched long before the pods did:
    // the hazard was there, and the rollout waited it out.
    for (const x of r.restarts) {
      const left = vm.simulator.configs.filter((c) => c.at >= r.t0 && Object.values(c.routes).every((zs) => !zs.includes(x.zone))).at(0);
      expect(left).toBeDefined();
      const served = vm.vmauthPods.map((p) => p.served.find((s) => s.hash === left!.hash)?.at ?? Infinity);
      expect(Math.min(...served) - left!.at).toBeGreaterThanOrEqual(PROPAGATION_MS - 1_000);
      expect(x.startedAt).toBeGreaterThanOrEqual(Math.max(...served));
    }

    // The status said what was confirmed, and how.
    const messages = r.history.flatMap((s) => (s.status.zones ?? []).map((z) => z.message ?? ''));
    for (const c of DEMO_CLUSTERS) {
      expect(messages.some((m) => new RegExp(`2 vmauth pods run config [0-9a-f]{8} without VMCluster ${c}: 2 by config-reloader content hash`).test(m))).toBe(
        true,
      );
    }
    expect(messages.some((m) => /waiting until every ready vmauth pod runs the operator's config without VMCluster/.test(m))).toBe(true);
  });

  it('negative control — the same rollout with the pod confirmation switched off: zones restart while routed, reads fail or go stale', async () => {
    stack.knobs.confirmSwitchInPods = false;
    const restartsBefore = vm.simulator.restarts.length;
    const t0 = Date.now();
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V3 } });
    // The rollout need not be seen through: a zone restarted while a pod still routed reads to it,
    // and the reads that spoiled, settle it.
    const bad = () => [...stack.traffic.failed(t0, Date.now()), ...stack.traffic.stale(t0, Date.now())];
    await waitFor(() => restartedWhileRouted(vm.simulator.restarts.slice(restartsBefore)).length > 0 && bad().length > 0, {
      timeoutMs: 4 * 60_000,
      description: 'a zone restarted while routed, and a failed or stale read',
    });
    log(`negative control: ${bad().length} bad reads, e.g. ${JSON.stringify(bad().slice(0, 3))}; stale means older than ${STALE_AFTER_MS} ms`);
  });
});
