import { readDrops } from '../../activities/vmagent/drops';
import { queueDirName, type RemoteWriteQueue } from '../../activities/vmagent/url';
import type { DropCounters, DropReading } from '../../api/types';
import { compareDrops } from '../../workflows/drops';
import { DROPS_PAGE, SECRET_PAGE } from '../support/vmagent-pages';

const U1 = 'http://127.0.0.1:1/api/v1/write';
const U2 = 'http://127.0.0.1:2/api/v1/write';
const queue = async (index: number, url: string): Promise<RemoteWriteQueue> => ({ index, url, dirName: await queueDirName(index, url) });

describe('readDrops: real vmagent v1.150.0 pages (test/fixtures/vmagent)', () => {
  it('the in-memory-only queue that filled up dropped 19 samples; the other one nothing', async () => {
    expect(readDrops(DROPS_PAGE, [await queue(1, U2)])).toEqual({ ok: true, value: { samples: 19, bytes: 0, blocks: 0, packets: 0 } });
    expect(readDrops(DROPS_PAGE, [await queue(0, U1)])).toEqual({ ok: true, value: { samples: 0, bytes: 0, blocks: 0, packets: 0 } });
    // Both queues of a zone are summed.
    expect(readDrops(DROPS_PAGE, [await queue(0, U1), await queue(1, U2)])).toMatchObject({ ok: true, value: { samples: 19 } });
  });

  it('reads the on-disk drops and refused blocks by the queue path and the sanitized URL', async () => {
    const page = DROPS_PAGE.replace(/^(vm_persistentqueue_bytes_dropped_total\{path="[^"]*\/2_[^"]*", name="2:secret-url"\}) 0$/m, '$1 4096')
      .replace(/^(vm_persistentqueue_blocks_dropped_total\{path="[^"]*\/2_[^"]*", name="2:secret-url"\}) 0$/m, '$1 2')
      .replace(/^(vmagent_remotewrite_packets_dropped_total\{url="2:secret-url"\}) 0$/m, '$1 3');
    expect(readDrops(page, [await queue(1, U2)])).toEqual({ ok: true, value: { samples: 19, bytes: 4096, blocks: 2, packets: 3 } });
  });

  it('a page without one of the counters, or with a damaged one, is unreadable, never 0', async () => {
    const q = [await queue(1, U2)];
    const without = DROPS_PAGE.split('\n')
      .filter((l) => !l.startsWith('vmagent_remotewrite_samples_dropped_total'))
      .join('\n');
    expect(readDrops(without, q)).toEqual({ ok: false, message: 'no vmagent_remotewrite_samples_dropped_total series for remoteWrite[1]' });
    const nan = DROPS_PAGE.replace(/^(vmagent_remotewrite_packets_dropped_total\{url="2:secret-url"\}) 0$/m, '$1 NaN');
    expect(readDrops(nan, q)).toMatchObject({ ok: false, message: expect.stringContaining('must be a finite number') });
    // The older fixture (no samples_dropped for a queue it does not have) is unreadable for that queue.
    expect(readDrops(SECRET_PAGE, [await queue(2, U1)]).ok).toBe(false);
  });
});

describe('compareDrops', () => {
  const c = (samples: number, extra: Partial<DropCounters> = {}): DropCounters => ({ samples, bytes: 0, blocks: 0, packets: 0, ...extra });
  const reading = (at: string, pods: Array<[string, DropCounters]>): DropReading => ({ at, pods: pods.map(([pod, counters]) => ({ pod, counters })) });
  const before = reading('T0', [
    ['p0', c(5)],
    ['p1', c(0)],
  ]);

  it('complete when no counter of any pod grew since the reading before the zone left', () => {
    expect(
      compareDrops(
        before,
        reading('T1', [
          ['p0', c(5)],
          ['p1', c(0)],
        ]),
      ),
    ).toEqual({
      at: 'T1',
      since: 'T0',
      complete: true,
      dropped: c(0),
      unverifiedPods: 0,
      message: 'nothing dropped for the zone by 2 vmagent pods since T0',
    });
  });

  it("what grew is the window's loss, summed, with the pods named", () => {
    const v = compareDrops(
      before,
      reading('T1', [
        ['p0', c(9, { packets: 1 })],
        ['p1', c(0, { bytes: 100, blocks: 1 })],
      ]),
    );
    expect(v).toMatchObject({ complete: false, dropped: { samples: 4, bytes: 100, blocks: 1, packets: 1 }, unverifiedPods: 0 });
    expect(v.message).toBe(
      'vmagent dropped data for the zone since T0: 4 samples refused by its full in-memory queue (vmagent_remotewrite_samples_dropped_total), ' +
        '100 bytes in 1 blocks dropped from its full on-disk queue (vm_persistentqueue_bytes_dropped_total), ' +
        '1 blocks the zone refused for good (vmagent_remotewrite_packets_dropped_total) (pods p0, p1)',
    );
  });

  it('a pod that restarted (counters went down) or is gone cannot say what it lost: not complete', () => {
    const restarted = compareDrops(
      before,
      reading('T1', [
        ['p0', c(0)],
        ['p1', c(0)],
      ]),
    );
    expect(restarted).toMatchObject({
      complete: false,
      unverifiedPods: 1,
      dropped: c(0),
      message: 'cannot tell what one pod lost: p0 restarted (its counters went down)',
    });
    const gone = compareDrops(before, reading('T1', [['p0', c(5)]]));
    expect(gone).toMatchObject({ complete: false, unverifiedPods: 1, message: 'cannot tell what one pod lost: p1 is gone' });
    // A pod new in the window counts from its start.
    expect(
      compareDrops(
        before,
        reading('T1', [
          ['p0', c(5)],
          ['p1', c(0)],
          ['p2', c(3)],
        ]),
      ),
    ).toMatchObject({ complete: false, dropped: { samples: 3 } });
  });

  it('without a reading from before (a zone found out of reads), counted since each pod started', () => {
    expect(compareDrops(undefined, reading('T1', [['p0', c(0)]]))).toMatchObject({
      complete: true,
      message: expect.stringContaining('since each vmagent pod started'),
    });
    expect(compareDrops(undefined, reading('T1', [['p0', c(2)]]))).toMatchObject({ complete: false, dropped: { samples: 2 } });
    expect(compareDrops(undefined, reading('T1', [['p0', c(0)]])).since).toBeUndefined();
  });

  it('pod names are data: a pod called __proto__ or constructor is counted as any other', () => {
    const odd = reading('T0', [
      ['__proto__', c(1)],
      ['constructor', c(0)],
    ]);
    expect(
      compareDrops(
        odd,
        reading('T1', [
          ['__proto__', c(1)],
          ['constructor', c(2)],
        ]),
      ),
    ).toMatchObject({ complete: false, dropped: { samples: 2 } });
  });
});
