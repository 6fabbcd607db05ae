/**
 * End to end, the canary zone (strategy.canary) on real processes: real Temporal, kube-apiserver,
 * 3 real VictoriaMetrics zones behind their vmselect fronts, the real vmagent and vmauth, the real
 * worker and trigger (the zone simulator plays the operator, as in rollout.test.ts).
 *
 * The canary is analysed on its real vmselect against a zone still at the previous version: a
 * canary made wrong on purpose (its series deleted through the real VictoriaMetrics admin API
 * while it bakes) fails and stays out of reads with the numbers; without the analysis (negative
 * control) the same wrong zone serves reads again; a canary that is right rejoins and the rollout
 * goes on, its recent queries replayed from the baseline's real top_queries. The same stack has the
 * Slack-compatible receiver of spec.notifications, and the capacity guard (strategy.capacityGuard)
 * judging the real vmauth's counters while the carriers' vmselect fronts are made slow.
 */
import * as http from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { DEFAULT_TASK_QUEUE, UPDATE_ABORT } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus, ZoneStatus } from '../../api/types';
import { httpRequest, waitFor } from '../infra/harness/processes';
import type { VmEnvironment } from '../infra/simulator/environment';
import {
  DEMO_CLUSTERS,
  demoStackOptions,
  E2E_NOTIFICATION_SECRET,
  getObject,
  kubeRaw,
  mergePatch,
  startE2EStack,
  V1,
  V2,
  V3,
  waitVmdcPhase,
  workerEvents,
  type E2EStack,
  type Traffic,
} from './support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const VMDC = 'canary';
const SERIES = 'vmrollout_e2e_heartbeat';
/** What the analysis compares: the heartbeat's samples over 2 minutes, as of maxIngestionLag ago. */
const COUNT = `count_over_time(${SERIES}[2m])`;
const ANALYSIS = { interval: '3s', queries: [COUNT], recentQueries: 3, freshnessSelector: SERIES, maxIngestionLag: '10s' };

/** A Slack-compatible webhook receiver: what the worker told it, in order. */
const told: string[] = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    told.push((JSON.parse(body) as { text: string }).text);
    res.end('ok');
  });
});

let stack: E2EStack;
let kc: k8s.KubeConfig;
let vm: VmEnvironment;
let traffic: Traffic;

