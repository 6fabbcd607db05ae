// Issue 29's "Caps everywhere": what the config Secret, the pods' /metrics pages and codec server
// requests may cost or claim. The cases are listed in test/fixtures/hostile/caps.ts; the defects
// first, each where it was acted on (the switch confirmed, a request served).
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { ConfigUnreadableError, contentHash, decodeConfig } from '../../activities/vmauth/config';
import { CLOCK_SKEW_MS, lastReloadAt, reportedHash, type SwitchCheck } from '../../activities/vmauth/switch';
import { selectRequests } from '../../activities/reads/drain';
import { MetricsPageError } from '../../activities/pods/prometheus-text';
import { readZoneQueues } from '../../activities/vmagent/match';
import type { ServicePods } from '../../activities/pods/service-pods';
import { MAX_BODY_BYTES, startCodecServer, type CodecServer } from '../../process/codec-server';
import { parsePayloadKeys } from '../../process/payload-codec';
import { CASES, CODEC_CASES, CONFIG_CASES, NOW_MS, PAGE_CASES, type PageCase } from '../fixtures/hostile/caps';
import { assertProperty } from '../support/property';
import { B_OUT_OF_GLOBAL, testSwitchChecker } from '../support/switch-checker';

const A = 'http://vmselect-vm-az-a.monitoring.svc:8481';
const B = 'http://vmselect-vm-az-b.monitoring.svc:8481';

/**
 * One whole switch check (VMAuth `global`, VMCluster vm-az-b to be absent) of a Secret holding
 * `gzipped`, at NOW_MS, against one ready vmauth pod whose config-reloader and vmauth pages are given.
 */
async function checkSwitch(gzipped: Buffer, pages: { reloader: string; vmauth: string }): Promise<SwitchCheck> {
  const pods = {
    list: async () => [{ name: 'vmauth-0', address: '10.0.0.1', port: 8427, ready: true }],
    scrape: async (_pod: unknown, opts: { port?: number } = {}) => (opts.port === undefined ? pages.vmauth : pages.reloader),
    describeScrapeError: (e: unknown) => String(e),
  } as unknown as ServicePods;
  const checker = testSwitchChecker({
    pods,
    now: () => NOW_MS,
    readSecret: async () => ({
      metadata: { creationTimestamp: new Date(NOW_MS - 2_000) },
      data: { 'config.yaml.gz': gzipped.toString('base64') },
    }),
  });
  return checker.check(B_OUT_OF_GLOBAL);
}

const caseOf = <T extends { id: string }>(cases: T[], id: string): T => cases.find((c) => c.id === id)!;

describe('a gzip bomb in the config Secret', () => {
  it('is unreadable at 16 MiB decompressed: the switch is not confirmed from it, and the Secret is named', async () => {
    // 17 MiB of a comment is an empty config, i.e. "VMCluster vm-az-b routed nowhere"; the pod runs it.
    const bomb = caseOf(CONFIG_CASES, 'gzip-bomb-comments').gzipped();
    const c = await checkSwitch(bomb, { reloader: `configreloader_reload_content_hash{key="main"} ${contentHash(bomb)}\n`, vmauth: '' });
    expect(c).toEqual({
      done: false,
      waitingFor: `Secret vmauth-config-global: larger than 16777216 bytes decompressed (a gzip bomb?): not read further`,
    });
  });

  it('an alias is never resolved (the operator writes none): 50 uses of a 20,000-URL list are unreadable', () => {
    expect(() => decodeConfig(caseOf(CONFIG_CASES, 'alias-fan-out').gzipped())).toThrow(ConfigUnreadableError);
  });
});

