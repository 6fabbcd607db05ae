// The canary analysis's judgement, pure: a vmselect answer read (never trusted: parsed, capped,
// checked), one query compared between the baseline zone and the canary, one measurement judged.
// The thresholds are the spec's (strategy.canary.analysis); the I/O is ./measure.ts.
import { z } from 'zod';
import { LATENCY_FLOOR_MS, slower } from '../../api/latency';
import type { AnalysisMeasurement, CanaryAnalysisSpec, QueryComparison } from '../../api/types';

/** Results with more series are not compared (and say so): the comparison must stay cheap. */
export const MAX_RESULT_SERIES = 10_000;
/** How much of a query or a detail the status shows. */
const SHOWN_QUERY_LENGTH = 200;
const SHOWN_DETAIL_LENGTH = 300;

/** One series' points: [unix seconds, value as vmselect writes it]. */
type Points = Array<[number, string]>;

/** A query's result: its type and its series by their sorted labels (a Map: label sets are others' input). */
export interface QueryResult {
  type: 'vector' | 'matrix' | 'scalar' | 'string';
  series: Map<string, Points>;
}

/** What one zone answered to one query: a result, an error it gave, or no answer at all. */
export type QueryAnswer = { ok: true; ms: number; result: QueryResult } | { ok: false; ms?: number; error: string; answered: boolean };

const point = z.tuple([z.number(), z.string()]);
const responseSchema = z.object({
  status: z.enum(['success', 'error']),
  errorType: z.string().optional(),
  error: z.string().optional(),
  data: z
    .object({
      resultType: z.enum(['vector', 'matrix', 'scalar', 'string']),
      result: z.unknown(),
    })
    .optional(),
});
const vectorItem = z.object({ metric: z.unknown(), value: point });
const matrixItem = z.object({ metric: z.unknown(), values: z.array(point) });

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The label set as a key: its entries sorted by name, as JSON. undefined: not a label set. */
function labelKey(metric: unknown): string | undefined {
  if (metric === null || typeof metric !== 'object' || Array.isArray(metric)) return undefined;
  const entries = Object.entries(metric);
  if (!entries.every(([, v]) => typeof v === 'string')) return undefined;
  return JSON.stringify(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A zone's answer to /api/v1/query, from its HTTP status and body (any shape: refused unless it is what vmselect writes). */
export function readAnswer(status: number, body: string, ms: number): QueryAnswer {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, ms, answered: true, error: `HTTP ${status}, not JSON: ${cut(body.trim(), 120)}` };
  }
  const r = responseSchema.safeParse(json);
  if (!r.success) return { ok: false, ms, answered: true, error: `HTTP ${status}, not a query response` };
  const res = r.data;
  if (status !== 200 || res.status !== 'success' || !res.data) {
    return {
      ok: false,
      ms,
      answered: true,
      error: cut(`HTTP ${status}: ${res.errorType ?? 'error'}: ${res.error ?? 'no error message'}`, SHOWN_DETAIL_LENGTH),
    };
  }
  const { resultType, result } = res.data;
  const series = new Map<string, Points>();
  if (resultType === 'scalar' || resultType === 'string') {
    const p = point.safeParse(result);
    if (!p.success) return { ok: false, ms, answered: true, error: `a ${resultType} result that is not [time, value]` };
    series.set('', [p.data]);
    return { ok: true, ms, result: { type: resultType, series } };
  }
  if (!Array.isArray(result)) return { ok: false, ms, answered: true, error: `a ${resultType} result that is not a list` };
  if (result.length > MAX_RESULT_SERIES) return { ok: false, ms, answered: true, error: `more than ${MAX_RESULT_SERIES} series: not compared` };
  for (const item of result) {
    const parsed = resultType === 'vector' ? vectorItem.safeParse(item) : matrixItem.safeParse(item);
    const key = parsed.success ? labelKey(parsed.data.metric) : undefined;
    if (!parsed.success || key === undefined) return { ok: false, ms, answered: true, error: `a ${resultType} series that is not {metric, value(s)}` };
    if (series.has(key)) return { ok: false, ms, answered: true, error: `a ${resultType} result with the same series twice` };
    series.set(key, 'value' in parsed.data ? [parsed.data.value] : parsed.data.values);
  }
  return { ok: true, ms, result: { type: resultType, series } };
}

