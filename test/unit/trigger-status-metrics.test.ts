// The trigger's per-object state gauges (trigger/status-metrics.ts: status → series; trigger/metrics.ts
// keeps them current per watch event) and the trigger-lag histogram (Reconciler.seen → start).
import type { Client } from '@temporalio/client';
import type { Registry } from 'prom-client';
import { ROUTE_RECORDS_FINALIZER } from '../../api/constants';
import { ZONE_PHASES, ZONE_STEPS, type Phase, type VMDistributedClusterStatus, type ZonePhase } from '../../api/types';
import type { KubeOps } from '../../trigger/kube';
import { silentLogger } from '../../trigger/log';
import { createMetrics } from '../../trigger/metrics';
import { Reconciler } from '../../trigger/execute';
import { IDLE_ZONE_PHASES, ROLLOUT_PHASE, ZONE_OUT_OF_READS, ZONE_STEP, statusSeries } from '../../trigger/status-metrics';
import type { VmdcObject } from '../../kube/vmdc-object';
import { InMemoryVmdc, UID, spec, validator } from './trigger-helpers';

function vmdc(name: string, status?: VMDistributedClusterStatus, generation = 1): VmdcObject {
  return {
    apiVersion: 'vmrollout.io/v1alpha1',
    kind: 'VMDistributedCluster',
    metadata: { name, namespace: 'ns', uid: UID, generation, resourceVersion: '1', finalizers: [ROUTE_RECORDS_FINALIZER] },
    spec: spec(),
    ...(status ? { status } : {}),
  };
}

const zone = (name: string, phase: ZonePhase) => ({ name, phase });

/** Every sample of `metric` in a registry, as "label=value,..." → value. */
async function samples(registry: Registry, metric: string): Promise<Map<string, number>> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === metric);
  const out = new Map<string, number>();
  for (const v of m?.values ?? []) {
    const labels = Object.entries(v.labels)
      .map(([k, l]) => `${k}=${String(l)}`)
      .join(',');
    out.set(labels, v.value);
  }
  return out;
}

/** sum by (phase) (vmrollout_rollout_phase) over several registries (scraped replicas). */
async function sumByPhase(registries: Registry[]): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  for (const r of registries) {
    const m = (await r.getMetricsAsJSON()).find((x) => x.name === ROLLOUT_PHASE);
    for (const v of m?.values ?? []) sums[String(v.labels.phase)] = (sums[String(v.labels.phase)] ?? 0) + v.value;
  }
  return sums;
}

describe('statusSeries (pure)', () => {
  it('the phase, each zone out of reads, each zone in a step or Failed', () => {
    const obj = vmdc('c1', {
      phase: 'Progressing',
      zonesOutOfRotation: ['az-b'],
      zones: [zone('az-a', 'Done'), zone('az-b', 'WaitingForQueue'), zone('az-c', 'Pending'), zone('az-d', 'Skipped'), zone('az-e', 'Failed')],
    });
    expect(statusSeries(obj)).toEqual([
      { metric: ROLLOUT_PHASE, labels: { namespace: 'ns', name: 'c1', phase: 'Progressing' } },
      { metric: ZONE_OUT_OF_READS, labels: { namespace: 'ns', name: 'c1', zone: 'az-b' } },
      { metric: ZONE_STEP, labels: { namespace: 'ns', name: 'c1', zone: 'az-b', step: 'WaitingForQueue' } },
      { metric: ZONE_STEP, labels: { namespace: 'ns', name: 'c1', zone: 'az-e', step: 'Failed' } },
    ]);
  });

  it('every zone phase of api/types but Pending, Skipped and Done shows (the six steps and Failed)', () => {
    const shown = ZONE_PHASES.filter((phase) => statusSeries(vmdc('c1', { zones: [zone('z', phase)] })).length === 1);
    expect(shown).toEqual([...ZONE_STEPS, 'Failed']);
    expect(ZONE_PHASES.filter((p) => IDLE_ZONE_PHASES.has(p))).toEqual(['Pending', 'Skipped', 'Done']);
  });

  it('nothing before a status (or a phase) is written; a zone listed twice is one series', () => {
    expect(statusSeries(vmdc('c1'))).toEqual([]);
    expect(statusSeries(vmdc('c1', { observedGeneration: 1 }))).toEqual([]);
    const twice = statusSeries(vmdc('c1', { zonesOutOfRotation: ['a', 'a'], zones: [zone('a', 'Upgrading'), zone('a', 'Upgrading')] }));
    expect(twice.map((s) => s.metric)).toEqual([ZONE_OUT_OF_READS, ZONE_STEP]);
  });
});

