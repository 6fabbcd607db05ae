// The queue headroom preflight (strategy.queueHeadroom) on the time-skipping test server: a zone whose
// vmagent queue would overflow within the expected downtime fails before it leaves reads, with the
// numbers in its status; the verdict itself is activities/vmagent/headroom.ts (unit tests, real pages).
import { inputOf, makeFake, withWorker, useTimeSkippingEnv } from './setup';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

/** 1000 B/s against 1 MB of room: 1000 s of downtime fill it. zoneTimeout here is 10 min (600 s). */
const TIGHT = { rateBytesPerSecond: 1000, roomBytes: 1_000_000 };
const edits = (calls: string[], vmcluster: string) => calls.filter((c) => c.startsWith('editRoutes') && c.includes(vmcluster)).length;

test('a zone whose queue would overflow within zoneTimeout fails in reads, naming the numbers; resume after it has room goes on', async () => {
  const fake = makeFake();
  fake.headroom.set('vm-az-b', { rateBytesPerSecond: 2000, roomBytes: 1_000_000 });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf());
    const p = await r.progressUntil(h, (p) => p.phase === 'Failed');
    const b = p.zones.find((z) => z.name === 'az-b')!;
    expect(b).toMatchObject({ phase: 'Failed', failedStep: 'LeavingReads', outOfRotation: false, patchAttempted: false });
    expect(b.queueHeadroom).toMatchObject({
      fits: false,
      horizonSeconds: 600,
      pod: 'vmagent-0',
      rateBytesPerSecond: 2000,
      needBytes: 1_200_000,
      roomBytes: 1_000_000,
    });
    expect(p.zonesOutOfRotation).toEqual([]);
    expect(p.message).toContain('vmagent pod vmagent-0, remoteWrite[0]: takes in 2 KiB/s');
    expect(p.message).toContain('the zone stays in reads');
    expect(edits(fake.calls, 'vm-az-b')).toBe(0);
    const written = fake.statuses.at(-1)!;
    expect(written).toMatchObject({ phase: 'Failed', zonesOutOfRotation: [] });
    expect(written.zones!.find((z) => z.name === 'az-b')!.queueHeadroom).toEqual(b.queueHeadroom);
    // az-a, checked before it left, fitted; its verdict stays in its status.
    expect(written.zones!.find((z) => z.name === 'az-a')!.queueHeadroom).toMatchObject({ fits: true, needBytes: 0 });

    fake.headroom.delete('vm-az-b');
    await h.signal('resume');
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    expect(edits(fake.calls, 'vm-az-b')).toBe(2);
    expect(fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-b')!.queueHeadroom).toMatchObject({ fits: true });
    expect(r.breaches(true)).toEqual([]);
  });
});

test('negative control: the same queue with queueHeadroom Off leaves reads and is upgraded, never checked', async () => {
  const fake = makeFake();
  fake.headroom.set('vm-az-b', { rateBytesPerSecond: 2000, roomBytes: 1_000_000 });
  await withWorker(env(), fake, async (r) => {
    const res = await (await r.start(inputOf({ queueHeadroom: 'Off' }))).result();
    expect(res.phase).toBe('Succeeded');
    expect(edits(fake.calls, 'vm-az-b')).toBe(2);
    expect(fake.calls.some((c) => c.startsWith('readVmagent') && c.includes('headroom'))).toBe(false);
    expect(fake.statuses.some((s) => s.zones?.some((z) => z.queueHeadroom))).toBe(false);
  });
});

test('expectedDowntime, when set, is the horizon instead of zoneTimeout: the same queue fits 900 s, not 1100 s', async () => {
  for (const [expectedDowntimeMs, phase] of [
    [900_000, 'Succeeded'],
    [1_100_000, 'Failed'],
  ] as const) {
    const fake = makeFake();
    fake.headroom.set('vm-az-c', TIGHT);
    await withWorker(env(), fake, async (r) => {
      const h = await r.start(inputOf({ expectedDowntimeMs, zoneTimeoutMs: 3_600_000 }));
      const p = await r.progressUntil(h, (p) => p.phase === phase);
      expect(p.zones.find((z) => z.name === 'az-c')!.queueHeadroom).toMatchObject({ horizonSeconds: expectedDowntimeMs / 1000, fits: phase === 'Succeeded' });
      if (phase === 'Failed') await h.cancel();
    });
  }
});
