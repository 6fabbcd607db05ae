import { ApplicationFailure } from '@temporalio/common';
import { arrayFlagEntry, judgeHeadroom, MIN_UPTIME_SECONDS, readHeadroom, type PodRoom } from '../../activities/vmagent/headroom';
import { readVmagent } from '../../activities/vmagent/reading';
import { VMAGENT_UNREADABLE } from '../../activities/vmagent/pod-readings';
import type { ZonePages } from '../../activities/vmagent/queue';
import { queueDirName, type RemoteWriteQueue } from '../../activities/vmagent/url';
import { LIMITS_PAGE, SECRET_PAGE } from '../support/vmagent-pages';

const U1 = 'http://127.0.0.1:1/api/v1/write';
const U2 = 'http://vminsert-az-b.ns1.svc:8480/insert/0/prometheus/api/v1/write?extra_label=a=b';
const queue = async (index: number, url: string): Promise<RemoteWriteQueue> => ({ index, url, dirName: await queueDirName(index, url) });

/** The page with the value of the one line starting with `prefix` replaced. */
function withValue(page: string, prefix: string, value: string): string {
  const lines = page.split('\n');
  const i = lines.findIndex((l) => l.startsWith(prefix));
  if (i < 0 || lines.findIndex((l, j) => j > i && l.startsWith(prefix)) >= 0) throw new Error(`fixture: not one line starts with ${prefix}`);
  lines[i] = `${lines[i]!.slice(0, lines[i]!.lastIndexOf(' '))} ${value}`;
  return lines.join('\n');
}

/** The limits page, up an hour, remoteWrite[0] having sent `sent` bytes. */
const hourUp = (sent: number) =>
  withValue(withValue(LIMITS_PAGE, 'vm_app_uptime_seconds', '3600'), 'vmagent_remotewrite_bytes_sent_total{url="1:secret-url"}', String(sent));

const HOUR = 3_600_000;

