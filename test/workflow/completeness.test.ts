// Data completeness before rejoin (strategy.dataCompleteness) on the time-skipping test server: a zone
// whose vmagent dropped data while it was out stays out, Failed, with the numbers; a retry counts from
// the failure on. The counters' reading is activities/vmagent/drops.ts (unit tests, real pages), the
// comparison workflows/drops.ts (unit tests).
import { inputOf, makeFake, withWorker, useTimeSkippingEnv } from './setup';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

const restores = (calls: string[], vmcluster: string) => calls.filter((c) => c.startsWith('editRoutes') && c.includes(vmcluster)).length;

test('a zone vmagent dropped samples for while it was out stays out, Failed, with the numbers; a retry after the backfill rejoins it', async () => {
  const fake = makeFake();
  fake.dropsDuringUpgrade.set('vm-az-b', { samples: 19 });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    const b = p.zones.find((z) => z.name === 'az-b')!;
    expect(b).toMatchObject({ phase: 'Failed', failedStep: 'WaitingForQueue', outOfRotation: true, drainedConfirmed: false });
    expect(b.dataCompleteness).toMatchObject({ complete: false, dropped: { samples: 19, bytes: 0, blocks: 0, packets: 0 }, unverifiedPods: 0 });
    expect(p.zonesOutOfRotation).toEqual(['az-b']);
    expect(p.message).toContain('vmagent dropped data for the zone since');
    expect(p.message).toContain('19 samples refused by its full in-memory queue (vmagent_remotewrite_samples_dropped_total) (pods vmagent-0)');
    expect(p.message).toContain('the zone stays out of reads: backfill its window');
    expect(restores(fake.calls, 'vm-az-b')).toBe(1); // removed, never put back
    expect(fake.touched('vm-az-c')).toBe(false);
    const written = fake.statuses.at(-1)!;
    expect(written.zones!.find((z) => z.name === 'az-b')!.dataCompleteness).toEqual(b.dataCompleteness);
    expect(written.zones!.find((z) => z.name === 'az-a')!.dataCompleteness).toMatchObject({
      complete: true,
      message: expect.stringMatching(/^nothing dropped for the zone by 1 vmagent pod since /),
    });

    // The person backfilled the window: a retry counts from the failure on, and nothing more dropped.
    await h.signal('resume');
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    expect(restores(fake.calls, 'vm-az-b')).toBe(2);
    expect(fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-b')!.dataCompleteness).toMatchObject({ complete: true });
    expect(r.breaches(true)).toEqual([]);
  });
});

test('negative control: the same drops with dataCompleteness Off: the zone rejoins, never checked', async () => {
  const fake = makeFake();
  fake.dropsDuringUpgrade.set('vm-az-b', { samples: 19 });
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf({ dataCompleteness: 'Off' }))).result();
    expect(res.phase).toBe('Succeeded');
    expect(restores(fake.calls, 'vm-az-b')).toBe(2);
    expect(fake.calls.some((c) => c.startsWith('readVmagent') && c.includes('drops'))).toBe(false);
  });
});

test('a cancel while the zone is held for dropped data leaves it out (the cleanup does not put back an incomplete zone)', async () => {
  const fake = makeFake();
  fake.dropsDuringUpgrade.set('vm-az-a', { bytes: 4096, blocks: 2 });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    await r.progressUntil(h, (p) => p.phase === 'Failed');
    await h.cancel();
    const res = await h.result().catch(() => undefined);
    expect(res).toBeUndefined();
    const last = fake.statuses.at(-1)!;
    expect(last).toMatchObject({ phase: 'Cancelled', zonesOutOfRotation: ['az-a'] });
    expect(last.zones!.find((z) => z.name === 'az-a')!.message).toContain('4096 bytes in 2 blocks dropped from its full on-disk queue');
    expect(restores(fake.calls, 'vm-az-a')).toBe(1);
  });
});

// strategy.sampleParity: the zone's samples per tenant over its window against a zone in reads (the
// real count and its reading: activities/analysis/count-samples.ts, unit tests on real answers).
const PARITY = { tenants: [], selector: '{__name__!=""}', tolerance: 0.001, lagMs: 0 };

