/**
 * Pods are identified, not listed (issue 29), against a real kube-apiserver and two real vmagents:
 * VMAgent `va`'s real pod (its Service, Deployment → ReplicaSet → Pod with status.podIPs, and the
 * EndpointSlice controller's slice, ../infra/harness/service-pods.ts) is a vmagent whose remote
 * write target is down: bytes pending. Someone who may write EndpointSlices adds a slice labelled
 * for the Service, named to be listed first, naming the real pod (its name and uid, read from the
 * real slice) at another address, where a second vmagent with nothing pending answers. The
 * worker's real sampleQueue activity must read the real pod: not drained.
 *
 * Negative control: POD_IDENTITY_NEGATIVE_CONTROL=1 runs the same test with the verification
 * switched off (createActivities({ verifyPods: false })): the foreign slice displaces the real pod,
 * the queue reads as drained, and the test fails.
 */
import * as k8s from '@kubernetes/client-node';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import { createActivities } from '../../activities';
import { VM_GROUP, VM_VERSION } from '../../api/constants';
import type { QueueSample } from '../../api/rollout-contract';
import { vmagentWorkloads } from '../../activities/vmagent/service';
import type { QueueTarget, RolloutActivities } from '../../workflows/activity-types';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { allocatePodIP, podNetworkFetch, registerPodPort } from '../infra/harness/pod-network';
import { freePort } from '../infra/harness/ports';
import { waitFor } from '../infra/harness/processes';
import { publishServicePods } from '../infra/harness/service-pods';
import { httpPost, startVictoriaMetrics, startVmagent, type VmagentHandle, type VmProcessHandle } from '../infra/harness/vm';

jest.setTimeout(180_000);

const NEGATIVE_CONTROL = process.env.POD_IDENTITY_NEGATIVE_CONTROL === '1';
const NS = 'default';
const POD_PORT = 8429;
/** The EndpointSlice controller names a slice `<service>-<5 random characters>`; the foreign one sorts before it. */
const REAL_SLICE = 'vmagent-va-x7k2p';
const FOREIGN_SLICE = 'vmagent-va-0000';

let kube: KubeCluster;
let vm: VmProcessHandle;
let real: VmagentHandle;
let fake: VmagentHandle;
let acts: RolloutActivities;
let deadURL: string;
let feeder: NodeJS.Timeout | undefined;
const realIP = allocatePodIP();
const foreignIP = allocatePodIP();
const fetched: string[] = [];

const target = (): QueueTarget => ({
  namespace: NS,
  vmagentName: 'va',
  vmclusterName: 'vm-a',
  remoteWriteURL: deadURL,
  queueEmptyBytes: 0,
  zone: 'a',
  objectName: 'dist',
});
const sample = (): Promise<QueueSample> => new MockActivityEnvironment().run(acts.sampleQueue, target());

beforeAll(async () => {
  [kube, vm] = await Promise.all([startKube(), startVictoriaMetrics({ name: 'vm-pod-identity' })]);
  await installCRDs(kube.kubeConfig, VM_OPERATOR_CRDS);
  // Nothing listens there: the real vmagent's queue only grows.
  deadURL = `http://127.0.0.1:${await freePort()}/api/v1/write`;
  const quick = ['-remoteWrite.flushInterval=100ms', '-remoteWrite.queues=1', '-remoteWrite.retryMinInterval=100ms', '-remoteWrite.retryMaxInterval=1s'];
  [real, fake] = await Promise.all([
    startVmagent({ name: 'vmagent-va-real', remoteWriteUrls: [deadURL], extraArgs: quick }),
    // vmagent shows each remote write as `<n>:secret-url`: this one's page names the same queue, drained.
    startVmagent({ name: 'vmagent-va-fake', remoteWriteUrls: [`${vm.url}/api/v1/write`], extraArgs: quick }),
  ]);
  registerPodPort(realIP, POD_PORT, real.port);
  registerPodPort(foreignIP, POD_PORT, fake.port);
  feeder = setInterval(() => {
    const body = Array.from({ length: 50 }, (_, i) => `pod_identity_series{i="${i}"} ${Date.now()}`).join('\n') + '\n';
    httpPost(`${real.url}/api/v1/import/prometheus`, body).catch(() => {});
  }, 100);

  await kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi).createNamespacedCustomObject({
    group: VM_GROUP,
    version: VM_VERSION,
    namespace: NS,
    plural: 'vmagents',
    body: { apiVersion: `${VM_GROUP}/${VM_VERSION}`, kind: 'VMAgent', metadata: { name: 'va' }, spec: { remoteWrite: [{ url: deadURL }] } },
  });
  const uids = await publishServicePods(kube.kubeConfig, {
    namespace: NS,
    component: 'vmagent',
    instance: 'va',
    port: POD_PORT,
    workload: vmagentWorkloads('va')[0]!,
    pods: [{ name: 'vmagent-va-0', ip: realIP }],
    sliceName: REAL_SLICE,
  });
  // The foreign slice: only what anyone who may write EndpointSlices writes.
  await kube.kubeConfig.makeApiClient(k8s.DiscoveryV1Api).createNamespacedEndpointSlice({
    namespace: NS,
    body: {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      addressType: 'IPv4',
      metadata: { name: FOREIGN_SLICE, labels: { 'kubernetes.io/service-name': 'vmagent-va' } },
      ports: [{ name: 'http', port: POD_PORT, protocol: 'TCP' }],
      endpoints: [
        { addresses: [foreignIP], conditions: { ready: true }, targetRef: { kind: 'Pod', namespace: NS, name: 'vmagent-va-0', uid: uids.get('vmagent-va-0') } },
      ],
    },
  });
  const recording: typeof fetch = (input, init) => {
    fetched.push(new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url).host);
    return podNetworkFetch(input, init);
  };
  acts = createActivities({
    kubeConfig: kube.kubeConfig,
    temporalClient: {} as Client,
    fetch: recording,
    scrapeTimeoutMs: 2_000,
    verifyPods: !NEGATIVE_CONTROL,
  });
});

afterAll(async () => {
  if (feeder) clearInterval(feeder);
  await Promise.all([real?.stop(), fake?.stop()]);
  await vm?.stop();
  await kube?.stop();
});

it('a foreign slice listed first, naming the real pod at a drained page: the queue is the real pod’s, not drained', async () => {
  // The scene: the foreign slice is listed first, and the two pages disagree.
  const listed = await kube.kubeConfig
    .makeApiClient(k8s.DiscoveryV1Api)
    .listNamespacedEndpointSlice({ namespace: NS, labelSelector: 'kubernetes.io/service-name=vmagent-va' });
  expect(listed.items.map((s) => s.metadata!.name)).toEqual([FOREIGN_SLICE, REAL_SLICE]);
  const pending = async (a: VmagentHandle) => {
    const m = /^vmagent_remotewrite_pending_data_bytes\{[^}]*\} (\S+)$/m.exec(await a.metricsText());
    return Number(m?.[1]);
  };
  await waitFor(async () => (await pending(real)) > 4096, { timeoutMs: 60_000, description: 'a backlog in the real vmagent' });
  expect(await pending(fake)).toBe(0);

  const s = await sample();
  expect(s).toMatchObject({ drained: false, totalPods: 1, unreadablePods: 0 });
  expect(s.pendingBytes).toBeGreaterThan(4096);
  expect(fetched).toContain(`${realIP}:${POD_PORT}`);
  expect(fetched).not.toContain(`${foreignIP}:${POD_PORT}`);
});
