/**
 * The switch confirmed where reads happen, by the real activities, against the zone simulator
 * playing operator v0.74.1 (real kube-apiserver with the operator's CRDs, real vmauth pods with the
 * config-reloader stand-in and a Secret propagation delay, real VictoriaMetrics zones behind
 * vmselect fronts):
 *  - confirmSwitch returns only once every ready pod serves the Secret's config — not when the
 *    statuses say applied — by content hash, or (a pod without the metric) by vmauth's reload
 *    metrics, or by the bounded wait, and says which;
 *  - it waits while the Secret still routes the zone, saying so;
 *  - waitReadsDrained sees the zone's vmselect quiet only once requests stop reaching it.
 */
import * as k8s from '@kubernetes/client-node';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import { createActivities } from '../../activities';
import { configSecretName } from '../../activities/vmauth/config';
import { secretChangedAt } from '../../activities/vmauth/switch';
import type { ReadsDrained, ReadsDrainInput, RolloutActivities, SwitchConfirmed, SwitchInput } from '../../workflows/activity-types';
import { podNetworkFetch } from '../infra/harness/pod-network';
import { httpRequest, waitFor } from '../infra/harness/processes';
import { createObjects, getObject, mergePatch } from '../e2e/support';
import type { VmEnvironment } from '../infra/simulator/environment';
import { NS, startOperatorBed, VMAUTH, vmObject, vmselectRef } from './operator-bed';

jest.setTimeout(240_000);

const DELAY_MS = 4_000;

let kc: k8s.KubeConfig;
let vm: VmEnvironment;
let stop: () => Promise<void>;
let acts: RolloutActivities;

const obj = vmObject;
const sel = (objects: string[]) => ({ ...vmselectRef(objects), paths: ['/select/.*'] });
const setRoutes = (zones: string[]) => mergePatch(kc, 'VMAuth', NS, VMAUTH, { spec: { unauthorizedUserAccessSpec: { targetRefs: [sel(zones)] } } });

const input = (expect: 'absent' | 'present', o: Partial<SwitchInput> = {}): SwitchInput => ({
  namespace: NS,
  vmauthName: VMAUTH,
  vmcluster: 'vm-az-b',
  expect,
  routes: [{ kind: 'VMAuth', name: VMAUTH }],
  pollIntervalMs: 200,
  fallbackWaitMs: 120_000,
  ...o,
});

/** Runs confirmSwitch as an activity; collects its heartbeats. */
function confirm(i: SwitchInput) {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 60_000 });
  const beats: Array<{ waitingFor?: string }> = [];
  env.on('heartbeat', (d: unknown) => beats.push(d as { waitingFor?: string }));
  const run = env.run(acts.confirmSwitch, i) as Promise<SwitchConfirmed>;
  let doneAt: number | undefined;
  void run.then(
    () => (doneAt = Date.now()),
    () => {},
  );
  /** `done()`: when the activity returned, undefined while it still waits. */
  return { run, beats, done: () => doneAt };
}

/**
 * A held pod released now would reload late enough to count: vmauth dates a reload in whole seconds
 * of a clock that lags up to a second (lib/fasttime), and confirmSwitch counts a reload only from the
 * second after the Secret's change on (reloadedAfter); an earlier one is left to the bounded wait.
 */
async function untilAReloadCanCount(): Promise<void> {
  const secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: configSecretName(VMAUTH), namespace: NS });
  const countsFrom = (Math.floor(secretChangedAt(secret)! / 1000) + 2) * 1000;
  await waitFor(() => Date.now() >= countsFrom, { timeoutMs: 5_000, intervalMs: 50, description: 'two seconds past the second the Secret changed in' });
}

const drained = (i: ReadsDrainInput) => new MockActivityEnvironment().run(acts.waitReadsDrained, i) as Promise<ReadsDrained>;

