/**
 * Queue reading against real parts: a real vmagent remote-writing to two real VictoriaMetrics
 * single-node backends (two "zones"), a real kube-apiserver holding the VMAgent object, its
 * Service, pod and EndpointSlice (the pod at POD_IP, mapped to the vmagent on 127.0.0.1). Backend B is stopped:
 * pending bytes are attributed to zone B only, waitQueueDrained(B) does not return until B is back
 * and its backlog is gone. A third vmagent holds a block in a send-retry backoff longer than
 * queueDrainedFor, its pending bytes 0: the wait ends only after the block was delivered.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import { createActivities } from '../../activities';
import type { DrainHeartbeat, QueueSample } from '../../api/rollout-contract';
import { DISK_PENDING_METRIC, parseQueueSeries, PENDING_METRIC, RETRIES_METRIC } from '../../activities/vmagent/match';
import { VM_GROUP, VM_VERSION } from '../../api/constants';
import type { QueueTarget, RolloutActivities } from '../../workflows/activity-types';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { POD_IP, podNetworkFetch } from '../infra/harness/pod-network';
import { publishServicePods } from '../infra/harness/service-pods';
import { vmagentWorkloads } from '../../activities/vmagent/service';
import { freePort } from '../infra/harness/ports';
import { waitFor } from '../infra/harness/processes';
import { httpPost, startVictoriaMetrics, startVmagent, vmQuery, type VmagentHandle, type VmProcessHandle } from '../infra/harness/vm';

jest.setTimeout(240_000);

const NS = 'default';
let kube: KubeCluster;
let vmA: VmProcessHandle;
let vmB: VmProcessHandle;
let agent: VmagentHandle;
let acts: RolloutActivities;
let discovery: k8s.DiscoveryV1Api;
let feeder: NodeJS.Timeout | undefined;
let fed = 0;
const errors: Array<[string, string]> = [];
const pending: Array<[string, number]> = [];

const urlA = () => `${vmA.url}/api/v1/write`;
const urlB = () => `${vmB.url}/api/v1/write`;
const target = (zone: 'a' | 'b', vmagentName = 'va'): QueueTarget => ({
  namespace: NS,
  vmagentName,
  vmclusterName: `vm-${zone}`,
  remoteWriteURL: zone === 'a' ? urlA() : urlB(),
  queueEmptyBytes: 0,
  zone,
  objectName: 'dist',
});

async function createVMAgent(name: string, urls: string[]) {
  await kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi).createNamespacedCustomObject({
    group: VM_GROUP,
    version: VM_VERSION,
    namespace: NS,
    plural: 'vmagents',
    body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind: 'VMAgent', metadata: { name }, spec: { remoteWrite: urls.map((url) => ({ url })) } },
  });
}

// The API server refuses loopback addresses in EndpointSlices: pods get POD_IP (TEST-NET-2) and the
// activities' fetch maps it to 127.0.0.1, where the real vmagents listen (test/infra/harness/pod-network.ts).
const loopbackFetch = podNetworkFetch;

/**
 * Pods of VMAgent `vmagentName` as the cluster has them (its Service, Deployment → ReplicaSet →
 * Pod at POD_IP, ../infra/harness/service-pods.ts), each listed in an EndpointSlice of its own
 * (`vmagent-<name>-<suffix>-<i>`) with its port, as the EndpointSlice controller writes one.
 */
async function createEndpointSlice(vmagentName: string, endpoints: Array<{ pod: string; port: number; ready?: boolean }>, suffix = 'x1') {
  for (const [i, ep] of endpoints.entries()) {
    await publishServicePods(kube.kubeConfig, {
      namespace: NS,
      component: 'vmagent',
      instance: vmagentName,
      port: ep.port,
      workload: vmagentWorkloads(vmagentName)[0]!,
      pods: [{ name: ep.pod, ip: POD_IP, ready: ep.ready }],
      sliceName: `vmagent-${vmagentName}-${suffix}-${i}`,
    });
  }
}

