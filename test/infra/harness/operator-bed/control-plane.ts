/**
 * The real operator's control plane, inside the bed's network namespace (./netns.ts): etcd +
 * kube-apiserver (../kube.ts), kube-controller-manager with the controllers a cluster runs for the
 * operator's objects (Deployments, ReplicaSets, StatefulSets, EndpointSlices, ServiceAccounts,
 * garbage collection), kube-scheduler, kwok with one fake node (its pods Ready at once, their IPs
 * from POD_CIDR), the operator's own CRDs and the operator itself (its `manager`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { installCRDs, startKube, type KubeCluster } from '../kube';
import { freePort } from '../ports';
import { httpReady, startProcess, tcpReady, waitFor, type ManagedProcess } from '../processes';
import { operatorCrdsPath, toolPath } from '../tools';
import { podCidr } from './netns';

/** kwok's own stages: pods Running and Ready at once, gone at once when deleted. */
const KWOK_STAGES = path.join(__dirname, 'kwok-stages.yaml');

/** The one fake node every pod lands on (kwok manages it). */
export const KWOK_NODE = 'kwok-node-0';
/** The operator's VM_PODWAITREADYTIMEOUT in the bed. */
export const POD_WAIT_READY_TIMEOUT = '20s';
/** An image tag ending so stays unpullable in the bed: kwok keeps the pod Pending in ErrImagePull (./kwok-stages.yaml). */
export const UNPULLABLE_TAG_SUFFIX = '-unpullable';

/** What kube-controller-manager runs: what a Deployment, StatefulSet, Service and owner reference need, nothing else. */
const CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'statefulset-controller',
  'endpointslice-controller',
  'serviceaccount-controller',
  'garbage-collector-controller',
  'pod-garbage-collector-controller',
];

export interface OperatorControlPlane {
  kube: KubeCluster;
  kc: k8s.KubeConfig;
  controllerManager: ManagedProcess;
  scheduler: ManagedProcess;
  kwok: ManagedProcess;
  operator: ManagedProcess;
  /** When each part was ready, ms since start() was called (the bed's start-up benchmark). */
  timings: Record<string, number>;
  stop(): Promise<void>;
}

