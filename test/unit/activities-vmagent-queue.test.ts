// Scraping a vmagent /metrics page over real HTTP on 127.0.0.1: the body is capped (a larger page is
// "not drained", and reading stops early) and the scrape timeout covers the whole body.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeObjects } from '../../kube/custom-objects';
import { MAX_METRICS_PAGE_BYTES, type ServicePod } from '../../activities/pods/service-pods';
import { QueueReader, type QueueReaderDeps } from '../../activities/vmagent/queue';
import type { VmagentAuth } from '../../activities/vmagent/auth';
import type { QueueTarget } from '../../workflows/activity-types';
import { SECRET_PAGE, settled } from '../support/vmagent-pages';

/** The real vmagent page, settled (no block in a send-retry backoff). */
const PAGE = settled(SECRET_PAGE);
const U1 = 'http://127.0.0.1:1/api/v1/write';
const target: QueueTarget = { namespace: 'ns', vmagentName: 'va', vmclusterName: 'az-a', remoteWriteURL: U1, queueEmptyBytes: 1024 };

interface Served {
  port: number;
  /** Bytes handed to the socket so far. */
  sent: () => number;
  /** Resolves when the response is over (finished or the client went away). */
  closed: Promise<void>;
  stop: () => Promise<void>;
}

/**
 * One HTTP server answering /metrics with `write(res)`'s output; `write` must respect backpressure
 * (the helper `push` does) so that `sent` counts what the client made room for, not what Node buffered.
 */
async function serve(write: (res: http.ServerResponse, push: (b: Buffer | string) => Promise<boolean>) => Promise<void>): Promise<Served> {
  let sent = 0;
  let onClosed!: () => void;
  const closed = new Promise<void>((r) => (onClosed = r));
  const server = http.createServer((_req, res) => {
    res.on('close', onClosed);
    const push = async (b: Buffer | string): Promise<boolean> => {
      if (res.destroyed) return false;
      sent += Buffer.byteLength(b);
      if (!res.write(b))
        await new Promise<void>((r) => {
          res.once('drain', r);
          res.once('close', r);
        });
      return !res.destroyed;
    };
    write(res, push).catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    sent: () => sent,
    closed,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function reader(port: number, deps: Partial<QueueReaderDeps> = {}): QueueReader {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const kube = { get: async () => ({ spec: { remoteWrite: [{ url: U1 }] } }) } as unknown as KubeObjects;
  const r = new QueueReader({ kube, kubeConfig: kc, ...deps });
  const pod: ServicePod = { name: 'vmagent-va-0', address: '127.0.0.1', port, ready: true };
  r.listPods = async () => [pod];
  return r;
}

let servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
});
async function started(s: Promise<Served>): Promise<Served> {
  const x = await s;
  servers.push(x);
  return x;
}

it('a real page is read whole, in chunks, multi-byte characters split across them', async () => {
  const page = PAGE.replace('# ', '# é✓ ');
  const bytes = Buffer.from(page, 'utf8');
  const s = await started(
    serve(async (res, push) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < bytes.length; i += 7777) await push(bytes.subarray(i, i + 7777));
      res.end();
    }),
  );
  const r = reader(s.port);
  expect(await r.pods.scrape({ name: 'p', address: '127.0.0.1', port: s.port, ready: true })).toBe(page);
  expect(await r.sample(target)).toMatchObject({ drained: true, pendingBytes: 210, totalPods: 1, unreadablePods: 0, sendRetries: { 'vmagent-va-0': 2 } });
});

it(`a page larger than ${MAX_METRICS_PAGE_BYTES / 2 ** 20} MiB is not drained, and reading stops soon after the cap`, async () => {
  expect(MAX_METRICS_PAGE_BYTES).toBe(16 * 1024 * 1024);
  const PAGE_BYTES = 4 * MAX_METRICS_PAGE_BYTES; // 64 MiB, streamed without a Content-Length
  const chunk = Buffer.from(`${'vm_filler_series{label="x"} 0\n'.repeat(2048)}`);
  const s = await started(
    serve(async (res, push) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // The zone's queue line comes first, drained-looking: the size alone must refuse the page.
      await push(PAGE);
      while (s0.sent() < PAGE_BYTES) if (!(await push(chunk))) return;
      res.end();
    }),
  );
  const s0 = s;
  const sample = await reader(s.port, { scrapeTimeoutMs: 30_000 }).sample(target);
  expect(sample).toMatchObject({ drained: false, totalPods: 1, unreadablePods: 1 });
  expect(sample.message).toContain('vmagent pod vmagent-va-0: page larger than 16 MiB (stopped reading after');
  await s.closed;
  // What the server got to send: the cap, plus what the socket buffers and the HTTP client held.
  expect(s.sent()).toBeGreaterThan(MAX_METRICS_PAGE_BYTES);
  expect(s.sent()).toBeLessThan(MAX_METRICS_PAGE_BYTES + 8 * 1024 * 1024);
});