const sample = (t: QueueTarget): Promise<QueueSample> => new MockActivityEnvironment().run(acts.sampleQueue, t);

beforeAll(async () => {
  [kube, vmA, vmB] = await Promise.all([startKube(), startVictoriaMetrics({ name: 'vm-zone-a' }), startVictoriaMetrics({ name: 'vm-zone-b' })]);
  await installCRDs(kube.kubeConfig, VM_OPERATOR_CRDS);
  discovery = kube.kubeConfig.makeApiClient(k8s.DiscoveryV1Api);
  agent = await startVmagent({
    name: 'vmagent-va',
    remoteWriteUrls: [urlA(), urlB()],
    // One queue per URL (so a backlog is more than the one block in flight), quick flushes and retries.
    extraArgs: ['-remoteWrite.flushInterval=100ms', '-remoteWrite.queues=1', '-remoteWrite.retryMinInterval=100ms', '-remoteWrite.retryMaxInterval=1s'],
  });
  await createVMAgent('va', [urlA(), urlB()]);
  await createEndpointSlice('va', [{ pod: 'vmagent-va-0', port: agent.port }]);
  acts = createActivities({
    kubeConfig: kube.kubeConfig,
    temporalClient: {} as Client,
    fetch: loopbackFetch,
    scrapeTimeoutMs: 2_000,
    metrics: {
      queuePendingBytes: (l, b) => pending.push([l.zone, b]),
      activityError: (a, t) => errors.push([a, t]),
      queueWatchEnded() {},
      zoneStepDuration() {},
      unverifiedRecords() {},
      notification() {},
    },
  });
  // Continuous traffic: a batch of samples every 100 ms into vmagent's import endpoint.
  feeder = setInterval(() => {
    const n = ++fed;
    const body = Array.from({ length: 50 }, (_, i) => `queue_test_series{n="${n}",i="${i}"} ${n}`).join('\n') + '\n';
    httpPost(`${agent.url}/api/v1/import/prometheus`, body).catch(() => {});
  }, 100);
});

afterAll(async () => {
  if (feeder) clearInterval(feeder);
  await agent?.stop();
  await Promise.all([vmA?.stop(), vmB?.stop()]);
  await kube?.stop();
});

it('both backends up: both zones drain', async () => {
  for (const z of ['a', 'b'] as const) {
    const s = await waitFor(
      async () => {
        const x = await sample(target(z));
        return x.drained ? x : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, description: `zone ${z} drained`, diagnostics: () => agent.process.logTail() },
    );
    expect(s).toMatchObject({ totalPods: 1, unreadablePods: 0, pendingBytes: 0 });
  }
  // The real page passes the strict parser: every queue line well-formed, no series twice.
  const series = parseQueueSeries(await agent.metricsText());
  for (const metric of [PENDING_METRIC, DISK_PENDING_METRIC, RETRIES_METRIC]) {
    expect(series.filter((x) => x.metric === metric)).toHaveLength(2);
  }
});

