import {
  buildQueueSample,
  formatBytes,
  normalizeSampleLine,
  parseQueueSeries,
  readQueue,
  readZoneQueues,
  type PodReading,
} from '../../activities/vmagent-match';
import { queueDirName, type RemoteWriteQueue } from '../../activities/vmagent-url';

const URL_A = 'http://vminsert-az-a:8480/insert/0/prometheus/api/v1/write';
const URL_B = 'http://vminsert-az-b:8480/insert/0/prometheus/api/v1/write';

async function queue(index: number, url: string): Promise<RemoteWriteQueue> {
  return { index, url, dirName: await queueDirName(index, url) };
}

/** vmagent prints its queue gauges as registered: `name{path=%q, url=%q}` (blank after the comma). */
function vmagentText(entries: Array<{ dir: string; url: string; bytes: number }>, extra = ''): string {
  const lines = [
    '# some unrelated exotic lines the parser never sees',
    'vm_app_version{version="vmagent-20250101-000000-tags-v1.150.0-0-gabc", short_version="v1.150.0"} 1',
    'vmagent_remotewrite_block_size_rows_bucket{vmrange="1.000e+00...1.136e+00"} 3',
  ];
  for (const e of entries) {
    lines.push(`vmagent_remotewrite_pending_data_bytes{path="/vmagent-remotewrite-data/persistent-queue/${e.dir}", url="${e.url}"} ${e.bytes}`);
    lines.push(`vmagent_remotewrite_pending_inmemory_blocks{path="/vmagent-remotewrite-data/persistent-queue/${e.dir}", url="${e.url}"} 0`);
    lines.push(`vm_persistentqueue_bytes_pending{path="/vmagent-remotewrite-data/persistent-queue/${e.dir}"} 0`);
  }
  return lines.join('\n') + '\n' + extra;
}

describe('normalizeSampleLine', () => {
  it('drops blanks between label pairs only', () => {
    expect(normalizeSampleLine('m{a="x", b="y"} 1')).toBe('m{a="x",b="y"} 1');
    expect(normalizeSampleLine('m{a="x, y",\tb="z"} 1')).toBe('m{a="x, y",b="z"} 1');
    expect(normalizeSampleLine('m{a="q\\", r", b="s"} 1')).toBe('m{a="q\\", r",b="s"} 1');
    expect(normalizeSampleLine('m 1')).toBe('m 1');
  });
});

describe('parseQueueSeries', () => {
  it('parses the two queue metrics with the library, blanks after commas included', () => {
    const s = parseQueueSeries(vmagentText([{ dir: '1_ABC', url: '1:secret-url', bytes: 1234 }]));
    expect(s).toEqual([
      { metric: 'vmagent_remotewrite_pending_data_bytes', labels: { path: '/vmagent-remotewrite-data/persistent-queue/1_ABC', url: '1:secret-url' }, value: 1234 },
      { metric: 'vm_persistentqueue_bytes_pending', labels: { path: '/vmagent-remotewrite-data/persistent-queue/1_ABC' }, value: 0 },
    ]);
  });
  it('ignores everything else, including lines the library would reject', () => {
    expect(parseQueueSeries('weird{a="x", b="y"} 1\n# TYPE x y z\n')).toEqual([]);
  });
  it('reads exponent and special values', () => {
    const s = parseQueueSeries('vm_persistentqueue_bytes_pending{path="/q/1_A"} 5e3\nvm_persistentqueue_bytes_pending{path="/q/2_A"} NaN\n');
    expect(s.map((x) => x.value)).toEqual([5000, NaN]);
  });
});