it('a Content-Length over the cap is refused before the body is read', async () => {
  const s = await started(
    serve(async (res, push) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(MAX_METRICS_PAGE_BYTES + 1) });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      for (let n = 0; n <= MAX_METRICS_PAGE_BYTES; n += chunk.length) if (!(await push(chunk))) return;
      res.end();
    }),
  );
  const sample = await reader(s.port).sample(target);
  expect(sample).toMatchObject({ drained: false, unreadablePods: 1 });
  expect(sample.message).toContain(`page larger than 16 MiB (Content-Length ${MAX_METRICS_PAGE_BYTES + 1})`);
  await s.closed;
  expect(s.sent()).toBeLessThan(8 * 1024 * 1024);
});

it('the cap counts body bytes: exactly the cap is read, one byte more is refused', async () => {
  const cap = Buffer.byteLength(PAGE);
  for (const [extra, ok] of [
    [0, true],
    [1, false],
  ] as const) {
    const s = await started(
      serve(async (res, push) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        await push(PAGE + ' '.repeat(extra));
        res.end();
      }),
    );
    const sample = await reader(s.port, { maxPageBytes: cap }).sample(target);
    expect(sample.drained).toBe(ok);
    if (!ok) expect(sample.message).toContain(`page larger than ${(cap / 1024).toFixed(1)} KiB (stopped reading after ${cap + 1} bytes)`);
  }
});

it('the scrape timeout covers the body: a page that stalls after the headers is a scrape error in time', async () => {
  const s = await started(
    serve(async (res, push) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      await push(PAGE.slice(0, 5000)); // then nothing, never the end
    }),
  );
  const t0 = Date.now();
  const sample = await reader(s.port, { scrapeTimeoutMs: 300 }).sample(target);
  expect(Date.now() - t0).toBeLessThan(3_000);
  expect(sample).toMatchObject({ drained: false, unreadablePods: 1 });
  expect(sample.message).toContain('vmagent pod vmagent-va-0: scrape error: no complete answer within 300 ms');
  await s.closed; // the connection was given up, not left open
});

it('an abort by the caller while the body is read is rethrown (the activity was cancelled), not a sample', async () => {
  const s = await started(
    serve(async (res, push) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      await push(PAGE.slice(0, 5000));
    }),
  );
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('cancelled')), 100);
  await expect(reader(s.port).sample(target, ac.signal)).rejects.toThrow('cancelled');
});

