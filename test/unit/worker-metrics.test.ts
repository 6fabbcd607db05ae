// The worker's metrics: vmrollout_queue_pending_bytes lives only while a queue wait of this worker
// runs (activities/metrics.ts reportingQueues), so summed over the worker replicas it is the live
// value, never a stale one left by a replica whose wait ended; the step histogram is per object with
// buckets up to 24 h; vmrollout_build_info names the version and the build id.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Registry } from 'prom-client';
import { noopMetrics, reportingQueues, type ActivityMetrics, type QueueSampler } from '../../activities/metrics';
import type { QueueSample } from '../../api/rollout-contract';
import type { QueueTarget } from '../../workflows/activity-types';
import { MAX_STEP_DURATION_OBJECTS, createWorkerMetrics } from '../../worker/metrics';

const target = (zone: string): QueueTarget => ({
  namespace: 'ns',
  vmagentName: 'vmagent',
  vmclusterName: `vm-${zone}`,
  queueEmptyBytes: 0,
  zone,
  objectName: 'c1',
});
const sampleOf = (pendingBytes: number): QueueSample => ({
  at: '2026-01-01T00:00:00Z',
  pendingBytes,
  unreadablePods: 0,
  totalPods: 1,
  drained: pendingBytes === 0,
  message: '',
});

/** sum by (namespace, name, zone) (vmrollout_queue_pending_bytes) over replicas. */
async function pendingSum(registries: Registry[]): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  for (const r of registries) {
    const m = (await r.getMetricsAsJSON()).find((x) => x.name === 'vmrollout_queue_pending_bytes');
    for (const v of m?.values ?? []) {
      const key = `${String(v.labels.namespace)}/${String(v.labels.name)}/${String(v.labels.zone)}`;
      sums[key] = (sums[key] ?? 0) + v.value;
    }
  }
  return sums;
}

/** A wait that samples `bytes` in turn, then ends (or throws `fail`). */
function wait(bytes: number[], fail?: Error): (sample: QueueSampler) => Promise<void> {
  return async (sample) => {
    for (const _ of bytes) await sample(target('az-a'));
    if (fail) throw fail;
  };
}

function scripted(bytes: number[]): QueueSampler {
  let i = 0;
  return async () => sampleOf(bytes[Math.min(i++, bytes.length - 1)]!);
}

describe('vmrollout_queue_pending_bytes: one series per running wait', () => {
  it('set while the wait samples; removed when it ends, succeeded or failed', async () => {
    const m = createWorkerMetrics({ defaultMetrics: false });
    let during: Record<string, number> = {};
    await reportingQueues(m, scripted([4096, 1024]), async (sample) => {
      await sample(target('az-a'));
      await sample(target('az-a'));
      during = await pendingSum([m.registry]);
    });
    expect(during).toEqual({ 'ns/c1/az-a': 1024 });
    expect(await pendingSum([m.registry])).toEqual({});

    const err = new Error('zoneTimeout');
    await expect(reportingQueues(m, scripted([512]), wait([1], err))).rejects.toBe(err);
    expect(await pendingSum([m.registry])).toEqual({});
    expect(await m.registry.metrics()).not.toContain('vmrollout_queue_pending_bytes{');
  });

  it('two replicas: the one whose wait ended shows nothing, so the sum is the live value', async () => {
    const [a, b] = [createWorkerMetrics({ defaultMetrics: false }), createWorkerMetrics({ defaultMetrics: false })];
    // Replica a's wait saw 8 MiB, then ended (its worker lost the activity, or it timed out).
    await reportingQueues(a, scripted([8 << 20]), wait([1]));
    // Replica b runs the next wait: the backlog is gone.
    let sum: Record<string, number> = {};
    await reportingQueues(b, scripted([0]), async (sample) => {
      await sample(target('az-a'));
      sum = await pendingSum([a.registry, b.registry]);
    });
    expect(sum).toEqual({ 'ns/c1/az-a': 0 });
  });

  it('negative control: without the removal (the old gauge, last value kept forever) the sum adds the stale 8 MiB', async () => {
    const keepForever = (m: ActivityMetrics): ActivityMetrics => ({ ...m, queueWatchEnded: noopMetrics.queueWatchEnded });
    const [a, b] = [createWorkerMetrics({ defaultMetrics: false }), createWorkerMetrics({ defaultMetrics: false })];
    await reportingQueues(keepForever(a), scripted([8 << 20]), wait([1]));
    let sum: Record<string, number> = {};
    await reportingQueues(keepForever(b), scripted([0]), async (sample) => {
      await sample(target('az-a'));
      sum = await pendingSum([a.registry, b.registry]);
    });
    expect(sum).toEqual({ 'ns/c1/az-a': 8 << 20 });
  });

  it('labels: the zone and the object when the target names them, else the VMCluster and the vmagent', async () => {
    const m = createWorkerMetrics({ defaultMetrics: false });
    let during: Record<string, number> = {};
    await reportingQueues(m, scripted([7]), async (sample) => {
      await sample({ namespace: 'ns', vmagentName: 'vmagent', vmclusterName: 'vm-az-b', queueEmptyBytes: 0 });
      during = await pendingSum([m.registry]);
    });
    expect(during).toEqual({ 'ns/vmagent/vm-az-b': 7 });
  });

  it('the worker exports no per-worker rollout phase gauge', async () => {
    expect(await createWorkerMetrics({ defaultMetrics: false }).registry.metrics()).not.toContain('vmrollout_rollout');
  });
});

