// strategy.sampleParity, the I/O: a zone's samples per tenant over its window, counted on one
// verified vmselect pod of the zone and of a zone in reads, at the same evaluation time, with the
// same query (no cache). Never throws for what a zone answers: what cannot be counted is said in the
// verdict (./sample-parity.ts), which holds the zone.
import type { SampleParity } from '../../api/types';
import type { SampleCountInput } from '../../workflows/activity-types';
import type { PollContext } from '../activity-context';
import type { ServicePod, ServicePods } from '../pods/service-pods';
import { readAnswer } from './compare';
import { MAX_ANSWER_BYTES, QUERY_TIMEOUT_MS } from './measure';
import { apiPrefix, pickReadPod } from './pick-read-pod';
import { countQuery, judgeSamples, readCount, readTenants, tenantsToCount, type TenantCount } from './sample-parity';

/** Tenants counted at once (two queries each, one per zone). */
const CONCURRENCY = 4;
/** The whole count's budget: tenants not counted by then cannot tell (the cleanup's calls last a minute). */
export const COUNT_BUDGET_MS = 40_000;
/** An /admin/tenants page this large is not a tenants list. */
const MAX_TENANTS_PAGE_BYTES = 256 * 1024;

export async function countSamples(pods: ServicePods, ctx: PollContext, input: SampleCountInput, now: () => number = Date.now): Promise<SampleParity> {
  const { namespace, parity } = input;
  const started = now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const window = { at: iso(started), healthy: input.healthy.zone, from: iso(input.fromMs), to: iso(input.toMs), tolerance: parity.tolerance };
  const [h, c] = await Promise.all([pickReadPod(pods, namespace, input.healthy, ctx.signal), pickReadPod(pods, namespace, input.zone, ctx.signal)]);
  if (typeof h === 'string' || typeof c === 'string') {
    const why = typeof h === 'string' ? `${input.healthy.zone}: ${h}` : `${input.zone.zone}: ${c as string}`;
    return judgeSamples({ ...window, counts: [], problem: why });
  }
  const get = async (pod: ServicePod, path: string, maxBytes: number) => {
    try {
      return await pods.get(pod, path, { signal: ctx.signal, timeoutMs: QUERY_TIMEOUT_MS, maxBytes });
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      return { status: 0, body: '', error: pods.describeScrapeError(err) };
    }
  };
  const seconds = (ms: number) => Math.floor(ms / 1000);
  let listed: ReturnType<typeof readTenants> = { tenants: [] };
  if (parity.tenants.length === 0) {
    const r = await get(h, `/admin/tenants?start=${seconds(input.fromMs)}&end=${seconds(input.toMs) + 1}`, MAX_TENANTS_PAGE_BYTES);
    listed = 'error' in r ? { problem: `/admin/tenants: ${r.error}` } : readTenants(r.status, r.body);
  }
  const { tenants, problem } = tenantsToCount(parity.tenants, listed);
  const query = `/query?query=${encodeURIComponent(countQuery(parity.selector, input.toMs - input.fromMs))}&time=${(input.toMs / 1000).toFixed(3)}&nocache=1&timeout=${QUERY_TIMEOUT_MS / 1000}s`;
  const count = async (pod: ServicePod, tenant: string) => {
    const t0 = now();
    const r = await get(pod, `${apiPrefix(pod === h ? input.healthy : input.zone, tenant)}${query}`, MAX_ANSWER_BYTES);
    return 'error' in r ? { error: r.error } : readCount(readAnswer(r.status, r.body, now() - t0));
  };
  const counts: TenantCount[] = [];
  for (let i = 0; i < tenants.length; i += CONCURRENCY) {
    const batch = tenants.slice(i, i + CONCURRENCY);
    if (now() - started > COUNT_BUDGET_MS) {
      for (const tenant of tenants.slice(i))
        counts.push({ tenant, error: `not counted within ${COUNT_BUDGET_MS / 1000} s: narrow strategy.sampleParity.selector or tenants` });
      break;
    }
    ctx.heartbeat({ tenant: i + 1, of: tenants.length });
    counts.push(
      ...(await Promise.all(
        batch.map(async (tenant): Promise<TenantCount> => {
          const [hc, zc] = await Promise.all([count(h, tenant), count(c, tenant)]);
          if ('error' in hc) return { tenant, error: `${input.healthy.zone} did not count it: ${hc.error}` };
          if ('error' in zc) return { tenant, error: `${input.zone.zone} did not count it: ${zc.error}` };
          return { tenant, samples: zc.count, healthySamples: hc.count };
        }),
      )),
    );
  }
  return judgeSamples({ ...window, counts, ...(problem ? { problem } : {}) });
}
