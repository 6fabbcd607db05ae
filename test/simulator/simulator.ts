/**
 * ZONE SIMULATOR — plays the VictoriaMetrics operator's contract against a real
 * kube-apiserver and real VictoriaMetrics processes, for the e2e tests and `make demo`.
 * It is NOT the VM operator; it does only what vmrollout relies on the operator to do:
 *
 *  - VMAuth / VMUser: renders the real vmauth config from `unauthorizedUserAccessSpec.targetRefs`
 *    and each VMUser's `targetRefs` (see ./render.ts), writes it, reloads the real vmauth
 *    (SIGHUP), waits until vmauth reports the reload, and only then sets the VMAuth status
 *    `{observedGeneration: <rendered generation>, updateStatus: operational}` (VMUsers too).
 *    Knob on the VMAuth:
 *      sim.vmrollout.io/hang: "true"         → the config is still rendered and vmauth reloaded,
 *                                              but the VMAuth status is not written (it stays at
 *                                              its old observedGeneration) until the annotation
 *                                              is removed: an operator whose VMAuth reconcile is
 *                                              stuck after it wrote the config Secret (the real
 *                                              operator sets the status last, after the Secret).
 *  - VMCluster: on a spec change (generation > status.observedGeneration) sets
 *    `updateStatus: expanding`, restarts that zone's VictoriaMetrics process (same port and
 *    data: the zone is down meanwhile), then sets `operational` at the new generation.
 *    A VMCluster seen for the first time (existing or just created) becomes operational at
 *    its generation without a restart. Knobs (annotations, read at each spec change):
 *      sim.vmrollout.io/fail: "true"         → updateStatus `failed` (reason from
 *                                              sim.vmrollout.io/fail-reason), no restart.
 *                                              It models a failure caused by the spec being
 *                                              applied (e.g. an image that does not exist): the
 *                                              operator retries the reconcile but it keeps
 *                                              failing, so removing the annotation alone does
 *                                              not recover the VMCluster; the NEXT spec change
 *                                              (generation > observedGeneration) does, when the
 *                                              annotation is gone: failed → expanding → restart →
 *                                              operational at the new generation. That is the
 *                                              operator's reconcileAndTrackStatus (VictoriaMetrics/
 *                                              operator, internal/controller/operator): spec
 *                                              changed → `expanding`, reconcile error → `failed`
 *                                              (requeued), reconcile ok → `operational`.
 *      sim.vmrollout.io/hang: "true"         → stays `expanding` until the annotation is removed
 *      sim.vmrollout.io/delay-ms: "<ms>"     → extra time spent `expanding` before the restart
 *  - VMAgent: `operational` at its generation (the real vmagent's remote writes are fixed at start).
 *  - EndpointSlice `vmagent-<name>` pointing at the real vmagent (what the operator's Service gives).
 *
 * Everything it does is recorded (rendered configs, restarts, status writes) so tests can check
 * the rollout invariants against what really happened.
 */
import { EventEmitter } from 'node:events';
import * as k8s from '@kubernetes/client-node';
import { FAILED, OPERATIONAL, VM_GROUP, VM_KINDS, VM_VERSION, type VMKind } from '../../api/constants';
import { renderVmauthConfig, routedZones, zonesOutOfRotation, type KubeObjectLike, type VmauthConfig, type ZoneBackend } from './render';

export const ANNOTATION_FAIL = 'sim.vmrollout.io/fail';
export const ANNOTATION_FAIL_REASON = 'sim.vmrollout.io/fail-reason';
export const ANNOTATION_HANG = 'sim.vmrollout.io/hang';
export const ANNOTATION_DELAY_MS = 'sim.vmrollout.io/delay-ms';
export const EXPANDING = 'expanding';

/** What the simulator needs of a zone's process (a harness VmProcessHandle fits). */
export interface ZoneProcess {
  url: string;
  restart(): Promise<void>;
  stop?(): Promise<void>;
  start?(): Promise<void>;
}