describe('the gauges, kept current per watch event', () => {
  it('one phase series per object; a change of phase, of zones, or a delete removes the old series', async () => {
    const m = createMetrics();
    m.objectStatus(vmdc('c1', { phase: 'Progressing', zonesOutOfRotation: ['az-a'], zones: [zone('az-a', 'Upgrading')] }), false);
    m.objectStatus(vmdc('c2', { phase: 'Progressing' }), false);
    expect(await samples(m.registry, ROLLOUT_PHASE)).toEqual(
      new Map([
        ['namespace=ns,name=c1,phase=Progressing', 1],
        ['namespace=ns,name=c2,phase=Progressing', 1],
      ]),
    );
    expect([...(await samples(m.registry, ZONE_OUT_OF_READS)).keys()]).toEqual(['namespace=ns,name=c1,zone=az-a']);
    expect([...(await samples(m.registry, ZONE_STEP)).keys()]).toEqual(['namespace=ns,name=c1,zone=az-a,step=Upgrading']);

    // az-a moves on, rejoins, and the rollout ends.
    m.objectStatus(vmdc('c1', { phase: 'Progressing', zonesOutOfRotation: ['az-a'], zones: [zone('az-a', 'WaitingForQueue')] }), false);
    expect([...(await samples(m.registry, ZONE_STEP)).keys()]).toEqual(['namespace=ns,name=c1,zone=az-a,step=WaitingForQueue']);
    m.objectStatus(vmdc('c1', { phase: 'Succeeded', zonesOutOfRotation: [], zones: [zone('az-a', 'Done')] }), false);
    expect(await samples(m.registry, ROLLOUT_PHASE)).toEqual(
      new Map([
        ['namespace=ns,name=c1,phase=Succeeded', 1],
        ['namespace=ns,name=c2,phase=Progressing', 1],
      ]),
    );
    expect((await samples(m.registry, ZONE_OUT_OF_READS)).size).toBe(0);
    expect((await samples(m.registry, ZONE_STEP)).size).toBe(0);

    // A delete (a watch event, or one a relist found missing) removes the object's series.
    m.objectStatus(vmdc('c2', { phase: 'Progressing' }), true);
    expect([...(await samples(m.registry, ROLLOUT_PHASE)).keys()]).toEqual(['namespace=ns,name=c1,phase=Succeeded']);
    const text = await m.registry.metrics();
    expect(text).toContain('vmrollout_rollout_phase{namespace="ns",name="c1",phase="Succeeded"} 1');
    expect(text).not.toContain('name="c2"');
  });
});

