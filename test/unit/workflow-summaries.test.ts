// What the Temporal Web UI shows of a rollout: each activity call's summary
// (workflows/activity-summary.ts), the workflow's current details (workflows/status.ts) and its
// static summary/details fixed at the start (api/rollout-start.ts).
import { activitySummary } from '../../workflows/activity-summary';
import { currentDetails } from '../../workflows/status';
import { workflowDescription } from '../../api/rollout-start';
import { DEFAULT_STRATEGY } from '../../api/limits';
import type { NormalizedSpec } from '../../api/types';

const removal = (kind: 'VMAuth' | 'VMUser', name: string) => ({ route: { kind, name }, vmcluster: { name: 'vm-az-b', namespace: 'monitoring' }, removed: [] });

test('a route edit names the zone and the routes, both ways', () => {
  const input = { namespace: 'monitoring', vmauthName: 'vm-global', removals: [removal('VMAuth', 'vm-global'), removal('VMUser', 'reads-az-b')] };
  expect(activitySummary('editRoutes', { ...input, direction: 'remove' })).toBe('remove vm-az-b from VMAuth vm-global, VMUser reads-az-b');
  expect(activitySummary('editRoutes', { ...input, direction: 'restore' })).toBe('put vm-az-b back into VMAuth vm-global, VMUser reads-az-b');
});

test('the upgrade and the waits say what they do', () => {
  expect(
    activitySummary('applyObject', { kind: 'VMCluster', namespace: 'm', name: 'vm-az-b', patch: { clusterVersion: 'v1.151.0-cluster' }, create: false }),
  ).toBe('apply VMCluster vm-az-b (clusterVersion v1.151.0-cluster)');
  expect(activitySummary('waitOperational', { kind: 'VMCluster', namespace: 'm', name: 'vm-az-b', generation: 4, pollIntervalMs: 1000 })).toBe(
    'wait until VMCluster vm-az-b is operational at generation 4',
  );
  expect(
    activitySummary('watchQueue', {
      namespace: 'm',
      vmagentName: 'g',
      vmclusterName: 'vm-az-b',
      queueEmptyBytes: 0,
      queueDrainedForMs: 30_000,
      pollIntervalMs: 1000,
    }),
  ).toBe("wait until vmagent's queue for vm-az-b stays empty for 30s");
});

test('an unknown activity or an input shaped otherwise (an older version) has no summary, and never throws', () => {
  expect(activitySummary('noSuchActivity', {})).toBeUndefined();
  expect(activitySummary('editRoutes', { direction: 'remove' })).toBeUndefined();
  expect(activitySummary('readObject', undefined)).toBeUndefined();
});

test('a summary is one line of at most 200 characters', () => {
  const routes = Array.from({ length: 40 }, (_, i) => ({ kind: 'VMUser' as const, name: `reads-${i}` }));
  const s = activitySummary('readRoutes', { namespace: 'm', routes })!;
  expect(s.length).toBe(200);
  expect(s).not.toContain('\n');
});

test('current details: the phase, zone N of M and its step, what is out of reads, the message', () => {
  const details = currentDetails({
    phase: 'Progressing',
    currentZone: 'az-b',
    zonesOutOfRotation: ['az-b'],
    message: 'upgrading zone az-b',
    zones: [
      { name: 'az-a', phase: 'Done' },
      { name: 'az-b', phase: 'WaitingForQueue' },
      { name: 'az-c', phase: 'Pending' },
    ],
  });
  expect(details).toBe('**Progressing**: zone 2 of 3, `az-b` WaitingForQueue\n\nout of reads: `az-b`\n\nupgrading zone az-b');
  expect(currentDetails({ phase: 'Succeeded', zones: [] })).toBe('**Succeeded**\n\nout of reads: none');
});