beforeAll(async () => {
  ({ kc, vm, stop } = await startOperatorBed({
    vmauthPods: 2,
    // pod 1: an older config-reloader without the content-hash metric
    vmauthPodOptions: [{}, { noContentHashMetric: true }],
  }));
  await createObjects(kc, [
    obj('VMCluster', 'vm-az-a', { vmselect: { replicaCount: 1 } }),
    obj('VMCluster', 'vm-az-b', { vmselect: { replicaCount: 1 } }),
    obj('VMAuth', VMAUTH, { selectAllByDefault: true, unauthorizedUserAccessSpec: { targetRefs: [sel(['vm-az-a', 'vm-az-b'])] } }),
  ]);
  await waitFor(() => vm.simulator.allPodsServeCurrent() && vm.simulator.currentConfig?.routes.unauthorized?.length === 2, {
    timeoutMs: 30_000,
    description: 'both pods to serve the first config',
  });
  acts = createActivities({ kubeConfig: kc, temporalClient: {} as Client, fetch: podNetworkFetch, scrapeTimeoutMs: 2_000 });
}, 240_000);

afterAll(() => stop?.());

describe('confirmSwitch', () => {
  it('returns only when every pod serves the config without the zone — long after the VMAuth status said so', async () => {
    // Both pods hold the change until released below.
    vm.vmauthPods.forEach((p) => (p.propagationDelayMs = 600_000));
    const statusesBefore = vm.simulator.statuses.length;
    await setRoutes(['vm-az-a']);
    const c = confirm(input('absent'));
    // The operator's status says operational right after the Secret, the pods not yet reloaded...
    await waitFor(() => vm.simulator.statuses.slice(statusesBefore).some((s) => s.kind === 'VMAuth' && s.updateStatus === 'operational'), {
      timeoutMs: 30_000,
      description: 'the VMAuth operational after the edit',
    });
    const beatsThen = c.beats.length;
    await waitFor(() => c.beats.length > beatsThen, { timeoutMs: 20_000, description: 'confirmSwitch looking again after the operator said operational' });
    for (const p of vm.vmauthPods) expect(p.currentConfig!.routes.unauthorized).toEqual(['vm-az-a', 'vm-az-b']);
    expect(c.done()).toBeUndefined();
    // ...and the switch is confirmed only once both have reloaded.
    await untilAReloadCanCount();
    vm.vmauthPods.forEach((p) => p.deliverNow());
    const confirmed = await c.run;
    expect(c.done()).toBeGreaterThanOrEqual(Math.max(...vm.vmauthPods.map((p) => p.currentConfig!.at)));
    for (const p of vm.vmauthPods) expect(p.currentConfig!.routes.unauthorized).toEqual(['vm-az-a']);
    // Pod 0 by its content hash, pod 1 (no metric) by vmauth's reload after the Secret changed.
    expect(confirmed.hash).toBe(vm.simulator.currentConfig!.hash);
    expect(confirmed.pods.map((p) => p.via).sort()).toEqual(['content-hash', 'vmauth-reload']);
    expect(confirmed.message).toMatch(
      /^2 vmauth pods run config [0-9a-f]{8} without VMCluster vm-az-b: 1 by config-reloader content hash, 1 by vmauth's reload after the Secret changed/,
    );
    // While it waited, it said what for.
    expect(c.beats.some((b) => /1\/2 vmauth pods run config|0\/2 vmauth pods run config|waiting for vmauth to report a reload/.test(b.waitingFor ?? ''))).toBe(
      true,
    );
  });

  it("with spec.waitForConfigReload: the operator waits only for pods that publish a hash; confirmSwitch waits for the other one's reload too", async () => {
    vm.vmauthPods.forEach((p) => (p.propagationDelayMs = 0));
    await setRoutes(['vm-az-a', 'vm-az-b']);
    await waitFor(() => vm.simulator.allPodsServeCurrent() && vm.simulator.currentConfig?.routes.unauthorized?.length === 2, {
      timeoutMs: 20_000,
      description: 'both pods to serve vm-az-b again',
    });
    const g = (await mergePatch(kc, 'VMAuth', NS, VMAUTH, { spec: { waitForConfigReload: true } })).metadata.generation;
    await waitFor(
      async () =>
        ((await getObject(kc, 'VMAuth', NS, VMAUTH)).status as { observedGeneration?: number; updateStatus?: string } | undefined)?.observedGeneration === g,
      { timeoutMs: 20_000, description: 'the VMAuth to apply waitForConfigReload' },
    );
    vm.vmauthPods[0]!.propagationDelayMs = 1_000;
    // The old config-reloader (no content hash) holds the change until released below.
    vm.vmauthPods[1]!.propagationDelayMs = 600_000;
    const edited = (await setRoutes(['vm-az-a'])).metadata.generation;
    const c = confirm(input('absent'));
    // The operator waited for pod 0's hash, counted pod 1 (no metric) as reloaded, and said operational...
    const operational = await waitFor(
      () => vm.simulator.statuses.find((x) => x.kind === 'VMAuth' && x.generation === edited && x.updateStatus === 'operational'),
      {
        timeoutMs: 30_000,
        description: 'the VMAuth operational at the edited generation',
      },
    );
    expect(operational.at).toBeGreaterThanOrEqual(vm.vmauthPods[0]!.currentConfig!.at);
    // ...while pod 1 still serves the old routes: confirmSwitch looks again after that, and still waits.
    const beatsThen = c.beats.length;
    await waitFor(() => c.beats.slice(beatsThen).some((b) => /1\/2 vmauth pods run config|waiting for vmauth to report a reload/.test(b.waitingFor ?? '')), {
      timeoutMs: 20_000,
      description: 'confirmSwitch waiting for pod 1 after the operator said operational',
    });
    expect(vm.vmauthPods[1]!.currentConfig!.routes.unauthorized).toEqual(['vm-az-a', 'vm-az-b']);
    expect(c.done()).toBeUndefined();
    // The switch is confirmed only after pod 1's reload.
    await untilAReloadCanCount();
    vm.vmauthPods[1]!.deliverNow();
    const confirmed = await c.run;
    expect(c.done()).toBeGreaterThanOrEqual(vm.vmauthPods[1]!.currentConfig!.at);
    expect(confirmed.pods.map((p) => p.via).sort()).toEqual(['content-hash', 'vmauth-reload']);
    // As the next test expects: routes without vm-az-b, served by both pods.
    await mergePatch(kc, 'VMAuth', NS, VMAUTH, { spec: { waitForConfigReload: false } });
    await waitFor(() => vm.simulator.allPodsServeCurrent(), { timeoutMs: 20_000, description: 'both pods on the current config' });
    vm.vmauthPods.forEach((p) => (p.propagationDelayMs = DELAY_MS));
  });

  it('waits while the Secret still routes the zone, saying so (here: a route never edited)', async () => {
    const c = confirm(input('present', { vmcluster: 'vm-az-b' }));
    await waitFor(
      () =>
        c.beats.some((b) =>
          /the operator's config \(Secret vmauth-config-vm-global\) does not yet route VMAuth vm-global to VMCluster vm-az-b/.test(b.waitingFor ?? ''),
        ),
      {
        timeoutMs: 10_000,
        description: 'a heartbeat naming the route still to switch',
      },
    );
    // Putting the zone back: confirmed once both pods serve it again.
    await setRoutes(['vm-az-a', 'vm-az-b']);
    const confirmed = await c.run;
    for (const p of vm.vmauthPods) expect(p.currentConfig!.routes.unauthorized).toEqual(['vm-az-a', 'vm-az-b']);
    expect(confirmed.message).toMatch(/with VMCluster vm-az-b/);
  });

  it('a pod without the metric whose vmauth never reloads is taken as switched only after the bounded wait, and the message says so', async () => {
    vm.vmauthPods[1]!.propagationDelayMs = 10 * 60_000; // its Secret never arrives during this test
    vm.vmauthPods[0]!.propagationDelayMs = 0;
    await setRoutes(['vm-az-a']);
    const started = Date.now();
    const confirmed = await confirm(input('absent', { fallbackWaitMs: 3_000 })).run;
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(confirmed.pods.map((p) => p.via).sort()).toEqual(['bounded-wait', 'content-hash']);
    expect(confirmed.message).toMatch(/1 only by waiting 3 s after the Secret changed \(no content hash, no reload seen\)/);
    vm.vmauthPods[1]!.propagationDelayMs = 0;
    await setRoutes(['vm-az-a', 'vm-az-b']);
    await waitFor(() => vm.simulator.allPodsServeCurrent(), { timeoutMs: 20_000, description: 'both pods back on the current config' });
  });

  it('with a long pollInterval: once the Secret is right only the pods are polled (every 250 ms), and the switch is confirmed soon after the last reload, not at the next poll', async () => {
    vm.vmauthPods.forEach((p) => (p.propagationDelayMs = DELAY_MS));
    await setRoutes(['vm-az-a']);
    await waitFor(() => vm.simulator.currentConfig?.routes.unauthorized?.length === 1, {
      timeoutMs: 20_000,
      description: 'the operator to write the Secret without vm-az-b',
    });
    const started = Date.now();
    const confirmed = await confirm(input('absent', { pollIntervalMs: 15_000 })).run;
    const done = Date.now();
    const servedAt = Math.max(...vm.vmauthPods.map((p) => p.currentConfig!.at));
    expect(done).toBeGreaterThanOrEqual(servedAt);
    for (const p of vm.vmauthPods) expect(p.currentConfig!.routes.unauthorized).toEqual(['vm-az-a']);
    expect(confirmed.pods.map((p) => p.via).sort()).toEqual(['content-hash', 'vmauth-reload']);
    // Negative control: looking again only every pollInterval, the second look (the first after the
    // pods' reload, DELAY_MS after the Secret) would come 15 s after the start.
    expect(done - servedAt).toBeLessThan(2_500);
    expect(done - started).toBeLessThan(10_000);
    vm.vmauthPods.forEach((p) => (p.propagationDelayMs = 0));
    await setRoutes(['vm-az-a', 'vm-az-b']);
    await waitFor(() => vm.simulator.allPodsServeCurrent(), { timeoutMs: 20_000, description: 'both pods back on the current config' });
  });
});

