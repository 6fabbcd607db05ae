/**
 * The zones' data: one real VictoriaMetrics process per VMCluster, standing in for its vmstorage
 * (and vminsert): vmagent writes to it, the vmselect pods' fronts read from it. It listens on
 * 127.0.0.1 (for the bed and the test) and on its own loopback address 127.0.1.<n>, the address
 * its remote-write URL names: not 127.0.0.1, which inside a pod is the pod itself.
 *
 * The kubelet (./kubelet.ts) reports the zone's vmstorage pods: when one the zone had is deleted
 * (the operator's or the StatefulSet controller's rolling update), the process stops; it starts
 * again, same port and data, once every vmstorage pod the VMCluster asks for is back and Ready and
 * none is terminating. So a zone the operator rolls is really unavailable for a while.
 */
import * as k8s from '@kubernetes/client-node';
import { VM_GROUP, VM_VERSION } from '../../../../api/constants';
import { freePort } from '../ports';
import { startVictoriaMetrics, type VmProcessHandle } from '../vm';
import type { VmselectFront } from '../../simulator/vmselect-front';

export interface Zone {
  name: string;
  vm: VmProcessHandle;
  /** http://127.0.0.1:<port>: reads straight from the zone (the bed, the test's probe). */
  url: string;
  /** http://127.0.1.<n>:<port>/api/v1/write: what the VMAgent's remoteWrite names. */
  writeURL: string;
  /** vmselect pod name → its front. */
  fronts: Map<string, VmselectFront>;
  up: boolean;
}

export interface ZoneEvent {
  at: number;
  zone: string;
  event: 'down' | 'up';
  /** Why it went down: the vmstorage pod deleted. */
  cause?: string;
}

export class Zones {
  readonly events: ZoneEvent[] = [];
  private readonly zones = new Map<string, Zone>();
  /** zone → uids of vmstorage pods seen (a vanished one was deleted). */
  private readonly seen = new Map<string, Set<string>>();
  /** vmstorage pod uid → name. */
  private readonly podNames = new Map<string, string>();
  private readonly custom: k8s.CustomObjectsApi;

  private constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly namespace: string,
  ) {
    this.custom = kc.makeApiClient(k8s.CustomObjectsApi);
  }

  static async start(kc: k8s.KubeConfig, namespace: string, names: string[]): Promise<Zones> {
    const zs = new Zones(kc, namespace);
    try {
      for (const [i, name] of names.entries()) {
        const port = await freePort();
        const host = `127.0.1.${i + 1}`;
        // -search.latencyOffset=0s (the harness') and no response cache: a read shows what the zone holds now.
        const vm = await startVictoriaMetrics({ name: `zone-${name}`, port, extraArgs: ['-search.disableCache', `-httpListenAddr=${host}:${port}`] });
        zs.zones.set(name, { name, vm, url: vm.url, writeURL: `http://${host}:${port}/api/v1/write`, fronts: new Map(), up: true });
      }
      return zs;
    } catch (err) {
      await zs.stop();
      throw err;
    }
  }

  get(name: string): Zone {
    const z = this.zones.get(name);
    if (!z) throw new Error(`no zone ${name} in the bed`);
    return z;
  }

  all(): Zone[] {
    return [...this.zones.values()];
  }

  addFront(zone: string, pod: string, front: VmselectFront): void {
    this.get(zone).fronts.set(pod, front);
  }

  removeFront(zone: string, pod: string): void {
    this.get(zone).fronts.delete(pod);
  }

  /** Each zone's state from its vmstorage pods (see the header). */
  async reconcileStorage(pods: k8s.V1Pod[]): Promise<void> {
    const vmclusters = (await this.custom.listNamespacedCustomObject({
      group: VM_GROUP,
      version: VM_VERSION,
      namespace: this.namespace,
      plural: 'vmclusters',
    })) as {
      items: Array<{ metadata: { name: string }; spec?: { vmstorage?: { replicaCount?: number } } }>;
    };
    for (const zone of this.zones.values()) {
      const mine = pods.filter((p) => p.metadata?.labels?.['app.kubernetes.io/instance'] === zone.name);
      const seen = this.seen.get(zone.name) ?? new Set<string>();
      this.seen.set(zone.name, seen);
      const present = new Set(mine.map((p) => p.metadata!.uid!));
      const deleted = [...seen].filter((uid) => !present.has(uid));
      const terminating = mine.filter((p) => p.metadata?.deletionTimestamp);
      for (const p of mine) {
        this.podNames.set(p.metadata!.uid!, p.metadata!.name!);
        if (!p.metadata?.deletionTimestamp) seen.add(p.metadata!.uid!);
      }
      if (zone.up && (deleted.length > 0 || terminating.length > 0)) {
        for (const uid of deleted) seen.delete(uid);
        zone.up = false;
        await zone.vm.stop();
        const gone = [...terminating.map((p) => p.metadata!.name!), ...deleted.map((uid) => this.podNames.get(uid) ?? uid)];
        this.events.push({ at: Date.now(), zone: zone.name, event: 'down', cause: `vmstorage pod ${gone.join(', ')} deleted` });
        continue;
      }
      for (const uid of deleted) seen.delete(uid);
      if (zone.up) continue;
      const want = vmclusters.items.find((c) => c.metadata.name === zone.name)?.spec?.vmstorage?.replicaCount ?? 1;
      const ready = mine.filter((p) => !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      if (terminating.length === 0 && ready.length >= want) {
        await zone.vm.start();
        zone.up = true;
        this.events.push({ at: Date.now(), zone: zone.name, event: 'up' });
      }
    }
  }

  /** The zones down at time t (from the events). */
  downAt(t: number): string[] {
    const state = new Map<string, boolean>();
    for (const e of this.events) if (e.at <= t) state.set(e.zone, e.event === 'down');
    return [...state].filter(([, down]) => down).map(([z]) => z);
  }

  async stop(): Promise<void> {
    for (const z of this.zones.values()) await z.vm.stop();
  }
}