it("backend B stopped: pending bytes are zone B's only; waitQueueDrained(B) waits until B is back and its backlog is gone", async () => {
  await vmB.stop();
  const fedAtStop = fed;
  // A backlog builds up for B …
  const backlog = await waitFor(
    async () => {
      const s = await sample(target('b'));
      return s.pendingBytes > 4096 ? s : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200, description: 'a backlog for zone B' },
  );
  expect(backlog).toMatchObject({ drained: false, totalPods: 1, unreadablePods: 0 });
  // … while zone A keeps draining.
  for (let i = 0; i < 5; i++) {
    const a = await sample(target('a'));
    expect(a).toMatchObject({ drained: true, pendingBytes: 0, unreadablePods: 0 });
  }

  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 30_000 });
  const beats: DrainHeartbeat[] = [];
  env.on('heartbeat', (d: DrainHeartbeat) => d?.last && beats.push(d));
  let done = false;
  const wait = env.run(acts.waitQueueDrained, { ...target('b'), queueDrainedForMs: 2_000, pollIntervalMs: 200 }).finally(() => (done = true));

  // Real condition: the activity has looked at least 10 times and seen a growing backlog each time.
  await waitFor(() => beats.length >= 10, { timeoutMs: 30_000, description: '10 heartbeats of waitQueueDrained' });
  expect(done).toBe(false);
  expect(beats.every((b) => !b.last.drained && b.emptySince === undefined)).toBe(true);
  const growing = beats.map((b) => b.last.pendingBytes);
  expect(growing.at(-1)!).toBeGreaterThan(backlog.pendingBytes - 1);

  await vmB.start();
  const result = await wait;
  expect(result).toMatchObject({ drained: true, pendingBytes: 0, unreadablePods: 0, totalPods: 1 });
  const last = beats.at(-1)!;
  expect(Date.parse(last.last.at) - Date.parse(last.emptySince!)).toBeGreaterThanOrEqual(2_000);
  // The backlog really went to B: a batch pushed while B was down is queryable there now.
  const series = await waitFor(
    async () => {
      const r = await vmQuery(vmB.url, `queue_test_series{n="${fedAtStop + 5}"}`);
      return r.length > 0 ? r : undefined;
    },
    { timeoutMs: 30_000, description: 'a sample pushed during the outage in backend B' },
  );
  expect(series.length).toBeGreaterThan(0);
  // pending bytes were reported per zone, B's non-zero at some point, A's always 0 after the first drain
  expect(pending.some(([z, b]) => z === 'b' && b > 0)).toBe(true);
});

it('an unready endpoint, an unknown pod, or a missing remoteWrite entry is never drained', async () => {
  await createEndpointSlice('va', [{ pod: 'vmagent-va-1', port: agent.port, ready: false }], 'unready');
  let s = await sample(target('a'));
  expect(s).toMatchObject({ drained: false, totalPods: 2, unreadablePods: 1 });
  expect(s.message).toContain('vmagent-va-1: endpoint not ready');
  await discovery.deleteNamespacedEndpointSlice({ namespace: NS, name: 'vmagent-va-unready-0' });

  // A pod nobody answers for (closed port): scrape error → not drained.
  await createEndpointSlice('va', [{ pod: 'vmagent-va-2', port: await freePort() }], 'dead');
  s = await sample(target('a'));
  expect(s).toMatchObject({ drained: false, totalPods: 2, unreadablePods: 1 });
  expect(s.message).toContain('vmagent-va-2: scrape error');
  await discovery.deleteNamespacedEndpointSlice({ namespace: NS, name: 'vmagent-va-dead-0' });

  s = await sample({ ...target('a'), remoteWriteURL: 'http://nowhere:8428/api/v1/write' });
  expect(s).toMatchObject({ drained: false });
  expect(s.message).toContain('no VMAgent spec.remoteWrite entry');
  s = await sample({ ...target('a'), vmagentName: 'absent' });
  expect(s).toMatchObject({ drained: false });
  expect(s.message).toContain('not found');
  expect((await sample(target('a'))).drained).toBe(true);
});

it('vmagent with -remoteWrite.showURL: the same queues are found', async () => {
  const shown = await startVmagent({
    name: 'vmagent-vs',
    remoteWriteUrls: [`${urlA()}?extra_label=via=showurl`, urlB()],
    extraArgs: ['-remoteWrite.flushInterval=100ms', '-remoteWrite.showURL'],
  });
  try {
    await createVMAgent('vs', [`${urlA()}?extra_label=via=showurl`, urlB()]);
    await createEndpointSlice('vs', [{ pod: 'vmagent-vs-0', port: shown.port }]);
    const page = await shown.metricsText();
    expect(page).toContain(`url="1:${urlA()}?extra_label=via=showurl"`);
    expect(parseQueueSeries(page).filter((x) => x.metric === PENDING_METRIC)).toHaveLength(2);
    const a = await sample({ ...target('a', 'vs'), remoteWriteURL: `${urlA()}?extra_label=via=showurl` });
    expect(a).toMatchObject({ drained: true, totalPods: 1, unreadablePods: 0 });
    const b = await sample(target('b', 'vs'));
    expect(b).toMatchObject({ drained: true, totalPods: 1, unreadablePods: 0 });
  } finally {
    await shown.stop();
  }
});

