// The canary analysis's judgement (activities/analysis/compare.ts, measure.ts recentQueries) on real
// VictoriaMetrics v1.150.0 answers (test/fixtures/vmselect/README.md) and on hostile ones.
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  compareFreshness,
  compareQuery,
  compareResults,
  judgeMeasurement,
  readAnswer,
  type QueryAnswer,
  type QueryResult,
} from '../../activities/analysis/compare';
import { freshnessQuery, recentQueries } from '../../activities/analysis/measure';
import { slower } from '../../api/latency';
import type { QueryComparison } from '../../api/types';

const FX = JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/vmselect/victoria-metrics-v1.150.0-answers.json'), 'utf8')) as Record<
  string,
  { query?: string; status: number; body: string }
>;
const real = (name: string, ms = 5): QueryAnswer => readAnswer(FX[name]!.status, FX[name]!.body, ms);
const result = (a: QueryAnswer): QueryResult => {
  if (!a.ok) throw new Error(a.error);
  return a.result;
};
const SPEC = { tolerance: 0.01, maxLatencyRatio: 2 };

describe('readAnswer: a zone answer, read as vmselect writes it, refused otherwise', () => {
  it('reads real vector, matrix and scalar-like answers, series keyed by their sorted labels', () => {
    const rate = result(real('rate'));
    expect(rate.type).toBe('vector');
    expect([...rate.series]).toEqual([
      ['[["instance","vminsert-0"]]', [[1796489566, '10']]],
      ['[["instance","vminsert-1"]]', [[1796489566, '15']]],
    ]);
    expect(result(real('matrix')).series.get('[["__name__","vmrollout_e2e_heartbeat"],["source","e2e"]]')).toHaveLength(3);
    expect(result(real('scalar')).series.get('[]')).toEqual([[1796489566, '4750']]);
  });

  it('a query vmselect refuses is its error, not a result', () => {
    expect(real('syntaxError')).toMatchObject({
      ok: false,
      answered: true,
      error: expect.stringMatching(/^HTTP 400: 400: error when executing query="sum\(rate\(foo\[5m"/),
    });
  });

  it.each([
    ['not JSON', 200, '<html>oops</html>', /^HTTP 200, not JSON: <html>oops<\/html>$/],
    ['not a query response', 200, '{"data":1}', /^HTTP 200, not a query response$/],
    [
      'a series without labels object',
      200,
      '{"status":"success","data":{"resultType":"vector","result":[{"metric":"x","value":[1,"1"]}]}}',
      /not \{metric, value/,
    ],
    [
      'a label that is not a string',
      200,
      '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"1"]}]}}',
      /not \{metric, value/,
    ],
    [
      'the same series twice',
      200,
      '{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"]},{"metric":{},"value":[1,"2"]}]}}',
      /same series twice/,
    ],
    ['a value that is a number', 200, '{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,1]}]}}', /not \{metric, value/],
    ['success with HTTP 500', 500, '{"status":"success","data":{"resultType":"vector","result":[]}}', /^HTTP 500: error: no error message$/],
  ])('%s is refused', (_what, status, body, error) => {
    const a = readAnswer(status, body, 1);
    expect(a.ok).toBe(false);
    expect(!a.ok && a.error).toMatch(error);
  });

  it('labels named __proto__ or constructor are plain labels (a Map, no object keyed by them)', () => {
    const body = '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__proto__":"x","constructor":"y"},"value":[1,"1"]}]}}';
    const a = result(readAnswer(200, body, 1));
    expect([...a.series.keys()]).toEqual(['[["__proto__","x"],["constructor","y"]]']);
    expect(({} as { polluted?: string }).polluted).toBeUndefined();
  });

  it('over MAX_RESULT_SERIES series is not compared', () => {
    const many = Array.from({ length: 10_001 }, (_, i) => `{"metric":{"i":"${i}"},"value":[1,"1"]}`).join(',');
    const a = readAnswer(200, `{"status":"success","data":{"resultType":"vector","result":[${many}]}}`, 1);
    expect(a).toMatchObject({ ok: false, error: 'more than 10000 series: not compared' });
  });
});

describe('compareResults: the same series, points at the same times, values within tolerance', () => {
  const vec = (v: string, labels = '[]'): QueryResult => ({ type: 'vector', series: new Map([[labels, [[1, v]]]]) });
  it('a zone whose series was deleted (real answers before and after) differs, and says how', () => {
    expect(compareResults(result(real('count')), result(real('countAfterDelete')), 0.01)).toEqual({
      same: false,
      detail: '1 of 1 series missing on the canary (e.g. {source="e2e"})',
    });
    expect(compareResults(result(real('count')), result(real('count')), 0)).toEqual({ same: true });
  });
  it.each([
    ['100', '100.9', 0.01, true],
    ['100', '101.1', 0.01, false],
    ['0', '0', 0, true],
    ['NaN', 'NaN', 0, true],
    ['NaN', '1', 1, false],
    ['+Inf', '+Inf', 0, true],
    ['+Inf', '1e308', 1, false],
    ['-5', '5', 1, false],
    ['1e3', '1000', 0, true],
  ])('%s vs %s at tolerance %s: same %s', (a, b, tol, same) => {
    expect(compareResults(vec(a), vec(b), tol).same).toBe(same);
  });
  it('series only on the canary, another result type, another point time, another point count', () => {
    expect(compareResults(vec('1'), { type: 'vector', series: new Map([...vec('1').series, ['[["a","b"]]', [[1, '1']]]]) }, 0)).toEqual({
      same: false,
      detail: '1 series only on the canary (e.g. {a="b"})',
    });
    expect(compareResults(vec('1'), { ...vec('1'), type: 'matrix' }, 0)).toMatchObject({
      same: false,
      detail: 'result type vector on the baseline, matrix on the canary',
    });
    expect(compareResults(vec('1'), { type: 'vector', series: new Map([['[]', [[2, '1']]]]) }, 0)).toMatchObject({ same: false });
    expect(
      compareResults(
        vec('1'),
        {
          type: 'vector',
          series: new Map([
            [
              '[]',
              [
                [1, '1'],
                [2, '1'],
              ],
            ],
          ]),
        },
        0,
      ),
    ).toMatchObject({
      same: false,
      detail: 'series {}: 1 points on the baseline, 2 on the canary',
    });
  });
});

describe('compareQuery and judgeMeasurement', () => {
  const q = { text: 'count_over_time(vmrollout_e2e_heartbeat[2m])', source: 'spec' as const };
  it('the deleted series: mismatch, and the measurement Failed naming the query', () => {
    const c = compareQuery(q, real('count', 4), real('countAfterDelete', 6), SPEC);
    expect(c).toEqual({
      query: q.text,
      source: 'spec',
      verdict: 'mismatch',
      baselineMs: 4,
      canaryMs: 6,
      baselineSeries: 1,
      canarySeries: 0,
      detail: '1 of 1 series missing on the canary (e.g. {source="e2e"})',
    });
    const m = judgeMeasurement('t', [c], undefined, SPEC);
    expect(m).toMatchObject({
      verdict: 'Failed',
      message: `1 of 1 queries failed on the canary: mismatch for ${q.text}: 1 of 1 series missing on the canary (e.g. {source="e2e"})`,
    });
  });
  it('the canary refusing what the baseline answers is canaryError (Failed); the baseline refusing is inconclusive', () => {
    expect(compareQuery(q, real('count'), real('syntaxError'), SPEC).verdict).toBe('canaryError');
    expect(
      compareQuery(q, real('count'), { ok: false, ms: 10_000, answered: false, error: 'scrape error: no complete answer within 10000 ms' }, SPEC),
    ).toMatchObject({
      verdict: 'canaryError',
      detail: 'the canary did not answer: scrape error: no complete answer within 10000 ms',
    });
    const inc = compareQuery(q, real('syntaxError'), real('syntaxError'), SPEC);
    expect(inc.verdict).toBe('inconclusive');
    expect(judgeMeasurement('t', [inc], undefined, SPEC)).toMatchObject({
      verdict: 'Inconclusive',
      message: expect.stringMatching(/^nothing could be compared: the baseline did not answer it: HTTP 400/),
    });
    expect(judgeMeasurement('t', [], undefined, SPEC)).toMatchObject({ verdict: 'Inconclusive' });
  });
  it('latency: slow only past the ratio AND the 100 ms floor; the measurement fails on the sum of its queries', () => {
    expect([slower(150, 50, 2), slower(200, 100, 2), slower(201, 100, 2), slower(1000, 100, 20)]).toEqual([false, false, true, false]);
    const slow = compareQuery(q, real('count', 50), real('count', 400), SPEC);
    expect(slow.verdict).toBe('slow');
    const fast = compareQuery({ ...q, text: 'up' }, real('count', 50), real('count', 40), SPEC);
    expect(judgeMeasurement('t', [slow, fast], undefined, SPEC)).toMatchObject({
      verdict: 'Failed',
      message: 'the canary took 440 ms for 2 queries, the baseline 100 ms: more than 2× (and 100 ms more)',
    });
    // Negative control: the same answers at a ratio of 5 pass.
    expect(judgeMeasurement('t', [slow, fast], undefined, { maxLatencyRatio: 5 }).verdict).toBe('Successful');
  });
  it('freshness: the real newest-sample answers give the lag; none on the canary is lagging, none on the baseline inconclusive', () => {
    const text = freshnessQuery('vmrollout_e2e_heartbeat', 300);
    expect(text).toBe(FX.freshness!.query);
    const same = compareFreshness(text, real('freshness'), real('freshness'), 30_000);
    expect(same).toMatchObject({ lagSeconds: 0, comparison: { verdict: 'match', source: 'freshness' } });
    const behind = readAnswer(200, FX.freshness!.body.replace('"1796489561"', '"1796489521"'), 3);
    expect(compareFreshness(text, real('freshness'), behind, 30_000)).toMatchObject({ lagSeconds: 40, comparison: { verdict: 'lagging' } });
    expect(compareFreshness(text, real('freshness'), behind, 60_000)).toMatchObject({ lagSeconds: 40, comparison: { verdict: 'match' } });
    expect(compareFreshness(text, real('freshness'), real('freshnessAfterDelete'), 30_000).comparison).toMatchObject({
      verdict: 'lagging',
      detail: 'no sample of the selector on the canary',
    });
    expect(compareFreshness(text, real('freshnessAfterDelete'), real('freshness'), 30_000).comparison).toMatchObject({ verdict: 'inconclusive' });
  });
  it('a Successful measurement says how many queries matched, and which were not compared', () => {
    const ok = compareQuery(q, real('count', 4), real('count', 5), SPEC);
    const inc = compareQuery({ ...q, text: 'x' }, real('syntaxError'), real('count'), SPEC);
    const m = judgeMeasurement('t', [ok, inc], undefined, SPEC);
    expect(m).toMatchObject({ verdict: 'Successful', message: '1 query the same on the canary (5 ms vs 4 ms); 1 not compared' });
  });
  it('long queries and details are cut for the status', () => {
    const long = compareQuery({ text: 'x'.repeat(500), source: 'recent' }, real('count'), real('countAfterDelete'), SPEC) as QueryComparison;
    expect(long.query).toHaveLength(200);
  });
});

describe('recentQueries: the baseline top_queries page, others input', () => {
  it('reads the real page: its most frequent queries, none twice, none of the spec again', () => {
    expect(recentQueries(FX.topQueries!.body, 5, 4096, [])).toEqual({
      queries: ['sum by (instance) (rate(vm_rows_inserted_total[1m]))', 'scalar(sum(vm_rows_inserted_total))'],
    });
    expect(recentQueries(FX.topQueries!.body, 1, 4096, [])).toEqual({ queries: ['sum by (instance) (rate(vm_rows_inserted_total[1m]))'] });
    expect(recentQueries(FX.topQueries!.body, 5, 4096, ['scalar(sum(vm_rows_inserted_total))']).queries).toEqual([
      'sum by (instance) (rate(vm_rows_inserted_total[1m]))',
    ]);
  });
  it.each([
    ['not JSON', 'nope', 'top_queries: not JSON'],
    ['another shape', '{"topByCount":"many"}', 'top_queries: not a top_queries page'],
  ])('%s gives none, saying why', (_w, body, problem) => {
    expect(recentQueries(body, 5, 4096, [])).toEqual({ queries: [], problem });
  });
  it('an over-long or empty query is skipped', () => {
    const body = JSON.stringify({ topByCount: [{ query: '' }, { query: 'q'.repeat(5000) }, { query: 'up' }, { query: 'up' }] });
    expect(recentQueries(body, 5, 4096, [])).toEqual({ queries: ['up'] });
  });
});
