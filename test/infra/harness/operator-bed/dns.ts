/**
 * Cluster DNS for the bed: the names of the operator's headless Services (`<svc>.<ns>.svc`, e.g.
 * the `vmselect-<vmc>.<ns>.svc` vmauth's config names) resolve to their pods' IPs, from the
 * EndpointSlices the real EndpointSlice controller writes (every endpoint with
 * publishNotReadyAddresses, as the operator sets for vmselect; else the ready ones), written into the
 * namespace's private /etc/hosts (./netns.ts) whenever they change. Services with a cluster IP are
 * not mapped: nothing here proxies a cluster IP.
 */
import * as k8s from '@kubernetes/client-node';
import { writeHosts } from './netns';

export class ClusterDns {
  /** Every mapping written, in order (diagnostics). */
  readonly history: Array<{ at: number; names: Record<string, string[]> }> = [];
  private readonly core: k8s.CoreV1Api;
  private readonly discovery: k8s.DiscoveryV1Api;
  private last = '';
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private loop?: Promise<void>;

  constructor(private readonly opts: { kc: k8s.KubeConfig; namespace: string }) {
    this.core = opts.kc.makeApiClient(k8s.CoreV1Api);
    this.discovery = opts.kc.makeApiClient(k8s.DiscoveryV1Api);
  }

  start(): void {
    const tick = async () => {
      if (this.stopped) return;
      await this.sync().catch(() => undefined);
      if (!this.stopped) this.timer = setTimeout(() => (this.loop = tick()), 200);
    };
    this.loop = tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.loop;
  }

  private async sync(): Promise<void> {
    const ns = this.opts.namespace;
    const [services, slices] = await Promise.all([
      this.core.listNamespacedService({ namespace: ns }),
      this.discovery.listNamespacedEndpointSlice({ namespace: ns }),
    ]);
    const names: Record<string, string[]> = {};
    for (const svc of services.items) {
      if (svc.spec?.clusterIP !== 'None') continue;
      const name = svc.metadata!.name!;
      const all = svc.spec.publishNotReadyAddresses === true;
      const ips = slices.items
        .filter((s) => s.metadata?.labels?.['kubernetes.io/service-name'] === name)
        .flatMap((s) => s.endpoints.filter((e) => all || e.conditions?.ready !== false).flatMap((e) => e.addresses))
        .sort();
      if (ips.length) names[`${name}.${ns}.svc`] = ips;
    }
    const key = JSON.stringify(names);
    if (key === this.last) return;
    this.last = key;
    writeHosts(names);
    this.history.push({ at: Date.now(), names });
  }
}
