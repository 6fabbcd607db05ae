// One measurement's orchestration (activities/analysis/measure.ts) over a stand-in of the pods of
// both zones' vmselect services that answers with real VictoriaMetrics v1.150.0 bodies
// (test/fixtures/vmselect): which pods are asked, with what, at which time, and what a zone that
// cannot be asked makes of the measurement.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { measureCanary } from '../../activities/analysis/measure';
import { plainPollContext } from '../../activities/activity-context';
import type { ServicePod, ServicePods } from '../../activities/pods/service-pods';
import type { CanaryMeasureInput } from '../../workflows/activity-types';

const FX = JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/vmselect/victoria-metrics-v1.150.0-answers.json'), 'utf8')) as Record<
  string,
  { query?: string; status: number; body: string }
>;
const NOW = 1_796_489_576_000;
const input: CanaryMeasureInput = {
  namespace: 'm',
  canary: { zone: 'az-c', vmcluster: 'vm-az-c' },
  baseline: { zone: 'az-a', vmcluster: 'vm-az-a' },
  analysis: {
    intervalMs: 30_000,
    tenant: '42:1',
    queries: [FX.count!.query!],
    recentQueries: 5,
    maxLatencyRatio: 2,
    tolerance: 0.01,
    freshnessSelector: 'vmrollout_e2e_heartbeat',
    maxIngestionLagMs: 10_000,
  },
};

/** The pods of each zone's vmselect service, and what each answers (by query text; the canary's count from `canaryCount`). */
function pods(o: { listed?: Record<string, ServicePod[]>; canaryCount?: string } = {}) {
  const asked: Array<{ pod: string; path: string }> = [];
  const listed = o.listed ?? {
    'vmselect-vm-a': [],
    'vmselect-vm-az-a': [
      { name: 'vmselect-vm-az-a-1', address: '10.0.0.2', port: 8481, ready: true },
      { name: 'vmselect-vm-az-a-0', address: '10.0.0.1', port: 8481, ready: true },
    ],
    'vmselect-vm-az-c': [{ name: 'vmselect-vm-az-c-0', address: '10.0.0.3', port: 8481, ready: true }],
  };
  // The answers before the deletion (the AfterDelete ones ask the same queries).
  const byQuery = new Map(Object.entries(FX).flatMap(([name, f]) => (f.query && !name.endsWith('AfterDelete') ? [[f.query, f] as const] : [])));
  const fake = {
    list: async (_ns: string, service: string) => listed[service] ?? [],
    get: async (pod: ServicePod, pathAndQuery: string) => {
      asked.push({ pod: pod.name, path: pathAndQuery });
      const u = new URL(pathAndQuery, 'http://x');
      if (u.pathname.endsWith('/status/top_queries')) return { status: 200, body: FX.topQueries!.body };
      const q = u.searchParams.get('query')!;
      const f = pod.name.includes('az-c') && q === FX.count!.query && o.canaryCount ? FX[o.canaryCount]! : (byQuery.get(q) ?? FX.syntaxError!);
      return { status: f.status, body: f.body };
    },
    describeScrapeError: (err: unknown) => `scrape error: ${String(err)}`,
  };
  return { asked, fake: fake as unknown as ServicePods };
}

test('the first verified pod of each zone, the same instant query at the same time (maxIngestionLag ago) on both, the tenant in the path', async () => {
  const { asked, fake } = pods();
  const m = await measureCanary(fake, plainPollContext(), input, () => NOW);
  expect(m.verdict).toBe('Successful');
  expect(new Set(asked.map((a) => a.pod))).toEqual(new Set(['vmselect-vm-az-a-0', 'vmselect-vm-az-c-0']));
  const queries = asked.filter((a) => a.path.includes('/query?'));
  for (const a of queries) expect(a.path.startsWith('/select/42:1/prometheus/api/v1/query?')).toBe(true);
  const count = queries.filter((a) => new URL(a.path, 'http://x').searchParams.get('query') === FX.count!.query);
  expect(count.map((a) => new URL(a.path, 'http://x').searchParams.get('time'))).toEqual([
    String((NOW - 10_000) / 1000) + '.000',
    String((NOW - 10_000) / 1000) + '.000',
  ]);
  expect(count.every((a) => new URL(a.path, 'http://x').searchParams.get('nocache') === '1')).toBe(true);
  // Recent queries from the baseline's top_queries only (its own spec and freshness queries left out), then the freshness query at now.
  expect(asked.filter((a) => a.path.includes('top_queries')).map((a) => a.pod)).toEqual(['vmselect-vm-az-a-0']);
  expect(m.queries.map((q) => [q.source, q.verdict])).toEqual([
    ['spec', 'match'],
    ['recent', 'match'],
    ['recent', 'match'],
    ['freshness', 'match'],
  ]);
  expect(m.lagSeconds).toBe(0);
});

test('a canary whose series was deleted (the real answer after delete_series): Failed, with the first difference', async () => {
  const { fake } = pods({ canaryCount: 'countAfterDelete' });
  const m = await measureCanary(fake, plainPollContext(), input, () => NOW);
  expect(m).toMatchObject({ verdict: 'Failed', message: expect.stringMatching(/^1 of 4 queries failed on the canary: mismatch for count_over_time/) });
});

test('a zone without a ready, verified vmselect pod makes the measurement Inconclusive, naming it; nothing is asked', async () => {
  const unverified = {
    name: 'vmselect-vm-az-c-0',
    address: '10.9.9.9',
    port: 8481,
    ready: true,
    problem: 'not verified as the workload pod',
    unverified: true as const,
  };
  const { asked, fake } = pods({
    listed: { 'vmselect-vm-az-a': [{ name: 'a', address: '10.0.0.1', port: 8481, ready: true }], 'vmselect-vm-az-c': [unverified] },
  });
  const m = await measureCanary(fake, plainPollContext(), input, () => NOW);
  expect(m).toMatchObject({
    verdict: 'Inconclusive',
    queries: [],
    message: 'cannot measure: canary az-c: no ready, verified vmselect pod (EndpointSlices of service vmselect-vm-az-c)',
  });
  expect(asked).toEqual([]);
});
