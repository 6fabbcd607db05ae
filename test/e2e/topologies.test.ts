/**
 * End to end, the topologies and traffic modes people run, on real processes: real Temporal,
 * kube-apiserver, 3 real VictoriaMetrics zones behind their vmselect fronts, the real vmagent and
 * vmauth, a second real vmagent as zone az-b's own VMAgent (spec.zones[].vmagent), the real worker
 * and trigger (the zone simulator plays the operator, as in rollout.test.ts).
 *
 * A zone held out of reads by its trafficMode (write-only) is absent from every route the real
 * vmauth serves, with no failed or stale read, and rejoins once read-write again; a zone waits for
 * the queue of every named VMAgent (one stopped: it stays out past queueDrainedFor), and, the
 * VMAgent not named (the negative control), it rejoins while that one is still stopped.
 */
import type * as k8s from '@kubernetes/client-node';
import { DEFAULT_TASK_QUEUE } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { waitFor } from '../infra/harness/processes';
import type { VmEnvironment } from '../infra/simulator/environment';
import { createObjects, demoStackOptions, getObject, mergePatch, startE2EStack, V1, waitVmdcPhase, workerEvents, type E2EStack, type Traffic } from './support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const VMDC = 'topologies';
/** The VMAgent of zone az-b (spec.zones[].vmagent): a second real vmagent writing to every zone. */
const ZONE_VMAGENT = 'vm-az-b-own';
/** E2E_STRATEGY's queueDrainedFor. */
const QUEUE_DRAINED_FOR_MS = 6_000;

let stack: E2EStack;
let kc: k8s.KubeConfig;
let vm: VmEnvironment;
let traffic: Traffic;

beforeAll(async () => {
  stack = await startE2EStack(
    demoStackOptions({ namespace: NS, vmdcName: VMDC, zoneDowntimeMs: 3_000, taskQueue: `${DEFAULT_TASK_QUEUE}-e2e-topologies`, zoneVmagents: [ZONE_VMAGENT] }),
  );
  ({ kc, vm, traffic } = stack);
}, 5 * 60_000);

afterAll(() => stack?.stop(), 120_000);

const waitPhase = (generation: number, phases: string[]) =>
  waitVmdcPhase(kc, NS, VMDC, generation, phases, { diagnostics: () => `simulator errors: ${vm.simulator.errors.slice(-5).join('\n')}` });