describe("summed over replicas: the trigger's gauge counts each object once", () => {
  // Two objects; the worker replicas wrote their statuses: replica 1 wrote c1 Progressing and c2
  // Progressing, then replica 2 took c2 over and wrote it Succeeded.
  const writtenBy: Array<Array<[string, Phase]>> = [
    [
      ['c1', 'Progressing'],
      ['c2', 'Progressing'],
    ],
    [['c2', 'Succeeded']],
  ];
  const current: Array<[string, Phase]> = [
    ['c1', 'Progressing'],
    ['c2', 'Succeeded'],
  ];

  it("from the objects' current status (one trigger watching them all): sum by phase = the objects in each phase", async () => {
    const trigger = createMetrics();
    for (const [name, phase] of current) trigger.objectStatus(vmdc(name, { phase }), false);
    const sums = await sumByPhase([trigger.registry]);
    expect(sums).toEqual({ Progressing: 1, Succeeded: 1 });
    expect(Object.values(sums).reduce((a, b) => a + b, 0)).toBe(current.length);
  });

  it('negative control: the same series from what each replica wrote (the old per-worker gauge) double count c2', async () => {
    const replicas = writtenBy.map((writes) => {
      const r = createMetrics();
      for (const [name, phase] of writes) r.objectStatus(vmdc(name, { phase }), false);
      return r.registry;
    });
    const sums = await sumByPhase(replicas);
    expect(sums).toEqual({ Progressing: 2, Succeeded: 1 });
    expect(Object.values(sums).reduce((a, b) => a + b, 0)).toBe(3); // 3 for 2 objects
  });
});

/** Temporal as far as a start goes: one execution per workflow id. */
function fakeTemporal(onStart: () => void): Client {
  const executions = new Map<string, string>();
  return {
    workflow: {
      start: async (_type: string, o: { workflowId: string }) => {
        onStart();
        if (!executions.has(o.workflowId)) executions.set(o.workflowId, `run-${executions.size + 1}`);
        return { firstExecutionRunId: executions.get(o.workflowId) };
      },
    },
  } as unknown as Client;
}

class FakeKube extends InMemoryVmdc implements KubeOps {
  list = async () => ({ items: [this.obj] });
  get = async () => this.obj;
  addFinalizer = async () => 'present' as const;
  removeFinalizer = async () => 'absent' as const;
  listRouteRecords = async () => ({ verified: [], unverified: [] });
  createEvent = async () => {};
}

describe('trigger lag: vmrollout_trigger_start_duration_seconds', () => {
  async function countAndSum(registry: Registry): Promise<{ count: number; sum: number }> {
    const m = (await registry.getMetricsAsJSON()).find((x) => x.name === 'vmrollout_trigger_start_duration_seconds');
    const v = (suffix: string) =>
      m?.values.find((x) => (x as { metricName?: string }).metricName === `vmrollout_trigger_start_duration_seconds${suffix}`)?.value ?? 0;
    return { count: v('_count'), sum: v('_sum') };
  }

  function setup(obj: VmdcObject) {
    let t = 1_000_000;
    const clock = { advance: (ms: number) => (t += ms) };
    const metrics = createMetrics();
    // Each start request takes 500 ms.
    const temporal = fakeTemporal(() => clock.advance(500));
    const kube = new FakeKube(obj);
    const reconciler = new Reconciler({ temporal, kube, validator, taskQueue: 'q', log: silentLogger, metrics, now: () => new Date(t) });
    return { metrics, kube, reconciler, clock };
  }

  it('from the first event showing a new generation to its start request completed', async () => {
    const obj = vmdc('c1');
    const { metrics, kube, reconciler, clock } = setup(obj);
    reconciler.seen('add', obj);
    clock.advance(2_000); // queued behind other objects
    reconciler.seen('update', obj); // another event of the same generation: the first one counts
    clock.advance(1_000);
    await reconciler.reconcile('update', obj);
    expect(await countAndSum(metrics.registry)).toEqual({ count: 1, sum: 3.5 });

    // The event of its own status write (observedGeneration = generation) shows nothing new; a
    // reconciliation of it starts nothing and observes nothing.
    reconciler.seen('update', kube.obj);
    await reconciler.reconcile('update', kube.obj);
    expect((await countAndSum(metrics.registry)).count).toBe(1);
  });

  it('a start never seen by the watch (a retry after the object was deleted) is not observed', async () => {
    const obj = vmdc('c1', undefined, 2);
    const { metrics, reconciler } = setup(obj);
    reconciler.seen('add', obj);
    reconciler.seen('delete', obj);
    await reconciler.reconcile('update', obj);
    expect((await countAndSum(metrics.registry)).count).toBe(0);
  });
});