describe('readQueue / readZoneQueues', () => {
  it('matches by the path suffix /<i+1>_<XXH64>', async () => {
    const a = await queue(0, URL_A);
    const b = await queue(1, URL_B);
    const text = vmagentText([
      { dir: a.dirName, url: '1:secret-url', bytes: 10 },
      { dir: b.dirName, url: '2:secret-url', bytes: 4096 },
    ]);
    expect(readZoneQueues(text, [a])).toEqual({ ok: true, bytes: 10, matchedBy: 'path', series: 1 });
    expect(readZoneQueues(text, [b])).toEqual({ ok: true, bytes: 4096, matchedBy: 'path', series: 1 });
    expect(readZoneQueues(text, [a, b])).toMatchObject({ ok: true, bytes: 4106 });
  });

  it('falls back to url <i+1>:secret-url when no path matches (e.g. another hash)', async () => {
    const b = await queue(1, URL_B);
    const text = vmagentText([
      { dir: '1_0000000000000000', url: '1:secret-url', bytes: 7 },
      { dir: '2_0000000000000000', url: '2:secret-url', bytes: 99 },
    ]);
    expect(readZoneQueues(text, [b])).toEqual({ ok: true, bytes: 99, matchedBy: 'url', series: 1 });
  });

  it('falls back to url <i+1>:<url> (-remoteWrite.showURL)', async () => {
    const b = await queue(1, URL_B);
    const text = vmagentText([{ dir: '2_0000000000000000', url: `2:${URL_B}`, bytes: 5 }]);
    expect(readZoneQueues(text, [b])).toMatchObject({ ok: true, bytes: 5, matchedBy: 'url' });
  });

  it('never matches the bare URL, nor another index with the same URL', async () => {
    const b = await queue(1, URL_B);
    expect(readZoneQueues(vmagentText([{ dir: 'x', url: URL_B, bytes: 5 }]), [b]).ok).toBe(false);
    expect(readZoneQueues(vmagentText([{ dir: 'x', url: `1:${URL_B}`, bytes: 5 }]), [b]).ok).toBe(false);
    expect(readZoneQueues(vmagentText([{ dir: `1_${b.dirName.slice(2)}`, url: '1:secret-url', bytes: 5 }]), [b]).ok).toBe(false);
  });

  it('does not take a longer index for a shorter one (12_ is not 2_)', async () => {
    const b = await queue(1, URL_B);
    const hash = b.dirName.slice(2);
    const text = vmagentText([{ dir: `12_${hash}`, url: '12:secret-url', bytes: 5 }]);
    expect(readZoneQueues(text, [b]).ok).toBe(false);
  });

  it('falls back to vm_persistentqueue_bytes_pending by path when the main metric is absent', async () => {
    const a = await queue(0, URL_A);
    const text = `vm_persistentqueue_bytes_pending{path="/data/persistent-queue/${a.dirName}"} 321\n`;
    expect(readZoneQueues(text, [a])).toEqual({ ok: true, bytes: 321, matchedBy: 'fallback-path', series: 1 });
  });

  it('a missing series, NaN, a negative value or an unparseable line is unreadable', async () => {
    const a = await queue(0, URL_A);
    expect(readZoneQueues('', [a])).toEqual({ ok: false, message: expect.stringContaining('no vmagent_remotewrite_pending_data_bytes series') });
    const nan = `vmagent_remotewrite_pending_data_bytes{path="/q/${a.dirName}", url="1:secret-url"} NaN\n`;
    expect(readZoneQueues(nan, [a]).ok).toBe(false);
    const neg = `vmagent_remotewrite_pending_data_bytes{path="/q/${a.dirName}", url="1:secret-url"} -1\n`;
    expect(readZoneQueues(neg, [a]).ok).toBe(false);
    const broken = `vmagent_remotewrite_pending_data_bytes{path="/q/${a.dirName}" url} 1\n`;
    expect(readZoneQueues(broken, [a])).toEqual({ ok: false, message: expect.stringContaining('cannot parse') });
  });

  it('one queue missing makes the whole pod unreadable', async () => {
    const a = await queue(0, URL_A);
    const b = await queue(1, URL_B);
    expect(readZoneQueues(vmagentText([{ dir: a.dirName, url: '1:secret-url', bytes: 0 }]), [a, b]).ok).toBe(false);
  });

  it('readQueue sums duplicate matching series', async () => {
    const a = await queue(0, URL_A);
    const r = readQueue(
      [
        { metric: 'vmagent_remotewrite_pending_data_bytes', labels: { path: `/a/${a.dirName}` }, value: 1 },
        { metric: 'vmagent_remotewrite_pending_data_bytes', labels: { path: `/b/${a.dirName}` }, value: 2 },
      ],
      a,
    );
    expect(r).toEqual({ ok: true, bytes: 3, matchedBy: 'path', series: 2 });
  });
});

