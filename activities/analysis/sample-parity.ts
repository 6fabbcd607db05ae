// strategy.sampleParity's judgement, pure: the tenants vmselect lists (/admin/tenants), one count
// answer read, and a zone's counts per tenant judged against a healthy zone's. An empty queue and
// zero drop counters are vmagent's word; the samples a zone holds are the zone's. Every answer is
// others' input: parsed and checked, never trusted. The I/O is ./count-samples.ts.
import { z } from 'zod';
import { CANARY_LIMITS, SAMPLE_PARITY_LIMITS } from '../../api/limits';
import type { SampleParity, TenantSamples } from '../../api/types';
import type { QueryAnswer } from './compare';

/** Tenants shown in the status (those short first). */
export const SHOWN_TENANTS = 20;

const TENANT_RE = new RegExp(CANARY_LIMITS.tenantPattern);
const tenantsSchema = z.object({ status: z.literal('success'), data: z.array(z.string()) });

/** `accountID` and `accountID:projectID` name the same tenant as `accountID:0`. */
export const canonicalTenant = (t: string): string => (t.includes(':') ? t : `${t}:0`);

/**
 * The tenants of a vmselect's /admin/tenants page (VictoriaMetrics cluster: `{"status":"success",
 * "data":["0:0","1:3"]}`), canonical and sorted; an entry that is not a tenant refuses the page.
 */
export function readTenants(status: number, body: string): { tenants: string[] } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { problem: `/admin/tenants: HTTP ${status}, not JSON` };
  }
  const r = tenantsSchema.safeParse(json);
  if (status !== 200 || !r.success) return { problem: `/admin/tenants: HTTP ${status}, not a tenants list` };
  const bad = r.data.data.find((t) => !TENANT_RE.test(t));
  if (bad !== undefined) return { problem: `/admin/tenants: ${JSON.stringify(bad.slice(0, 40))} is not a tenant` };
  return { tenants: [...new Set(r.data.data.map(canonicalTenant))].sort() };
}

/** The count query of a window: every sample of `selector` in the `windowMs` before the evaluation time. */
export const countQuery = (selector: string, windowMs: number): string => `sum(count_over_time((${selector})[${Math.max(1, Math.round(windowMs))}ms]))`;

/** The sample count of a count query's answer (an empty vector: none), or why it is not one. */
export function readCount(a: QueryAnswer): { count: number } | { error: string } {
  if (!a.ok) return { error: a.error };
  const { type, series } = a.result;
  if (type !== 'vector' || series.size > 1) return { error: `a ${type} of ${series.size} series, not one sum` };
  const point = [...series.values()][0]?.[0];
  if (point === undefined) return { count: 0 };
  const n = Number(point[1]);
  if (!Number.isFinite(n) || n < 0 || !Number.isInteger(n)) return { error: `${JSON.stringify(point[1].slice(0, 40))} is not a sample count` };
  return { count: n };
}

/** What was counted for one tenant: both counts, or why they are not known. */
export type TenantCount = { tenant: string; samples: number; healthySamples: number } | { tenant: string; error: string };

const pct = (part: number, whole: number) => `${whole === 0 ? 0 : Math.round((1000 * part) / whole) / 10}%`;

/**
 * The zone against the healthy zone over the window [from, to]: complete when every tenant was counted
 * on both and none lacks more than `tolerance` of the healthy zone's samples. More samples than the
 * healthy zone is not a loss of the zone's (a backfill without deduplication, or the healthy zone's own
 * loss): said, not held. A tenant that could not be counted, or a problem listing them, cannot tell.
 */
export function judgeSamples(input: {
  at: string;
  healthy: string;
  from: string;
  to: string;
  counts: readonly TenantCount[];
  tolerance: number;
  problem?: string;
}): SampleParity {
  const { counts, tolerance, healthy } = input;
  const counted: TenantSamples[] = [];
  const unknown: string[] = [];
  for (const c of counts) {
    if ('error' in c) unknown.push(`tenant ${c.tenant}: ${c.error}`);
    else counted.push({ ...c, missing: Math.max(0, c.healthySamples - c.samples) });
  }
  const short = counted.filter((t) => t.missing > 0 && t.missing > tolerance * t.healthySamples);
  const order = (a: TenantSamples, b: TenantSamples) => b.missing - a.missing || (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0);
  const shown = [...counted].sort(order).slice(0, SHOWN_TENANTS);
  const base = { at: input.at, healthy, from: input.from, to: input.to, tenants: shown, tenantCount: counts.length };
  const problems = [...(input.problem ? [input.problem] : []), ...unknown];
  const parts: string[] = [];
  if (short.length) {
    const missing = short.reduce((a, t) => a + t.missing, 0);
    const listed = [...short]
      .sort(order)
      .slice(0, 3)
      .map((t) => `tenant ${t.tenant} lacks ${t.missing} of ${t.healthySamples} (${pct(t.missing, t.healthySamples)})`);
    parts.push(
      `${missing} samples missing against ${healthy} over its window ${input.from} to ${input.to}: ${listed.join(', ')}${short.length > 3 ? `, and ${short.length - 3} more tenants` : ''}`,
    );
  }
  if (problems.length) parts.push(`cannot tell against ${healthy}: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''}`);
  if (parts.length) return { ...base, complete: false, message: parts.join('; ').slice(0, 1000) };
  const total = counted.reduce((a, t) => a + t.samples, 0);
  const over = counted.filter((t) => t.samples > t.healthySamples).length;
  return {
    ...base,
    complete: true,
    message:
      counts.length === 0
        ? `no tenant has samples of the selector on ${healthy} over the window ${input.from} to ${input.to}: nothing to miss`
        : `${total} samples in ${counts.length} tenant${counts.length === 1 ? '' : 's'} over the window ${input.from} to ${input.to}, as many as ${healthy} has (tolerance ${tolerance})` +
          (over ? `; ${over} tenant${over === 1 ? ' has' : 's have'} more than ${healthy}` : ''),
  };
}

/** The tenants to count: the spec's, or the healthy zone's list (refused above the cap: name them instead). */
export function tenantsToCount(named: readonly string[], listed: { tenants: string[] } | { problem: string }): { tenants: string[]; problem?: string } {
  if (named.length) return { tenants: [...new Set(named.map(canonicalTenant))] };
  if ('problem' in listed) return { tenants: [], problem: listed.problem };
  if (listed.tenants.length > SAMPLE_PARITY_LIMITS.maxTenants)
    return {
      tenants: [],
      problem: `${listed.tenants.length} tenants listed, more than ${SAMPLE_PARITY_LIMITS.maxTenants}: name the ones to count in strategy.sampleParity.tenants`,
    };
  return { tenants: listed.tenants };
}
