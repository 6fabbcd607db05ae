/**
 * The body of `make demo` (scripts/demo.ts): everything on loopback, real processes, the trigger as
 * a child process (`tsx trigger/main.ts`, as in production), the worker IN THIS PROCESS through
 * worker/main.ts's startWorker (the same code path as `tsx worker/main.ts`), and the ZONE SIMULATOR
 * (test/infra/simulator/) playing the VM operator.
 *
 * Why the worker runs in-process: kube-apiserver refuses loopback addresses in EndpointSlices, so
 * the vmagent "pod" is published at POD_IP (TEST-NET-2, never routed) and the worker's activities
 * scrape it through podNetworkFetch, which maps that address to 127.0.0.1 where vmagent listens
 * (test/infra/harness/pod-network.ts). A fetch can only be handed to a worker in this process.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { freePort } from '../infra/harness/ports';
import { podNetworkFetch } from '../infra/harness/pod-network';
import { httpReady, startProcess, stopAll, waitFor, type ManagedProcess } from '../infra/harness/processes';
import { startTemporalDevServer, type DevServerHandle } from '../infra/harness/temporal';
import { toolPath } from '../infra/harness/tools';
import { startVmEnvironment, type VmEnvironment } from '../infra/simulator/environment';
import type { SimEvent } from '../infra/simulator/simulator';
import { DEFAULT_TASK_QUEUE } from '../../api/rollout-contract';
import { loadConfig } from '../../worker/config';
import { startWorker, type RunningWorker } from '../../worker/main';
import {
  createObjects,
  DEMO_MANIFESTS_DIR,
  READ_PATH,
  installCrdFiles,
  loadManifests,
  REPO_ROOT,
  STALE_AFTER_MS,
  startTraffic,
  writeUrlVar,
  type Traffic,
} from './support';

export const DEMO_NAMESPACE = 'default';
export const DEMO_VMDC = 'demo';
export const DEMO_CLUSTERS = ['vm-az-a', 'vm-az-b', 'vm-az-c'];
export const DEMO_TOKENS = ['token-az-a', 'token-az-b', 'token-az-c'];
export const DEMO_FROM_VERSION = 'v1.150.0-cluster';
export const DEMO_TO_VERSION = 'v1.151.0-cluster';
/** Longer than STALE_AFTER_MS (support.ts): a zone rejoining before its backlog is searchable shows as stale reads. */
export const DEMO_ZONE_DOWNTIME_MS = 12_000;
/** vmauth pods of the demo VMAuth, and how late each gets a new config Secret (kubelet's Secret volume delay). */
export const DEMO_VMAUTH_PODS = 2;
export const DEMO_CONFIG_PROPAGATION_DELAY_MS = Number(process.env.DEMO_CONFIG_PROPAGATION_DELAY_MS ?? 3000);

export interface DemoStack {
  temporal: DevServerHandle;
  kube: KubeCluster;
  kubeconfigPath: string;
  vm: VmEnvironment;
  /** The worker, running in this process (see the header). */
  worker: RunningWorker;
  workerMetricsUrl: string;
  trigger: ManagedProcess;
  traffic: Traffic;
  stop(): Promise<void>;
}

const t0 = Date.now();
export const stamp = () => `[+${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s]`;
export const say = (msg: string) => console.log(`${stamp()} ${msg}`);

function tsxChild(name: string, entry: string, env: NodeJS.ProcessEnv, readyUrl: string, logDir: string): Promise<ManagedProcess> {
  const tsx = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
  return startProcess({
    name,
    command: tsx,
    args: [path.join(REPO_ROOT, entry)],
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    logDir,
    ready: httpReady(readyUrl),
    readyTimeoutMs: 120_000,
  });
}

export interface DemoStackOptions {
  /** Temporal frontend / Web UI ports (default: random free ones). */
  temporalPort?: number;
  temporalUiPort?: number;
}