describe('topologies and traffic modes on the real stack', () => {
  it('trafficMode write-only holds a zone out of the real vmauth across rollouts; back to read-write, it rejoins; reads stay fresh', async () => {
    const zones = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).spec!.zones as Array<Record<string, unknown>>;
    const withMode = (mode: string | undefined) => zones.map((z) => (z.name === 'az-c' ? { ...z, trafficMode: mode } : z));
    const t0 = Date.now();
    // The version every zone runs: only the hold to do.
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { zones: withMode('write-only') } });
    const st = await waitPhase(2, ['Succeeded', 'Failed']);
    expect(st.phase).toBe('Succeeded');
    expect(st.zonesOutOfRotation).toEqual(['az-c']);
    expect(st.message).toBe(`all zones at ${V1} (0 upgraded, 3 already up to date); held out of reads by their trafficMode: az-c (write-only)`);
    expect(st.zones!.find((z) => z.name === 'az-c')).toMatchObject({ phase: 'Skipped', trafficMode: 'write-only' });
    expect((await workerEvents(kc, NS, VMDC)).slice(-3)).toEqual(['ZoneLeftReads az-c', 'ZoneHeld az-c', 'RolloutSucceeded']);
    // Out of every route the vmauth serves; the reads through it neither fail nor go stale.
    for (const zs of Object.values(vm.simulator.currentConfig!.routes)) expect(zs).not.toContain('vm-az-c');
    await new Promise((r) => setTimeout(r, 2000));
    expect(traffic.failed(t0, Date.now())).toEqual([]);
    expect(traffic.stale(t0, Date.now())).toEqual([]);

    // Negative control of the hold: read-write again, the next generation takes az-c over from its
    // records, waits for its queue, and puts it back.
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { zones: withMode(undefined) } });
    const back = await waitPhase(3, ['Succeeded', 'Failed']);
    expect(back.phase).toBe('Succeeded');
    expect(back.zonesOutOfRotation).toEqual([]);
    expect(back.zones!.find((z) => z.name === 'az-c')).toMatchObject({ phase: 'Done' });
    expect(back.zones!.find((z) => z.name === 'az-c')!.trafficMode).toBeUndefined();
    expect(Object.values(vm.simulator.currentConfig!.routes).some((zs) => zs.includes('vm-az-c'))).toBe(true);
    expect(traffic.failed(t0, Date.now())).toEqual([]);
  });

  it("one VMAgent per zone: a zone's backlog in its own VMAgent (zones[].vmagent) keeps it out until that vmagent can say it is drained; not named, it is not waited for", async () => {
    const own = vm.zoneVmagents[ZONE_VMAGENT]!;
    // The second VMAgent as the operator would have it: the same remoteWrite list (the real vmagent's).
    const global = await getObject(kc, 'VMAgent', NS, 'vm-global');
    await createObjects(kc, [
      {
        apiVersion: 'operator.victoriametrics.com/v1beta1',
        kind: 'VMAgent',
        metadata: { name: ZONE_VMAGENT, namespace: NS },
        spec: { remoteWrite: global.spec!.remoteWrite },
      },
    ]);
    type RawZone = Record<string, unknown> & { name: string; vmcluster: Record<string, unknown> & { overrideSpec?: Record<string, unknown> } };
    const zones = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).spec!.zones as RawZone[];
    /** Only az-a changes (an annotation of its vmselect pods): one zone upgraded per generation. */
    const withAgent = (agent: boolean, rev: string) =>
      zones.map((z) => {
        const out: Record<string, unknown> = { ...z };
        if (z.name === 'az-a')
          out.vmcluster = { ...z.vmcluster, overrideSpec: { ...z.vmcluster.overrideSpec, vmselect: { podMetadata: { annotations: { 'e2e/rev': rev } } } } };
        if (z.name === 'az-b' && agent) out.vmagent = { name: ZONE_VMAGENT };
        return out;
      });
    const pausedWhileDown = async (generation: number) => {
      await waitFor(
        async () => {
          const st = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status as VMDistributedClusterStatus | undefined;
          const phase = st?.observedGeneration === generation ? st.zones?.find((z) => z.name === 'az-a')?.phase : undefined;
          return phase === 'WaitingOperational' || phase === 'WaitingForQueue';
        },
        { timeoutMs: 60_000, intervalMs: 100, description: `generation ${generation}: az-a upgraded, down` },
      );
      // Stopped before az-a's queue could have stayed empty for queueDrainedFor: its page cannot be read.
      process.kill(own.pid, 'SIGSTOP');
    };
    try {
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { zones: withAgent(true, '1') } });
      await pausedWhileDown(4);
      const held = await waitFor(
        async () => {
          const st = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status as VMDistributedClusterStatus | undefined;
          const a = st?.zones?.find((z) => z.name === 'az-a');
          return a?.phase === 'WaitingForQueue' && a.message?.includes(`vmagent-${ZONE_VMAGENT}-0`) ? st : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200, description: `az-a waiting for the queue, naming vmagent-${ZONE_VMAGENT}-0` },
      );
      expect(held.zonesOutOfRotation).toEqual(['az-a']);
      // Longer than queueDrainedFor: spec.vmagent's queue drained long since, the zone still out.
      await new Promise((r) => setTimeout(r, 2 * QUEUE_DRAINED_FOR_MS));
      const still = (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status as VMDistributedClusterStatus;
      expect({ phase: still.zones!.find((z) => z.name === 'az-a')!.phase, out: still.zonesOutOfRotation }).toEqual({ phase: 'WaitingForQueue', out: ['az-a'] });
      process.kill(own.pid, 'SIGCONT');
      const done = await waitPhase(4, ['Succeeded', 'Failed']);
      expect(done).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: [] });

      // Negative control: the same, the VMAgent not named: az-a rejoins with it still stopped.
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { zones: withAgent(false, '2') } });
      await pausedWhileDown(5);
      const ignored = await waitPhase(5, ['Succeeded', 'Failed']);
      expect(ignored).toMatchObject({ phase: 'Succeeded', zonesOutOfRotation: [] });
    } finally {
      process.kill(own.pid, 'SIGCONT');
    }
  });
});
