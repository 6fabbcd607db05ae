// The pure parts of confirming a read switch where reads happen: the operator's config Secret read
// back, the content hash, the zone's vmselect URLs per route, vmselect request counters, carriers,
// and the live queue message.
import { gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import type { JsonObject } from '../../api/types';
import {
  ConfigUnreadableError,
  contentHash,
  decodeConfig,
  findUserSection,
  routesNotSwitched,
  routesTo,
  sectionURLs,
  userIdentity,
  readHosts,
  type ManagedRoute,
} from '../../activities/vmauth/config';
import { confirmSwitch, metricValue, reloadedAfter, secretChangedAt } from '../../activities/vmauth/switch';
import type { SwitchInput } from '../../workflows/activity-types';
import { selectRequests, waitReadsDrained } from '../../activities/reads/drain';
import type { PollContext } from '../../activities/activity-context';
import type { ServicePods } from '../../activities/pods/service-pods';
import { carrierProblem } from '../../activities/reads/carriers';
import { queueProgressMessage } from '../../workflows/status';
import { readQuietMs } from '../../workflows/zone-steps';
import { B_OUT_OF_GLOBAL, testSwitchChecker } from '../support/switch-checker';

const NS = 'monitoring';
const A = 'http://vmselect-vm-az-a.monitoring.svc:8481';
const B = 'http://vmselect-vm-az-b.monitoring.svc:8481';
const hostsA = readHosts({ name: 'vm-az-a', namespace: NS });

/** A config as the operator's genUserCfg / genURLMaps write it. */
const config: { unauthorized_user: JsonObject; users: JsonObject[] } = {
  unauthorized_user: { url_map: [{ src_paths: ['/select/.*'], url_prefix: [A, B] }] },
  users: [
    { name: 'team-x', url_prefix: [B], username: 'ux' },
    { url_prefix: A, bearer_token: 'token-az-a' },
    { url_map: [{ src_paths: ['/.*'], url_prefix: [B, `${A}/select/0/prometheus`] }], username: 'reads-plain' },
  ],
};
const gz = gzipSync(Buffer.from(stringify(config)));

describe('the config Secret', () => {
  it('decodes the gzipped YAML the operator writes', () => {
    expect(decodeConfig(gz)).toEqual(config);
    expect(decodeConfig(gzipSync(Buffer.from('')))).toEqual({});
  });

  it('refuses what is not a gzipped YAML mapping, saying why', () => {
    expect(() => decodeConfig(Buffer.from('users: []'))).toThrow(ConfigUnreadableError);
    expect(() => decodeConfig(gzipSync(Buffer.from('- a\n- b\n')))).toThrow(/not a mapping/);
  });

  it('hashes as the config-reloader and the operator do: CRC32 IEEE of the gzipped bytes', () => {
    expect(contentHash(Buffer.from('123456789'))).toBe(0xcbf43926); // the CRC-32/ISO-HDLC check value
    expect(contentHash(gz)).not.toBe(contentHash(gzipSync(Buffer.from(stringify({ ...config, users: [] })))));
  });

  it('takes the time of the latest write from managedFields, else the creation time', () => {
    const t1 = '2026-12-01T10:00:00Z';
    const t2 = '2026-12-01T10:05:00Z';
    expect(secretChangedAt({ metadata: { managedFields: [{ time: new Date(t1) }, { time: new Date(t2) }], creationTimestamp: new Date(t1) } })).toBe(
      Date.parse(t2),
    );
    expect(secretChangedAt({ metadata: { creationTimestamp: new Date(t1) } })).toBe(Date.parse(t1));
    expect(secretChangedAt({ metadata: {} })).toBeUndefined();
  });
});

describe('finding a route in the config', () => {
  it('names a VMUser entry as genUserCfg writes it: name, else bearer token, else username', () => {
    expect(userIdentity('obj', { name: 'team-x', bearerToken: 't' })).toEqual({ name: 'team-x' });
    expect(userIdentity('obj', { bearerToken: 'token-az-a', username: 'u' })).toEqual({ bearerToken: 'token-az-a' });
    expect(userIdentity('reads-plain', {})).toEqual({ username: 'reads-plain' });
    expect(userIdentity('obj', { username: 'u2' })).toEqual({ username: 'u2' });
    // Only a Secret or a JWT names these: not looked up.
    expect(userIdentity('obj', { tokenRef: { name: 's', key: 'k' } })).toBeUndefined();
    expect(userIdentity('obj', { jwt: { skip_verify: true } })).toBeUndefined();
  });

  it('finds the entry of each identity, and only that one', () => {
    const c = decodeConfig(gz);
    expect(findUserSection(c, { name: 'team-x' })?.username).toBe('ux');
    expect(findUserSection(c, { bearerToken: 'token-az-a' })?.url_prefix).toBe(A);
    expect(findUserSection(c, { username: 'reads-plain' })?.url_map).toBeDefined();
    expect(findUserSection(c, { username: 'ux' })).toBeUndefined(); // that entry is found by its name
    expect(findUserSection(c, { bearerToken: 'other' })).toBeUndefined();
  });

  it('reads every URL of a section: url_prefix as a string or a list, and url_map entries', () => {
    expect(sectionURLs(config.users[0]!)).toEqual([B]);
    expect(sectionURLs(config.users[1]!)).toEqual([A]);
    expect(sectionURLs(config.users[2]!)).toEqual([B, `${A}/select/0/prometheus`]);
  });

  it("matches the zone's vmselect service host (any port, path, scheme, cluster domain) and nothing else", () => {
    expect(routesTo({ url_prefix: 'https://vmselect-vm-az-a.monitoring.svc:443/x' }, hostsA)).toBe(true);
    expect(routesTo({ url_prefix: 'http://vmselect-vm-az-a.monitoring.svc.cluster.local:8481' }, hostsA)).toBe(true);
    expect(routesTo({ url_prefix: 'http://vmselect-vm-az-a-additional-service.monitoring.svc:8481' }, hostsA)).toBe(true);
    expect(routesTo({ url_prefix: 'http://vmselect-vm-az-a2.monitoring.svc:8481' }, hostsA)).toBe(false);
    expect(routesTo({ url_prefix: 'http://vmselect-vm-az-a.other.svc:8481' }, hostsA)).toBe(false);
    expect(routesTo({ url_prefix: 'not a url' }, hostsA)).toBe(false);
    expect(routesTo(undefined, hostsA)).toBe(false);
  });

  it('tells which managed routes still send reads to the zone (absent) or do not yet again (present)', () => {
    const c = decodeConfig(gz);
    const routes: ManagedRoute[] = [
      { route: { kind: 'VMAuth', name: 'global' } },
      { route: { kind: 'VMUser', name: 'reads-az-a' }, identity: { bearerToken: 'token-az-a' } },
      { route: { kind: 'VMUser', name: 'team-x' }, identity: { name: 'team-x' } },
      { route: { kind: 'VMUser', name: 'by-secret' } },
    ];
    expect(routesNotSwitched(c, routes, hostsA, 'absent')).toEqual([
      { kind: 'VMAuth', name: 'global' },
      { kind: 'VMUser', name: 'reads-az-a' },
    ]);
    expect(routesNotSwitched(c, routes, hostsA, 'present')).toEqual([{ kind: 'VMUser', name: 'team-x' }]);
    // A VMUser missing from the config (skipped by the operator as invalid) routes nowhere.
    expect(routesNotSwitched(c, [{ route: { kind: 'VMUser', name: 'gone' }, identity: { name: 'gone' } }], hostsA, 'absent')).toEqual([]);
    expect(routesNotSwitched({}, [{ route: { kind: 'VMAuth', name: 'global' } }], hostsA, 'present')).toEqual([{ kind: 'VMAuth', name: 'global' }]);
  });
});

describe('pod metrics', () => {
  const reloader = [
    '# HELP configreloader_reload_content_hash x',
    'configreloader_reload_content_hash{key="main"} 3421780262',
    'configreloader_reload_content_hash{key="other"} 1',
  ].join('\n');

  it("reads the config-reloader's content hash of the main config, as an unsigned 32-bit number", () => {
    expect(metricValue(reloader, 'configreloader_reload_content_hash', { key: 'main' })).toBe(3421780262);
    expect(metricValue('vmauth_config_last_reload_successful 1\n', 'configreloader_reload_content_hash', { key: 'main' })).toBeUndefined();
  });

  it("takes vmauth's reload (whole seconds) as after the Secret change (whole seconds) only from the next second on", () => {
    const changed = Date.parse('2026-03-04T10:20:30Z');
    // The same second: the reload may have been of the old config, just before the write.
    expect(reloadedAfter(changed / 1000, changed)).toBe(false);
    expect(reloadedAfter(changed / 1000 - 1, changed)).toBe(false);
    expect(reloadedAfter(changed / 1000 + 1, changed)).toBe(true);
    // A change time with milliseconds (creationTimestamp parsing keeps none, but be exact): its second counts.
    expect(reloadedAfter(changed / 1000, changed + 999)).toBe(false);
    expect(reloadedAfter(changed / 1000 + 1, changed + 999)).toBe(true);
  });

  it("counts a vmselect's /select/ requests over every path, and nothing else", () => {
    const page = [
      'vm_http_requests_total{path="/select/{}/prometheus/api/v1/query"} 10',
      'vm_http_requests_total{path="/select/{}/prometheus/api/v1/label/{}/values"} 3',
      'vm_http_requests_total{path="/metrics"} 99',
      'vm_http_request_errors_total{path="/select/{}/prometheus/api/v1/query"} 7',
    ].join('\n');
    expect(selectRequests(page)).toBe(13);
    expect(selectRequests('')).toBe(0);
  });
});

describe('carriers, and the live queue message', () => {
  const drained = { at: '2026-12-01T10:00:00.000Z', pendingBytes: 0, unreadablePods: 0, totalPods: 1, drained: true, message: 'drained' };

  it('a carrier must be operational and have an empty vmagent backlog', () => {
    expect(carrierProblem('az-b', { done: true }, drained)).toBeUndefined();
    expect(carrierProblem('az-b', { done: false, failed: false, message: 'updateStatus expanding' }, undefined)).toMatch(
      /zone az-b: VMCluster not operational \(updateStatus expanding\)/,
    );
    expect(carrierProblem('az-b', { done: true }, { ...drained, drained: false, pendingBytes: 10, message: '10 B pending' })).toMatch(
      /zone az-b: vmagent backlog not empty \(10 B pending\)/,
    );
  });

  it('shows the latest sample: pending bytes per pod and how long the queues have been empty', () => {
    const last = {
      ...drained,
      pendingBytes: 4096,
      drained: false,
      message: '4 KiB pending on 2/2 vmagent pods',
      podPendingBytes: { 'vmagent-0': 4096, 'vmagent-1': 0 },
    };
    expect(queueProgressMessage({ last }, 60_000)).toBe(
      'waiting for the vmagent backlog (sample at 2026-12-01T10:00:00.000Z): 4 KiB pending on 2/2 vmagent pods [vmagent-0 4096 B, vmagent-1 0 B]; not empty',
    );
    expect(queueProgressMessage({ last: { ...drained, at: '2026-12-01T10:00:12.000Z' }, emptySince: '2026-12-01T10:00:00.000Z' }, 60_000)).toMatch(
      /; empty since 2026-12-01T10:00:00.000Z \(12 s of 60 s\)$/,
    );
  });

  it('a zone is quiet after two polls without a new request (at least 1 s), never longer than readDrainDelay', () => {
    expect(readQuietMs({ pollIntervalMs: 5_000, readDrainDelayMs: 30_000 })).toBe(10_000);
    expect(readQuietMs({ pollIntervalMs: 200, readDrainDelayMs: 30_000 })).toBe(1_000);
    expect(readQuietMs({ pollIntervalMs: 5_000, readDrainDelayMs: 2_000 })).toBe(2_000);
  });
});

describe('waitReadsDrained (virtual clock)', () => {
  /** A poll context whose sleeps advance a virtual clock; pods whose counters follow `counts(t)`. */
  function rig(counts: (t: number) => number | Error, pods = 1) {
    let t = 0;
    const ctx: PollContext = {
      heartbeat: () => {},
      sleep: async (ms) => void (t += ms),
      heartbeatDetails: () => undefined,
      signal: new AbortController().signal,
    };
    const servicePods = {
      list: async () => Array.from({ length: pods }, (_, i) => ({ name: `vmselect-${i}`, address: '10.0.0.1', port: 8481, ready: true })),
      scrape: async () => {
        const n = counts(t);
        if (n instanceof Error) throw n;
        return `vm_http_requests_total{path="/select/{}/prometheus/api/v1/query"} ${n}\n`;
      },
      describeScrapeError: (e: unknown) => `scrape error: ${(e as Error).message}`,
    } as unknown as ServicePods;
    const input = { namespace: NS, vmcluster: 'vm-az-a', quietMs: 1_000, maxMs: 10_000, pollIntervalMs: 250 };
    return { run: () => waitReadsDrained(servicePods, ctx, input, () => t), now: () => t };
  }

  it('returns once no pod counted a new /select/ request for the quiet period', async () => {
    // Requests keep arriving until t = 3 s (the last vmauth pod switched then).
    const r = rig((t) => Math.min(t, 3_000), 2);
    const d = await r.run();
    expect(d.quiet).toBe(true);
    expect(r.now()).toBeGreaterThanOrEqual(4_000);
    expect(r.now()).toBeLessThan(4_600);
    expect(d.message).toMatch(/no new \/select\/ request on 2 vmselect pods for 1(\.\d)? s/);
  });

  it('goes on after readDrainDelay when reads never stop, saying so', async () => {
    const r = rig((t) => t);
    const d = await r.run();
    expect(d).toMatchObject({ quiet: false });
    expect(d.message).toMatch(/not seen quiet within readDrainDelay \(10 s\): vmselect pods still counted new \/select\/ requests/);
    expect(r.now()).toBeGreaterThanOrEqual(10_000);
  });

  it('a pod that cannot be read is no evidence of quiet: wait the whole readDrainDelay', async () => {
    const r = rig(() => new Error('connection refused'));
    const d = await r.run();
    expect(d.quiet).toBe(false);
    expect(d.message).toMatch(/vmselect pod vmselect-0: scrape error: connection refused/);
    expect(r.now()).toBeGreaterThanOrEqual(10_000);
  });
});

describe('confirmSwitch: the pods polled faster once the config is known (virtual clock)', () => {
  const T0 = Date.parse('2026-12-01T10:00:00Z');
  const right = gzipSync(Buffer.from(stringify({ unauthorized_user: { url_prefix: [A] } }))); // without vm-az-b
  const rightToo = gzipSync(Buffer.from(stringify({ unauthorized_user: { url_prefix: [A], retry_status_codes: [502] } })));
  const wrong = gzipSync(Buffer.from(stringify({ unauthorized_user: { url_prefix: [A, B] } })));

  /**
   * A SwitchChecker on a virtual clock: `secretAt(t)` is the Secret's config, `podHash(pod, t)` what
   * each pod's config-reloader reports (undefined: no content-hash metric); counts every read.
   */
  function rig(secretAt: (t: number) => Buffer, podHash: (pod: number, t: number) => Buffer | undefined) {
    let t = 0;
    const counts = { secretReads: 0, podLists: 0, scrapes: 0 };
    const ctx: PollContext = {
      heartbeat: () => {},
      sleep: async (ms) => void (t += ms),
      heartbeatDetails: () => undefined,
      signal: new AbortController().signal,
    };
    const pods = {
      list: async () => (counts.podLists++, [0, 1].map((i) => ({ name: `vmauth-${i}`, address: `10.0.0.${i}`, port: 8427, ready: true }))),
      scrape: async (pod: { name: string }, opts: { port?: number } = {}) => {
        counts.scrapes++;
        const h = podHash(Number(pod.name.slice(-1)), t);
        if (opts.port === undefined) return 'vmauth_config_last_reload_successful 0\n';
        return h ? `configreloader_reload_content_hash{key="main"} ${contentHash(h)}\n` : '';
      },
      describeScrapeError: (e: unknown) => String(e),
    } as unknown as ServicePods;
    const checker = testSwitchChecker({
      pods,
      now: () => T0 + t,
      readSecret: async () => {
        counts.secretReads++;
        return { metadata: { creationTimestamp: new Date(T0) }, data: { 'config.yaml.gz': secretAt(t).toString('base64') } };
      },
    });
    const input: SwitchInput = { ...B_OUT_OF_GLOBAL, fallbackWaitMs: 3_000 };
    return { run: (o: Partial<SwitchInput> = {}) => confirmSwitch(checker, ctx, { ...input, ...o }, () => T0 + t), now: () => t, counts };
  }

  it('once the Secret holds the right config, only the pods are looked at, every 250 ms; confirmed by a whole check as soon as they run it', async () => {
    // pod 1 reloads at 1.3 s: seen at 1.5 s, not at the next 5 s poll.
    const r = rig(
      () => right,
      (pod, t) => (pod === 0 || t >= 1_300 ? right : wrong),
    );
    const c = await r.run();
    expect(c.pods.map((p) => p.via)).toEqual(['content-hash', 'content-hash']);
    expect(r.now()).toBe(1_500);
    // Two whole checks (at 0 and 1.5 s) read the Secret; six pods-only looks (0.25 … 1.5 s) did not.
    expect(r.counts.secretReads).toBe(2);
    expect(r.counts.podLists).toBe(2 + 6);
  });

  it('negative control: while the Secret still routes the zone, nothing is polled faster (the Secret every pollInterval)', async () => {
    // The operator writes the right config at 1.3 s, the pods run it at once.
    const r = rig(
      (t) => (t >= 1_300 ? right : wrong),
      (_pod, t) => (t >= 1_300 ? right : wrong),
    );
    await r.run();
    expect(r.now()).toBe(5_000);
    expect(r.counts.secretReads).toBe(2);
    expect(r.counts.podLists).toBe(1); // only the check that confirmed
  });

  it('pods that never catch up: the Secret is still re-read at the normal pollInterval', async () => {
    const r = rig(
      () => right,
      (pod, t) => (pod === 0 || t >= 12_000 ? right : wrong),
    );
    await r.run();
    // Whole checks at 0, 5 s, 10 s (one poll after each ended), then at 12 s when the pods caught up.
    expect(r.counts.secretReads).toBe(4);
    expect(r.now()).toBe(12_000);
  });

  it('a Secret changed meanwhile is never confirmed in its stead: pods running the old right config are not enough', async () => {
    // At 1 s the operator writes other (also right) bytes; the pods reach the first at 1.3 s, the second at 3.1 s.
    const r = rig(
      (t) => (t >= 1_000 ? rightToo : right),
      (_pod, t) => (t >= 3_100 ? rightToo : t >= 1_300 ? right : wrong),
    );
    const c = await r.run();
    expect(c.hash).toBe(contentHash(rightToo));
    expect(r.now()).toBe(1_500 + 250 * 7); // the whole check at 1.5 s found the new hash; the pods ran it at 3.25 s
  });

  it('keeps the fallback: a pod without the content hash is taken as switched after the bounded wait, seen within 250 ms', async () => {
    const r = rig(
      () => right,
      (pod) => (pod === 0 ? right : undefined),
    );
    const c = await r.run();
    expect(c.pods.map((p) => p.via)).toEqual(['content-hash', 'bounded-wait']);
    expect(r.now()).toBe(3_000);
    expect(r.counts.secretReads).toBe(2);
  });
});