/** What the simulator needs of the vmauth process (a harness VmauthHandle fits). */
export interface VmauthControl {
  url: string;
  configPath: string;
  /** Write the config, reload, resolve once vmauth reports the reload (throws if rejected). */
  updateConfig(config: string | object): Promise<void>;
}

export interface ZoneSimulatorOptions {
  kubeConfig: k8s.KubeConfig;
  namespace: string;
  /** VMCluster name → the process standing in for that zone's vmselect/vminsert. */
  zones: Record<string, ZoneProcess>;
  vmauth: VmauthControl;
  /** The VMAuth rendered into this vmauth; default: the first VMAuth of the namespace (by name). */
  vmauthName?: string;
  /** Create EndpointSlice vmagent-<vmagentName> → ip:port (port name `http`). */
  vmagentEndpoint?: { vmagentName: string; ip: string; port: number };
  /**
   * How long a zone stays down during its "upgrade" (stop, wait, start). Default 0: a plain
   * restart. A longer outage makes a zone that rejoined reads too early visibly stale.
   */
  zoneDowntimeMs?: number;
  /** Safety-net relist interval (informers do the real work). Default 3 s. */
  resyncMs?: number;
  log?: (msg: string) => void;
}

export interface RenderedConfigRecord {
  at: number;
  vmauthName: string;
  vmauthGeneration: number;
  config: VmauthConfig;
  /** route → zone (VMCluster) names it sends reads to */
  routes: Record<string, string[]>;
  /** zones missing from a route that reached them in some earlier rendered config */
  outOfRotation: string[];
  warnings: string[];
}

export interface RestartRecord {
  zone: string;
  generation: number;
  startedAt: number;
  finishedAt?: number;
  error?: string;
  /** zones routed by the rendered config in effect when the restart began (route → zones) */
  routesAtStart: Record<string, string[]>;
}

export interface StatusRecord {
  at: number;
  kind: VMKind;
  name: string;
  generation: number;
  updateStatus: string;
  reason?: string;
}

export type SimEvent =
  | { type: 'config'; record: RenderedConfigRecord }
  | { type: 'restart-start'; record: RestartRecord }
  | { type: 'restart-done'; record: RestartRecord }
  | { type: 'status'; record: StatusRecord }
  | { type: 'error'; message: string };

const PLURAL: Record<VMKind, string> = VM_KINDS;

interface KObj extends KubeObjectLike {
  metadata: { name: string; namespace?: string; generation?: number; annotations?: Record<string, string>; resourceVersion?: string };
  status?: { observedGeneration?: number; updateStatus?: string; reason?: string };
}

function httpCode(err: unknown): number | undefined {
  const e = err as { code?: number; statusCode?: number };
  return e?.code ?? e?.statusCode;
}

/** Per-key serial work: a trigger while running schedules exactly one more run. */
class KeyedQueue {
  private running = new Map<string, Promise<void>>();
  private dirty = new Set<string>();
  private timers = new Set<NodeJS.Timeout>();
  stopped = false;
  constructor(private onError: (key: string, err: unknown) => void) {}

  trigger(key: string, fn: () => Promise<void>): void {
    if (this.stopped) return;
    if (this.running.has(key)) {
      this.dirty.add(key);
      return;
    }
    const run = (async () => {
      do {
        this.dirty.delete(key);
        try {
          await fn();
        } catch (err) {
          this.onError(key, err);
          const t = setTimeout(() => {
            this.timers.delete(t);
            this.trigger(key, fn);
          }, 500);
          this.timers.add(t);
          return;
        }
      } while (this.dirty.has(key) && !this.stopped);
    })().finally(() => this.running.delete(key));
    this.running.set(key, run);
  }

  async drain(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    await Promise.allSettled([...this.running.values()]);
  }
}

