// The canary zone (strategy.canary) on the time-skipping test server: upgraded first, analysed for
// its bake while still out of reads, against a zone at the previous version; the comparison of each
// query is the real one (activities/analysis/compare.ts) over the answers the fake's vmselects give.
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { UPDATE_ABORT, UPDATE_PROMOTE, type AbortRequest, type AbortResult, type Progress, type PromoteResult } from '../../api/rollout-contract';
import type { Canary } from '../../api/types';
import type { QueryAnswer } from '../../activities/analysis/compare';
import type { rolloutWorkflow } from '../../workflows';
import type { FakeCluster } from './fake-cluster';
import { inputOf, makeFake, withWorker, useTimeSkippingEnv } from './setup';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

type Handle = WorkflowHandle<typeof rolloutWorkflow>;
const promote = (h: Handle) => h.executeUpdate<PromoteResult, []>(UPDATE_PROMOTE);
const abort = (h: Handle, request?: AbortRequest) => h.executeUpdate<AbortResult, [AbortRequest]>(UPDATE_ABORT, { args: [request ?? {}] });

/** 2 minutes of bake, a measurement every 30 s: at 0, 30, 60, 90 and 120 s. */
const canary = (o: Partial<Canary> = {}): Canary => ({
  bakeMs: 120_000,
  analysis: {
    intervalMs: 30_000,
    tenant: '0',
    queries: ['sum(rate(vm_rows_inserted_total[5m]))'],
    recentQueries: 0,
    maxLatencyRatio: 2,
    tolerance: 0.01,
    maxIngestionLagMs: 30_000,
  },
  ...o,
});
const value = (v: string, ms = 5): QueryAnswer => ({ ok: true, ms, result: { type: 'vector', series: new Map([['[]', [[1, v]]]]) } });
/** The zone's vmselect answers `v` to every query. */
const answers = (fake: FakeCluster, vmcluster: string, a: QueryAnswer) => fake.selectAnswers.set(vmcluster, () => a);
const patched = (fake: FakeCluster, zone: string) => fake.calls.some((c) => c === `applyObject:VMCluster:vm-${zone}`);
const edits = (fake: FakeCluster, zone: string) => fake.calls.filter((c) => c.startsWith('editRoutes') && c.includes(`vm-${zone}`)).length;
const measured = (fake: FakeCluster) => fake.calls.filter((c) => c.startsWith('measureCanary'));
const zoneOf = (p: Progress, name: string) => p.zones.find((z) => z.name === name)!;

test('a canary whose results differ from the baseline fails its analysis: it stays out, nothing else is upgraded, the numbers are in its status; resume analyses it again', async () => {
  const fake = makeFake();
  answers(fake, 'vm-az-b', value('1.5'));
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ canary: canary({ zone: 'az-b' }) }));
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    expect(p.order).toEqual(['az-b', 'az-a', 'az-c']);
    const b = zoneOf(p, 'az-b');
    expect(b).toMatchObject({ phase: 'Failed', failedStep: 'Analyzing', outOfRotation: true, canary: true });
    expect(b.analysis).toMatchObject({ verdict: 'Failed', baseline: 'az-a', bakeSeconds: 120, measurements: 1, failed: 1, inconclusive: 0 });
    expect(b.analysis!.latest!.queries).toEqual([
      {
        query: 'sum(rate(vm_rows_inserted_total[5m]))',
        source: 'spec',
        verdict: 'mismatch',
        baselineMs: 5,
        canaryMs: 5,
        baselineSeries: 1,
        canarySeries: 1,
        detail: 'series {}: 1 on the baseline, 1.5 on the canary',
      },
    ]);
    expect(p.message).toMatch(/^zone az-b failed at Analyzing: canary analysis Failed after 1 measurement against az-a .*the canary stays out of reads/);
    expect(p.zonesOutOfRotation).toEqual(['az-b']);
    expect([patched(fake, 'az-a'), patched(fake, 'az-c')]).toEqual([false, false]);
    const written = fake.statuses.at(-1)!;
    expect(written.zones!.find((z) => z.name === 'az-b')!.analysis).toEqual(b.analysis);
    expect(written.zones!.find((z) => z.name === 'az-b')!.message).toMatch(/^failed at Analyzing, kept out of read rotation: canary analysis Failed/);

    // Fixed (e.g. a backfill): resume analyses it again, for the whole bake, and the rollout goes on.
    fake.selectAnswers.delete('vm-az-b');
    await h.signal('resume');
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    expect(measured(fake)).toEqual(Array(6).fill('measureCanary:vm-az-b'));
    expect(fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-b')!.analysis).toMatchObject({ verdict: 'Successful', measurements: 5, failed: 0 });
    expect(r.breaches(true)).toEqual([]);
  });
});

test('negative control: the same wrong canary without strategy.canary rejoins reads and the rollout succeeds', async () => {
  const fake = makeFake();
  answers(fake, 'vm-az-b', value('1.5'));
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf())).result();
    expect(res.phase).toBe('Succeeded');
    expect(edits(fake, 'az-b')).toBe(2);
    expect(measured(fake)).toEqual([]);
  });
});