describe('buildQueueSample', () => {
  const at = new Date('2025-01-01T00:00:00Z');
  const ok = (pod: string, bytes: number): PodReading => ({ pod, reading: { ok: true, bytes, matchedBy: 'path', series: 1 } });
  const bad = (pod: string, message: string): PodReading => ({ pod, reading: { ok: false, message } });

  it('drained only when every pod was read and the sum is within the threshold', () => {
    expect(buildQueueSample([ok('p0', 0), ok('p1', 0)], { queueEmptyBytes: 0, at })).toMatchObject({
      at: at.toISOString(), pendingBytes: 0, unreadablePods: 0, totalPods: 2, drained: true,
    });
    expect(buildQueueSample([ok('p0', 100), ok('p1', 28)], { queueEmptyBytes: 128, at }).drained).toBe(true);
    const s = buildQueueSample([ok('p0', 100), ok('p1', 29)], { queueEmptyBytes: 128, at });
    expect(s).toMatchObject({ pendingBytes: 129, drained: false });
    expect(s.message).toContain('129 B pending on 2/2 vmagent pods');
  });
  it('an unreadable pod is never drained', () => {
    const s = buildQueueSample([ok('p0', 0), bad('p1', 'scrape error: timeout')], { queueEmptyBytes: 1e9, at });
    expect(s).toMatchObject({ pendingBytes: 0, unreadablePods: 1, totalPods: 2, drained: false });
    expect(s.message).toContain('p1: scrape error: timeout');
  });
  it('no pods, or a problem before scraping, is not drained', () => {
    expect(buildQueueSample([], { queueEmptyBytes: 0, at })).toMatchObject({ drained: false, totalPods: 0 });
    expect(buildQueueSample([], { queueEmptyBytes: 0, at, problem: 'VMAgent x not found' })).toMatchObject({ drained: false, message: 'VMAgent x not found' });
  });
  it('formats bytes', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(412 * 1024)).toBe('412 KiB');
    expect(formatBytes(1.5 * 1024 * 1024)).toBe('1.5 MiB');
  });
});

describe('real vmagent v1.150.0 /metrics (test/fixtures/vmagent)', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const fs = require('node:fs') as typeof import('node:fs');
  const dir = `${__dirname}/../fixtures/vmagent`;
  const secret = fs.readFileSync(`${dir}/vmagent-v1.150.0-metrics.txt`, 'utf8');
  const showURL = fs.readFileSync(`${dir}/vmagent-v1.150.0-showurl-metrics.txt`, 'utf8');
  const U1 = 'http://127.0.0.1:1/api/v1/write';
  const U2 = 'http://vminsert-az-b.ns1.svc:8480/insert/0/prometheus/api/v1/write?extra_label=a=b';

  it('our queue dir names are exactly the ones vmagent printed (query string not hashed)', async () => {
    expect((await queue(0, U1)).dirName).toBe('1_FD109BB61015B79C');
    expect((await queue(1, U2)).dirName).toBe('2_B078390AA32A37A2');
    expect(secret).toContain('/persistent-queue/1_FD109BB61015B79C", url="1:secret-url"}');
  });

  it('reads each queue by path (masked URLs)', async () => {
    expect(readZoneQueues(secret, [await queue(0, U1)])).toEqual({ ok: true, bytes: 210, matchedBy: 'path', series: 1, retries: 2 });
    expect(readZoneQueues(secret, [await queue(1, U2)])).toEqual({ ok: true, bytes: 210, matchedBy: 'path', series: 1, retries: 1 });
  });

  it('reads each queue by path with -remoteWrite.showURL, and by url <i+1>:<url> when the path does not match', async () => {
    expect(readZoneQueues(showURL, [await queue(1, U2)])).toEqual({ ok: true, bytes: 0, matchedBy: 'path', series: 1, retries: 3 });
    const wrongHash: RemoteWriteQueue = { index: 1, url: U2, dirName: '2_0000000000000000' };
    expect(readZoneQueues(showURL, [wrongHash])).toEqual({ ok: true, bytes: 0, matchedBy: 'url', series: 1, retries: 3 });
    expect(readZoneQueues(secret, [wrongHash])).toEqual({ ok: true, bytes: 210, matchedBy: 'url', series: 1, retries: 1 });
  });

  it('send retries come from the url label of the same remote write, and reach the sample per pod', async () => {
    const readings = [
      { pod: 'p0', reading: readZoneQueues(secret.replace(/pending_data_bytes(\{[^}]*\}) 210/g, 'pending_data_bytes$1 0'), [await queue(0, U1)]) },
    ];
    const sample = buildQueueSample(readings, { queueEmptyBytes: 0, at: new Date(0) });
    expect(sample).toMatchObject({ drained: true, sendRetries: { p0: 2 } });
  });

  it('a queue the vmagent does not have is unreadable', async () => {
    expect(readZoneQueues(secret, [await queue(2, U1)]).ok).toBe(false);
  });
});