export class ZoneSimulator extends EventEmitter {
  readonly configs: RenderedConfigRecord[] = [];
  readonly restarts: RestartRecord[] = [];
  readonly statuses: StatusRecord[] = [];
  readonly errors: string[] = [];

  private readonly api: k8s.CustomObjectsApi;
  private readonly queue: KeyedQueue;
  private informers: Array<k8s.Informer<KObj>> = [];
  private resyncTimer?: NodeJS.Timeout;
  private lastConfigJson?: string;
  private readonly hangsLogged = new Set<string>();
  private stopped = false;
  private readonly log: (msg: string) => void;

  constructor(private readonly opts: ZoneSimulatorOptions) {
    super();
    this.api = opts.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    this.log = opts.log ?? (() => {});
    this.queue = new KeyedQueue((key, err) => {
      const msg = `zone simulator: ${key}: ${err instanceof Error ? err.message : String(err)}`;
      this.errors.push(msg);
      this.log(msg);
      this.emit('sim', { type: 'error', message: msg } satisfies SimEvent);
    });
  }

  get zoneBackends(): ZoneBackend[] {
    return Object.entries(this.opts.zones).map(([name, p]) => ({ namespace: this.opts.namespace, name, url: p.url }));
  }

  /** The rendered config now in effect (undefined before the first render). */
  get currentConfig(): RenderedConfigRecord | undefined {
    return this.configs[this.configs.length - 1];
  }

  async start(): Promise<void> {
    if (this.opts.vmagentEndpoint) await this.ensureVmagentEndpointSlice();
    for (const kind of Object.keys(PLURAL) as VMKind[]) {
      const path = `/apis/${VM_GROUP}/${VM_VERSION}/namespaces/${this.opts.namespace}/${PLURAL[kind]}`;
      const informer = k8s.makeInformer<KObj>(this.opts.kubeConfig, path, () => this.list(kind) as never);
      const onObj = (o: KObj) => this.enqueue(kind, o.metadata.name);
      informer.on('add', onObj);
      informer.on('update', onObj);
      informer.on('delete', onObj);
      informer.on('error', (err) => {
        if (this.stopped) return;
        this.log(`zone simulator: ${kind} informer error (${String(err)}), restarting`);
        setTimeout(() => {
          if (!this.stopped) informer.start().catch(() => {});
        }, 1000).unref();
      });
      await informer.start();
      this.informers.push(informer);
    }
    const resync = async () => {
      if (this.stopped) return;
      for (const kind of Object.keys(PLURAL) as VMKind[]) {
        try {
          for (const o of (await this.list(kind)).items) this.enqueue(kind, o.metadata.name);
        } catch {
          /* next round */
        }
      }
    };
    this.resyncTimer = setInterval(() => void resync(), this.opts.resyncMs ?? 3000);
    await resync();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    for (const i of this.informers) await i.stop().catch(() => {});
    await this.queue.drain();
  }

  // -------------------------------------------------------------------------------------
  // kube helpers

