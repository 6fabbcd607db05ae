import { queueDirName, type RemoteWriteQueue } from '../../activities/vmagent/url';
import { observeQueues } from '../infra/chaos/queue-watch';
import { longestGapMs } from '../infra/chaos/read-gaps';

const URL_A = 'http://127.0.0.1:8001/api/v1/write';

/** A vmagent page for remote write 0: pending bytes and its send counters (errors - retries = blocks in a backoff). */
const page = (o: { bytes: number; retries: number; errors: number }) =>
  [
    `vmagent_remotewrite_pending_data_bytes{path="/tmp/vmagent/persistent-queue/DIR", url="1:secret-url"} ${o.bytes}`,
    `vmagent_remotewrite_retries_count_total{url="1:secret-url"} ${o.retries}`,
    `vmagent_remotewrite_errors_total{url="1:secret-url"} ${o.errors}`,
    `vmagent_remotewrite_requests_total{url="1:secret-url", status_code="2XX"} 40`,
    `vmagent_remotewrite_packets_dropped_total{url="1:secret-url"} 0`,
  ].join('\n') + '\n';

describe("the campaign's own looks at vmagent's queues (the queue wait's definition of drained)", () => {
  let zones: Record<string, RemoteWriteQueue[]>;
  let text: (o: { bytes: number; retries: number; errors: number }) => string;
  beforeAll(async () => {
    const q = { index: 0, url: URL_A, dirName: await queueDirName(0, URL_A) };
    zones = { 'az-a': [q] };
    text = (o) => page(o).replace('DIR', q.dirName);
  });

  it('drained: no pending byte, no block in a backoff, the page read', () => {
    const prev = new Map();
    expect(observeQueues(text({ bytes: 0, retries: 3, errors: 3 }), zones, 1000, 0, prev)).toEqual({ 'az-a': { at: 1000, drained: true } });
  });

  it('not drained: pending bytes, a block waiting out a backoff, a failed scrape', () => {
    expect(observeQueues(text({ bytes: 512, retries: 3, errors: 3 }), zones, 1000, 0, new Map())['az-a']).toEqual({ at: 1000, drained: false });
    expect(observeQueues(text({ bytes: 0, retries: 3, errors: 4 }), zones, 1000, 0, new Map())['az-a']).toEqual({ at: 1000, drained: false });
    expect(observeQueues(undefined, zones, 1000, 0, new Map())['az-a']).toEqual({ at: 1000, drained: false });
  });

  it('a send retry since the previous look: not drained, as early as that look (the retry came between the two)', () => {
    const prev = new Map();
    observeQueues(text({ bytes: 0, retries: 3, errors: 3 }), zones, 1000, 0, prev);
    expect(observeQueues(text({ bytes: 0, retries: 4, errors: 4 }), zones, 1100, 0, prev)['az-a']).toEqual({ at: 1000, drained: false });
    expect(observeQueues(text({ bytes: 0, retries: 4, errors: 4 }), zones, 1200, 0, prev)['az-a']).toEqual({ at: 1200, drained: true });
  });
});

describe('read gaps', () => {
  it('the longest time between consecutive samples (query API seconds), in any order', () => {
    expect(longestGapMs([10, 10.2, 10.4, 22.4, 22.6])).toBe(12_000);
    expect(longestGapMs([10.4, 10, 10.2])).toBe(200);
    expect(longestGapMs([10])).toBe(0);
  });
});
