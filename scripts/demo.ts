/**
 * `make demo`: a whole vmrollout installation on loopback, real processes only (the Makefile
 * runs scripts/install-tools.sh first; this script installs nothing):
 *   Temporal dev server + Web UI, etcd + kube-apiserver (kubeconfig in .demo/kubeconfig),
 *   3 VictoriaMetrics zones (each behind a vmselect front), vmagent, 2 vmauth pods (each with a
 *   config-reloader that gets the config Secret a few seconds late), the ZONE SIMULATOR (test/simulator/, which plays
 *   the VictoriaMetrics operator v0.74.1: it writes vmauth's config Secret from VMAuth/VMUser objects and
 *   restarts a zone's process when its VMCluster changes), the trigger (child process: tsx
 *   trigger/main.ts, as in production) and the worker (in this process, through worker/main.ts's
 *   startWorker: kube-apiserver refuses loopback addresses in EndpointSlices, so the vmagent pod is
 *   published at a TEST-NET-2 address that the worker's fetch maps to 127.0.0.1 — see
 *   test/harness/pod-network.ts; no traffic leaves loopback).
 * It applies examples/demo/*.yaml, waits for the initial rollout, bumps clusterVersion and prints
 * the rollout zone by zone while a writer and readers show there is no failed or stale read.
 *
 * Stays up until Ctrl-C, then stops everything it started.
 *   DEMO_EXIT_AFTER_ROLLOUT=1   exit after the rollout: status 0 when it Succeeded with no failed or stale read
 *   DEMO_DIR                    state dir (kubeconfig, logs); default .demo/
 *   DEMO_TEMPORAL_PORT / DEMO_TEMPORAL_UI_PORT   preferred ports (default 7233 / 8233, if free; else random)
 */
import * as path from 'node:path';
import { controlCommands, runDemoRollout, say, startDemoStack, type DemoStack } from '../test/e2e/demo-stack';
import { REPO_ROOT } from '../test/e2e/support';
import { isPortOpen } from '../test/harness/ports';
import { killAllSync } from '../test/harness/processes';
import { toolPath, toolsDir } from '../test/harness/tools';

async function preferredPort(envName: string, fallback: number): Promise<number | undefined> {
  const want = Number(process.env[envName] ?? fallback);
  return (await isPortOpen(want)) ? undefined : want;
}

function tool(name: 'kubectl' | 'temporal'): string {
  try {
    return toolPath(name);
  } catch {
    return name;
  }
}

async function main(): Promise<void> {
  const demoDir = path.resolve(process.env.DEMO_DIR ?? path.join(REPO_ROOT, '.demo'));
  const exitAfter = process.env.DEMO_EXIT_AFTER_ROLLOUT === '1';
  let stack: DemoStack | undefined;
  let shuttingDown = false;
  const shutdown = async (why: string, code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    say(`${why}: stopping everything ...`);
    try {
      await stack?.stop();
    } catch (err) {
      console.error(err);
      killAllSync();
    }
    say('all demo processes stopped');
    process.exit(code);
  };
  // A graceful stop instead of the harness's default (SIGKILL every process group at once).
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(sig);
    process.on(sig, () => void shutdown(`received ${sig}`, 130));
  }
  try {
    say('starting Temporal dev server (with Web UI), kube-apiserver + etcd, 3 VictoriaMetrics zones, vmagent, vmauth, the zone simulator, the worker and the trigger ...');
    stack = await startDemoStack(demoDir, {
      temporalPort: await preferredPort('DEMO_TEMPORAL_PORT', 7233),
      temporalUiPort: await preferredPort('DEMO_TEMPORAL_UI_PORT', 8233),
    });
    const kubectl = tool('kubectl');
    console.log(`
vmrollout demo is up (Ctrl-C stops everything)

  Temporal Web UI:   ${stack.temporal.uiUrl}
  Temporal frontend: ${stack.temporal.address}   (namespace ${stack.temporal.namespace})
  kube-apiserver:    ${stack.kube.server}
  Kubernetes:        export KUBECONFIG=${stack.kubeconfigPath}
                     ${kubectl} get vmdc -w        (kubectl from the tool cache: ${kubectl})
  Worker metrics:    ${stack.workerMetricsUrl}   (worker runs in this process)
  vmagent pod:       EndpointSlice vmagent-vm-global → ${stack.vm.vmagentEndpointIP}:${stack.vm.vmagent.port}, mapped to ${stack.vm.vmagent.url}
                     (kube-apiserver refuses loopback endpoints; the worker's fetch maps the pod address to 127.0.0.1)
  vmauth pods:       ${stack.vm.vmauthPods.map((p) => `${p.name} ${p.podIP}:8427 → ${p.vmauth.url}`).join(', ')}
                     each applies a new config Secret ${stack.vm.vmauthPods[0]!.propagationDelayMs / 1000} s late (kubelet's Secret volume delay, DEMO_CONFIG_PROPAGATION_DELAY_MS)
  Reads (vmauth):    curl '${stack.vm.vmauthPods[0]!.vmauth.url}/select/0/prometheus/api/v1/query?query=vmrollout_demo_heartbeat'
  Logs:              ${path.join(demoDir, 'logs')}, ${path.dirname(stack.kube.apiserver.logPath)}
  Tools:             ${toolsDir()}
`);
    const report = await runDemoRollout(stack, (id) => {
      console.log(`\n${controlCommands(stack!, id)}\n`);
    });
    say(`rollout finished: phase ${report.phase}; reads during the rollout: ${report.readsDuring}, failed ${report.failedReads}, stale ${report.staleReads}`);
    const ok = report.phase === 'Succeeded' && report.failedReads === 0 && report.staleReads === 0;
    if (exitAfter) return void (await shutdown('DEMO_EXIT_AFTER_ROLLOUT=1', ok ? 0 : 1));
    say(`demo stays up: edit the VMDistributedCluster (${kubectl} edit vmdc demo) or use the commands above; Ctrl-C stops everything.`);
    setInterval(() => undefined, 1 << 30);
  } catch (err) {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    await shutdown('demo failed', 1);
  }
}

void main();