describe('metrics values that cannot be are not believed', () => {
  const right = gzipSync(Buffer.from(stringify({ unauthorized_user: { url_prefix: [A] } })));
  const wrongHash = `configreloader_reload_content_hash{key="main"} ${contentHash(gzipSync(Buffer.from(stringify({ unauthorized_user: { url_prefix: [A, B] } }))))}\n`;

  it('a vmauth reload an hour in the future does not confirm the switch; the wait says why', async () => {
    const c = await checkSwitch(right, {
      reloader: '',
      vmauth: `vmauth_config_last_reload_successful 1\nvmauth_config_last_reload_success_timestamp_seconds ${NOW_MS / 1000 + 3600}\n`,
    });
    expect(c.done).toBe(false);
    expect(!c.done && c.waitingFor).toContain(
      "its reload metrics are not believed (vmauth_config_last_reload_success_timestamp_seconds is 1796389200 (2026-12-04T13:00:00.000Z), later than the worker's clock (2026-12-04T12:00:00.000Z) allows)",
    );
  });

  it('nor does one at +Inf', async () => {
    const c = await checkSwitch(right, {
      reloader: '',
      vmauth: 'vmauth_config_last_reload_successful 1\nvmauth_config_last_reload_success_timestamp_seconds +Inf\n',
    });
    expect(c.done).toBe(false);
  });

  it('a reload a second ago still confirms it (the protection refuses only the impossible)', async () => {
    const c = await checkSwitch(right, {
      reloader: '',
      vmauth: `vmauth_config_last_reload_successful 1\nvmauth_config_last_reload_success_timestamp_seconds ${NOW_MS / 1000 - 1}\n`,
    });
    expect(c.done && c.confirmed.pods).toEqual([{ pod: 'vmauth-0', via: 'vmauth-reload' }]);
  });

  it('a content hash that is no CRC32 is reported as unreadable, not as another config', async () => {
    const c = await checkSwitch(right, { reloader: 'configreloader_reload_content_hash{key="main"} NaN\n', vmauth: '' });
    expect(!c.done && c.waitingFor).toMatch(/its config-reloader cannot be read \(.*a CRC32 is an integer/);
    // A real other hash is still "not yet".
    const d = await checkSwitch(right, { reloader: wrongHash, vmauth: '' });
    expect(!d.done && d.waitingFor).toMatch(/runs config [0-9a-f]{8}, not yet/);
  });

  it('a vmselect request count of +Inf (which never changes, so reads as quiet) is unreadable', () => {
    expect(() => selectRequests('vm_http_requests_total{path="/select/0/prometheus/api/v1/query"} +Inf\n')).toThrow(/must be a finite number >= 0/);
  });
});

describe('the codec server refuses a huge batch early', () => {
  const keys = parsePayloadKeys(`k1:${crypto.randomBytes(32).toString('base64')}`);
  let server: CodecServer;
  beforeAll(async () => {
    server = await startCodecServer({ keys, host: '127.0.0.1', port: 0 });
  });
  afterAll(() => server.close());

  /**
   * Sends the start of `{"payloads":[{},{},…` (`bytes` of it) without ending the request, and waits
   * for an answer: one that comes was given before the body was complete (it never is).
   */
  function answerBeforeTheEnd(headers: Record<string, string | number>, bytes: number): Promise<{ status: number; error: string } | 'no answer'> {
    return new Promise((resolve) => {
      const req = http.request(`${server.url}/decode`, { method: 'POST', headers }, (res) => {
        let body = '';
        res
          .on('data', (d: Buffer) => (body += d.toString()))
          .on('end', () => resolve({ status: res.statusCode!, error: (JSON.parse(body) as { error: string }).error }));
      });
      req.on('error', () => {}); // the server closes the connection after answering
      const timer = setTimeout(() => (resolve('no answer'), req.destroy()), 10_000);
      timer.unref();
      req.write(`{"payloads":[${'{},'.repeat(Math.floor(bytes / 3))}`);
    });
  }

  it('empty payloads: refused (413) by their count after the first bytes, before the body is complete; meanwhile other requests are served', async () => {
    const got = await answerBeforeTheEnd({ 'content-type': 'application/json' }, 256 * 1024);
    expect(got).toEqual({ status: 413, error: expect.stringMatching(/more than 1000 payloads \(\d+ of "\{", "\[", "," in its first \d+ bytes\)/) });
    const other = await fetch(`${server.url}/decode`, { method: 'POST', body: '{"payloads":[]}' });
    expect(other.status).toBe(200);
  });

  it('a Content-Length over the cap: refused (413) before a byte of the body', async () => {
    const got = await answerBeforeTheEnd({ 'content-type': 'application/json', 'content-length': MAX_BODY_BYTES + 1 }, 0);
    expect(got).toEqual({ status: 413, error: expect.stringContaining('Content-Length 8388609') });
  });

  it('a complete batch of 1,001 payloads: refused (413) by count', async () => {
    const res = await fetch(`${server.url}/decode`, { method: 'POST', body: `{"payloads":[${Array(1001).fill('{}').join(',')}]}` });
    expect(res.status).toBe(413);
  });
});

describe('hostile caps (test/fixtures/hostile/caps.ts)', () => {
  it('every case has a unique id, a defect, an input and an expectation', () => {
    expect(new Set(CASES.map((c) => c.id)).size).toBe(CASES.length);
    for (const c of CASES) for (const k of ['id', 'defect', 'input', 'expect'] as const) expect(c[k]).toBeTruthy();
  });

  it.each(CONFIG_CASES.map((c) => [c.id, c] as const))('config %s', (_id, c) => {
    const gz = c.gzipped();
    if ('unreadable' in c.outcome) {
      expect(() => decodeConfig(gz)).toThrow(c.outcome.unreadable);
      expect(() => decodeConfig(gz)).toThrow(ConfigUnreadableError);
    } else {
      expect((decodeConfig(gz).users as unknown[]).length).toBe(c.outcome.users);
    }
  });

  const read = (reader: PageCase['reader'], page: string): number | undefined => {
    switch (reader) {
      case 'config-reloader hash':
        return reportedHash(page);
      case 'vmauth reload time':
        return lastReloadAt(page, NOW_MS);
      case 'vmselect requests':
        return selectRequests(page);
      case 'vmagent pending bytes': {
        const r = readZoneQueues(page, [{ index: 0, url: 'http://vminsert:8480/api/v1/write', dirName: '1_0123456789ABCDEF' }]);
        if (!r.ok) throw new Error(r.message);
        return r.bytes;
      }
    }
  };

  it.each(PAGE_CASES.map((c) => [c.id, c] as const))('page %s', (_id, c) => {
    if ('unreadable' in c.outcome) expect(() => read(c.reader, c.page)).toThrow(c.outcome.unreadable);
    else expect(read(c.reader, c.page)).toBe(c.outcome.value);
  });

  describe('codec requests', () => {
    const keys = parsePayloadKeys(`k1:${crypto.randomBytes(32).toString('base64')}`);
    let server: CodecServer;
    beforeAll(async () => {
      server = await startCodecServer({ keys, host: '127.0.0.1', port: 0 });
    });
    afterAll(() => server.close());

    it.each(CODEC_CASES.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
      const res = await fetch(`${server.url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: c.body() });
      expect(res.status).toBe(c.outcome.status);
      if ('message' in c.outcome) expect(((await res.json()) as { error: string }).error).toMatch(c.outcome.message);
    });
  });

  /** A double as a text-format sample value. */
  const token = (v: number) => (Number.isNaN(v) ? 'NaN' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v));
  const value = fc.oneof(
    fc.double(),
    fc.constantFrom(NaN, Infinity, -Infinity, -1, 0),
    fc.integer({ min: -10, max: 10 }).map((d) => NOW_MS / 1000 + d),
  );

  it('seeded: a count is believed exactly when it is a finite number >= 0', () => {
    assertProperty(
      fc.property(value, (v) => {
        const page = `vm_http_requests_total{path="/select/0/x"} ${token(v)}\n`;
        if (Number.isFinite(v) && v >= 0) expect(selectRequests(page)).toBe(Number(token(v)));
        else expect(() => selectRequests(page)).toThrow(/finite number >= 0/);
      }),
    );
  });

  it('seeded: a reload time is believed exactly when finite, >= 0 and at most CLOCK_SKEW_MS ahead', () => {
    assertProperty(
      fc.property(value, (v) => {
        const page = `vmauth_config_last_reload_successful 1\nvmauth_config_last_reload_success_timestamp_seconds ${token(v)}\n`;
        if (Number.isFinite(v) && v >= 0 && v * 1000 <= NOW_MS + CLOCK_SKEW_MS) expect(lastReloadAt(page, NOW_MS)).toBe(Number(token(v)));
        else expect(() => lastReloadAt(page, NOW_MS)).toThrow(MetricsPageError);
      }),
    );
  });
});
