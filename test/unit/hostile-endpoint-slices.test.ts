// Issue 29's "Pods are identified, not listed": the cases of test/fixtures/hostile/endpoint-slices.ts
// through the pure verification (activities/pods/service-pods.ts), each with its negative control
// (the same slices unverified scrape what the verification refuses), then the three callers: an
// unverified endpoint keeps the vmagent queue not drained, the vmauth switch not confirmed, the
// vmselect reads not quiet, although every page it could serve says otherwise.
import { gzipSync } from 'node:zlib';
import type { V1Pod } from '@kubernetes/client-node';
import { unreachableKubeConfig } from '../infra/harness/kube';
import { stringify } from 'yaml';
import { podAddressProblem } from '../../activities/pods/pod-address';
import { podsFromEndpointSlices, type PodEvidence, type ServicePod, type ServicePods } from '../../activities/pods/service-pods';
import { waitReadsDrained } from '../../activities/reads/drain';
import { contentHash } from '../../activities/vmauth/config';
import { vmagentWorkloads } from '../../activities/vmagent/service';
import { QueueReader } from '../../activities/vmagent/queue';
import type { KubeObjects } from '../../kube/custom-objects';
import type { PollContext } from '../../activities/activity-context';
import { selectorLabels, serviceObject } from '../fixtures/pod-objects';
import { CASES, FOREIGN_IP, NS, PORT, REAL_IP, SERVICE, SERVICE_UID, foreignSlice, realPod, realSlice } from '../fixtures/hostile/endpoint-slices';
import { B_OUT_OF_GLOBAL, testSwitchChecker } from '../support/switch-checker';
import { SECRET_PAGE, settled } from '../support/vmagent-pages';

const evidence = (pods: V1Pod[]): PodEvidence => ({
  service: serviceObject({ namespace: NS, name: SERVICE, uid: SERVICE_UID, selector: selectorLabels('vmagent', 'va'), port: PORT }),
  pods: new Map(pods.map((p) => [p.metadata!.name!, p])),
  workloads: vmagentWorkloads('va'),
});
const scraped = (pods: ServicePod[]) => pods.filter((p) => !p.problem).map((p) => p.address);

describe.each(CASES)('$id ($defect)', (c) => {
  const slices = c.slices();
  const pods = podsFromEndpointSlices(slices, NS, evidence(c.pods?.() ?? [realPod()]));

  it(`${c.input}: ${c.expect}`, () => {
    expect(scraped(pods)).toEqual(c.outcome.scraped);
    const unverified = pods.filter((p) => p.unverified);
    if (c.outcome.unverified) {
      expect(unverified).toHaveLength(1);
      expect(unverified[0]!.problem).toMatch(c.outcome.unverified);
    } else expect(unverified).toEqual([]);
  });

  it('negative control: the same slices, unverified, are scraped otherwise', () => {
    expect(scraped(podsFromEndpointSlices(slices, NS))).not.toEqual(c.outcome.scraped);
  });
});

describe('pod addresses that are no hostile target pass', () => {
  it.each([
    ['198.51.100.7', 'IPv4'],
    ['10.244.1.17', 'IPv4'],
    ['100.64.3.9', 'IPv4'],
    ['172.16.0.5', 'IPv4'],
    ['fd00:10:244::17', 'IPv6'],
    ['2001:db8::1', 'IPv6'],
  ])('%s (%s)', (address, type) => expect(podAddressProblem(address, type)).toBeUndefined());

  it.each([
    ['fe80::1%eth0', 'IPv6', /not an IP address/],
    ['0177.0.0.1', 'IPv4', /not an IP address/],
    ['127.1', 'IPv4', /not an IP address/],
    ['metadata.google.internal', 'IPv4', /not an IP address/],
    ['::ffff:7f00:1', 'IPv6', /loopback/],
    ['::127.0.0.1', 'IPv6', /IPv4-compatible/],
    ['64:ff9b::a9fe:a9fe', 'IPv6', /NAT64/],
    ['ff02::1', 'IPv6', /multicast/],
    ['10.0.0.1', undefined, /address type "" is not IPv4 or IPv6/],
  ])('%s (%s) is refused', (address, type, why) => expect(podAddressProblem(address, type)).toMatch(why));
});

// ---------------------------------------------------------------------------------------------
// The callers. `displacing`: a foreign slice listed first names the real pod (name and uid) at
// another address, whose page says what the caller waits for; the real pod's says the opposite.
// `extra`: a foreign slice listed first names a pod of its own; both pages say what the caller
// waits for. Verified, neither counts; unverified (the negative control), both do.

