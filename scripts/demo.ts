/**
 * `make demo`: a whole vmrollout installation on loopback, real processes only (the Makefile
 * runs scripts/install-tools.sh first; this script installs nothing):
 *   Temporal dev server + Web UI, etcd + kube-apiserver (kubeconfig in .demo/kubeconfig),
 *   3 VictoriaMetrics zones (each behind a vmselect front), vmagent, 2 vmauth pods (each with a
 *   config-reloader that gets the config Secret a few seconds late), the ZONE SIMULATOR (test/infra/simulator/, which plays
 *   the VictoriaMetrics operator v0.74.1: it writes vmauth's config Secret from VMAuth/VMUser objects and
 *   restarts a zone's process when its VMCluster changes), the trigger (child process: tsx
 *   trigger/main.ts, as in production) and the worker (in this process, through worker/main.ts's
 *   startWorker: kube-apiserver refuses loopback addresses in EndpointSlices, so the vmagent pod is
 *   published at a TEST-NET-2 address that the worker's fetch maps to 127.0.0.1 — see
 *   test/infra/harness/pod-network.ts; no traffic leaves loopback).
 * It applies examples/demo/*.yaml, waits for the initial rollout, bumps clusterVersion and shows
 * the rollout zone by zone in the view of `kubectl vmdc get --watch` (cli/, in this process, a new
 * view whenever the rollout moves) while a writer and readers show there is no failed or stale
 * read; next to the `temporal` commands it prints the plugin's (dist/kubectl-vmdc.cjs: `make demo`
 * builds it first).
 *
 * Stays up until Ctrl-C, then stops everything it started.
 *   DEMO_EXIT_AFTER_ROLLOUT=1   exit after the rollout: status 0 when it Succeeded with no failed or stale read
 *   DEMO_DIR                    state dir (kubeconfig, logs); default .demo/
 *   DEMO_TEMPORAL_PORT / DEMO_TEMPORAL_UI_PORT   preferred ports (default 7233 / 8233, if free; else random)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BUNDLE } from '../cli/build';
import { followRollout, type WorkflowSource } from '../cli/follow';
import { kubeFor } from '../cli/kube';
import { appendScreen } from '../cli/screen';
import { colourWanted } from '../cli/style';
import { connectTemporal, temporalSettings } from '../cli/temporal';
import type { Phase } from '../api/types';
import { controlCommands, DEMO_FROM_VERSION, DEMO_NAMESPACE, DEMO_TO_VERSION, DEMO_VMDC, say, startDemoStack, type DemoStack } from '../test/e2e/demo-stack';
import { createObjects, DEMO_CLUSTERS, DEMO_MANIFESTS_DIR, loadManifests, mergePatch, REPO_ROOT, writeUrlVar } from '../test/e2e/support';
import { isPortOpen } from '../test/infra/harness/ports';
import { killAllSync } from '../test/infra/harness/processes';
import { toolPath, toolsDir } from '../test/infra/harness/tools';

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

/** The plugin as a person runs it: the bundle when built (`make demo` builds it), else from the checkout. */
function pluginCommands(stack: DemoStack): string {
  const cmd = fs.existsSync(BUNDLE) ? BUNDLE : 'npx tsx cli/main.ts';
  const ui = stack.temporal.uiUrl ? ` TEMPORAL_UI_URL=${stack.temporal.uiUrl}` : '';
  return [
    `kubectl vmdc (${cmd}; copied to the PATH as kubectl-vmdc it is \`kubectl vmdc\`), after`,
    `  export KUBECONFIG=${stack.kubeconfigPath} TEMPORAL_ADDRESS=${stack.temporal.address} TEMPORAL_NAMESPACE=${stack.temporal.namespace}${ui}`,
    `  watch:    ${cmd} get ${DEMO_VMDC} --watch`,
    `  pause:    ${cmd} pause ${DEMO_VMDC}`,
    `  resume:   ${cmd} resume ${DEMO_VMDC}`,
    `  cancel:   ${cmd} cancel ${DEMO_VMDC}`,
    `  history:  ${cmd} history ${DEMO_VMDC}`,
  ].join('\n');
}

interface RolloutReport {
  phase: Phase | 'gone' | 'stopped' | 'error';
  readsDuring: number;
  failedReads: number;
  staleReads: number;
}

/**
 * Creates the VMDistributedCluster, follows its initial rollout, bumps clusterVersion and follows
 * that rollout to its end: each time with the plugin's watch view (and, for each new workflow, the
 * commands that act on it).
 */
async function runRollout(stack: DemoStack): Promise<RolloutReport> {
  const kc = stack.kube.kubeConfig;
  const vars: Record<string, string> = { NAMESPACE: DEMO_NAMESPACE, INITIAL_VERSION: DEMO_FROM_VERSION };
  for (const c of DEMO_CLUSTERS) vars[writeUrlVar(c)] = stack.vm.remoteWriteURLs[c]!;
  const vmdc = loadManifests(DEMO_MANIFESTS_DIR, vars).find((o) => o.kind === 'VMDistributedCluster')!;
  const settings = temporalSettings({ address: stack.temporal.address, namespace: stack.temporal.namespace, uiUrl: stack.temporal.uiUrl }, {});
  const source: WorkflowSource = {
    temporal: await connectTemporal(settings),
    ...(settings.uiUrl ? { webUI: { baseUrl: settings.uiUrl, namespace: settings.connection.namespace } } : {}),
  };
  const kube = kubeFor(kc, DEMO_NAMESPACE);
  const screen = appendScreen((line) => console.log(line), { colour: colourWanted(process.stdout, process.env), output: 'text' });
  let announced: string | undefined;
  const follow = async () => {
    const end = await followRollout({
      kube,
      name: vmdc.metadata.name,
      source,
      intervalMs: 1000,
      onView(view, now) {
        if (view.workflow && view.workflow.id !== announced) {
          announced = view.workflow.id;
          console.log(`\n${controlCommands(stack, announced)}\n${pluginCommands(stack)}\n`);
        }
        screen.show(view, now);
      },
    }).done;
    return end.kind === 'ended' ? end.phase : end.kind;
  };
  try {
    await createObjects(kc, [vmdc]);
    say(`created VMDistributedCluster ${vmdc.metadata.name} at ${DEMO_FROM_VERSION} (every zone already runs it: the initial rollout skips them)`);
    say(`initial rollout: ${await follow()}`);
    const from = Date.now();
    await mergePatch(kc, 'VMDistributedCluster', DEMO_NAMESPACE, vmdc.metadata.name, { spec: { clusterVersion: DEMO_TO_VERSION } });
    say(`bumped spec.clusterVersion ${DEMO_FROM_VERSION} → ${DEMO_TO_VERSION}: rolling out zone by zone`);
    const phase = await follow();
    const to = Date.now();
    const t = stack.traffic;
    return {
      phase,
      readsDuring: t.reads.filter((r) => r.at >= from && r.at <= to).length,
      failedReads: t.failed(from, to).length,
      staleReads: t.stale(from, to).length,
    };
  } finally {
    await source.temporal?.connection.close();
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
    say(
      'starting Temporal dev server (with Web UI), kube-apiserver + etcd, 3 VictoriaMetrics zones, vmagent, vmauth, the zone simulator, the worker and the trigger ...',
    );
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
    const report = await runRollout(stack);
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