describe('the lookups of one sample', () => {
  /** Resolves once `n` calls have started; each call waits for it (a call never overlapping the others would hang). */
  function barrier(n: number) {
    let started = 0;
    let open!: () => void;
    const all = new Promise<void>((r) => (open = r));
    return async <T>(value: T): Promise<T> => {
      if (++started === n) open();
      await Promise.race([all, new Promise((_, reject) => setTimeout(() => reject(new Error(`only ${started} of ${n} lookups started`)), 2_000))]);
      return value;
    };
  }

  it('the VMAgent, its EndpointSlices and the credentials are read at once, and afresh on every sample', async () => {
    const s = await started(serve(async (res) => void res.end(PAGE)));
    let gets = 0;
    let pods: ServicePod[] = [{ name: 'vmagent-va-0', address: '127.0.0.1', port: s.port, ready: true }];
    let wait = barrier(3);
    const r = reader(s.port, {
      kube: { get: async () => (gets++, wait({ spec: { remoteWrite: [{ url: U1 }] } })) } as unknown as KubeObjects,
      auth: { headers: async () => wait({ authorization: 'Bearer t' }) } as unknown as VmagentAuth,
    });
    r.listPods = async () => wait(pods);
    expect(await r.sample(target)).toMatchObject({ drained: true, totalPods: 1 });
    // A pod added since: seen at the next sample (nothing cached), the VMAgent read again.
    wait = barrier(3);
    pods = [...pods, { name: 'vmagent-va-1', ready: false, problem: 'endpoint not ready' }];
    expect(await r.sample(target)).toMatchObject({ drained: false, totalPods: 2, unreadablePods: 1 });
    expect(gets).toBe(2);
    // Negative control: a lookup that waits for the others to start fails when they run one by one.
    const one = barrier(2);
    await expect(one(1).then(() => one(2))).rejects.toThrow('only 1 of 2 lookups started');
  });

  it('judged in the order of the checks: the VMAgent first, then the pods, then the credentials', async () => {
    const missing = reader(1, {
      kube: { get: async () => undefined } as unknown as KubeObjects,
      auth: {
        headers: async () => {
          throw new Error('no Secret');
        },
      } as unknown as VmagentAuth,
    });
    missing.listPods = async () => {
      throw new Error('EndpointSlices: 503');
    };
    expect((await missing.sample(target)).message).toBe('VMAgent ns/va not found');
    const noPods = reader(1, {
      auth: {
        headers: async () => {
          throw new Error('no Secret');
        },
      } as unknown as VmagentAuth,
    });
    noPods.listPods = async () => {
      throw new Error('EndpointSlices: 503');
    };
    expect((await noPods.sample(target)).message).toBe('cannot read vmagent queues: EndpointSlices: 503');
    const noSecret = reader(1, {
      auth: {
        headers: async () => {
          throw new Error('no Secret');
        },
      } as unknown as VmagentAuth,
    });
    expect(await noSecret.sample(target)).toMatchObject({ drained: false, message: 'cannot read vmagent queues: no Secret' });
  });
});

describe('several VMAgents (spec.vmagent and the zones own, zones[].vmagent)', () => {
  const U2 = 'http://127.0.0.1:2/api/v1/write';
  /** The real page with the pending bytes of its remoteWrite[0] and [1] set. */
  const pageWith = (first: number, second: number) =>
    PAGE.replace(/(pending_data_bytes\{[^}]*url="1:secret-url"\}) \d+/, `$1 ${first}`).replace(
      /(pending_data_bytes\{[^}]*url="2:secret-url"\}) \d+/,
      `$1 ${second}`,
    );

  it("each VMAgent's pods are read against its own remoteWrite list, and the zone's pending bytes summed over all of them", async () => {
    // The zone (U1) is remoteWrite[0] of va and remoteWrite[1] of vb.
    const sa = await started(serve(async (res) => void res.end(pageWith(210, 7))));
    const sb = await started(serve(async (res) => void res.end(pageWith(5, 300))));
    const specs: Record<string, unknown> = { va: { remoteWrite: [{ url: U1 }, { url: U2 }] }, vb: { remoteWrite: [{ url: U2 }, { url: U1 }] } };
    const ports: Record<string, number> = { va: sa.port, vb: sb.port };
    const r = reader(0, { kube: { get: async (_k: unknown, _ns: string, name: string) => specs[name] && { spec: specs[name] } } as unknown as KubeObjects });
    r.listPods = async (_ns, name) => [{ name: `vmagent-${name}-0`, address: '127.0.0.1', port: ports[name]!, ready: true }];
    const both = await r.sample({ ...target, queueEmptyBytes: 0, zoneVmagents: ['vb'] });
    expect(both).toMatchObject({ drained: false, totalPods: 2, pendingBytes: 510, podPendingBytes: { 'vmagent-va-0': 210, 'vmagent-vb-0': 300 } });
    // Negative control: spec.vmagent's alone does not see what vb holds for the zone.
    expect(await r.sample({ ...target, queueEmptyBytes: 0 })).toMatchObject({ totalPods: 1, pendingBytes: 210 });
    // A zone VMAgent that is gone: the whole reading is not drained, naming it.
    expect(await r.sample({ ...target, zoneVmagents: ['vb', 'vc'] })).toMatchObject({ drained: false, message: 'VMAgent ns/vc not found' });
  });
});