test('a canary that matches for its whole bake rejoins, out of reads while analysed; the other zones follow without analysis', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ canary: canary() }));
    const during = await r.progressUntil(h, (p) => zoneOf(p, 'az-a').phase === 'Analyzing', 10_000);
    expect(zoneOf(during, 'az-a')).toMatchObject({ outOfRotation: true, canary: true, analysis: { verdict: 'Running', baseline: 'az-b' } });
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    // The first zone of the order is the canary; 5 measurements over 2 minutes, one every 30 s.
    expect(measured(fake)).toEqual(Array(5).fill('measureCanary:vm-az-a'));
    const last = fake.statuses.at(-1)!;
    expect(last.zones!.find((z) => z.name === 'az-a')!.analysis).toMatchObject({ verdict: 'Successful', measurements: 5, failed: 0, inconclusive: 0 });
    expect(last.zones!.filter((z) => z.analysis).map((z) => z.name)).toEqual(['az-a']);
    // It rejoined only after its analysis: no status shows it back in reads while Analyzing.
    for (const s of fake.statuses) {
      const a = s.zones!.find((z) => z.name === 'az-a')!;
      if (a.phase === 'Analyzing') expect(s.zonesOutOfRotation).toContain('az-a');
    }
    expect(r.breaches(true)).toEqual([]);
  });
});

test('Inconclusive (the baseline cannot answer) waits for a person with the canary out: promote puts it back and goes on; abort fails it out of reads', async () => {
  for (const decision of ['promote', 'abort'] as const) {
    const fake = makeFake();
    answers(fake, 'vm-az-b', { ok: false, ms: 3, answered: true, error: 'HTTP 503: unavailable' });
    await withWorker(env(), fake, async (r) => {
      const h = await r.start(inputOf({ canary: canary() }));
      const p = await r.progressUntil(h, (p) => p.awaiting !== undefined, 30_000);
      expect(p.awaiting).toMatchObject({ canary: 'az-a', nextZone: 'az-a', gates: [] });
      expect(p.message).toBe(
        'the analysis of canary az-a was Inconclusive: waiting for a person, the canary out of reads: promote puts it back into reads and goes on, abort fails it (it stays out)',
      );
      expect(zoneOf(p, 'az-a')).toMatchObject({ outOfRotation: true, analysis: { verdict: 'Inconclusive', measurements: 5, inconclusive: 5 } });
      expect(zoneOf(p, 'az-a').analysis!.latest!.queries[0]).toMatchObject({
        verdict: 'inconclusive',
        detail: 'the baseline did not answer it: HTTP 503: unavailable',
      });
      expect(patched(fake, 'az-b')).toBe(false);
      if (decision === 'promote') {
        expect(await promote(h)).toEqual({ gates: [], nextZone: 'az-a' });
        expect((await h.result()).phase).toBe('Succeeded');
        expect(fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-a')!.analysis).toMatchObject({ verdict: 'Inconclusive', promoted: true });
      } else {
        await abort(h, { reason: 'query errors on the dashboard' });
        const f = await r.progressUntil(h, (p) => p.phase === 'Failed');
        expect(zoneOf(f, 'az-a')).toMatchObject({ phase: 'Failed', failedStep: 'Analyzing', outOfRotation: true });
        expect(f.message).toMatch(/aborted by a person \(query errors on the dashboard\): the canary stays out of reads/);
        expect(patched(fake, 'az-b')).toBe(false);
        await expect(promote(h)).rejects.toThrow(WorkflowUpdateFailedError);
        await h.cancel();
      }
    });
  }
});

test('a cancel during the bake leaves the canary out of reads, saying its analysis was not done', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ canary: canary() }));
    await r.progressUntil(h, (p) => (zoneOf(p, 'az-a').analysis?.measurements ?? 0) >= 2, 10_000);
    await h.cancel();
    await expect(h.result()).rejects.toThrow();
    const last = fake.statuses.at(-1)!;
    expect(last.zonesOutOfRotation).toEqual(['az-a']);
    expect(last.zones!.find((z) => z.name === 'az-a')!.message).toMatch(/^stays out of read rotation \(cancelled\): canary analysis Running/);
    expect(edits(fake, 'az-a')).toBe(1);
  });
});

test('the baseline is a zone at the previous version: an untouched zone whose VMCluster already runs the new one is passed over', async () => {
  // az-a already runs the new version (skipped at its turn): comparing with it would compare new with new.
  const fake = makeFake({ upToDate: ['az-a'] });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ upToDate: ['az-a'], canary: canary({ zone: 'az-b' }) }));
    const during = await r.progressUntil(h, (p) => zoneOf(p, 'az-b').phase === 'Analyzing', 10_000);
    expect(zoneOf(during, 'az-b').analysis).toMatchObject({ verdict: 'Running', baseline: 'az-c' });
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    const b = fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-b')!;
    expect(b.analysis).toMatchObject({ verdict: 'Successful', baseline: 'az-c' });
    expect(measured(fake).length).toBeGreaterThan(0);
    expect(fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-a')!.phase).toBe('Skipped');
  });
});

test('no zone at the previous version in reads: nothing to compare with, Inconclusive (a person decides)', async () => {
  const fake = makeFake({ upToDate: ['az-a', 'az-c'] });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ upToDate: ['az-a', 'az-c'], canary: canary({ zone: 'az-b' }) }));
    const p = await r.progressUntil(h, (p) => p.awaiting?.canary !== undefined);
    expect(zoneOf(p, 'az-b').analysis).toMatchObject({ verdict: 'Inconclusive', message: expect.stringContaining('no zone to compare with') });
    expect(measured(fake)).toEqual([]);
    await promote(h);
    expect((await h.result()).phase).toBe('Succeeded');
  });
});