/** The numbers of one value as vmselect writes them ("NaN", "+Inf", "1.5e3"). */
function sameValue(a: string, b: string, tolerance: number): boolean {
  if (a === b) return true;
  const x = Number(a);
  const y = Number(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y);
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  return Math.abs(x - y) <= tolerance * Math.max(Math.abs(x), Math.abs(y));
}

const labelsOf = (key: string) =>
  key === '' ? '{}' : `{${(JSON.parse(key) as Array<[string, string]>).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}}`;

/** Whether the canary's result is the baseline's (the same series, points at the same times, values within tolerance); if not, the first difference. */
export function compareResults(baseline: QueryResult, canary: QueryResult, tolerance: number): { same: true } | { same: false; detail: string } {
  if (baseline.type !== canary.type) return { same: false, detail: `result type ${baseline.type} on the baseline, ${canary.type} on the canary` };
  const missing = [...baseline.series.keys()].filter((k) => !canary.series.has(k));
  const extra = [...canary.series.keys()].filter((k) => !baseline.series.has(k));
  if (missing.length || extra.length) {
    const parts = [];
    if (missing.length) parts.push(`${missing.length} of ${baseline.series.size} series missing on the canary (e.g. ${labelsOf(missing[0]!)})`);
    if (extra.length) parts.push(`${extra.length} series only on the canary (e.g. ${labelsOf(extra[0]!)})`);
    return { same: false, detail: parts.join('; ') };
  }
  for (const [key, b] of baseline.series) {
    const c = canary.series.get(key)!;
    if (b.length !== c.length) return { same: false, detail: `series ${labelsOf(key)}: ${b.length} points on the baseline, ${c.length} on the canary` };
    for (let i = 0; i < b.length; i++) {
      const [bt, bv] = b[i]!;
      const [ct, cv] = c[i]!;
      if (bt !== ct) return { same: false, detail: `series ${labelsOf(key)}: a point at ${bt} on the baseline, at ${ct} on the canary` };
      if (!sameValue(bv, cv, tolerance)) return { same: false, detail: `series ${labelsOf(key)}: ${bv} on the baseline, ${cv} on the canary` };
    }
  }
  return { same: true };
}

/** One query, compared. */
export function compareQuery(
  query: { text: string; source: QueryComparison['source'] },
  baseline: QueryAnswer,
  canary: QueryAnswer,
  spec: Pick<CanaryAnalysisSpec, 'tolerance' | 'maxLatencyRatio'>,
): QueryComparison {
  const out: QueryComparison = { query: cut(query.text, SHOWN_QUERY_LENGTH), source: query.source, verdict: 'inconclusive' };
  if (baseline.ms !== undefined) out.baselineMs = Math.round(baseline.ms);
  if (canary.ms !== undefined) out.canaryMs = Math.round(canary.ms);
  if (baseline.ok) out.baselineSeries = baseline.result.series.size;
  if (canary.ok) out.canarySeries = canary.result.series.size;
  if (!baseline.ok) return { ...out, detail: cut(`the baseline did not answer it: ${baseline.error}`, SHOWN_DETAIL_LENGTH) };
  if (!canary.ok)
    return {
      ...out,
      verdict: 'canaryError',
      detail: cut(`the canary ${canary.answered ? 'refused it' : 'did not answer'}: ${canary.error}`, SHOWN_DETAIL_LENGTH),
    };
  const same = compareResults(baseline.result, canary.result, spec.tolerance);
  if (!same.same) return { ...out, verdict: 'mismatch', detail: cut(same.detail, SHOWN_DETAIL_LENGTH) };
  return { ...out, verdict: slower(canary.ms, baseline.ms, spec.maxLatencyRatio) ? 'slow' : 'match' };
}

