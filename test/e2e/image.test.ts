/**
 * The image, for real. `make image` builds it (scripts/image.sh: Debian trixie + Node 22, the
 * Dockerfile built with buildah); here the worker and the trigger run INSIDE it, as the chart runs
 * them (test/infra/harness/image.ts: `buildah run`, user 1000, no capability, read-only root, the chart's
 * entry points and environment, the ServiceAccount mounted where kubelet mounts it), against the e2e
 * bed (startE2EStack: kube-apiserver, Temporal dev server, three VictoriaMetrics zones, vmagent,
 * vmauth, the zone simulator, readers and a writer), and a rollout goes through them.
 *
 * Two stand-ins, both outside the image: cluster networking (the host's network; the worker reaches
 * the bed's pods through the pod gateway, test/infra/chaos/pod-gateway.ts, with the preload that maps pod
 * addresses, given by NODE_OPTIONS) and kubelet (the ServiceAccount's token, CA and namespace files,
 * KUBERNETES_SERVICE_HOST/PORT pointing at the bed's API server).
 *
 * Never skipped: without buildah or the image it fails, naming `make image`. Image size and start
 * times go to .tmp/bench/image.json (figures in docs/benchmarks.md) with the commit, machine and
 * command of the run (bench/support/provenance.ts), as the benchmarks' documents.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { provenance, type Provenance } from '../../bench/support/provenance';
import { POD_NETWORK_PRELOAD } from '../infra/chaos/control-processes';
import { startPodGateway, type PodGateway } from '../infra/chaos/pod-gateway';
import { IMAGE_UID, requireImage, runInImage, type Container, type ImageInfo } from '../infra/harness/image';
import { freePort } from '../infra/harness/ports';
import { harnessTempDir, httpGet, httpReady } from '../infra/harness/processes';
import { toolVersions } from '../infra/harness/tools';
import type { VmEnvironment } from '../infra/simulator/environment';
import {
  CHART_RELEASE_NAMESPACE,
  DEMO_CLUSTERS,
  DEMO_TOKENS,
  getObject,
  mergePatch,
  REPO_ROOT,
  startE2EStack,
  waitVmdcPhase,
  type ControlBed,
  type E2EStack,
  V1,
  V2,
} from './support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const VMDC = 'image';
/** Where kubelet mounts a ServiceAccount (/var/run/secrets/...: /var/run is a symlink to /run in the image). */
const SERVICE_ACCOUNT_DIR = '/run/secrets/kubernetes.io/serviceaccount';
const PAYLOAD_KEYS_FILE = '/etc/vmrollout-payload-keys/keys';
const PRELOAD = '/opt/vmrollout-test/pod-network-preload.cjs';

let runInfo: Provenance;
let image: ImageInfo;
let gateway: PodGateway | undefined;
let stack: E2EStack;
let kc: k8s.KubeConfig;
let vm: VmEnvironment;
const containers: Record<'worker' | 'trigger', Container | undefined> = { worker: undefined, trigger: undefined };
const metricsPorts: Record<string, number> = {};
const exitCodes: Record<string, number | null> = {};

const log = (m: string) => {
  if (process.env.E2E_VERBOSE) console.log(`${Date.now()} ${m}`);
};

/** What kubelet mounts for a ServiceAccount, written from the identity's KubeConfig (mode 0400, owned by the image's user). */
function serviceAccountFiles(name: string, identity: k8s.KubeConfig, namespace: string): { files: Record<string, string>; env: Record<string, string> } {
  const cluster = identity.getCurrentCluster();
  const token = identity.getCurrentUser()?.token;
  if (!cluster?.caData || !token) throw new Error(`${name}: the identity has no CA data or no token`);
  const server = new URL(cluster.server);
  const dir = harnessTempDir(`${name}-serviceaccount`);
  const files: Record<string, string> = {};
  for (const [file, content] of Object.entries({ token, 'ca.crt': Buffer.from(cluster.caData, 'base64'), namespace })) {
    const p = path.join(dir, file);
    fs.writeFileSync(p, content, { mode: 0o400 });
    fs.chownSync(p, IMAGE_UID, IMAGE_UID);
    files[`${SERVICE_ACCOUNT_DIR}/${file}`] = p;
  }
  return { files, env: { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port } };
}