describe('readHeadroom: real vmagent v1.150.0 pages (test/fixtures/vmagent)', () => {
  it("each queue's room is vmagent's own free-space gauge: its -remoteWrite.maxDiskUsagePerURL less what it holds on disk", async () => {
    const r = readHeadroom(hourUp(0), [await queue(0, U1)]);
    expect(r).toEqual({
      ok: true,
      value: [{ index: 0, rateBytesPerSecond: 0, roomBytes: 600_000_000, onDiskOff: false, maxDiskUsage: '600MB', uptimeSeconds: 3600 }],
    });
  });

  it('a queue whose on-disk queue is off (-remoteWrite.disableOnDiskQueue) has no room, whatever the gauge says', async () => {
    const r = readHeadroom(hourUp(0), [await queue(1, U2)]);
    expect(r).toMatchObject({ ok: true, value: [{ index: 1, roomBytes: 0, onDiskOff: true, maxDiskUsage: '1GiB' }] });
    // Negative control: the gauge itself reports the limit.
    expect(LIMITS_PAGE).toMatch(/^vm_persistentqueue_free_disk_space_bytes\{path="[^"]*\/2_B078390AA32A37A2", name="2:secret-url"\} 1073741824$/m);
  });

  it('the intake is what was sent plus what is pending, over the uptime', async () => {
    const page = withValue(hourUp(3_600_000), 'vmagent_remotewrite_pending_data_bytes{path="/tmp/vmacap/rw/persistent-queue/1_', '360000');
    expect(readHeadroom(page, [await queue(0, U1)])).toMatchObject({ ok: true, value: [{ rateBytesPerSecond: 1100 }] });
  });

  it('a pod up for less than the minimum is not judged (its average says nothing yet)', async () => {
    const young = withValue(LIMITS_PAGE, 'vm_app_uptime_seconds', String(MIN_UPTIME_SECONDS - 1));
    expect(readHeadroom(young, [await queue(0, U1)])).toEqual({ ok: false, message: `up for 9 s only: its intake is estimated after ${MIN_UPTIME_SECONDS} s` });
    // Negative control: the page as captured (up 14 s) is judged.
    expect(readHeadroom(LIMITS_PAGE, [await queue(0, U1)]).ok).toBe(true);
    expect(readHeadroom(SECRET_PAGE, [await queue(0, U1)])).toMatchObject({ ok: false, message: expect.stringContaining('up for 5 s only') });
  });

  it('a page without what the prediction needs, or with a damaged value, is unreadable', async () => {
    const q = [await queue(0, U1)];
    const without = (prefix: string) =>
      hourUp(0)
        .split('\n')
        .filter((l) => !l.startsWith(prefix))
        .join('\n');
    expect(readHeadroom(without('vm_persistentqueue_free_disk_space_bytes{path="/tmp/vmacap/rw/persistent-queue/1_'), q)).toMatchObject({
      ok: false,
      message: 'expected one vm_persistentqueue_free_disk_space_bytes series for remoteWrite[0], found 0',
    });
    expect(readHeadroom(without('vmagent_remotewrite_bytes_sent_total{url="1:'), q)).toMatchObject({
      ok: false,
      message: expect.stringContaining('no vmagent_remotewrite_bytes_sent_total'),
    });
    expect(readHeadroom(without('vm_app_uptime_seconds'), q)).toMatchObject({ ok: false, message: 'expected one vm_app_uptime_seconds series, found 0' });
    expect(readHeadroom(withValue(hourUp(0), 'vm_persistentqueue_free_disk_space_bytes{path="/tmp/vmacap/rw/persistent-queue/1_', 'NaN'), q)).toMatchObject({
      ok: false,
    });
    expect(readHeadroom(withValue(hourUp(0), 'vmagent_remotewrite_bytes_sent_total{url="1:', '0x10'), q)).toMatchObject({ ok: false });
    expect(readHeadroom(hourUp(0).replace('value="false,true"', 'value="false,maybe"'), [await queue(1, U2)])).toMatchObject({
      ok: false,
      message: expect.stringContaining('is not true or false'),
    });
  });
});

describe('arrayFlagEntry: flagutil.ArrayBool / ArrayBytes GetOptionalArg', () => {
  it.each([
    ['', 0, undefined],
    ['true', 0, 'true'],
    ['true', 5, 'true'],
    ['false,true', 1, 'true'],
    ['false,true', 2, undefined],
    ['600MB,1GiB', 0, '600MB'],
  ])('%j entry %i is %j', (printed, index, want) => expect(arrayFlagEntry(printed, index)).toBe(want));
});

describe('judgeHeadroom', () => {
  const room = (pod: string, rate: number, roomBytes: number, extra: Partial<PodRoom['queues'][number]> = {}): PodRoom => ({
    pod,
    queues: [{ index: 0, rateBytesPerSecond: rate, roomBytes, onDiskOff: false, maxDiskUsage: '600MB', uptimeSeconds: 3600, ...extra }],
  });
  const at = new Date('2026-12-05T00:00:00Z');

  it('fits when the need over the horizon is within the room; the boundary is exact', () => {
    expect(judgeHeadroom([room('p0', 1000, 3_600_000)], HOUR, at)).toMatchObject({
      fits: true,
      needBytes: 3_600_000,
      roomBytes: 3_600_000,
      horizonSeconds: 3600,
    });
    // Negative control: a byte less room, or a millisecond more horizon, does not fit.
    expect(judgeHeadroom([room('p0', 1000, 3_599_999)], HOUR, at).fits).toBe(false);
    expect(judgeHeadroom([room('p0', 1000, 3_600_000)], HOUR + 1, at).fits).toBe(false);
  });

  it('names the numbers of every pod that would overflow, and reports the tightest', () => {
    const v = judgeHeadroom([room('p0', 10, 10 ** 12), room('p1', 1000, 1_000_000), room('p2', 2000, 1_000_000)], HOUR, at);
    expect(v).toMatchObject({ fits: false, pods: 3, pod: 'p2', rateBytesPerSecond: 2000, needBytes: 7_200_000, roomBytes: 1_000_000, at: at.toISOString() });
    expect(v.message).toBe(
      '2 vmagent queues for the zone would overflow within the expected downtime (1h): ' +
        'vmagent pod p1, remoteWrite[0]: takes in 1000 B/s (average over its 3600 s up), 3.4 MiB over 1h; room 977 KiB (-remoteWrite.maxDiskUsagePerURL=600MB); ' +
        'vmagent pod p2, remoteWrite[0]: takes in 2 KiB/s (average over its 3600 s up), 6.9 MiB over 1h; room 977 KiB (-remoteWrite.maxDiskUsagePerURL=600MB)',
    );
  });

  it('an on-disk queue that is off holds nothing: any intake overflows it', () => {
    const off = room('p0', 1, 0, { onDiskOff: true });
    expect(judgeHeadroom([off], 1000, at)).toMatchObject({ fits: false, message: expect.stringContaining('-remoteWrite.disableOnDiskQueue is set for it') });
    expect(judgeHeadroom([room('p0', 0, 0, { onDiskOff: true })], HOUR, at).fits).toBe(true);
  });

  it('an unset limit is said as the free disk', () => {
    expect(judgeHeadroom([room('p0', 1, 10, { maxDiskUsage: '' })], HOUR, at).message).toContain('-remoteWrite.maxDiskUsagePerURL=unset: the free disk');
  });
});

describe('readVmagent: a reading it cannot judge is retried, never judged', () => {
  const pages = (found: ZonePages) => ({ pages: async () => found });
  const target = { namespace: 'ns', vmagentName: 'vma', vmclusterName: 'vm-az-a', queueEmptyBytes: 0, headroomHorizonMs: HOUR };
  const retryable = (p: Promise<unknown>, message: string | RegExp) =>
    expect(p).rejects.toMatchObject({
      constructor: ApplicationFailure,
      type: VMAGENT_UNREADABLE,
      nonRetryable: false,
      message: expect.stringMatching(message),
    });

  it('judges every pod once all are read; the drop counters from the same pages when asked', async () => {
    const q = await queue(0, U1);
    const found = pages({ ok: true, pages: [{ pod: 'p0', ok: true, text: hourUp(3_600_000), queues: [q] }] });
    const v = await readVmagent(found, target, undefined, () => new Date(0));
    expect(v).toEqual({
      headroom: expect.objectContaining({ fits: true, pods: 1, pod: 'p0', rateBytesPerSecond: 1000, needBytes: 3_600_000, roomBytes: 600_000_000 }),
    });
    const both = await readVmagent(found, { ...target, drops: true }, undefined, () => new Date(0));
    expect(both.drops).toEqual({ at: new Date(0).toISOString(), pods: [{ pod: 'p0', counters: { samples: 0, bytes: 0, blocks: 0, packets: 0 } }] });
    const { headroomHorizonMs: _h, ...dropsOnly } = { ...target, drops: true };
    expect(Object.keys(await readVmagent(found, dropsOnly))).toEqual(['drops']);
  });

  it('one pod unreadable, no pods, or the VMAgent unreadable: a retryable failure (the zone stays in reads)', async () => {
    const q = await queue(0, U1);
    await retryable(
      readVmagent(
        pages({
          ok: true,
          pages: [
            { pod: 'p0', ok: true, text: hourUp(0), queues: [q] },
            { pod: 'p1', ok: false, message: 'connection refused' },
          ],
        }),
        target,
      ),
      /vmagent pod p1: connection refused/,
    );
    await retryable(readVmagent(pages({ ok: true, pages: [] }), target), /no vmagent pods found/);
    await retryable(readVmagent(pages({ ok: false, problem: 'VMAgent ns/vma not found' }), target), /VMAgent ns\/vma not found/);
  });

  it('credentials quoted from a page never reach the message', async () => {
    const problem = 'VMAgent vma: cannot read http://user:hunter2@vminsert:8480/write';
    await expect(readVmagent(pages({ ok: false, problem }), target)).rejects.toThrow(/^(?!.*hunter2)/s);
  });
});