/** The single value of a freshness answer (a newest-sample time, seconds), or undefined when there is none. */
function newestSample(a: QueryResult): number | undefined {
  const values = [...a.series.values()].flatMap((pts) => pts.map(([, v]) => Number(v))).filter(Number.isFinite);
  return values.length ? Math.max(...values) : undefined;
}

/** The freshness query's comparison: how far the canary's newest sample of the selector is behind the baseline's. */
export function compareFreshness(
  query: string,
  baseline: QueryAnswer,
  canary: QueryAnswer,
  maxLagMs: number,
): { comparison: QueryComparison; lagSeconds?: number } {
  const c = compareQuery({ text: query, source: 'freshness' }, baseline, canary, { tolerance: 0, maxLatencyRatio: Infinity });
  if (!baseline.ok || !canary.ok) return { comparison: c };
  const b = newestSample(baseline.result);
  if (b === undefined) return { comparison: { ...c, verdict: 'inconclusive', detail: 'no sample of the selector on the baseline' } };
  const n = newestSample(canary.result);
  if (n === undefined) return { comparison: { ...c, verdict: 'lagging', detail: 'no sample of the selector on the canary' } };
  const lagSeconds = Math.max(0, Math.round((b - n) * 1000) / 1000);
  const lagging = lagSeconds * 1000 > maxLagMs;
  return {
    comparison: { ...c, verdict: lagging ? 'lagging' : 'match', detail: `newest sample ${lagSeconds} s behind the baseline's (at most ${maxLagMs / 1000} s)` },
    lagSeconds,
  };
}

const FAILING: ReadonlySet<QueryComparison['verdict']> = new Set(['mismatch', 'canaryError', 'lagging']);

/**
 * One measurement: Failed when any query's result differs, the canary refused or missed a query the
 * baseline answered, its data lags, or its queries took more than maxLatencyRatio times as long in
 * all (and LATENCY_FLOOR_MS more); Inconclusive when nothing could be compared; else Successful.
 */
export function judgeMeasurement(
  at: string,
  queries: QueryComparison[],
  lagSeconds: number | undefined,
  spec: Pick<CanaryAnalysisSpec, 'maxLatencyRatio'>,
): AnalysisMeasurement {
  const base = { at, queries, ...(lagSeconds !== undefined ? { lagSeconds } : {}) };
  const failing = queries.filter((q) => FAILING.has(q.verdict));
  if (failing.length) {
    const first = failing[0]!;
    return {
      ...base,
      verdict: 'Failed',
      message: `${failing.length} of ${queries.length} queries failed on the canary: ${first.verdict} for ${first.query}: ${first.detail ?? ''}`.trim(),
    };
  }
  const compared = queries.filter((q) => q.verdict === 'match' || q.verdict === 'slow');
  if (compared.length === 0) {
    const why = queries.find((q) => q.detail)?.detail ?? 'no query to compare (set analysis.queries, or let the baseline have recent queries)';
    return { ...base, verdict: 'Inconclusive', message: `nothing could be compared: ${why}` };
  }
  const timed = compared.filter((q) => q.source !== 'freshness');
  const b = timed.reduce((a, q) => a + (q.baselineMs ?? 0), 0);
  const c = timed.reduce((a, q) => a + (q.canaryMs ?? 0), 0);
  if (timed.length && slower(c, b, spec.maxLatencyRatio)) {
    return {
      ...base,
      verdict: 'Failed',
      message: `the canary took ${c} ms for ${timed.length} queries, the baseline ${b} ms: more than ${spec.maxLatencyRatio}× (and ${LATENCY_FLOOR_MS} ms more)`,
    };
  }
  const skipped = queries.length - compared.length;
  return {
    ...base,
    verdict: 'Successful',
    message: `${compared.length} quer${compared.length === 1 ? 'y' : 'ies'} the same on the canary${timed.length ? ` (${c} ms vs ${b} ms)` : ''}${skipped ? `; ${skipped} not compared` : ''}`,
  };
}