const SCENARIOS = {
  displacing: {
    slices: [foreignSlice({ name: `${SERVICE}-0000`, pod: `${SERVICE}-0`, uid: 'uid-real', ip: FOREIGN_IP }), realSlice()],
    realDone: false,
  },
  extra: { slices: [foreignSlice({ name: `${SERVICE}-0000`, pod: `${SERVICE}-drained`, ip: FOREIGN_IP }), realSlice()], realDone: true },
};
type Scenario = keyof typeof SCENARIOS;
const UNVERIFIED =
  "1 endpoint not verified as the workload's pod: vmagent-va-drained: not verified as the workload's pod, not scraped: EndpointSlice monitoring/vmagent-va-0000";

/** ServicePods listing the scenario's slices, verified (against the real pod) or not; a pod's page is `page(done, port)`. */
function servicePods(scenario: Scenario, verified: boolean, page: (done: boolean, port?: number) => string): ServicePods {
  const { slices, realDone } = SCENARIOS[scenario];
  return {
    list: async () => podsFromEndpointSlices(slices, NS, verified ? evidence([realPod()]) : undefined),
    scrape: async (pod: ServicePod, opts: { port?: number } = {}) => page(pod.address === REAL_IP ? realDone : true, opts.port),
    describeScrapeError: (e: unknown) => String(e),
  } as unknown as ServicePods;
}

const cases = (Object.keys(SCENARIOS) as Scenario[]).flatMap((scenario) => [true, false].map((verified) => ({ scenario, verified })));

describe('an unverified endpoint never counts', () => {
  it.each(cases)('the vmagent queue ($scenario, verified $verified): the real pod has 5e9 bytes pending', async ({ scenario, verified }) => {
    const U1 = 'http://127.0.0.1:1/api/v1/write';
    const drained = settled(SECRET_PAGE);
    const busy = drained.replace(/^(vmagent_remotewrite_pending_data_bytes\{[^}]*\}) \S+$/m, '$1 5000000000');
    expect(busy).not.toBe(drained);
    const pods = servicePods(scenario, verified, (done) => (done ? drained : busy));
    const kube = { get: async () => ({ spec: { remoteWrite: [{ url: U1 }] } }) } as unknown as KubeObjects;
    const r = new QueueReader({ kube, kubeConfig: unreachableKubeConfig() });
    r.listPods = () => pods.list(NS, SERVICE, []);
    (r.pods as unknown as { scrape: ServicePods['scrape'] }).scrape = pods.scrape.bind(pods);
    const sample = await r.sample({ namespace: NS, vmagentName: 'va', vmclusterName: 'az-a', remoteWriteURL: U1, queueEmptyBytes: 1024 });
    expect(sample.drained).toBe(!verified);
    if (verified && scenario === 'extra') expect(sample.message).toContain(`vmagent pod ${SERVICE}-drained: not verified as the workload's pod, not scraped:`);
  });

  it.each(cases)('the vmauth switch ($scenario, verified $verified): the real pod runs the old config', async ({ scenario, verified }) => {
    const NOW_MS = Date.parse('2026-12-05T04:00:00Z');
    const config = gzipSync(Buffer.from(stringify({ unauthorized_user: { url_prefix: ['http://vmselect-vm-az-a.monitoring.svc:8481'] } })));
    const hash = (done: boolean) => (done ? contentHash(config) : contentHash(gzipSync(Buffer.from('old'))));
    const c = await testSwitchChecker({
      pods: servicePods(scenario, verified, (done, port) => (port === undefined ? '' : `configreloader_reload_content_hash{key="main"} ${hash(done)}\n`)),
      now: () => NOW_MS,
      readSecret: async () => ({ metadata: { creationTimestamp: new Date(NOW_MS - 2_000) }, data: { 'config.yaml.gz': config.toString('base64') } }),
    }).check(B_OUT_OF_GLOBAL);
    expect(c.done).toBe(!verified);
    if (verified && scenario === 'extra') expect(!c.done && c.waitingFor).toContain(`service vmauth-global: ${UNVERIFIED}`);
  });

  it.each(cases)('the vmselect reads ($scenario, verified $verified): the real pod keeps counting requests', async ({ scenario, verified }) => {
    let t = 0;
    const ctx: PollContext = {
      heartbeat: () => {},
      sleep: async (ms) => void (t += ms),
      heartbeatDetails: () => undefined,
      signal: new AbortController().signal,
    };
    const pods = servicePods(scenario, verified, (done) => `vm_http_requests_total{path="/select/{}/prometheus/api/v1/query"} ${done ? 7 : t}\n`);
    const d = await waitReadsDrained(pods, ctx, { namespace: NS, vmcluster: 'vm-az-a', quietMs: 1_000, maxMs: 5_000, pollIntervalMs: 250 }, () => t);
    expect(d.quiet).toBe(!verified);
    if (verified && scenario === 'extra') expect(d.message).toContain(`service vmselect-vm-az-a: ${UNVERIFIED}`);
  });
});
