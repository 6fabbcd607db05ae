/**
 * `make demo`: a Temporal dev server with its Web UI and a real kube-apiserver (+ etcd) with
 * the VictoriaMetrics operator test CRDs, in the foreground until Ctrl-C, then cleaned up.
 * Later issues extend this with the worker, the trigger and the zone simulator.
 *
 * Ports: DEMO_TEMPORAL_PORT (default 7233) and DEMO_TEMPORAL_UI_PORT (default 8233) if free,
 * otherwise random free ones.
 */
import * as path from 'node:path';
import { installCRDs, startKube, VM_OPERATOR_CRDS } from '../test/harness/kube';
import { isPortOpen } from '../test/harness/ports';
import { stopAll } from '../test/harness/processes';
import { startTemporalDevServer } from '../test/harness/temporal';
import { toolPath, toolsDir } from '../test/harness/tools';

async function preferredPort(envName: string, fallback: number): Promise<number | undefined> {
  const want = Number(process.env[envName] ?? fallback);
  return (await isPortOpen(want)) ? undefined : want;
}

async function main(): Promise<void> {
  console.log('starting Temporal dev server (with Web UI) and kube-apiserver + etcd ...');
  const [temporal, kube] = await Promise.all([
    (async () => startTemporalDevServer({ port: await preferredPort('DEMO_TEMPORAL_PORT', 7233), uiPort: await preferredPort('DEMO_TEMPORAL_UI_PORT', 8233), ui: true }))(),
    startKube(),
  ]);
  await installCRDs(kube.kubeConfig, VM_OPERATOR_CRDS);
  const kubectl = (() => {
    try {
      return toolPath('kubectl');
    } catch {
      return 'kubectl';
    }
  })();
  const temporalBin = toolPath('temporal');
  console.log(`
vmrollout demo is up (Ctrl-C stops everything)

  Temporal frontend  ${temporal.address}   (namespace ${temporal.namespace})
  Temporal Web UI    ${temporal.uiUrl}
  kube-apiserver     ${kube.server}
  kubeconfig         ${kube.kubeconfigPath}

Try:
  export KUBECONFIG=${kube.kubeconfigPath}
  ${kubectl} get crds
  ${temporalBin} workflow list --address ${temporal.address}

Logs: ${path.dirname(temporal.process.logPath)}, ${path.dirname(kube.apiserver.logPath)}
Tools: ${toolsDir()}
`);
  await new Promise<void>((resolve) => {
    const keepAlive = setInterval(() => undefined, 1 << 30);
    const shutdown = (sig: string) => {
      console.log(`\n${sig}: stopping ...`);
      clearInterval(keepAlive);
      resolve();
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
  await stopAll();
  console.log('stopped.');
}

main().then(
  () => process.exit(0),
  async (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    await stopAll().catch(() => undefined);
    process.exit(1);
  },
);