export async function startDemoStack(demoDir: string, opts: DemoStackOptions = {}): Promise<DemoStack> {
  fs.mkdirSync(demoDir, { recursive: true });
  const logDir = path.join(demoDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });

  const [temporal, kube] = await Promise.all([
    startTemporalDevServer({ ui: true, logDir, port: opts.temporalPort, uiPort: opts.temporalUiPort }),
    startKube({ dir: path.join(demoDir, 'kube') }),
  ]);
  say(`Temporal dev server at ${temporal.address} (pid ${temporal.process.pid}), Web UI: ${temporal.uiUrl}`);
  const kubeconfigPath = path.join(demoDir, 'kubeconfig');
  fs.copyFileSync(kube.kubeconfigPath, kubeconfigPath);
  say(`kube-apiserver at ${kube.server} (pid ${kube.apiserver.pid}), etcd pid ${kube.etcd.process.pid}`);
  await installCrdFiles(kube.kubeConfig, VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds'));

  const vm = await startVmEnvironment({
    kubeConfig: kube.kubeConfig,
    namespace: DEMO_NAMESPACE,
    vmclusters: DEMO_CLUSTERS,
    vmagentName: 'vm-global',
    vmauthName: 'vm-global',
    // Each zone is down this long during its upgrade: vmagent builds a backlog for it, and the
    // rollout visibly waits for that backlog (WaitingForQueue) before the zone rejoins reads.
    zoneDowntimeMs: DEMO_ZONE_DOWNTIME_MS,
    vmauthPods: DEMO_VMAUTH_PODS,
    configPropagationDelayMs: DEMO_CONFIG_PROPAGATION_DELAY_MS,
  });
  for (const c of DEMO_CLUSTERS) {
    say(
      `zone ${c}: VictoriaMetrics at ${vm.zones[c]!.url} (pid ${vm.zones[c]!.pid}); vmselect front ${vm.vmselects[c]!.url} = pod ${vm.vmselects[c]!.podIP}:8481 (EndpointSlice vmselect-${c})`,
    );
  }
  say(`vmagent at ${vm.vmagent.url} (pid ${vm.vmagent.pid}); EndpointSlice vmagent-vm-global → ${vm.vmagentEndpointIP}:${vm.vmagent.port}`);
  say(
    `  pod addresses (TEST-NET-2, never routed) are mapped to 127.0.0.1 by the worker's fetch (test/infra/harness/pod-network.ts), because kube-apiserver refuses loopback addresses in EndpointSlices`,
  );
  for (const p of vm.vmauthPods) {
    say(
      `vmauth pod ${p.name}: vmauth ${p.vmauth.url} (pid ${p.vmauth.pid}) = ${p.podIP}:8427, config-reloader ${p.podIP}:8435; gets each config Secret ${p.propagationDelayMs / 1000} s late (kubelet's Secret volume delay)`,
    );
  }
  say(`zone simulator (plays the VM operator v0.74.1: config Secret vmauth-config-vm-global, statuses right after the Secret write) running`);
  vm.simulator.on('sim', (e: SimEvent) => {
    if (e.type === 'config') say(`  [zone simulator] config Secret written (hash ${e.record.hash}): reads go to ${JSON.stringify(e.record.routes)}`);
    else if (e.type === 'served')
      say(
        `  [zone simulator] vmauth pod ${e.record.pod} now serves config ${e.record.hash} (${((e.record.at - e.record.seenAt) / 1000).toFixed(1)} s after the Secret changed)`,
      );
    else if (e.type === 'reconcile-error') say(`  [zone simulator] operator reconcile of ${e.record.kind} ${e.record.name} failed: ${e.record.error}`);
    else if (e.type === 'restart-start') say(`  [zone simulator] restarting zone process ${e.record.zone} (VMCluster generation ${e.record.generation})`);
    else if (e.type === 'restart-done') say(`  [zone simulator] zone process ${e.record.zone} back up${e.record.error ? `: ERROR ${e.record.error}` : ''}`);
    else if (e.type === 'error') say(`  [zone simulator] ${e.message}`);
  });

  const vars: Record<string, string> = { NAMESPACE: DEMO_NAMESPACE, INITIAL_VERSION: DEMO_FROM_VERSION };
  for (const c of DEMO_CLUSTERS) vars[writeUrlVar(c)] = vm.remoteWriteURLs[c]!;
  const manifests = loadManifests(DEMO_MANIFESTS_DIR, vars);
  fs.writeFileSync(path.join(demoDir, 'applied.json'), JSON.stringify(manifests, null, 2));
  await createObjects(
    kube.kubeConfig,
    manifests.filter((o) => o.kind !== 'VMDistributedCluster'),
  );
  say(
    `applied ${manifests
      .filter((o) => o.kind !== 'VMDistributedCluster')
      .map((o) => `${o.kind}/${o.metadata.name}`)
      .join(', ')}`,
  );
  await waitFor(() => vm.simulator.currentConfig?.routes.unauthorized?.length === DEMO_CLUSTERS.length && vm.simulator.allPodsServeCurrent(), {
    timeoutMs: 30_000 + DEMO_CONFIG_PROPAGATION_DELAY_MS,
    description: 'every vmauth pod to route reads to every zone',
  });

  const traffic = startTraffic({
    vmagentURL: vm.vmagent.url,
    vmauthURL: vm.vmauthPods.map((p) => p.vmauth.url),
    bearerTokens: DEMO_TOKENS,
    series: 'vmrollout_demo_heartbeat',
    staleAfterMs: STALE_AFTER_MS,
  });
  await traffic.waitHealthy();
  say(
    `writer → vmagent (every 200 ms) and readers → the vmauth pods in turn (GET ${READ_PATH}, anonymous + 3 VMUser tokens) running; reads are fresh (a read is stale when its newest sample is older than ${STALE_AFTER_MS / 1000} s)`,
  );

  const common = {
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TASK_QUEUE: DEFAULT_TASK_QUEUE,
    KUBECONFIG: kubeconfigPath,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  };
  const workerPort = await freePort();
  const sdkMetricsPort = await freePort();
  const workerConfig = loadConfig({
    ...common,
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: String(workerPort),
    TEMPORAL_METRICS_BIND: `127.0.0.1:${sdkMetricsPort}`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    SHUTDOWN_GRACE_TIME: '5s', // Ctrl-C mid-rollout: running activities get 5 s, the workflow resumes on the next start
  });
  const worker = await startWorker(workerConfig, { fetch: podNetworkFetch });
  const workerMetricsUrl = `${worker.server.url}/metrics`;
  say(
    `worker: in this process (worker/main.ts startWorker, activities scrape vmagent, the vmauth pods and vmselects through the pod network registry → 127.0.0.1), metrics ${workerMetricsUrl}`,
  );
  const triggerPort = await freePort();
  const trigger = await tsxChild(
    'trigger',
    'trigger/main.ts',
    { ...common, METRICS_PORT: String(triggerPort), WATCH_NAMESPACES: DEMO_NAMESPACE },
    `http://127.0.0.1:${triggerPort}/healthz`,
    logDir,
  );
  say(`trigger: tsx trigger/main.ts (pid ${trigger.pid}), metrics http://127.0.0.1:${triggerPort}/metrics, log ${trigger.logPath}`);

  let stopped = false;
  return {
    temporal,
    kube,
    kubeconfigPath,
    vm,
    worker,
    workerMetricsUrl,
    trigger,
    traffic,
    async stop() {
      if (stopped) return;
      stopped = true;
      await traffic.stop();
      await worker.shutdown().catch((err: unknown) => say(`worker shutdown: ${String(err)}`));
      await vm.simulator.stop();
      await stopAll(); // every process the harness started, in reverse order
    },
  };
}

