import { findZoneQueues, isWriteHost, queueDirName, urlForQueueHash, xxh64Hex } from '../../activities/vmagent/url';

describe('xxh64Hex (XXH64, seed 0, %016X)', () => {
  it('matches the reference vectors', async () => {
    expect(await xxh64Hex('')).toBe('EF46DB3751D8E999');
    expect(await xxh64Hex('abc')).toBe('44BC2CF5AD770999');
  });
  it('is 16 upper-case hex digits, zero padded', async () => {
    for (const s of ['a', 'http://vminsert-a:8480/insert/0/prometheus/api/v1/write', 'ü']) {
      expect(await xxh64Hex(s)).toMatch(/^[0-9A-F]{16}$/);
    }
  });
});

describe('urlForQueueHash (Go url.String() after RawQuery = "", Fragment = "")', () => {
  it.each([
    ['http://vminsert-a:8480/insert/0/prometheus/api/v1/write', 'http://vminsert-a:8480/insert/0/prometheus/api/v1/write'],
    ['http://h:1/p?extra_label=zone=a', 'http://h:1/p'],
    ['http://h:1/p?a=1#frag', 'http://h:1/p'],
    ['http://h:1/p#frag', 'http://h:1/p'],
    ['http://h:1/p?', 'http://h:1/p?'],
    ['HTTP://h:1/p', 'http://h:1/p'],
    ['https://user:pass@h/p', 'https://user:pass@h/p'],
  ])('%s → %s', (input, want) => {
    expect(urlForQueueHash(input)).toBe(want);
  });
  it('names the queue dir <i+1>_<hash of the URL without query>', async () => {
    const url = 'http://127.0.0.1:8428/api/v1/write';
    expect(await queueDirName(0, url)).toBe(`1_${await xxh64Hex(url)}`);
    expect(await queueDirName(1, `${url}?x=1`)).toBe(`2_${await xxh64Hex(url)}`);
  });
});

describe('isWriteHost', () => {
  it.each([
    ['vminsert-az-a', true],
    ['vminsert-az-a.ns1', true],
    ['vminsert-az-a.ns1.svc', true],
    ['vminsert-az-a.ns1.svc.cluster.local', true],
    ['vminsert-az-a.ns1.svc.cluster.local.', true],
    ['VMINSERT-AZ-A.NS1.SVC', true],
    ['vminsert-az-a.other-ns.svc', false],
    ['vminsert-az-ab', false],
    ['vminsert-az', false],
    ['vmselect-az-a', false],
    ['x.vminsert-az-a', false],
    ['vminsert-az-a.ns1.svcx', false],
  ])('%s → %s', (host, want) => {
    expect(isWriteHost(host, { name: 'az-a', namespace: 'ns1' })).toBe(want);
  });
});

describe('findZoneQueues', () => {
  const rw = [
    { url: 'http://vminsert-az-a.ns1.svc:8480/insert/0/prometheus/api/v1/write' },
    { url: 'http://vminsert-az-b:8480/insert/0/prometheus/api/v1/write' },
    { url: 'http://vminsert-az-c.ns1.svc.cluster.local:8480/insert/0/prometheus/api/v1/write?x=1' },
  ];
  it('finds the entry by vminsert host (bare or FQDN, any port) with its index and queue dir', async () => {
    for (const [zone, index] of [
      ['az-a', 0],
      ['az-b', 1],
      ['az-c', 2],
    ] as const) {
      const r = await findZoneQueues(rw, { namespace: 'ns1', vmclusterName: zone });
      expect(r).toEqual({ ok: true, queues: [{ index, url: rw[index]!.url, dirName: await queueDirName(index, rw[index]!.url) }] });
    }
  });
  it('uses remoteWriteURL (exact) when given, ignoring hosts', async () => {
    const r = await findZoneQueues(rw, { namespace: 'ns1', vmclusterName: 'az-a', remoteWriteURL: rw[1]!.url });
    expect(r.ok && r.queues.map((q) => q.index)).toEqual([1]);
    const none = await findZoneQueues(rw, { namespace: 'ns1', vmclusterName: 'az-a', remoteWriteURL: 'http://elsewhere/api/v1/write' });
    expect(none.ok).toBe(false);
  });
  it('returns every entry of the zone (e.g. two tenants)', async () => {
    const two = [rw[0]!, { url: 'http://vminsert-az-a:8480/insert/1/prometheus/api/v1/write' }];
    const r = await findZoneQueues(two, { namespace: 'ns1', vmclusterName: 'az-a' });
    expect(r.ok && r.queues.map((q) => q.index)).toEqual([0, 1]);
  });
  it('explains when nothing matches', async () => {
    const r = await findZoneQueues(rw, { namespace: 'ns1', vmclusterName: 'az-x' });
    expect(r).toEqual({ ok: false, message: expect.stringContaining('vminsert-az-x') });
    expect((await findZoneQueues(undefined, { namespace: 'ns1', vmclusterName: 'az-a' })).ok).toBe(false);
    expect((await findZoneQueues([], { namespace: 'ns1', vmclusterName: 'az-a' })).ok).toBe(false);
    expect((await findZoneQueues([{ url: 'not a url' }], { namespace: 'ns1', vmclusterName: 'az-a' })).ok).toBe(false);
  });
});