/** The worker and the trigger in the image, configured as the chart configures them. */
async function startInImage(bed: ControlBed): Promise<{ stop(): Promise<void> }> {
  const keys = path.join(harnessTempDir('payload-keys'), 'keys');
  fs.writeFileSync(keys, bed.payloadKeysText, { mode: 0o400 });
  fs.chownSync(keys, IMAGE_UID, IMAGE_UID);
  const common = {
    TEMPORAL_ADDRESS: bed.temporal.address,
    TEMPORAL_NAMESPACE: bed.temporal.namespace,
    TASK_QUEUE: bed.taskQueue,
    TEMPORAL_PAYLOAD_KEYS_FILE: PAYLOAD_KEYS_FILE,
    LOG_LEVEL: 'info',
    CREATE_NAMESPACES: bed.namespace,
    ALLOW_CROSS_NAMESPACE_TARGET_REFS: 'false',
    METRICS_HOST: '127.0.0.1',
  };
  const start = async (name: 'worker' | 'trigger', env: Record<string, string>, extraFiles: Record<string, string> = {}) => {
    const port = (metricsPorts[name] = await freePort());
    const sa = serviceAccountFiles(name, bed.identities[name], CHART_RELEASE_NAMESPACE);
    containers[name] = await runInImage({
      name,
      command: ['node', `dist/${name}/main.js`],
      env: { ...common, ...sa.env, METRICS_PORT: String(port), ...env },
      files: { ...sa.files, [PAYLOAD_KEYS_FILE]: keys, ...extraFiles },
      ready: httpReady(`http://127.0.0.1:${port}/readyz`),
      readyTimeoutMs: 120_000,
    });
  };
  const stop = async () => {
    for (const name of ['trigger', 'worker'] as const) await containers[name]?.stop();
    await gateway?.close();
  };
  try {
    gateway = await startPodGateway();
    await start(
      'worker',
      {
        WORKFLOW_BUNDLE: '/app/dist/workflow-bundle.js',
        WORKER_INSTANCE: 'vmrollout-worker-image',
        SHUTDOWN_GRACE_TIME: '5s',
        // The SDK's exporter would take 127.0.0.1:9091 of the host's network.
        TEMPORAL_METRICS_BIND: '',
        NODE_OPTIONS: `--require ${PRELOAD}`,
        POD_GATEWAY_URL: gateway.url,
      },
      { [PRELOAD]: POD_NETWORK_PRELOAD },
    );
    await start('trigger', { WATCH_NAMESPACES: bed.namespace, RELIST_INTERVAL: '60s', WATCH_IDLE_TIMEOUT: '60s' });
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}

beforeAll(async () => {
  // scripts/jest-project.sh names itself in BENCH_COMMAND; run otherwise, this is how to run the file alone.
  runInfo = provenance('npx jest test/e2e/image.test.ts --selectProjects e2e');
  image = await requireImage();
  stack = await startE2EStack({
    namespace: NS,
    vmdcName: VMDC,
    clusters: DEMO_CLUSTERS,
    tokens: DEMO_TOKENS,
    initialVersion: V1,
    zoneDowntimeMs: 5_000,
    strategy: { order: 'Declared', readDrainDelay: '1s', queueDrainedFor: '6s', pollInterval: '250ms', zoneTimeout: '2m' },
    taskQueue: 'vmrollout-e2e-image',
    controlProcesses: startInImage,
    log,
  });
  ({ kc, vm } = stack);
}, 6 * 60_000);

afterAll(async () => {
  await stack?.stop();
  if (!containers.worker || !containers.trigger) return;
  const c = (x: Container) => ({ createMs: x.runAt - x.createdAt, readyMs: x.readyAt - x.runAt });
  const report = {
    benchmark: 'image',
    what: "test/e2e/image.test.ts: the image's size (buildah's count and the OCI archive), then for the worker and the trigger run in it for a rollout on the e2e bed: createMs (`buildah from`, mount, the files put in place), readyMs (`buildah run` → /readyz 200), and their exit codes on SIGTERM",
    ...runInfo,
    image: { ...image, archiveMiB: Math.round((image.archiveBytes / 2 ** 20) * 10) / 10 },
    worker: c(containers.worker),
    trigger: c(containers.trigger),
    exitCodes,
  };
  fs.mkdirSync(path.join(REPO_ROOT, '.tmp', 'bench'), { recursive: true });
  fs.writeFileSync(path.join(REPO_ROOT, '.tmp', 'bench', 'image.json'), `${JSON.stringify(report, null, 2)}\n`);
}, 120_000);

/** uid, effective capabilities and the root mount's options of a host pid, from /proc. */
function processView(pid: number) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const root = fs
    .readFileSync(`/proc/${pid}/mounts`, 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .find((f) => f[1] === '/');
  return { uid: /^Uid:\s+(\d+)/m.exec(status)?.[1], capEff: /^CapEff:\s+(\S+)/m.exec(status)?.[1], rootOptions: root?.[3]?.split(',') ?? [] };
}

it('runs the worker and the trigger from the image as user 1000, without capabilities, on a read-only root', () => {
  for (const name of ['worker', 'trigger'] as const) {
    const pid = containers[name]?.nodePid();
    expect({ name, pid: typeof pid }).toEqual({ name, pid: 'number' });
    const view = processView(pid!);
    expect({ name, uid: view.uid, capEff: view.capEff, readOnlyRoot: view.rootOptions.includes('ro') }).toEqual({
      name,
      uid: String(IMAGE_UID),
      capEff: '0000000000000000',
      readOnlyRoot: true,
    });
    // The image's Node (the host path of the container's /usr/local/bin/node), not the host's.
    expect(fs.readlinkSync(`/proc/${pid}/exe`)).toMatch(/\/rootfs\/usr\/local\/bin\/node$/);
  }
});

it("runs the image's Node release", async () => {
  const metrics = (await httpGet(`http://127.0.0.1:${metricsPorts.worker}/metrics`)).body;
  expect(/^vmrollout_worker_nodejs_version_info\{version="([^"]+)"/m.exec(metrics)?.[1]).toBe(`v${toolVersions().IMAGE_NODE_VERSION}`);
});

it('rolls every zone out through the worker and the trigger in the image', async () => {
  const restartsBefore = vm.simulator.restarts.length;
  const t0 = Date.now();
  await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V2 } });
  const final = await waitVmdcPhase(kc, NS, VMDC, 2, ['Succeeded', 'Failed'], {
    diagnostics: () =>
      `simulator errors: ${vm.simulator.errors.slice(-5).join('\n')}\n--- worker ---\n${containers.worker?.process.logTail(30)}\n--- trigger ---\n${containers.trigger?.process.logTail(30)}`,
  });
  expect(final.phase).toBe('Succeeded');
  expect(final.zones?.map((z) => z.phase)).toEqual(DEMO_CLUSTERS.map(() => 'Done'));
  for (const c of DEMO_CLUSTERS) expect((await getObject(kc, 'VMCluster', NS, c)).spec?.clusterVersion).toBe(V2);
  expect(
    vm.simulator.restarts
      .slice(restartsBefore)
      .map((r) => r.zone)
      .sort(),
  ).toEqual(DEMO_CLUSTERS);
  // The guarantee the rollout exists for holds with the image too: no read failed meanwhile.
  expect(stack.traffic.failed(t0)).toEqual([]);
});

it('stops gracefully on SIGTERM inside the image', async () => {
  for (const name of ['trigger', 'worker'] as const) exitCodes[name] = (await containers[name]?.stop()) ?? null;
  expect(exitCodes).toEqual({ trigger: 0, worker: 0 });
});