test('a zone short of samples against a zone in reads stays out, Failed, with the numbers, though vmagent dropped nothing; a retry after the backfill rejoins it', async () => {
  const fake = makeFake();
  fake.samplesLostDuringUpgrade.set('vm-az-b', 250);
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ sampleParity: PARITY }));
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    const b = p.zones.find((z) => z.name === 'az-b')!;
    expect(b).toMatchObject({ phase: 'Failed', failedStep: 'WaitingForQueue', outOfRotation: true, drainedConfirmed: false });
    expect(b.dataCompleteness).toMatchObject({ complete: true });
    expect(b.sampleParity).toMatchObject({
      complete: false,
      healthy: 'az-a',
      tenantCount: 1,
      tenants: [{ tenant: '0:0', samples: 750, healthySamples: 1000, missing: 250 }],
    });
    // The window: from the zone's leaving reads to lag (here 0s) ago.
    expect(Date.parse(b.sampleParity!.to) - Date.parse(b.sampleParity!.from)).toBeGreaterThan(0);
    expect(p.message).toContain('250 samples missing against az-a over its window');
    expect(p.message).toContain('tenant 0:0 lacks 250 of 1000 (25%)');
    expect(p.zonesOutOfRotation).toEqual(['az-b']);
    expect(restores(fake.calls, 'vm-az-b')).toBe(1);
    expect(fake.touched('vm-az-c')).toBe(false);
    // az-a was counted against az-b (still in reads then) and had its samples.
    const a = fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-a')!;
    expect(a.sampleParity).toMatchObject({ complete: true, healthy: 'az-b', tenants: [{ tenant: '0:0', missing: 0 }] });

    // Backfilled (vmctl): the retry counts the whole window again, now complete.
    fake.samplesMissing.delete('vm-az-b');
    await h.signal('resume');
    expect((await h.result()).phase).toBe('Succeeded');
    expect(restores(fake.calls, 'vm-az-b')).toBe(2);
    expect(fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-b')!.sampleParity).toMatchObject({ complete: true, healthy: 'az-a' });
    expect(r.breaches(true)).toEqual([]);
  });
});

test('negative control: the same loss without strategy.sampleParity: the zone rejoins, never counted', async () => {
  const fake = makeFake();
  fake.samplesLostDuringUpgrade.set('vm-az-b', 250);
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf())).result();
    expect(res.phase).toBe('Succeeded');
    expect(restores(fake.calls, 'vm-az-b')).toBe(2);
    expect(fake.calls.some((c) => c.startsWith('countSamples'))).toBe(false);
  });
});

test('a loss within tolerance rejoins; a cancel while a zone is held short of samples leaves it out', async () => {
  const fake = makeFake();
  fake.samplesLostDuringUpgrade.set('vm-az-a', 1);
  fake.samplesLostDuringUpgrade.set('vm-az-b', 40);
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ sampleParity: PARITY }));
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    // 1 of 1000 is within 0.001; 40 is not.
    expect(p.zones.find((z) => z.name === 'az-a')).toMatchObject({ phase: 'Done', sampleParity: { complete: true, tenants: [{ missing: 1 }] } });
    expect(p.zones.find((z) => z.name === 'az-b')).toMatchObject({ phase: 'Failed', sampleParity: { complete: false } });
    await h.cancel();
    expect(await h.result().catch(() => undefined)).toBeUndefined();
    const last = fake.statuses.at(-1)!;
    expect(last).toMatchObject({ phase: 'Cancelled', zonesOutOfRotation: ['az-b'] });
    // Counted against az-a as it is (999 of 1000: its own loss was within tolerance).
    expect(last.zones!.find((z) => z.name === 'az-b')!.message).toContain('39 samples missing against az-a');
    expect(restores(fake.calls, 'vm-az-b')).toBe(1);
  });
});

test('a window shorter than lag is not counted (said, not held): the zone rejoins', async () => {
  const fake = makeFake();
  fake.samplesLostDuringUpgrade.set('vm-az-b', 250);
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf({ sampleParity: { ...PARITY, lagMs: 3_600_000 } }))).result();
    expect(res.phase).toBe('Succeeded');
    expect(fake.calls.some((c) => c.startsWith('countSamples'))).toBe(false);
    const b = fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-b')!;
    expect(b.sampleParity).toMatchObject({
      complete: true,
      tenants: [],
      tenantCount: 0,
      message: 'not counted: the zone was out less than strategy.sampleParity.lag (1h)',
    });
    expect(Date.parse(b.sampleParity!.from)).toBeGreaterThan(Date.parse(b.sampleParity!.to));
  });
});