export function controlCommands(stack: DemoStack, workflowId: string): string {
  let temporalBin = 'temporal';
  let kubectl = 'kubectl';
  try {
    temporalBin = toolPath('temporal');
  } catch {
    /* keep the bare name */
  }
  try {
    kubectl = toolPath('kubectl');
  } catch {
    /* keep the bare name */
  }
  const t = `${temporalBin} workflow`;
  const a = `--address ${stack.temporal.address} --namespace ${stack.temporal.namespace}`;
  const k = `${kubectl} --kubeconfig ${stack.kubeconfigPath}`;
  return [
    `workflow id: ${workflowId}`,
    `  describe: ${t} describe ${a} -w '${workflowId}'`,
    `  progress: ${t} query ${a} -w '${workflowId}' --type progress`,
    `  pause:    ${t} signal ${a} -w '${workflowId}' --name pause     (or: ${k} patch vmdc ${DEMO_VMDC} --type merge -p '{"spec":{"paused":true}}')`,
    `  resume:   ${t} signal ${a} -w '${workflowId}' --name resume    (or: ${k} patch vmdc ${DEMO_VMDC} --type merge -p '{"spec":{"paused":false}}')`,
    `  cancel:   ${t} cancel ${a} -w '${workflowId}'`,
    `  all rollouts of the object: ${t} list ${a} --query "VmdcName='${DEMO_VMDC}'"`,
  ].join('\n');
}
