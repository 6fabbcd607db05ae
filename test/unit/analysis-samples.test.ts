// strategy.sampleParity: the count's reading and judgement (activities/analysis/sample-parity.ts) on
// real VictoriaMetrics v1.150.0 answers (test/fixtures/vmselect), and its orchestration
// (activities/analysis/count-samples.ts) over a stand-in of both zones' vmselect pods: which pods are
// asked, with what, and what a zone that cannot be asked makes of the verdict.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { plainPollContext } from '../../activities/activity-context';
import { readAnswer } from '../../activities/analysis/compare';
import { countSamples } from '../../activities/analysis/count-samples';
import { countQuery, judgeSamples, readCount, readTenants, tenantsToCount } from '../../activities/analysis/sample-parity';
import type { ServicePod, ServicePods } from '../../activities/pods/service-pods';
import type { SampleCountInput } from '../../workflows/activity-types';

const FX = JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/vmselect/victoria-metrics-v1.150.0-answers.json'), 'utf8')) as Record<
  string,
  { query?: string; status: number; body: string }
>;
const answer = (name: string) => readAnswer(FX[name]!.status, FX[name]!.body, 3);

describe('reading a count', () => {
  it('reads the sum of a real answer, an empty vector as 0, and refuses what is not one count', () => {
    expect(countQuery('{__name__!=""}', 20_000)).toBe(FX.samples!.query);
    expect(readCount(answer('samples'))).toEqual({ count: 12 });
    expect(readCount(answer('samplesNone'))).toEqual({ count: 0 });
    // A query vmselect refused, a series per instance instead of a sum, a count that is not a count.
    expect(readCount(answer('syntaxError'))).toEqual({ error: expect.stringContaining('HTTP 400') });
    expect(readCount(answer('rate'))).toEqual({ error: 'a vector of 2 series, not one sum' });
    expect(readCount(answer('matrix'))).toEqual({ error: expect.stringMatching(/^a matrix of/) });
    const body = (v: string) => JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, v] }] } });
    for (const bad of ['NaN', '-1', '1.5', '+Inf', '1e400']) expect(readCount(readAnswer(200, body(bad), 1))).toHaveProperty('error');
  });

  it("reads a cluster vmselect's /admin/tenants page, canonical and sorted; refuses anything else", () => {
    expect(readTenants(200, '{"status":"success","data":["1:3","0:0","7"]}')).toEqual({ tenants: ['0:0', '1:3', '7:0'] });
    expect(readTenants(200, '{"status":"success","data":[]}')).toEqual({ tenants: [] });
    expect(readTenants(200, '{"status":"success","data":["0:0","../x"]}')).toEqual({ problem: '/admin/tenants: "../x" is not a tenant' });
    expect(readTenants(200, '{"status":"success","data":["__proto__"]}')).toHaveProperty('problem');
    expect(readTenants(500, '{"status":"error"}')).toEqual({ problem: '/admin/tenants: HTTP 500, not a tenants list' });
    expect(readTenants(200, 'OK')).toEqual({ problem: '/admin/tenants: HTTP 200, not JSON' });
  });

  it('counts the named tenants, or the listed ones up to the cap', () => {
    expect(tenantsToCount(['5', '5:0', '6:1'], { tenants: ['0:0'] })).toEqual({ tenants: ['5:0', '6:1'] });
    expect(tenantsToCount([], { tenants: ['0:0', '1:0'] })).toEqual({ tenants: ['0:0', '1:0'] });
    const many = Array.from({ length: 51 }, (_, i) => `${i}:0`);
    expect(tenantsToCount([], { tenants: many })).toEqual({ tenants: [], problem: expect.stringContaining('51 tenants listed, more than 50: name the ones') });
  });
});