/** Reads through vmauth pod 0 (balanced over the zones it routes) until stopped; when the last read was sent. */
function readLoad(): { stop(): Promise<void>; lastSentAt(): number } {
  const pod = vm.vmauthPods[0]!;
  let stopped = false;
  let lastSentAt = 0;
  const running = (async () => {
    while (!stopped) {
      lastSentAt = Date.now();
      await httpRequest('GET', `${pod.vmauth.url}/select/0/prometheus/api/v1/query?query=up`, { timeoutMs: 2_000 }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await running;
    },
    lastSentAt: () => lastSentAt,
  };
}

describe('waitReadsDrained', () => {
  it("is quiet only once requests stop reaching the zone's vmselect", async () => {
    const startedAt = Date.now();
    const load = readLoad();
    setTimeout(() => void load.stop(), 3_000);
    const d = await drained({ namespace: NS, vmcluster: 'vm-az-b', quietMs: 1_000, maxMs: 20_000, pollIntervalMs: 200 });
    const decidedAt = Date.now();
    await load.stop();
    expect(d.quiet).toBe(true);
    // Quiet at least quietMs after the last read was sent (it reached the vmselect after that): the
    // load stops at 3 s, but its last read may leave up to a pause (50 ms) before.
    expect(decidedAt - load.lastSentAt()).toBeGreaterThanOrEqual(1_000);
    // The reads went on until stopped: the quiet came after them, not between them.
    expect(load.lastSentAt() - startedAt).toBeGreaterThanOrEqual(2_000);
    expect(d.message).toMatch(/no new \/select\/ request on 1 vmselect pod/);
    // Requests really reached it while the load ran (the counter is what was watched).
    expect(vm.vmselects['vm-az-b']!.counts()['/select/{}/prometheus/api/v1/query']).toBeGreaterThan(0);
  });

  it('gives up after maxMs while requests keep coming, and says so', async () => {
    const load = readLoad();
    const d = await drained({ namespace: NS, vmcluster: 'vm-az-b', quietMs: 1_000, maxMs: 3_000, pollIntervalMs: 200 });
    await load.stop();
    expect(d.quiet).toBe(false);
    expect(d.message).toMatch(/reads not seen quiet within readDrainDelay \(3 s\): vmselect pods still counted new \/select\/ requests/);
  });
});