  private async list(kind: VMKind): Promise<{ items: KObj[]; metadata?: object }> {
    return (await this.api.listNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, namespace: this.opts.namespace, plural: PLURAL[kind] })) as {
      items: KObj[];
    };
  }

  private async get(kind: VMKind, name: string): Promise<KObj | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject({ group: VM_GROUP, version: VM_VERSION, namespace: this.opts.namespace, plural: PLURAL[kind], name })) as KObj;
    } catch (err) {
      if (httpCode(err) === 404) return undefined;
      throw err;
    }
  }

  private async patchStatus(kind: VMKind, obj: KObj, status: { observedGeneration?: number; updateStatus: string; reason?: string | null }): Promise<void> {
    await this.api.patchNamespacedCustomObjectStatus(
      { group: VM_GROUP, version: VM_VERSION, namespace: this.opts.namespace, plural: PLURAL[kind], name: obj.metadata.name, body: { status } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const record: StatusRecord = {
      at: Date.now(),
      kind,
      name: obj.metadata.name,
      generation: status.observedGeneration ?? obj.status?.observedGeneration ?? 0,
      updateStatus: status.updateStatus,
      ...(status.reason ? { reason: status.reason } : {}),
    };
    this.statuses.push(record);
    this.log(`zone simulator: ${kind} ${obj.metadata.name} → ${status.updateStatus} (generation ${obj.metadata.generation})`);
    this.emit('sim', { type: 'status', record } satisfies SimEvent);
  }

  private async ensureVmagentEndpointSlice(): Promise<void> {
    const ep = this.opts.vmagentEndpoint!;
    const name = `vmagent-${ep.vmagentName}`;
    const body: k8s.V1EndpointSlice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace: this.opts.namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: ep.ip.includes(':') ? 'IPv6' : 'IPv4',
      ports: [{ name: 'http', port: ep.port, protocol: 'TCP' }],
      endpoints: [{ addresses: [ep.ip], conditions: { ready: true, serving: true, terminating: false } }],
    };
    const api = this.opts.kubeConfig.makeApiClient(k8s.DiscoveryV1Api);
    try {
      await api.createNamespacedEndpointSlice({ namespace: this.opts.namespace, body });
    } catch (err) {
      if (httpCode(err) !== 409) throw err;
      await api.replaceNamespacedEndpointSlice({ name, namespace: this.opts.namespace, body });
    }
  }

  // -------------------------------------------------------------------------------------
  // reconcile

  private enqueue(kind: VMKind, name: string): void {
    if (this.stopped) return;
    switch (kind) {
      case 'VMAuth':
      case 'VMUser':
        this.queue.trigger('vmauth', () => this.reconcileVmauth());
        return;
      case 'VMCluster':
        this.queue.trigger(`VMCluster/${name}`, () => this.reconcileVmcluster(name));
        return;
      case 'VMAgent':
        this.queue.trigger(`VMAgent/${name}`, () => this.reconcileVmagent(name));
        return;
    }
  }

  /** Re-reads everything and reconciles it now (tests: after changing annotations). */
  poke(kind: VMKind, name: string): void {
    this.enqueue(kind, name);
  }

  private async reconcileVmauth(): Promise<void> {
    let vmauth: KObj | undefined;
    if (this.opts.vmauthName) vmauth = await this.get('VMAuth', this.opts.vmauthName);
    else vmauth = (await this.list('VMAuth')).items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))[0];
    if (!vmauth) return;
    const users = (await this.list('VMUser')).items;
    const { config, warnings } = renderVmauthConfig(vmauth, users, this.zoneBackends);
    const json = JSON.stringify(config);
    const generation = vmauth.metadata.generation ?? 0;
    if (json !== this.lastConfigJson) {
      await this.opts.vmauth.updateConfig(config as object);
      this.lastConfigJson = json;
      const routes = routedZones(config, this.zoneBackends);
      const baseline: Record<string, string[]> = {};
      for (const c of [...this.configs, { routes }]) for (const [r, zs] of Object.entries(c.routes)) baseline[r] = [...new Set([...(baseline[r] ?? []), ...zs])];
      const record: RenderedConfigRecord = {
        at: Date.now(),
        vmauthName: vmauth.metadata.name,
        vmauthGeneration: generation,
        config,
        routes,
        outOfRotation: zonesOutOfRotation(baseline, routes),
        warnings,
      };
      this.configs.push(record);
      this.log(`zone simulator: vmauth reloaded for VMAuth ${vmauth.metadata.name} generation ${generation}: ${JSON.stringify(routes)}`);
      this.emit('sim', { type: 'config', record } satisfies SimEvent);
    }
    if (vmauth.metadata.annotations?.[ANNOTATION_HANG] === 'true') {
      const key = `VMAuth/${vmauth.metadata.name}@${generation}`;
      if (!this.hangsLogged.has(key)) {
        this.hangsLogged.add(key);
        this.log(`zone simulator: VMAuth ${vmauth.metadata.name} status held at generation ${vmauth.status?.observedGeneration ?? '-'} (annotation ${ANNOTATION_HANG}; config of generation ${generation} rendered)`);
      }
    } else if (vmauth.status?.observedGeneration !== generation || vmauth.status?.updateStatus !== OPERATIONAL) {
      await this.patchStatus('VMAuth', vmauth, { observedGeneration: generation, updateStatus: OPERATIONAL, reason: null });
    }
    for (const u of users) {
      const g = u.metadata.generation ?? 0;
      if (u.status?.observedGeneration !== g || u.status?.updateStatus !== OPERATIONAL) {
        await this.patchStatus('VMUser', u, { observedGeneration: g, updateStatus: OPERATIONAL, reason: null });
      }
    }
  }

  private async reconcileVmagent(name: string): Promise<void> {
    const o = await this.get('VMAgent', name);
    if (!o) return;
    const g = o.metadata.generation ?? 0;
    if (o.status?.observedGeneration !== g || o.status?.updateStatus !== OPERATIONAL) {
      await this.patchStatus('VMAgent', o, { observedGeneration: g, updateStatus: OPERATIONAL, reason: null });
    }
  }

  private async reconcileVmcluster(name: string): Promise<void> {
    const o = await this.get('VMCluster', name);
    if (!o) return;
    const gen = o.metadata.generation ?? 0;
    const st = o.status ?? {};
    const ann = o.metadata.annotations ?? {};
    if (!st.updateStatus) {
      // First sight (existing object, or one just created from a full spec): operational as is.
      await this.patchStatus('VMCluster', o, { observedGeneration: gen, updateStatus: OPERATIONAL, reason: null });
      return;
    }
    const settled = (st.observedGeneration ?? 0) >= gen && st.updateStatus !== EXPANDING;
    if (settled) return;
    if (st.updateStatus !== EXPANDING) await this.patchStatus('VMCluster', o, { updateStatus: EXPANDING, reason: null });
    if (ann[ANNOTATION_FAIL] === 'true') {
      const reason = ann[ANNOTATION_FAIL_REASON] ?? `simulated failure of VMCluster ${name} (annotation ${ANNOTATION_FAIL})`;
      await this.patchStatus('VMCluster', o, { observedGeneration: gen, updateStatus: FAILED, reason });
      return;
    }
    if (ann[ANNOTATION_HANG] === 'true') {
      const key = `${name}@${gen}`;
      if (!this.hangsLogged.has(key)) {
        this.hangsLogged.add(key);
        this.log(`zone simulator: VMCluster ${name} hangs in ${EXPANDING} at generation ${gen} (annotation ${ANNOTATION_HANG})`);
      }
      return; // re-evaluated at the next event for this object
    }
    const delay = Number(ann[ANNOTATION_DELAY_MS] ?? 0);
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    const zone = this.opts.zones[name];
    if (zone) {
      const record: RestartRecord = { zone: name, generation: gen, startedAt: Date.now(), routesAtStart: this.currentConfig?.routes ?? {} };
      this.restarts.push(record);
      this.log(`zone simulator: restarting zone process of VMCluster ${name} (generation ${gen})`);
      this.emit('sim', { type: 'restart-start', record } satisfies SimEvent);
      try {
        const downtime = this.opts.zoneDowntimeMs ?? 0;
        if (downtime > 0 && zone.stop && zone.start) {
          await zone.stop();
          await new Promise((r) => setTimeout(r, downtime));
          await zone.start();
        } else await zone.restart();
      } catch (err) {
        record.error = err instanceof Error ? err.message : String(err);
        throw err;
      } finally {
        record.finishedAt = Date.now();
        this.emit('sim', { type: 'restart-done', record } satisfies SimEvent);
      }
    }
    await this.patchStatus('VMCluster', o, { observedGeneration: gen, updateStatus: OPERATIONAL, reason: null });
  }
}