beforeAll(async () => {
  stack = await startE2EStack(demoStackOptions({ namespace: NS, vmdcName: VMDC, zoneDowntimeMs: 3_000, taskQueue: `${DEFAULT_TASK_QUEUE}-e2e-canary` }));
  ({ kc, vm, traffic } = stack);
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks/e2e`;
  await kc.makeApiClient(k8s.CoreV1Api).createNamespacedSecret({ namespace: NS, body: { metadata: { name: E2E_NOTIFICATION_SECRET }, stringData: { url } } });
}, 5 * 60_000);

afterAll(async () => {
  receiver.close();
  await stack?.stop();
}, 120_000);

const status = async () => ((await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status ?? {}) as VMDistributedClusterStatus;
const zoneIn = (st: VMDistributedClusterStatus, name: string) => st.zones!.find((z) => z.name === name)!;
/** `fresh`: the phase may be reached already (the wait starts after the rollout moved). */
const waitPhase = (generation: number, phases: string[], fresh = false) =>
  waitVmdcPhase(kc, NS, VMDC, generation, phases, { fresh, diagnostics: () => `simulator errors: ${vm.simulator.errors.slice(-5).join('\n')}` });
const clusterVersion = async (vmc: string) => ((await getObject(kc, 'VMCluster', NS, vmc)).spec as { clusterVersion?: string }).clusterVersion;
const routed = (vmc: string) => Object.values(vm.simulator.currentConfig!.routes).some((zs) => zs.includes(vmc));
/** The heartbeat's sample count over 2 minutes, read straight from a zone's process. */
const countIn = async (vmc: string) => {
  const r = await httpRequest('GET', `${vm.zones[vmc]!.url}/api/v1/query?query=${encodeURIComponent(COUNT)}`, { timeoutMs: 5_000 });
  return Number((JSON.parse(r.body) as { data: { result: Array<{ value: [number, string] }> } }).data.result[0]?.value[1] ?? 0);
};

describe('a canary zone analysed on the real VictoriaMetrics', () => {
  it('made wrong while it bakes, the canary fails its analysis: it stays out of reads, nothing else is upgraded, its status has the numbers', async () => {
    const t0 = Date.now();
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, {
      spec: {
        clusterVersion: V2,
        strategy: { canary: { zone: 'az-c', bake: '20s', analysis: ANALYSIS } },
        notifications: [
          { type: 'Slack', secretName: E2E_NOTIFICATION_SECRET, on: ['RolloutStarted', 'ZoneLeftReads', 'ZoneDrained', 'ZoneFailed', 'RolloutFailed'] },
        ],
      },
    });
    // Once it bakes (upgraded, drained, out of reads), its data goes wrong: the heartbeat deleted.
    await waitFor(async () => zoneIn(await status(), 'az-c')?.phase === 'Analyzing', { timeoutMs: 120_000, description: 'az-c to be analysed' });
    expect(routed('vm-az-c')).toBe(false);
    const del = await httpRequest('POST', `${vm.zones['vm-az-c']!.url}/api/v1/admin/tsdb/delete_series?match[]=${SERIES}`, { timeoutMs: 5_000 });
    expect(del.status).toBe(204);

    const st = await waitPhase(2, ['Failed', 'Succeeded']);
    expect(st.phase).toBe('Failed');
    expect(st.zones!.map((z) => z.name)).toEqual(['az-c', 'az-a', 'az-b']);
    const c = zoneIn(st, 'az-c');
    expect(c).toMatchObject({ phase: 'Failed', analysis: { verdict: 'Failed', baseline: 'az-a', bakeSeconds: 20, failed: 1 } });
    const count = c.analysis!.latest!.queries.find((q) => q.query === COUNT)!;
    expect(count).toMatchObject({ source: 'spec', verdict: 'mismatch', baselineSeries: 1 });
    expect(count.detail).toMatch(/missing on the canary|on the baseline, \d+ on the canary/);
    expect(c.message).toMatch(
      /^failed at Analyzing, kept out of read rotation: canary analysis Failed after \d+ measurements? against az-a .*the canary stays out of reads/,
    );
    expect(st.zonesOutOfRotation).toEqual(['az-c']);
    expect(routed('vm-az-c')).toBe(false);
    // Nothing else upgraded; reads went on from the other zones without a failure.
    expect([await clusterVersion('vm-az-c'), await clusterVersion('vm-az-a'), await clusterVersion('vm-az-b')]).toEqual([V2, V1, V1]);
    expect(traffic.failed(t0, Date.now())).toEqual([]);
    expect(traffic.stale(t0, Date.now())).toEqual([]);
    const failedNotifications = JSON.parse((await kubeRaw(kc, 'GET', `/api/v1/namespaces/${NS}/events?fieldSelector=reason%3DNotificationFailed`)).body) as {
      items: Array<{ message: string }>;
    };
    expect(failedNotifications.items.map((e) => e.message)).toEqual([]);
    expect((await workerEvents(kc, NS, VMDC)).slice(-3)).toEqual(['ZoneDrained az-c', 'ZoneFailed az-c', 'RolloutFailed']);
    // spec.notifications: the Slack-compatible webhook was told the same story (what `on` asks).
    const story = told.map((t) => /^(?::warning: )?\*default\/canary\* (\w+): (?:zone (az-\w))?/.exec(t)?.slice(1).filter(Boolean).join(' '));
    expect(story).toEqual(['RolloutStarted', 'ZoneLeftReads az-c', 'ZoneDrained az-c', 'ZoneFailed az-c', 'RolloutFailed az-c']);
    expect(told.at(-2)).toMatch(/^:warning: \*default\/canary\* ZoneFailed: zone az-c failed, kept OUT of read rotation: failed at Analyzing/);
  });

  it('negative control: without strategy.canary the same wrong zone rejoins reads and the rollout succeeds', async () => {
    // Still wrong: its count over 2 minutes is short of the baseline's.
    expect(await countIn('vm-az-c')).toBeLessThan((await countIn('vm-az-a')) * 0.9);
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { strategy: { canary: null } } });
    const st = await waitPhase(3, ['Failed', 'Succeeded']);
    expect(st.phase).toBe('Succeeded');
    expect(st.zonesOutOfRotation).toEqual([]);
    expect(routed('vm-az-c')).toBe(true);
    expect(st.zones!.some((z: ZoneStatus) => z.analysis)).toBe(false);
  });
});

describe('the capacity guard on the real vmauth, then a right canary with the guard off (its negative control)', () => {
  const carriers = ['vm-az-b', 'vm-az-c'];
  const slow = (ms: number) => carriers.forEach((c) => vm.vmselects[c]!.setDelay(ms));
  const waitOut = (zone: string) =>
    waitFor(async () => (await status()).zonesOutOfRotation?.includes(zone), { timeoutMs: 120_000, description: `${zone} out of reads` });

  it("carriers made slow while a zone is out: vmauth's real latency breaches, the rollout waits before the zone's upgrade, the zone out; abort fails it there", async () => {
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V3, strategy: { canary: null, capacityGuard: {} } } });
    await waitOut('az-a');
    slow(500);
    try {
      const st = await waitFor(async () => ((await status()).awaiting?.capacity ? status() : undefined), {
        timeoutMs: 120_000,
        description: 'the capacity guard to wait',
      });
      expect(st.awaiting).toMatchObject({ nextZone: 'az-a', gates: [] });
      expect(st.awaiting!.capacity).toMatch(/^vmauth's mean read latency [\d.]+ ms, 3× and 100 ms over its [\d.]+ ms before the zone left$/);
      const a = zoneIn(st, 'az-a');
      expect(a.capacity).toMatchObject({ breached: true });
      expect(a.capacity!.latencyMs!).toBeGreaterThan(3 * a.capacity!.baselineLatencyMs! + 100);
      expect(a.capacity!.requests).toBeGreaterThanOrEqual(10);
      expect(st.zonesOutOfRotation).toEqual(['az-a']);
      expect(await clusterVersion('vm-az-a')).toBe(V2); // stopped before its upgrade
      await stack.client.workflow.getHandle(st.workflow!.id).executeUpdate(UPDATE_ABORT, { args: [{ reason: 'carriers slow' }] });
      const failed = await waitPhase(4, ['Failed'], true);
      expect(zoneIn(failed, 'az-a')).toMatchObject({ phase: 'Failed' });
      expect(zoneIn(failed, 'az-a').message).toMatch(
        /capacity guard: vmauth's mean read latency .* aborted by a person \(carriers slow\): the zone stays out of reads/,
      );
      expect(failed.zonesOutOfRotation).toEqual(['az-a']);
      expect(await clusterVersion('vm-az-a')).toBe(V2);
    } finally {
      slow(0);
    }
  });

  it('with the guard off a carrier as slow stops nothing (its negative control); the named canary, right, rejoins after its bake, recent queries from the baseline top_queries', async () => {
    const t0 = Date.now();
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, {
      spec: { strategy: { capacityGuard: null, canary: { zone: 'az-b', bake: '12s', analysis: ANALYSIS } } },
    });
    // az-c slow the whole rollout: a carrier while az-b (the canary, against az-a) and az-a are out.
    vm.vmselects['vm-az-c']!.setDelay(500);
    let st: VMDistributedClusterStatus;
    try {
      st = await waitPhase(5, ['Failed', 'Succeeded']);
    } finally {
      slow(0);
    }
    expect({ phase: st.phase, message: st.message }).toEqual({ phase: 'Succeeded', message: expect.any(String) });
    // The guard's negative control: carriers slow the whole rollout, nothing judged, nothing waited for.
    expect(st.zones!.some((z: ZoneStatus) => z.capacity)).toBe(false);
    for (const vmc of DEMO_CLUSTERS) expect(await clusterVersion(vmc)).toBe(V3);
    // az-b, named, went first as the canary, against az-a (put back by the aborted rollout's cleanup: it was never patched).
    expect(st.zones!.map((z) => z.name)).toEqual(['az-b', 'az-a', 'az-c']);
    expect(zoneIn(st, 'az-a').analysis).toBeUndefined();
    const b = zoneIn(st, 'az-b');
    expect(b).toMatchObject({ phase: 'Done', analysis: { verdict: 'Successful', baseline: 'az-a', bakeSeconds: 12, failed: 0, inconclusive: 0 } });
    expect(b.analysis!.measurements).toBeGreaterThanOrEqual(3);
    const queries = b.analysis!.latest!.queries;
    expect(queries.find((q) => q.query === COUNT)).toMatchObject({ verdict: expect.stringMatching(/^(match|slow)$/), baselineSeries: 1, canarySeries: 1 });
    // The reads the traffic sends through vmauth, replayed from the baseline's real top_queries.
    expect({ message: b.analysis!.latest!.message, queries: queries.map((q) => [q.source, q.query]) }).toEqual({
      message: expect.any(String),
      queries: expect.arrayContaining([['recent', `max(${SERIES})`]]),
    });
    expect(queries.find((q) => q.source === 'recent' && q.query === `max(${SERIES})`)).toMatchObject({ verdict: expect.stringMatching(/^(match|slow)$/) });
    expect(queries.find((q) => q.source === 'freshness')).toMatchObject({ verdict: 'match' });
    expect(b.analysis!.latest!.lagSeconds).toBeLessThanOrEqual(10);
    expect(zoneIn(st, 'az-c').analysis).toBeUndefined();
    expect(traffic.failed(t0, Date.now())).toEqual([]);
    expect(await workerEvents(kc, NS, VMDC)).toContain('CanaryPassed');
  });
});