test('current details at a gate: what is awaited and the two commands, in place of the message', () => {
  const details = currentDetails({
    phase: 'Progressing',
    currentZone: 'az-b',
    message: 'waiting at gate AfterFirstZone',
    awaiting: { gates: ['AfterFirstZone'], nextZone: 'az-b', since: '2026-12-05T11:00:00.000Z' },
    zones: [
      { name: 'az-a', phase: 'Done' },
      { name: 'az-b', phase: 'Pending' },
    ],
  });
  expect(details).toBe(
    '**Progressing**: zone 2 of 2, `az-b` Pending\n\nout of reads: none\n\n**awaiting approval** at gate AfterFirstZone since 2026-12-05T11:00:00.000Z: `kubectl vmdc promote` starts `az-b`, `kubectl vmdc abort` ends the rollout here',
  );
});

test('the static summary and details name the object, the version, the zones in order and the strategy', () => {
  const spec = (): NormalizedSpec => ({
    paused: false,
    clusterVersion: 'v1.151.0-cluster',
    overrideSpec: {},
    zones: ['az-a', 'az-b'].map((z) => ({ name: z, vmcluster: { name: `vm-${z}` } })),
    vmauth: { name: 'vm-global' },
    vmagent: { name: 'vm-global' },
    strategy: { ...DEFAULT_STRATEGY, order: 'Declared' },
  });
  const d = workflowDescription({
    object: { namespace: 'monitoring', name: 'vm-global', uid: 'u-1', generation: 3 },
    spec: spec(),
    previousWorkflowIds: ['vmdc/monitoring/vm-global/g2-u-1'],
  });
  expect(d.staticSummary).toBe('monitoring/vm-global → v1.151.0-cluster (generation 3, 2 zones)');
  expect(d.staticDetails).toContain('`az-a` (VMCluster `vm-az-a`), `az-b` (VMCluster `vm-az-b`)');
  expect(d.staticDetails).toContain('in this order');
  expect(d.staticDetails).toContain('**supersedes** `vmdc/monitoring/vm-global/g2-u-1`');
  expect(d.staticSummary).not.toContain('\n');
  expect(d.staticDetails).not.toContain('fleet');
  const member = workflowDescription({
    object: { namespace: 'monitoring', name: 'vm-global', uid: 'u-1', generation: 3 },
    spec: { ...spec(), fleet: { name: 'prod', region: 'eu' } },
    previousWorkflowIds: [],
  });
  expect(member.staticDetails).toContain('**fleet** `prod`, region `eu`: a child of `fleet/monitoring/prod`, one member per region at a time');
});

test('the canary: each measurement says what it compares; the Inconclusive wait says what promote and abort do to the canary', () => {
  const analysis = {
    intervalMs: 30_000,
    tenant: '0',
    queries: ['up', 'sum(up)'],
    recentQueries: 5,
    maxLatencyRatio: 2,
    tolerance: 0.01,
    maxIngestionLagMs: 30_000,
  };
  const input = { namespace: 'm', canary: { zone: 'az-c', vmcluster: 'vm-az-c' }, baseline: { zone: 'az-a', vmcluster: 'vm-az-a' }, analysis };
  expect(activitySummary('measureCanary', input)).toBe('compare canary vm-az-c with vm-az-a: 2 queries + 5 recent');
  expect(activitySummary('measureCanary', { ...input, analysis: { ...analysis, recentQueries: 0, freshnessSelector: 'up' } })).toBe(
    'compare canary vm-az-c with vm-az-a: 2 queries, ingestion lag',
  );
  const details = currentDetails({
    phase: 'Progressing',
    currentZone: 'az-c',
    awaiting: { gates: [], nextZone: 'az-c', canary: 'az-c', since: '2026-12-05T11:00:00.000Z' },
    zonesOutOfRotation: ['az-c'],
    zones: [{ name: 'az-c', phase: 'Analyzing' }],
  });
  expect(details).toBe(
    '**Progressing**: zone 1 of 1, `az-c` Analyzing\n\nout of reads: `az-c`\n\n**awaiting approval** since 2026-12-05T11:00:00.000Z: the analysis of canary az-c was Inconclusive: waiting for a person, the canary out of reads: promote puts it back into reads and goes on, abort fails it (it stays out)',
  );
});