/** The histogram's samples as `name{labels} value` lines. */
async function stepDurationLines(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l.startsWith('vmrollout_zone_step_duration_seconds'));
}

describe('vmrollout_zone_step_duration_seconds: per object, up to 24 h', () => {
  it("carries the object's namespace and name, so two objects' steps stay apart", async () => {
    const m = createWorkerMetrics({ defaultMetrics: false });
    m.zoneStepDuration({ namespace: 'ns', name: 'c1' }, 'Upgrading', 90);
    m.zoneStepDuration({ namespace: 'ns', name: 'c2' }, 'Upgrading', 30);
    const lines = await stepDurationLines(m.registry);
    expect(lines).toContain('vmrollout_zone_step_duration_seconds_sum{namespace="ns",name="c1",step="Upgrading"} 90');
    expect(lines).toContain('vmrollout_zone_step_duration_seconds_sum{namespace="ns",name="c2",step="Upgrading"} 30');
  });

  it('a 20 h queue wait lands in a finite bucket (le 86400), not only in +Inf', async () => {
    const m = createWorkerMetrics({ defaultMetrics: false });
    m.zoneStepDuration({ namespace: 'ns', name: 'c1' }, 'WaitingForQueue', 20 * 3600);
    const lines = await stepDurationLines(m.registry);
    const bucket = (le: string) => lines.find((l) => l.includes(`le="${le}"`))?.split(' ')[1];
    expect(bucket('43200')).toBe('0');
    expect(bucket('86400')).toBe('1');
    expect(bucket('+Inf')).toBe('1');
  });
});

describe('vmrollout_zone_step_duration_seconds: bounded however many objects come and go', () => {
  const objectsIn = (lines: string[]) => new Set(lines.filter((l) => l.includes('_count{')).map((l) => /name="([^"]+)"/.exec(l)![1]));

  it('past the cap of objects, the histogram starts over with the newest one', async () => {
    const m = createWorkerMetrics({ defaultMetrics: false, maxStepDurationObjects: 2 });
    m.zoneStepDuration({ namespace: 'ns', name: 'a' }, 'Upgrading', 1);
    m.zoneStepDuration({ namespace: 'ns', name: 'b' }, 'Upgrading', 1);
    m.zoneStepDuration({ namespace: 'ns', name: 'a' }, 'LeavingReads', 1);
    expect(objectsIn(await stepDurationLines(m.registry))).toEqual(new Set(['a', 'b']));
    m.zoneStepDuration({ namespace: 'ns', name: 'c' }, 'Upgrading', 1);
    expect(objectsIn(await stepDurationLines(m.registry))).toEqual(new Set(['c']));
  });

  it('negative control: without the cap (as many as there are) every object created ever keeps its series', async () => {
    const m = createWorkerMetrics({ defaultMetrics: false, maxStepDurationObjects: Infinity });
    for (const name of ['a', 'b', 'c']) m.zoneStepDuration({ namespace: 'ns', name }, 'Upgrading', 1);
    expect(objectsIn(await stepDurationLines(m.registry))).toEqual(new Set(['a', 'b', 'c']));
  });

  it('the default cap is MAX_STEP_DURATION_OBJECTS', async () => {
    const m = createWorkerMetrics({ defaultMetrics: false });
    for (let i = 0; i <= MAX_STEP_DURATION_OBJECTS; i++) m.zoneStepDuration({ namespace: 'ns', name: `o${i}` }, 'Upgrading', 1);
    expect(objectsIn(await stepDurationLines(m.registry))).toEqual(new Set([`o${MAX_STEP_DURATION_OBJECTS}`]));
  });
});

describe('vmrollout_build_info of the worker', () => {
  it('1, with the version of package.json and the Worker Versioning build id', async () => {
    const m = createWorkerMetrics({ defaultMetrics: false, buildId: 'v1.2.3-abc' });
    const pkg = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
    expect(await m.registry.metrics()).toContain(`vmrollout_build_info{version="${pkg}",build_id="v1.2.3-abc"} 1`);
  });

  it('unversioned: an empty build_id (a label Prometheus then drops)', async () => {
    const m = createWorkerMetrics({ defaultMetrics: false, version: '9.9.9' });
    expect(await m.registry.metrics()).toContain('vmrollout_build_info{version="9.9.9",build_id=""} 1');
  });
});
