/**
 * What the bed saw, for the tests' assertions: every config the operator wrote into the vmauth
 * config Secret (CRC32 content hash, the routes it sends reads to), every content hash each vmauth
 * pod's real config-reloader published as loaded (its /metrics, scraped every 100 ms), and every
 * VMCluster (and VMSingle) generation and updateStatus, each with the time it was first seen.
 */
import * as zlib from 'node:zlib';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { VM_GROUP, VM_VERSION } from '../../../../api/constants';
import { httpGet } from '../processes';
import { metricValue } from '../vm';
import { configHash, routedZones, zoneBackends, zonesOutOfRotation, type KubeObjectLike, type VmauthConfig } from '../../simulator/render';
import type { Kubelet } from './kubelet';

export interface SecretRecord {
  at: number;
  hash: number;
  routes: Record<string, string[]>;
}
export interface LoadedRecord {
  at: number;
  pod: string;
  hash: number;
}
export interface VmclusterRecord {
  at: number;
  name: string;
  generation: number;
  updateStatus?: string;
  observedGeneration?: number;
}

/** The config-reloader's port in the pods the operator renders (its container port). */
const RELOADER_PORT = 8435;

export class Observer {
  readonly secrets: SecretRecord[] = [];
  readonly loaded: LoadedRecord[] = [];
  readonly vmclusters: VmclusterRecord[] = [];
  private readonly core: k8s.CoreV1Api;
  private readonly custom: k8s.CustomObjectsApi;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private loop?: Promise<void>;
  private lastSecret = '';
  private readonly lastLoaded = new Map<string, number>();
  private readonly lastVmc = new Map<string, string>();

  constructor(private readonly opts: { kc: k8s.KubeConfig; namespace: string; vmauth: string; kubelet: Kubelet }) {
    this.core = opts.kc.makeApiClient(k8s.CoreV1Api);
    this.custom = opts.kc.makeApiClient(k8s.CustomObjectsApi);
  }

  start(): void {
    const tick = async () => {
      if (this.stopped) return;
      await Promise.all([this.readSecret(), this.readPods(), this.readVmclusters()].map((p) => p.catch(() => undefined)));
      if (!this.stopped) this.timer = setTimeout(() => (this.loop = tick()), 100);
    };
    this.loop = tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.loop;
  }

  /** The routes of a config hash the operator wrote (undefined: not seen). */
  routesOf(hash: number): Record<string, string[]> | undefined {
    return this.secrets.find((s) => s.hash === hash)?.routes;
  }

  /** Each vmauth pod's loaded hash at time t (pods that had loaded something by then). */
  loadedAt(t: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.loaded) if (r.at <= t) out[r.pod] = r.hash;
    return out;
  }

  /**
   * The vmauth pods whose loaded config (config-reloader content hash) at time t still routed reads
   * to `zone`, by the routes of `baseline` (every zone in rotation); a pod with no known config counts.
   */
  podsRoutingTo(zone: string, t: number, baseline: Record<string, string[]>): string[] {
    const loaded = this.loadedAt(t);
    return this.opts.kubelet
      .pods('vmauth')
      .map((p) => p.name)
      .filter((p) => {
        const routes = loaded[p] === undefined ? undefined : this.routesOf(loaded[p]!);
        return !routes || !zonesOutOfRotation(baseline, routes).includes(zone);
      });
  }

  /** When VMCluster `name` was first seen at a generation above `after`. */
  specChanges(name: string, after = 1): VmclusterRecord[] {
    const out: VmclusterRecord[] = [];
    for (const r of this.vmclusters) if (r.name === name && r.generation > after && !out.some((o) => o.generation === r.generation)) out.push(r);
    return out;
  }

  private async readSecret(): Promise<void> {
    const s = await this.core.readNamespacedSecret({ name: `vmauth-config-${this.opts.vmauth}`, namespace: this.opts.namespace });
    const b64 = s.data?.['config.yaml.gz'];
    if (!b64 || b64 === this.lastSecret) return;
    this.lastSecret = b64;
    const at = Date.now();
    const gz = Buffer.from(b64, 'base64');
    const config = (parse(zlib.gunzipSync(gz).toString('utf8')) ?? {}) as VmauthConfig;
    const [clusters, singles] = await Promise.all(['vmclusters', 'vmsingles'].map((plural) => this.list(plural)));
    this.secrets.push({ at, hash: configHash(gz), routes: routedZones(config, zoneBackends(clusters!, singles!)) });
  }

  private async readPods(): Promise<void> {
    await Promise.all(
      this.opts.kubelet.pods('vmauth').map(async (p) => {
        const r = await httpGet(`http://${p.ip}:${RELOADER_PORT}/metrics`, { timeoutMs: 1000 }).catch(() => undefined);
        const hash = r?.status === 200 ? metricValue(r.body, 'configreloader_reload_content_hash', 'key="main"') : undefined;
        if (hash === undefined || this.lastLoaded.get(p.name) === hash) return;
        this.lastLoaded.set(p.name, hash);
        this.loaded.push({ at: Date.now(), pod: p.name, hash });
      }),
    );
  }

  private async list(plural: string): Promise<KubeObjectLike[]> {
    const list = (await this.custom.listNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, namespace: this.opts.namespace, plural })) as {
      items: KubeObjectLike[];
    };
    return list.items;
  }

  /** VMClusters and VMSingles (a zone's storage): names are unique across both in these tests. */
  private async readVmclusters(): Promise<void> {
    const items = (await Promise.all(['vmclusters', 'vmsingles'].map((plural) => this.list(plural)))).flat() as Array<{
      metadata: { name: string; generation: number };
      status?: { updateStatus?: string; observedGeneration?: number };
    }>;
    for (const c of items) {
      const rec = {
        name: c.metadata.name,
        generation: c.metadata.generation,
        updateStatus: c.status?.updateStatus,
        observedGeneration: c.status?.observedGeneration,
      };
      const key = JSON.stringify(rec);
      if (this.lastVmc.get(rec.name) === key) continue;
      this.lastVmc.set(rec.name, key);
      this.vmclusters.push({ at: Date.now(), ...rec });
    }
  }
}