/** Starts the control plane; the operator watches `namespace` only. */
export async function startOperatorControlPlane(opts: { namespace: string; log?: (m: string) => void }): Promise<OperatorControlPlane> {
  const t0 = Date.now();
  const timings: Record<string, number> = {};
  const mark = (what: string) => {
    timings[what] = Date.now() - t0;
    opts.log?.(`operator bed: ${what} after ${timings[what]} ms`);
  };
  const started: ManagedProcess[] = [];
  const kube = await startKube({});
  const stop = async () => {
    for (const p of started.reverse()) await p.stop();
    await kube.stop();
  };
  try {
    mark('kube-apiserver');
    const kc = kube.kubeConfig;
    const dir = path.dirname(kube.kubeconfigPath);
    const admin = { ca: fs.readFileSync(kube.certs.caCert), cert: fs.readFileSync(kube.certs.adminCert), key: fs.readFileSync(kube.certs.adminKey) };
    const kcmPort = await freePort();
    const [controllerManager, scheduler, kwok] = await Promise.all([
      startProcess({
        name: 'kube-controller-manager',
        command: toolPath('kube-controller-manager'),
        args: [
          `--kubeconfig=${kube.kubeconfigPath}`,
          `--controllers=${CONTROLLERS.join(',')}`,
          '--leader-elect=false',
          '--use-service-account-credentials=false',
          '--bind-address=127.0.0.1',
          `--secure-port=${kcmPort}`,
          `--tls-cert-file=${kube.certs.serverCert}`,
          `--tls-private-key-file=${kube.certs.serverKey}`,
          `--client-ca-file=${kube.certs.caCert}`,
          // The StatefulSet and EndpointSlice controllers act on a change at once (defaults batch nothing either).
          '--concurrent-statefulset-syncs=5',
          '--profiling=false',
        ],
        logDir: dir,
        ready: httpReady(`https://127.0.0.1:${kcmPort}/healthz`, admin),
        readyTimeoutMs: 90_000,
      }),
      startScheduler(kube, dir),
      startProcess({
        name: 'kwok',
        command: toolPath('kwok'),
        args: [
          `--kubeconfig=${kube.kubeconfigPath}`,
          '--manage-all-nodes=false',
          '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
          `--cidr=${podCidr()}`,
          '--node-ip=127.0.0.1',
          `--config=${KWOK_STAGES}`,
        ],
        logDir: dir,
        // kwok serves no health endpoint without --server-address; its log says when it watches nodes
        // (the node made Ready below is the real check).
        ready: async () => fs.readFileSync(path.join(dir, 'kwok.log'), 'utf8').includes('"msg":"Watch nodes"'),
        readyTimeoutMs: 60_000,
      }),
    ]);
    started.push(controllerManager, scheduler, kwok);
    mark('controller-manager, scheduler, kwok');
    await createKwokNode(kc);
    mark('kwok node Ready');
    await installOperatorCrds(kc);
    mark('operator CRDs');
    const metricsPort = await freePort();
    const healthPort = await freePort();
    const operator = await startProcess({
      name: 'vm-operator',
      command: toolPath('vm-operator'),
      args: [
        '-leader-elect=false',
        `-metrics-bind-address=127.0.0.1:${metricsPort}`,
        `-health-probe-bind-address=127.0.0.1:${healthPort}`,
        // Its pprof server would take :8435, the config-reloaders' port.
        '-pprof-addr=',
      ],
      env: {
        ...process.env,
        WATCH_NAMESPACE: opts.namespace,
        KUBECONFIG: kube.kubeconfigPath,
        // How long the operator waits for a replaced pod to be Ready before it marks the VMCluster
        // failed (default 80 s): a pod that cannot pull its image (./kwok-stages.yaml) fails it after this.
        VM_PODWAITREADYTIMEOUT: POD_WAIT_READY_TIMEOUT,
        // How often it looks while it waits (default 5 s): kwok's pods are Ready at once, so at the
        // default most of a VMCluster's rollout is the operator's polling, not the pods.
        VM_PODWAITREADYINTERVALCHECK: '1s',
      },
      logDir: dir,
      // /ready answers once the operator's caches synced (each request waits up to 10 s for that).
      ready: httpReady(`http://127.0.0.1:${healthPort}/ready`, { timeoutMs: 12_000 }),
      readyTimeoutMs: 60_000,
    });
    started.push(operator);
    mark('operator');
    return { kube, kc, controllerManager, scheduler, kwok, operator, timings, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startScheduler(kube: KubeCluster, dir: string): Promise<ManagedProcess> {
  const port = await freePort();
  return startProcess({
    name: 'kube-scheduler',
    command: toolPath('kube-scheduler'),
    args: [`--kubeconfig=${kube.kubeconfigPath}`, '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${port}`, '--profiling=false'],
    logDir: dir,
    ready: tcpReady(port),
    readyTimeoutMs: 90_000,
  });
}

/** A node kwok manages, with room for every pod the operator renders (its default requests add up). */
async function createKwokNode(kc: k8s.KubeConfig): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const capacity = { cpu: '1000', memory: '1Ti', pods: '1000', 'ephemeral-storage': '1Ti' };
  await core.createNode({
    body: {
      metadata: {
        name: KWOK_NODE,
        annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: { 'kubernetes.io/hostname': KWOK_NODE, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
      },
      status: { allocatable: capacity, capacity },
    },
  });
  await waitFor(
    async () => {
      const n = await core.readNode({ name: KWOK_NODE });
      return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    },
    { timeoutMs: 30_000, intervalMs: 200, description: `kwok to make node ${KWOK_NODE} Ready` },
  );
  // The API server taints a new node not-ready; the node lifecycle controller, which would lift it,
  // is not run (it would also want kubelet heartbeats): lifted here once kwok reports the node Ready.
  await core.patchNode(
    { name: KWOK_NODE, body: [{ op: 'replace', path: '/spec/taints', value: [] }] },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
  );
}

/** The operator's CRDs of the commit its binaries are built from (large: created one by one, served before the operator starts). */
async function installOperatorCrds(kc: k8s.KubeConfig): Promise<void> {
  await installCRDs(kc, operatorCrdsPath(), 60_000);
}