describe('judging the counts', () => {
  const window = { at: '2026-12-05T10:00:30Z', healthy: 'az-a', from: '2026-12-05T09:50:00Z', to: '2026-12-05T10:00:00Z', tolerance: 0.001 };

  it('complete when every tenant has what the healthy zone has (more is said, not held)', () => {
    const v = judgeSamples({
      ...window,
      counts: [
        { tenant: '0:0', samples: 5000, healthySamples: 5000 },
        { tenant: '1:0', samples: 10_005, healthySamples: 10_000 },
        { tenant: '2:0', samples: 999_500, healthySamples: 1_000_000 },
      ],
    });
    expect(v).toMatchObject({ complete: true, healthy: 'az-a', tenantCount: 3 });
    expect(v.tenants[0]).toEqual({ tenant: '2:0', samples: 999_500, healthySamples: 1_000_000, missing: 500 });
    expect(v.message).toBe(
      '1014505 samples in 3 tenants over the window 2026-12-05T09:50:00Z to 2026-12-05T10:00:00Z, as many as az-a has (tolerance 0.001); 1 tenant has more than az-a',
    );
  });

  it('short beyond the tolerance: not complete, the tenants short first, with the numbers', () => {
    const v = judgeSamples({
      ...window,
      counts: [
        { tenant: '0:0', samples: 5000, healthySamples: 5000 },
        { tenant: '3:0', samples: 700, healthySamples: 1000 },
        { tenant: '1:0', samples: 0, healthySamples: 40 },
      ],
    });
    expect(v.complete).toBe(false);
    expect(v.tenants.map((t) => [t.tenant, t.missing])).toEqual([
      ['3:0', 300],
      ['1:0', 40],
      ['0:0', 0],
    ]);
    expect(v.message).toBe(
      '340 samples missing against az-a over its window 2026-12-05T09:50:00Z to 2026-12-05T10:00:00Z: tenant 3:0 lacks 300 of 1000 (30%), tenant 1:0 lacks 40 of 40 (100%)',
    );
  });

  it('cannot tell (a tenant not counted, or no tenant list): not complete, says why', () => {
    const v = judgeSamples({ ...window, counts: [{ tenant: '0:0', error: 'az-b did not count it: HTTP 503' }] });
    expect(v).toMatchObject({ complete: false, tenants: [], tenantCount: 1 });
    expect(v.message).toBe('cannot tell against az-a: tenant 0:0: az-b did not count it: HTTP 503');
    expect(judgeSamples({ ...window, counts: [], problem: '/admin/tenants: HTTP 404, not a tenants list' })).toMatchObject({ complete: false });
    // Nothing listed, nothing to miss.
    expect(judgeSamples({ ...window, counts: [] })).toMatchObject({ complete: true, message: expect.stringMatching(/^no tenant has samples/) });
  });

  it('the zero tolerance holds a single missing sample; the status shows at most 20 tenants', () => {
    const counts = Array.from({ length: 30 }, (_, i) => ({ tenant: `${i}:0`, samples: 100, healthySamples: i === 29 ? 101 : 100 }));
    const v = judgeSamples({ ...window, tolerance: 0, counts });
    expect(v).toMatchObject({ complete: false, tenantCount: 30 });
    expect(v.tenants).toHaveLength(20);
    expect(v.tenants[0]).toMatchObject({ tenant: '29:0', missing: 1 });
  });
});