it('a block waiting out a send-retry backoff longer than queueDrainedFor keeps the wait going until it is delivered', async () => {
  // Zone C's "vminsert": answers 503 until told to pass, then forwards to backend A (a real VictoriaMetrics).
  let passing = false;
  const answered: Array<{ at: number; status: number }> = [];
  const gate = http.createServer((req, res) => {
    if (!passing) {
      req.resume();
      answered.push({ at: Date.now(), status: 503 });
      res.writeHead(503).end('zone restarting');
      return;
    }
    const up = http.request(`${vmA.url}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      answered.push({ at: Date.now(), status: r.statusCode ?? 0 });
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((ok) => gate.listen(0, '127.0.0.1', ok));
  const urlC = `http://127.0.0.1:${(gate.address() as AddressInfo).port}/api/v1/write`;
  // One worker, a 10 s backoff from the first failure on: the block it holds is nowhere in the pending bytes.
  const held = await startVmagent({
    name: 'vmagent-vc',
    remoteWriteUrls: [urlC],
    extraArgs: ['-remoteWrite.flushInterval=100ms', '-remoteWrite.queues=1', '-remoteWrite.retryMinInterval=10s', '-remoteWrite.retryMaxInterval=10s'],
  });
  try {
    await createVMAgent('vc', [urlC]);
    await createEndpointSlice('vc', [{ pod: 'vmagent-vc-0', port: held.port }]);
    const zoneC: QueueTarget = { ...target('a', 'vc'), remoteWriteURL: urlC, zone: 'c', vmclusterName: 'vm-c' };
    await httpPost(`${held.url}/api/v1/import/prometheus`, 'backoff_test_series{i="1"} 1\n');
    const inBackoff = await waitFor(
      async () => {
        const s = await sample(zoneC);
        return answered.length > 0 && s.pendingBytes === 0 && s.blocksInBackoff ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, description: 'the block refused once and held in its backoff', diagnostics: () => held.process.logTail() },
    );
    expect(inBackoff).toMatchObject({ drained: false, pendingBytes: 0, unreadablePods: 0, totalPods: 1, blocksInBackoff: { 'vmagent-vc-0': 1 } });
    expect(inBackoff.message).toContain('1 block waiting out a send-retry backoff (vmagent-vc-0: 1)');

    passing = true;
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 30_000 });
    const beats: DrainHeartbeat[] = [];
    env.on('heartbeat', (d: DrainHeartbeat) => d?.last && beats.push(d));
    const result = await env.run(acts.waitQueueDrained, { ...zoneC, queueDrainedForMs: 2_000, pollIntervalMs: 200 });
    const ended = Date.now();
    expect(result).toMatchObject({ drained: true, pendingBytes: 0 });
    // The wait ended after the block was delivered, and a full queueDrainedFor after it.
    const delivered = answered.find((a) => a.status === 204)?.at;
    expect(delivered).toBeDefined();
    expect(ended - delivered!).toBeGreaterThanOrEqual(2_000);
    // Delivered means stored: the series becomes searchable once VictoriaMetrics flushed what it took in.
    await waitFor(async () => (await vmQuery(vmA.url, 'backoff_test_series')).length === 1, {
      timeoutMs: 15_000,
      description: 'the delivered block searchable in zone A',
    });
    // Negative control: before the delivery the samples showed 0 pending bytes from every pod for
    // longer than queueDrainedFor; read by the pending bytes alone the wait would have ended then.
    const before = beats.filter((b) => Date.parse(b.last.at) < delivered!);
    expect(before.every((b) => b.last.pendingBytes === 0 && b.last.unreadablePods === 0 && !b.last.drained)).toBe(true);
    expect(Date.parse(before.at(-1)!.last.at) - Date.parse(before[0]!.last.at)).toBeGreaterThan(2_000);
  } finally {
    await held.stop();
    await new Promise((ok) => gate.close(ok));
  }
});
