// One measurement of the canary zone against the baseline zone (strategy.canary.analysis): the same
// MetricsQL queries to one verified vmselect pod of each, at the same evaluation time, timed; plus
// the newest sample of freshnessSelector on each. Every answer is others' input: capped in size and
// time and parsed as ./compare.ts says. Never throws for what a zone answers: a zone that cannot
// be asked makes the measurement Inconclusive, and the workflow decides.
import { z } from 'zod';
import { CANARY_LIMITS } from '../../api/limits';
import type { AnalysisMeasurement, QueryComparison } from '../../api/types';
import type { CanaryMeasureInput } from '../../workflows/activity-types';
import type { PollContext } from '../activity-context';
import type { ServicePod, ServicePods } from '../pods/service-pods';
import { apiPrefix, pickReadPod } from './pick-read-pod';
import { compareFreshness, compareQuery, judgeMeasurement, readAnswer, type QueryAnswer } from './compare';

/** One query's time limit on each zone (vmselect's own `timeout` arg too). */
export const QUERY_TIMEOUT_MS = 10_000;
/** The largest answer read, bytes. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

const topQueriesSchema = z.object({ topByCount: z.array(z.object({ query: z.string() })) });

/**
 * Pure: the most frequent recent queries of a vmselect's /api/v1/status/top_queries page (VictoriaMetrics
 * app/vmselect/querystats), at most `n`, none longer than `maxLength`, none already in `exclude`;
 * an unreadable page gives none (the measurement says so).
 */
export function recentQueries(body: string, n: number, maxLength: number, exclude: readonly string[]): { queries: string[]; problem?: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { queries: [], problem: 'top_queries: not JSON' };
  }
  const r = topQueriesSchema.safeParse(json);
  if (!r.success) return { queries: [], problem: 'top_queries: not a top_queries page' };
  const seen = new Set(exclude);
  const out: string[] = [];
  for (const { query } of r.data.topByCount) {
    if (out.length >= n) break;
    if (query.length === 0 || query.length > maxLength || seen.has(query)) continue;
    seen.add(query);
    out.push(query);
  }
  return { queries: out };
}

/** The freshness query for a selector: its newest raw sample's time (seconds), looking back `windowSeconds`. */
export const freshnessQuery = (selector: string, windowSeconds: number): string => `max(tlast_over_time(${selector}[${windowSeconds}s]))`;

export async function measureCanary(
  pods: ServicePods,
  ctx: PollContext,
  input: CanaryMeasureInput,
  now: () => number = Date.now,
): Promise<AnalysisMeasurement> {
  const { analysis: spec, namespace } = input;
  const at = new Date(now()).toISOString();
  const [b, c] = await Promise.all([pickReadPod(pods, namespace, input.baseline, ctx.signal), pickReadPod(pods, namespace, input.canary, ctx.signal)]);
  if (typeof b === 'string' || typeof c === 'string') {
    const why = typeof b === 'string' ? `baseline ${input.baseline.zone}: ${b}` : `canary ${input.canary.zone}: ${c as string}`;
    return { at, verdict: 'Inconclusive', queries: [], message: `cannot measure: ${why}` };
  }
  const bPrefix = apiPrefix(input.baseline, spec.tenant);
  const cPrefix = apiPrefix(input.canary, spec.tenant);
  const ask = async (pod: ServicePod, prefix: string, path: string): Promise<QueryAnswer> => {
    const t0 = now();
    try {
      const r = await pods.get(pod, `${prefix}${path}`, { signal: ctx.signal, timeoutMs: QUERY_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES });
      return readAnswer(r.status, r.body, now() - t0);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      return { ok: false, ms: now() - t0, answered: false, error: pods.describeScrapeError(err) };
    }
  };
  const both = (path: string) => Promise.all([ask(b, bPrefix, path), ask(c, cPrefix, path)]);
  const instant = (query: string, time: number) =>
    `/query?query=${encodeURIComponent(query)}&time=${(time / 1000).toFixed(3)}&nocache=1&timeout=${QUERY_TIMEOUT_MS / 1000}s`;

  const freshness =
    spec.freshnessSelector === undefined ? undefined : freshnessQuery(spec.freshnessSelector, Math.max(300, Math.ceil((2 * spec.maxIngestionLagMs) / 1000)));
  const queries: Array<{ text: string; source: QueryComparison['source'] }> = spec.queries.map((text) => ({ text, source: 'spec' }));
  let recentProblem: string | undefined;
  if (spec.recentQueries > 0) {
    try {
      const page = await pods.get(b, `${bPrefix}/status/top_queries?topN=${2 * spec.recentQueries}`, {
        signal: ctx.signal,
        timeoutMs: QUERY_TIMEOUT_MS,
        maxBytes: MAX_ANSWER_BYTES,
        okOnly: true,
      });
      // The analysis's own queries are in the baseline's top_queries too: not recent ones.
      const recent = recentQueries(page.body, spec.recentQueries, CANARY_LIMITS.queryMaxLength, freshness ? [...spec.queries, freshness] : spec.queries);
      recentProblem = recent.problem;
      for (const text of recent.queries) queries.push({ text, source: 'recent' });
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      recentProblem = `top_queries: ${pods.describeScrapeError(err)}`;
    }
  }
  // Compared as of maxIngestionLag ago: data that old must be in both zones, whatever was in flight.
  const time = now() - spec.maxIngestionLagMs;
  const comparisons: QueryComparison[] = [];
  for (const q of queries) {
    ctx.heartbeat({ query: comparisons.length + 1, of: queries.length });
    const [ba, ca] = await both(instant(q.text, time));
    comparisons.push(compareQuery(q, ba, ca, spec));
  }
  let lagSeconds: number | undefined;
  if (freshness !== undefined) {
    const [ba, ca] = await both(instant(freshness, now()));
    const f = compareFreshness(freshness, ba, ca, spec.maxIngestionLagMs);
    comparisons.push(f.comparison);
    lagSeconds = f.lagSeconds;
  }
  const m = judgeMeasurement(at, comparisons, lagSeconds, spec);
  return recentProblem && m.verdict !== 'Failed' ? { ...m, message: `${m.message}; recent queries: ${recentProblem}` } : m;
}