describe('counting on both zones', () => {
  const input: SampleCountInput = {
    namespace: 'm',
    zone: { zone: 'az-b', vmcluster: 'vm-az-b' },
    healthy: { zone: 'az-a', vmcluster: 'vm-az-a' },
    fromMs: 1_796_499_786_000,
    toMs: 1_796_499_806_000,
    parity: { tenants: [], selector: '{__name__!=""}', tolerance: 0.001, lagMs: 30_000 },
  };
  const POD = (name: string, address: string): ServicePod => ({ name, address, port: 8481, ready: true });

  function pods(o: { zoneAnswer?: string; tenantsPage?: string; listed?: Record<string, ServicePod[]> } = {}) {
    const asked: Array<{ pod: string; path: string }> = [];
    const listed = o.listed ?? {
      'vmselect-vm-az-a': [POD('vmselect-vm-az-a-1', '10.0.0.2'), POD('vmselect-vm-az-a-0', '10.0.0.1')],
      'vmselect-vm-az-b': [POD('vmselect-vm-az-b-0', '10.0.0.3')],
    };
    const fake = {
      list: async (_ns: string, service: string) => listed[service] ?? [],
      get: async (pod: ServicePod, pathAndQuery: string) => {
        asked.push({ pod: pod.name, path: pathAndQuery });
        if (pathAndQuery.startsWith('/admin/tenants')) return { status: 200, body: o.tenantsPage ?? '{"status":"success","data":["0:0","1:0"]}' };
        const f = pod.name.includes('az-b') && o.zoneAnswer ? FX[o.zoneAnswer]! : FX.samples!;
        return { status: f.status, body: f.body };
      },
      describeScrapeError: (err: unknown) => `scrape error: ${String(err)}`,
    };
    return { asked, fake: fake as unknown as ServicePods };
  }

  it("asks the healthy zone's first pod for the tenants of the window, then both zones for each tenant's count at the window's end", async () => {
    const { asked, fake } = pods();
    const v = await countSamples(fake, plainPollContext(), input, () => 1_796_499_836_000);
    expect(v).toMatchObject({ complete: true, healthy: 'az-a', tenantCount: 2, from: '2026-12-05T19:43:06.000Z', to: '2026-12-05T19:43:26.000Z' });
    expect(asked[0]).toEqual({ pod: 'vmselect-vm-az-a-0', path: '/admin/tenants?start=1796499786&end=1796499807' });
    const counts = asked.slice(1);
    expect(counts.map((a) => a.pod).sort()).toEqual(['vmselect-vm-az-a-0', 'vmselect-vm-az-a-0', 'vmselect-vm-az-b-0', 'vmselect-vm-az-b-0']);
    for (const tenant of ['0:0', '1:0']) {
      const p = counts.find((a) => a.pod === 'vmselect-vm-az-b-0' && a.path.startsWith(`/select/${tenant}/`))!.path;
      const u = new URL(p, 'http://x');
      expect(u.pathname).toBe(`/select/${tenant}/prometheus/api/v1/query`);
      expect(Object.fromEntries(u.searchParams)).toEqual({ query: FX.samples!.query, time: '1796499806.000', nocache: '1', timeout: '10s' });
    }
  });

  it('a zone with nothing in the window is short; named tenants are not listed', async () => {
    const { asked, fake } = pods({ zoneAnswer: 'samplesNone' });
    const v = await countSamples(fake, plainPollContext(), { ...input, parity: { ...input.parity, tenants: ['42'] } });
    expect(v).toMatchObject({ complete: false, tenants: [{ tenant: '42:0', samples: 0, healthySamples: 12, missing: 12 }] });
    expect(asked.some((a) => a.path.startsWith('/admin/tenants'))).toBe(false);
  });

  it('a zone that refuses the count, or has no pod, or a tenants page that is not one: cannot tell', async () => {
    const refused = await countSamples(pods({ zoneAnswer: 'syntaxError' }).fake, plainPollContext(), input);
    expect(refused).toMatchObject({ complete: false });
    expect(refused.message).toMatch(/^cannot tell against az-a: tenant 0:0: az-b did not count it: HTTP 400/);
    const noPod = await countSamples(pods({ listed: { 'vmselect-vm-az-a': [POD('vmselect-vm-az-a-0', '10.0.0.1')] } }).fake, plainPollContext(), input);
    expect(noPod.message).toBe('cannot tell against az-a: az-b: no ready, verified vmselect pod (EndpointSlices of service vmselect-vm-az-b)');
    const page = await countSamples(pods({ tenantsPage: '{"status":"success","data":["0:0","x"]}' }).fake, plainPollContext(), input);
    expect(page).toMatchObject({ complete: false, tenantCount: 0, message: 'cannot tell against az-a: /admin/tenants: "x" is not a tenant' });
  });
});
