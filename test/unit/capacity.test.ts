// The capacity guard's reading and judgement: a real vmauth v1.150.0 page read
// (activities/reads/read-health.ts, test/fixtures/vmauth/README.md), and the windows between two
// readings judged (workflows/capacity.ts), config reloads (counters starting over) included.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { vmauthCounters, vmselectCounters } from '../../activities/reads/read-health';
import type { ReadCounters, ReadHealthReading } from '../../api/types';
import { LATENCY_FLOOR_MS } from '../../api/latency';
import { judgeCapacity, MIN_READS } from '../../workflows/capacity';

const PAGE = fs.readFileSync(path.join(__dirname, '../fixtures/vmauth/vmauth-v1.150.0-metrics.txt'), 'utf8');
const BOUNDS = { maxErrorRatio: 0.01, maxLatencyRatio: 3 };
const c = (requests: number, errors: number, meanMs: number): ReadCounters => ({
  requests,
  errors,
  durationSeconds: (requests * meanMs) / 1000,
  durationCount: requests,
});
const reading = (...pods: Array<[string, ReadCounters]>): ReadHealthReading => ({ at: 't', pods: pods.map(([pod, counters]) => ({ pod, counters })) });

test("a real vmauth page: every user's reads, errors and durations summed (the unauthorized user's too)", () => {
  const r = vmauthCounters(PAGE);
  expect(r).toMatchObject({ requests: 25, errors: 5, durationCount: 25 });
  expect(r.durationSeconds).toBeCloseTo(0.014372759 + 0.002554874, 9);
});

test("a vmselect page: only its /select/ paths' requests and errors (cluster vmselect's names, app/vmselect/main.go)", () => {
  const page = [
    'vm_http_requests_total{path="/select/{}/prometheus/api/v1/query"} 40',
    'vm_http_requests_total{path="/select/{}/prometheus/api/v1/query_range"} 10',
    'vm_http_requests_total{path="/metrics"} 99',
    'vm_http_request_errors_total{path="/select/{}/prometheus/api/v1/query"} 3',
    'vm_http_request_errors_total{path="/admin/tenants"} 7',
    '',
  ].join('\n');
  expect(vmselectCounters(page)).toEqual({ requests: 50, errors: 3, durationSeconds: 0, durationCount: 0 });
  expect(() => vmselectCounters('vm_http_requests_total{path="/select/x"} -5\n')).toThrow(/read counter/);
});

describe('judgeCapacity', () => {
  const base = reading(['vmauth/a', c(1000, 0, 10)]);
  it('healthy: few failures, latency near the baseline', () => {
    const j = judgeCapacity(base, base, reading(['vmauth/a', c(1100, 0, 10.5)]), BOUNDS);
    expect(j).toMatchObject({ breached: false, requests: 100, errorRatio: 0, baselineLatencyMs: 10 });
    expect(j.message).toMatch(/^carriers healthy: 100 reads, 0\.00% failed, mean 15(\.\d+)? ms \(before: 10 ms\)$/);
  });
  it('failed reads over maxErrorRatio breach, vmauth errors and the carriers vmselect errors together', () => {
    const prev = reading(['vmauth/a', c(1000, 0, 10)], ['vmselect/s', c(500, 0, 0)]);
    const now = reading(['vmauth/a', c(1100, 1, 10)], ['vmselect/s', c(600, 2, 0)]);
    expect(judgeCapacity(base, prev, now, BOUNDS)).toMatchObject({
      breached: true,
      requests: 100,
      errorRatio: 0.03,
      message: expect.stringMatching(/^3 of 100 reads failed \(3\.00% > 1%\)/),
    });
    // Negative control: the bound at 5% lets the same window through.
    expect(judgeCapacity(base, prev, now, { ...BOUNDS, maxErrorRatio: 0.05 }).breached).toBe(false);
  });
  it(`latency: over maxLatencyRatio × the baseline and ${LATENCY_FLOOR_MS} ms more`, () => {
    const slow = (ms: number) =>
      judgeCapacity(base, base, reading(['vmauth/a', { requests: 1100, errors: 0, durationSeconds: 10 + (100 * ms) / 1000, durationCount: 1100 }]), BOUNDS);
    expect(slow(400)).toMatchObject({
      breached: true,
      latencyMs: 400,
      message: "vmauth's mean read latency 400 ms, 3× and 100 ms over its 10 ms before the zone left",
    });
    expect(slow(105).breached).toBe(false); // 10.5× the baseline, but only 95 ms more
    expect(judgeCapacity(base, base, reading(['vmauth/a', c(1100, 0, 10)]), { ...BOUNDS, maxLatencyRatio: 100 }).breached).toBe(false);
  });
  it('a pod whose counters went down (vmauth reloaded its config: a zone left or rejoined) counts from zero; a new pod too', () => {
    const now = reading(['vmauth/a', c(50, 5, 10)], ['vmauth/b', c(50, 0, 10)]);
    expect(judgeCapacity(base, base, now, BOUNDS)).toMatchObject({ requests: 100, errorRatio: 0.05, breached: true });
  });
  it(`fewer than ${MIN_READS} reads in the window are not judged; an unreadable reading is a breach`, () => {
    expect(judgeCapacity(base, base, reading(['vmauth/a', c(1005, 5, 10)]), BOUNDS)).toMatchObject({
      breached: false,
      requests: 5,
      message: '5 reads since the last look: too few to judge',
    });
    expect(judgeCapacity(base, base, { at: 't', pods: [], unreadable: 'vmauth pod x: scrape error' }, BOUNDS)).toMatchObject({
      breached: true,
      message: "the carriers' reads cannot be measured: vmauth pod x: scrape error",
    });
  });
});
