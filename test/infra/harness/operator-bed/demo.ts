/**
 * The demo's VM objects (examples/demo/) on the real-operator bed, as the real-operator tests and
 * the bed's start-up benchmark use them: the zones' write URLs filled in, N vmauth pods, vmagent's
 * remote write tuned as the simulated bed's (test/infra/simulator/environment.ts says why; here through
 * VMAgent.spec.extraArgs, so the operator renders the flags). Created, then waited for until the
 * operator's pods run and every vmauth pod has loaded the config with every zone.
 */
import { createObjects, DEMO_MANIFESTS_DIR, loadManifests, writeUrlVar, type KubeObject } from '../../../e2e/support';
import { waitFor } from '../processes';
import type { RealOperatorBed } from '.';

export interface DemoOnBed {
  /** Every demo manifest (the VMDistributedCluster is not created). */
  manifests: KubeObject[];
  vmdc: KubeObject;
  /** Route → zones of the operator's config with every zone in rotation. */
  baseline: Record<string, string[]>;
  vmagentURL: string;
  vmauthURLs: string[];
}

export async function applyDemo(
  bed: RealOperatorBed,
  opts: { namespace: string; initialVersion: string; vmauthPods: number; vmdcName: string },
): Promise<DemoOnBed> {
  const vars: Record<string, string> = { NAMESPACE: opts.namespace, INITIAL_VERSION: opts.initialVersion };
  const zones = bed.zones.all();
  for (const z of zones) vars[writeUrlVar(z.name)] = z.writeURL;
  const manifests = loadManifests(DEMO_MANIFESTS_DIR, vars);
  for (const o of manifests) {
    if (o.kind === 'VMAuth') o.spec = { ...o.spec, replicaCount: opts.vmauthPods };
    if (o.kind === 'VMAgent')
      o.spec = {
        ...o.spec,
        extraArgs: { 'remoteWrite.flushInterval': '200ms', 'remoteWrite.retryMinInterval': '2s', 'remoteWrite.retryMaxInterval': '2s', loggerLevel: 'WARN' },
      };
  }
  const vmdc = manifests.find((o) => o.kind === 'VMDistributedCluster')!;
  vmdc.metadata.name = opts.vmdcName;
  await createObjects(
    bed.kc,
    manifests.filter((o) => o !== vmdc),
  );
  await bed.kubelet.waitPods('vmauth', opts.vmauthPods, 120_000);
  await bed.kubelet.waitPods('vmagent', 1, 120_000);
  await bed.kubelet.waitPods('vmselect', zones.length, 120_000);
  const served = await waitFor(
    () => {
      const last = bed.observer.secrets.at(-1);
      const loaded = Object.values(bed.observer.loadedAt(Date.now()));
      return last && last.routes.unauthorized?.length === zones.length && loaded.length === opts.vmauthPods && loaded.every((h) => h === last.hash)
        ? last
        : undefined;
    },
    {
      timeoutMs: 120_000,
      description: 'every vmauth pod to load the operator config with every zone',
      diagnostics: () =>
        JSON.stringify({ secrets: bed.observer.secrets.slice(-2), loaded: bed.observer.loaded.slice(-4), kubelet: bed.kubelet.errors.slice(-3) }),
    },
  );
  return {
    manifests,
    vmdc,
    baseline: served.routes,
    vmagentURL: `http://${bed.kubelet.pods('vmagent')[0]!.ip}:8429`,
    vmauthURLs: bed.kubelet.pods('vmauth').map((p) => `http://${p.ip}:8427`),
  };
}
