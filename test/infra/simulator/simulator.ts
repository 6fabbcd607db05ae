/**
 * ZONE SIMULATOR — plays the VictoriaMetrics operator v0.74.1 AS IT IS against a real
 * kube-apiserver and real VictoriaMetrics processes, for the e2e tests and `make demo`. It is NOT
 * the VM operator; it does only what vmrollout relies on the operator to do, modelled on the
 * operator's source (VictoriaMetrics/operator, tag v0.74.1, paths below):
 *
 *  - VMAuth / VMUser → config Secret (factory/vmauth/vmauth.go CreateOrUpdateConfig):
 *    renders the config the operator's way (./render.ts: buildConfig, genURLMaps, genUserCfg,
 *    VMCluster.AsURL service URLs `http://vmselect-<vmc>.<ns>.svc:8481`), gzips it and writes it
 *    into Secret `vmauth-config-<vmauth>` key `config.yaml.gz` (create/update, only when the bytes
 *    change; labels = VMAuth.SelectorLabels, annotation generated=true, owner = the VMAuth).
 *    A crd ref of the unauthorizedUserAccessSpec naming no VMCluster fails the whole VMAuth
 *    reconcile (no Secret write, VMAuth `failed` with the operator's wording); a VMUser's is
 *    skipped (ForEachCollectSkipInvalid) and that VMUser's status fails.
 *  - spec.waitForConfigReload: true (reconcile/config_reload.go WaitForConfigReloadHash): after the
 *    Secret write, polls every ready vmauth pod's config-reloader (<podIP>:8435/metrics, through
 *    podNetworkFetch) immediately and then every 2 s until each reports
 *    configreloader_reload_content_hash{key="main"} == CRC32-IEEE(gzipped bytes) (a pod without
 *    the metric counts as confirmed, a not-ready pod or a scrape error as not yet); after 60 s the
 *    reconcile fails: "timed out waiting for <ns>/<name> to reload config: context deadline exceeded".
 *  - Statuses. VMUsers (reconcile/status.go StatusForChildObjects / StatusForChildObject,
 *    updateChildStatusConditions, setConditionTo, writeAggregatedStatus): right after the Secret
 *    write (after the hash wait with waitForConfigReload), each selected VMUser gets
 *    observedGeneration = generation and condition `<vmauth>.<ns>.vmauth.victoriametrics.com/Applied`
 *    (True / reason ConfigParsedAndApplied, or False with the error as message), updateStatus
 *    operational | failed (reason = the error); unselected VMUsers still carrying the condition lose
 *    it (releaseDroppedChildren). Written only when something changed (Status().Update).
 *    VMAuth (controllers.go reconcileAndTrackStatus, reconcile.UpdateObjectStatus): when the spec
 *    differs from status.lastAppliedSpec → `expanding` first (lastAppliedSpec = spec); then after
 *    CreateOrUpdateConfig → `operational`, or `failed` with reason "cannot create or update vmauth
 *    deploy: <error>". Status = {observedGeneration, updateStatus, reason?, lastAppliedSpec}.
 *    Triggers (vmuser_controller.go): a VMAuth event, a VMUser deletion and the periodic resync
 *    run the VMAuth reconcile above; a VMUser create or generation change runs only
 *    CreateOrUpdateConfig for that VMUser (its status only; the VMAuth status is not touched, and
 *    a failure there leaves the VMUser's status as it was).
 *    Knob on the VMAuth:
 *      sim.vmrollout.io/hang: "true"         → the reconcile is stuck right after it wrote the config
 *                                              Secret (and waited, with waitForConfigReload): no
 *                                              VMUser or VMAuth status is written until the
 *                                              annotation is removed.
 *  - vmauth pods (./vmauth-pod.ts): N real vmauth processes, each with its config-reloader
 *    stand-in and its own propagation delay (kubelet's Secret volume delay) and optionally no
 *    content-hash metric; EndpointSlice `vmauth-<vmauth>` (one endpoint per pod, ready once it
 *    serves a config, port `http` 8427). Each zone's vmselect: a front with real vmselect request
 *    counters (./vmselect-front.ts), EndpointSlice `vmselect-<vmc>` (port `http` 8481), not ready
 *    while the zone restarts.
 *  - VMCluster (controllers.go reconcileAndTrackStatus; the controller has no event filter, so every
 *    update of the object, annotations included, runs a reconcile): on a spec change
 *    (generation > status.observedGeneration) sets `updateStatus: expanding` at the new generation
 *    (observedGeneration, as the operator does), restarts that zone's
 *    VictoriaMetrics process (same port and data: the zone is down meanwhile), then sets
 *    `operational` at the new generation. A VMCluster seen for the first time (existing or just
 *    created) goes `expanding`, then `operational`, at its generation without a restart. Knobs (annotations):
 *      sim.vmrollout.io/fail: "true"         → the reconcile fails while the annotation is set:
 *                                              updateStatus `failed` (reason from
 *                                              sim.vmrollout.io/fail-reason) at the generation, no
 *                                              restart. The operator requeues a failed reconcile
 *                                              (2 s doubling to 2 min) and reconciles on every event,
 *                                              so once the cause is gone it recovers at the SAME
 *                                              generation: removing the annotation (itself an event,
 *                                              so the backoff requeue is not modelled) restarts the
 *                                              zone and sets `operational`, without `expanding`
 *                                              first (LastSpecUpdated: the failed reconcile already
 *                                              stored the spec as lastAppliedSpec).
 *      sim.vmrollout.io/fail: "spec"         → the same failure, caused by the spec itself (e.g. an image
 *                                              that does not exist): every reconcile of that generation
 *                                              keeps failing, annotation or not; the next spec change
 *                                              (generation > observedGeneration) with the annotation
 *                                              gone recovers: failed → expanding → restart → operational.
 *      sim.vmrollout.io/hang: "true"         → stays `expanding` until the annotation is removed
 *      sim.vmrollout.io/delay-ms: "<ms>"     → extra time spent `expanding` before the restart
 *  - VMSingle (vmsingle_controller.go, the same reconcileAndTrackStatus): exactly as a VMCluster above,
 *    knobs included; its zone process is the VMSingle's one pod (single-node VictoriaMetrics serves
 *    /prometheus/api/v1/... and counts its requests itself: no front). Service, Deployment
 *    `vmsingle-<name>` (factory/vmsingle: PrefixedName()), its pod labelled
 *    app.kubernetes.io/name=vmsingle, instance=<name>, EndpointSlice `vmsingle-<name>` (port `http`
 *    8429, the operator's default), not ready while the zone restarts. A VMAuth targetRef
 *    `crd.kind: VMSingle` renders `http://vmsingle-<name>.<ns>.svc:8428` (AsURL without defaults: ./render.ts).
 *  - VMAgent: `operational` at its generation (the real vmagent's remote writes are fixed at start).
 *  - EndpointSlice `vmagent-<name>` pointing at the real vmagent (what the operator's Service gives).
 *  - Services `vmagent-<name>`, `vmauth-<vmauth>`, `vmselect-<vmc>` (port `http`, the operator's
 *    selector labels), and their EndpointSlices as the EndpointSlice controller writes them
 *    (k8s.io/endpointslice utils.go newEndpointSlice, podToEndpoint): labels
 *    kubernetes.io/service-name and endpointslice.kubernetes.io/managed-by:
 *    endpointslice-controller.k8s.io, the Service as controller owner, each endpoint's targetRef
 *    a Pod of the namespace. No EndpointSlice controller runs: the simulator writes them.
 *
 *  - The workloads and Pods behind the Services (../harness/service-pods.ts): Deployments
 *    `vmagent-<name>` and `vmauth-<vmauth>` (a ReplicaSet owning their pods), StatefulSets
 *    `vmselect-<vmc>`, each Pod with the selector labels, its controller owner and status.podIPs.
 *    Nothing runs them: a pod's readiness is its endpoint's.
 *
 * Not modelled: pods coming and going (each keeps its name, uid and address), user
 * selection across namespaces, the status TTL refresh (60 min), HPA, TLS assets.
 *
 * Against the REAL operator (test/infra/harness/operator-bed/; test/operator/simulator-parity.test.ts
 * feeds both the same objects): the config Secret's content and the VMAuth and VMUser statuses,
 * and the VMCluster statuses, in their order, are the same. What it still does differently: a zone restart is one outage of zoneDowntimeMs (the operator's rollout
 * with kwok's pods takes ~26 s, replacing each vmstorage pod in turn: outages of under a second);
 * the Secret reaches the pods after a propagation delay the test sets (the real config-reloader
 * watches the Secret and reloads vmauth about 1 s + its 3 s --delay-interval later). It stays for
 * what the real operator cannot be made to do on demand: slow, failing and hanging reconciles.
 *
 * Everything is recorded so tests can check invariants against what really happened: `configs`
 * (every Secret write), per pod what it served and since when (`pods[i].served`,
 * `servingRoutesAt(t)`), zone `restarts` (with the routes the pods really served when a restart
 * began), `statuses` (every status write) and `reconcileErrors` (the operator's reconcile errors).
 */
import { EventEmitter } from 'node:events';
import * as k8s from '@kubernetes/client-node';
import { FAILED, OPERATIONAL, VM_GROUP, VM_KINDS, VM_VERSION, type VMKind } from '../../../api/constants';
import { podNetworkFetch } from '../harness/pod-network';
import { ensureService, ensureWorkloadPods } from '../harness/service-pods';
import { controllerSlice, podEndpoint } from '../../fixtures/pod-objects';
import type { Workload } from '../../../activities/pods/pod-identity';
import { vmagentWorkloads } from '../../../activities/vmagent/service';
import { readWorkloads, vmauthWorkloads } from '../../../activities/vmauth/config';
import {
  configHash,
  gzipConfig,
  renderVmauthConfig,
  routedZones,
  vmclusterURL,
  vmsingleURL,
  VMSINGLE_DEFAULT_PORT,
  zonesOutOfRotation,
  type KubeObjectLike,
  type VmauthConfig,
  type ZoneBackend,
} from './render';
import { CONFIG_KEY, CONFIG_RELOADER_PORT, VMAUTH_POD_PORT, type ServedConfigRecord, type VmauthPod } from './vmauth-pod';

export const ANNOTATION_FAIL = 'sim.vmrollout.io/fail';
export const ANNOTATION_FAIL_REASON = 'sim.vmrollout.io/fail-reason';
/** ANNOTATION_FAIL's value for a failure the spec causes: it outlives the annotation until the spec changes. */
export const FAIL_SPEC = 'spec';
export const ANNOTATION_HANG = 'sim.vmrollout.io/hang';
export const ANNOTATION_DELAY_MS = 'sim.vmrollout.io/delay-ms';
export const EXPANDING = 'expanding';
/** vmv1beta1.ConditionDomainTypeAppliedSuffix / ConditionParsingReason */
export const APPLIED_SUFFIX = '.victoriametrics.com/Applied';
export const APPLIED_REASON = 'ConfigParsedAndApplied';
/** vmselect's default port, the vmselect pods' `http` port. */
export const VMSELECT_POD_PORT = 8481;
/** The operator's default VMSingle port (VM_VMSINGLEDEFAULT_PORT), the VMSingle pod's `http` port. */
export const VMSINGLE_POD_PORT = Number(VMSINGLE_DEFAULT_PORT);
/** The storage kinds the simulator reconciles as zones. */
type StorageKind = 'VMCluster' | 'VMSingle';

/** What the simulator needs of a zone's process (a harness VmProcessHandle fits). */
export interface ZoneProcess {
  url: string;
  restart(): Promise<void>;
  stop?(): Promise<void>;
  start?(): Promise<void>;
}

/** A VMSingle's pod: its pod address (registered at VMSINGLE_POD_PORT to the zone process itself). */
export interface VmsinglePod {
  podIP: string;
}

/** A zone's vmselect pod: its pod address (registered at VMSELECT_POD_PORT) and the loopback URL of its front. */
export interface VmselectPod {
  podIP: string;
  url: string;
}

/** A real vmagent published as the pod of VMAgent `vmagentName`. */
export interface VmagentEndpoint {
  vmagentName: string;
  ip: string;
  port: number;
}

export interface ZoneSimulatorOptions {
  kubeConfig: k8s.KubeConfig;
  namespace: string;
  /** VMCluster or VMSingle name → the process standing in for that zone's vmstorage/vminsert/vmselect (or the VMSingle). Names are unique across both kinds. */
  zones: Record<string, ZoneProcess>;
  /** VMCluster name → its vmselect pod (the front in front of the zone process). */
  vmselectPods: Record<string, VmselectPod>;
  /** VMSingle name → its pod (the zone process itself). A zone named here is a VMSingle. */
  vmsinglePods?: Record<string, VmsinglePod>;
  /** The vmauth pods of the VMAuth (started by the owner; their Secret watch is theirs). */
  vmauthPods: VmauthPod[];
  /** The VMAuth played; default: the first VMAuth of the namespace (by name). */
  vmauthName?: string;
  /** Create EndpointSlice vmagent-<vmagentName> → ip:port (port name `http`). */
  vmagentEndpoint?: VmagentEndpoint;
  /** More VMAgents (one per zone, spec.zones[].vmagent), each the same way. */
  zoneVmagentEndpoints?: VmagentEndpoint[];
  /**
   * How long a zone stays down during its "upgrade" (stop, wait, start). Default 0: a plain
   * restart. A longer outage makes a zone that rejoined reads too early visibly stale.
   */
  zoneDowntimeMs?: number;
  /** Safety-net relist interval (informers do the real work); also the VMAuth's periodic reconcile. Default 3 s. */
  resyncMs?: number;
  /** WaitForConfigReloadHash's poll interval and timeout (operator: 2 s, 60 s). */
  configReloadWaitIntervalMs?: number;
  configReloadWaitTimeoutMs?: number;
  log?: (msg: string) => void;
}

/** One write of the config Secret (what the operator rendered). */
export interface RenderedConfigRecord {
  at: number;
  vmauthName: string;
  vmauthGeneration: number;
  /** The config as written (operator form: service URLs). */
  config: VmauthConfig;
  yaml: string;
  /** CRC32-IEEE of the gzipped bytes (what the config-reloaders publish once they serve it). */
  hash: number;
  /** route → zone (VMCluster or VMSingle) names it sends reads to */
  routes: Record<string, string[]>;
  /** zones missing from a route that reached them in some earlier rendered config */
  outOfRotation: string[];
  /** VMUser name → the error that left it out of the config */
  userErrors: Record<string, string>;
}

export interface RestartRecord {
  zone: string;
  generation: number;
  startedAt: number;
  finishedAt?: number;
  error?: string;
  /** route → zones, over every vmauth pod: what the pods really served when the restart began */
  routesAtStart: Record<string, string[]>;
  /** route → zones of the config Secret in effect when the restart began */
  secretRoutesAtStart: Record<string, string[]>;
}

export interface StatusRecord {
  at: number;
  kind: VMKind;
  name: string;
  generation: number;
  updateStatus: string;
  reason?: string;
  /** VMUser: its Applied condition of the VMAuth, as written */
  condition?: StatusCondition;
}

export interface StatusCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message?: string;
  observedGeneration: number;
  lastTransitionTime: string;
  lastUpdateTime: string;
}

export interface ReconcileErrorRecord {
  at: number;
  kind: VMKind;
  name: string;
  error: string;
}

export type SimEvent =
  | { type: 'config'; record: RenderedConfigRecord }
  | { type: 'served'; record: ServedConfigRecord }
  | { type: 'restart-start'; record: RestartRecord }
  | { type: 'restart-done'; record: RestartRecord }
  | { type: 'status'; record: StatusRecord }
  | { type: 'reconcile-error'; record: ReconcileErrorRecord }
  | { type: 'error'; message: string };

const PLURAL: Record<VMKind, string> = VM_KINDS;

interface KStatus {
  observedGeneration?: number;
  updateStatus?: string;
  reason?: string;
  conditions?: StatusCondition[];
  lastAppliedSpec?: unknown;
  [k: string]: unknown;
}

interface KObj extends KubeObjectLike {
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    resourceVersion?: string;
    uid?: string;
  };
  status?: KStatus;
}

function httpCode(err: unknown): number | undefined {
  const e = err as { code?: number; statusCode?: number };
  return e?.code ?? e?.statusCode;
}

/** metav1.Time: RFC 3339, seconds. */
const metaNow = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

/** An error of the operator's reconcile (modelled), not of the simulator. */
class ReconcileError extends Error {}

export class ZoneSimulator extends EventEmitter {
  /** Every write of the config Secret. */
  readonly configs: RenderedConfigRecord[] = [];
  /** Ready endpoints in the last EndpointSlice vmauth-<name> written. */
  private vmauthSliceReady = 0;
  /** Service name → its uid (the owner its EndpointSlice names). */
  private readonly serviceUids = new Map<string, string>();
  /** Pod name → its uid (the targetRef of its endpoint). */
  private readonly podUids = new Map<string, string>();
  private readonly sliceWrites = new Map<string, Promise<void>>();
  readonly restarts: RestartRecord[] = [];
  readonly statuses: StatusRecord[] = [];
  /** The operator's reconcile errors (modelled behaviour: a VMAuth or VMUser that fails). */
  readonly reconcileErrors: ReconcileErrorRecord[] = [];
  /** Errors of the simulator itself (API errors, a zone that does not restart ...). */
  readonly errors: string[] = [];

  private readonly api: k8s.CustomObjectsApi;
  private readonly core: k8s.CoreV1Api;
  private readonly discovery: k8s.DiscoveryV1Api;
  private readonly queue: KeyedQueue;
  private informers: Array<k8s.Informer<KObj>> = [];
  private resyncTimer?: NodeJS.Timeout;
  private readonly hangsLogged = new Set<string>();
  /** `<kind>/<name>` of a VMCluster or VMSingle → the generation whose spec fails its reconciles (ANNOTATION_FAIL: FAIL_SPEC). */
  private readonly badSpecs = new Map<string, number>();
  private stopped = false;
  private readonly log: (msg: string) => void;
  private pendingVmauth = { full: false, users: new Set<string>() };
  private readonly userGenerations = new Map<string, number>();
  private lastVmclusters: KObj[] = [];
  private lastVmsingles: KObj[] = [];
  private readonly zonesRestarting = new Set<string>();
  private readonly podListeners: Array<() => void> = [];

  constructor(private readonly opts: ZoneSimulatorOptions) {
    super();
    this.api = opts.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    this.core = opts.kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.discovery = opts.kubeConfig.makeApiClient(k8s.DiscoveryV1Api);
    this.log = opts.log ?? (() => {});
    this.queue = new KeyedQueue((key, err) => {
      const msg = `zone simulator: ${key}: ${err instanceof Error ? err.message : String(err)}`;
      this.errors.push(msg);
      this.log(msg);
      this.emit('sim', { type: 'error', message: msg } satisfies SimEvent);
    });
  }

  get vmauthPods(): VmauthPod[] {
    return this.opts.vmauthPods;
  }

  /** Whether the zone process `name` is a VMSingle's (else a VMCluster's). */
  private isSingle(name: string): boolean {
    return !!this.opts.vmsinglePods?.[name];
  }

  /** The zones as the operator names what serves their reads (service URLs: a VMCluster's vmselect, a VMSingle). */
  get zoneBackends(): ZoneBackend[] {
    return Object.keys(this.opts.zones).map((name) => {
      if (this.isSingle(name)) {
        const vms = this.lastVmsingles.find((c) => c.metadata.name === name);
        const url = vms ? vmsingleURL(vms) : `http://vmsingle-${name}.${this.opts.namespace}.svc:${VMSINGLE_POD_PORT}`;
        return { namespace: this.opts.namespace, name, url, kind: 'VMSingle' as const };
      }
      const vmc = this.lastVmclusters.find((c) => c.metadata.name === name);
      const url = (vmc && vmclusterURL(vmc)) || `http://vmselect-${name}.${this.opts.namespace}.svc:${VMSELECT_POD_PORT}`;
      return { namespace: this.opts.namespace, name, url };
    });
  }

  /** Cluster DNS stand-in for the config-reloaders: service origin → the zone's vmselect front (a VMSingle: its zone process). */
  dns(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const z of this.zoneBackends) {
      const target = z.kind === 'VMSingle' ? this.opts.zones[z.name]?.url : this.opts.vmselectPods[z.name]?.url;
      if (target) out[new URL(z.url).origin] = target;
    }
    return out;
  }

  /** Route → zones a config (operator form) sends reads to. */
  routesOf(config: VmauthConfig): Record<string, string[]> {
    return routedZones(config, this.zoneBackends);
  }

  /** The last config Secret written (undefined before the first). */
  get currentConfig(): RenderedConfigRecord | undefined {
    return this.configs[this.configs.length - 1];
  }

  /** Every config any vmauth pod started serving, in time order. */
  get served(): ServedConfigRecord[] {
    return this.opts.vmauthPods.flatMap((p) => p.served).sort((a, b) => a.at - b.at);
  }

  /** Route → zones, over every vmauth pod, at time t (a zone is in a route when ANY pod routes there). */
  servingRoutesAt(t = Date.now()): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const p of this.opts.vmauthPods) {
      const r = p.servedAt(t);
      for (const [route, zs] of Object.entries(r?.routes ?? {})) out[route] = [...new Set([...(out[route] ?? []), ...zs])].sort();
    }
    return out;
  }

  /** True when every vmauth pod serves the current Secret content. */
  allPodsServeCurrent(): boolean {
    const h = this.currentConfig?.hash;
    // ...and the EndpointSlice lists every pod ready, as the worker discovers them.
    return h !== undefined && this.opts.vmauthPods.every((p) => p.currentConfig?.hash === h) && this.vmauthSliceReady === this.opts.vmauthPods.length;
  }

  async start(): Promise<void> {
    await this.ensureServices();
    for (const ep of this.vmagentEndpoints()) await this.ensureVmagentEndpointSlice(ep);
    for (const zone of [...Object.keys(this.opts.vmselectPods), ...Object.keys(this.opts.vmsinglePods ?? {})]) await this.writeReadSlice(zone);
    await this.writeVmauthSlice();
    for (const p of this.opts.vmauthPods) {
      const onServed = (record: ServedConfigRecord) => {
        this.emit('sim', { type: 'served', record } satisfies SimEvent);
        if (p.served.length === 1) void this.writeVmauthSlice().catch((err) => this.log(`zone simulator: EndpointSlice vmauth: ${String(err)}`));
      };
      p.on('served', onServed);
      this.podListeners.push(() => p.off('served', onServed));
    }
    for (const kind of Object.keys(PLURAL) as VMKind[]) {
      const path = `/apis/${VM_GROUP}/${VM_VERSION}/namespaces/${this.opts.namespace}/${PLURAL[kind]}`;
      const informer = k8s.makeInformer<KObj>(this.opts.kubeConfig, path, () => this.list(kind) as never);
      informer.on('add', (o: KObj) => this.onEvent(kind, 'add', o));
      informer.on('update', (o: KObj) => this.onEvent(kind, 'update', o));
      informer.on('delete', (o: KObj) => this.onEvent(kind, 'delete', o));
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
      for (const kind of ['VMCluster', 'VMSingle', 'VMAgent'] as VMKind[]) {
        try {
          for (const o of (await this.list(kind)).items) this.enqueue(kind, o.metadata.name);
        } catch {
          /* next round */
        }
      }
      this.triggerVmauth({ full: true });
    };
    this.resyncTimer = setInterval(() => void resync(), this.opts.resyncMs ?? 3000);
    await resync();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    for (const i of this.informers) await i.stop().catch(() => {});
    await this.queue.drain();
    for (const off of this.podListeners) off();
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
      return (await this.api.getNamespacedCustomObject({
        group: VM_GROUP,
        version: VM_VERSION,
        namespace: this.opts.namespace,
        plural: PLURAL[kind],
        name,
      })) as KObj;
    } catch (err) {
      if (httpCode(err) === 404) return undefined;
      throw err;
    }
  }

  private record(kind: VMKind, obj: KObj, st: KStatus, condition?: StatusCondition): void {
    const record: StatusRecord = {
      at: Date.now(),
      kind,
      name: obj.metadata.name,
      generation: st.observedGeneration ?? 0,
      updateStatus: st.updateStatus ?? '',
      ...(st.reason ? { reason: st.reason } : {}),
      ...(condition ? { condition } : {}),
    };
    this.statuses.push(record);
    this.log(
      `zone simulator: ${kind} ${obj.metadata.name} → ${record.updateStatus}${record.reason ? ` (${record.reason})` : ''} (generation ${obj.metadata.generation})`,
    );
    this.emit('sim', { type: 'status', record } satisfies SimEvent);
  }

  /** VMCluster / VMSingle / VMAgent status: merge patch (the fields the simulator owns). */
  private async patchStatus(kind: VMKind, obj: KObj, status: { observedGeneration?: number; updateStatus: string; reason?: string | null }): Promise<void> {
    await this.api.patchNamespacedCustomObjectStatus(
      { group: VM_GROUP, version: VM_VERSION, namespace: this.opts.namespace, plural: PLURAL[kind], name: obj.metadata.name, body: { status } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    this.record(kind, obj, {
      observedGeneration: status.observedGeneration ?? obj.status?.observedGeneration ?? 0,
      updateStatus: status.updateStatus,
      reason: status.reason ?? undefined,
    });
  }

  /** reconcile.UpdateObjectStatus for the VMAuth: the whole status replaced (JSON patch), skipped when equal. */
  private async writeVmauthStatus(vmauth: KObj, updateStatus: string, reason?: string): Promise<void> {
    const cur = vmauth.status ?? {};
    const next: KStatus = { ...cur, observedGeneration: vmauth.metadata.generation ?? 0, updateStatus, lastAppliedSpec: vmauth.spec ?? {} };
    if (reason) next.reason = reason;
    else delete next.reason;
    if (JSON.stringify(next) === JSON.stringify(cur)) return;
    await this.api.patchNamespacedCustomObjectStatus(
      {
        group: VM_GROUP,
        version: VM_VERSION,
        namespace: this.opts.namespace,
        plural: PLURAL.VMAuth,
        name: vmauth.metadata.name,
        body: [{ op: 'add', path: '/status', value: next }],
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );
    vmauth.status = next;
    this.record('VMAuth', vmauth, next);
  }

  /**
   * The Services the operator creates for the vmagent, the VMAuth and each zone's vmselect
   * (factory/build/service.go Service: PrefixedName(), port `http`, selector SelectorLabels()), and
   * the pods behind them as the operator's workloads, their controllers and kubelet make them
   * (../harness/service-pods.ts): vmagent and vmauth Deployments (pods owned by a ReplicaSet),
   * vmselect StatefulSets, each Pod at its address. Unlike the operator's, they have no owner: the
   * simulator starts before the CRs exist.
   */
  private async ensureServices(): Promise<void> {
    const { namespace } = this.opts;
    const components: Array<{ component: string; instance: string; port: number; workload: Workload; pods: Array<{ name: string; ip: string }> }> = [];
    for (const [zone, pod] of Object.entries(this.opts.vmselectPods)) {
      components.push({
        component: 'vmselect',
        instance: zone,
        port: VMSELECT_POD_PORT,
        workload: readWorkloads({ name: zone })[0]!,
        pods: [{ name: `vmselect-${zone}-0`, ip: pod.podIP }],
      });
    }
    for (const [zone, pod] of Object.entries(this.opts.vmsinglePods ?? {})) {
      components.push({
        component: 'vmsingle',
        instance: zone,
        port: VMSINGLE_POD_PORT,
        workload: readWorkloads({ name: zone, kind: 'VMSingle' })[0]!,
        pods: [{ name: `vmsingle-${zone}-0`, ip: pod.podIP }],
      });
    }
    const vmauth = this.opts.vmauthName ?? 'vmauth';
    components.push({
      component: 'vmauth',
      instance: vmauth,
      port: VMAUTH_POD_PORT,
      workload: vmauthWorkloads(vmauth)[0]!,
      pods: this.opts.vmauthPods.map((p) => ({ name: p.name, ip: p.podIP })),
    });
    for (const ep of this.vmagentEndpoints()) {
      components.push({
        component: 'vmagent',
        instance: ep.vmagentName,
        port: ep.port,
        workload: vmagentWorkloads(ep.vmagentName)[0]!,
        pods: [{ name: `vmagent-${ep.vmagentName}-0`, ip: ep.ip }],
      });
    }
    for (const c of components) {
      this.serviceUids.set(`${c.component}-${c.instance}`, await ensureService(this.opts.kubeConfig, { namespace, ...c }));
      for (const [pod, uid] of await ensureWorkloadPods(this.opts.kubeConfig, { namespace, ...c })) this.podUids.set(pod, uid);
    }
  }

  /** EndpointSlice `name` of Service `name`, as the EndpointSlice controller writes it. */
  private endpointSliceBody(name: string, port: number, endpoints: Array<{ ip: string; ready: boolean; pod: string }>): k8s.V1EndpointSlice {
    const uid = this.serviceUids.get(name);
    if (!uid) throw new Error(`zone simulator: no Service ${name} for its EndpointSlice`);
    const { namespace } = this.opts;
    return controllerSlice({
      namespace,
      name,
      service: name,
      serviceUid: uid,
      port,
      endpoints: endpoints.map((e) => podEndpoint({ pod: e.pod, ip: e.ip, uid: this.podUids.get(e.pod), ready: e.ready }, namespace)),
    });
  }

  /**
   * Writes of one EndpointSlice go one after another, each built from the state at its turn, so the
   * last write is always the latest state (concurrent create/replace calls could land out of order).
   */
  private putEndpointSlice(name: string, build: () => k8s.V1EndpointSlice): Promise<void> {
    const next = (this.sliceWrites.get(name) ?? Promise.resolve()).catch(() => undefined).then(() => this.writeEndpointSlice(build()));
    this.sliceWrites.set(name, next);
    return next;
  }

  private async writeEndpointSlice(body: k8s.V1EndpointSlice): Promise<void> {
    const name = body.metadata!.name!;
    try {
      await this.discovery.createNamespacedEndpointSlice({ namespace: this.opts.namespace, body });
    } catch (err) {
      if (httpCode(err) !== 409) throw err;
      await this.discovery.replaceNamespacedEndpointSlice({ name, namespace: this.opts.namespace, body });
    }
  }

  private vmagentEndpoints(): VmagentEndpoint[] {
    return [...(this.opts.vmagentEndpoint ? [this.opts.vmagentEndpoint] : []), ...(this.opts.zoneVmagentEndpoints ?? [])];
  }

  private async ensureVmagentEndpointSlice(ep: VmagentEndpoint): Promise<void> {
    await this.putEndpointSlice(`vmagent-${ep.vmagentName}`, () =>
      this.endpointSliceBody(`vmagent-${ep.vmagentName}`, ep.port, [{ ip: ep.ip, ready: true, pod: `vmagent-${ep.vmagentName}-0` }]),
    );
  }

  /** EndpointSlice vmauth-<name>: one endpoint per vmauth pod, ready once it serves a config. */
  async writeVmauthSlice(): Promise<void> {
    const name = this.opts.vmauthName ?? 'vmauth';
    let ready = 0;
    await this.putEndpointSlice(`vmauth-${name}`, () => {
      const endpoints = this.opts.vmauthPods.map((p) => ({ ip: p.podIP, ready: p.ready, pod: p.name }));
      ready = endpoints.filter((e) => e.ready).length;
      return this.endpointSliceBody(`vmauth-${name}`, VMAUTH_POD_PORT, endpoints);
    });
    this.vmauthSliceReady = ready;
  }

  /**
   * EndpointSlice vmselect-<vmc> (the zone's vmselect front) or vmsingle-<vms> (the VMSingle's pod):
   * the pod serving the zone's reads, not ready while the zone restarts.
   */
  private async writeReadSlice(zone: string): Promise<void> {
    const single = this.opts.vmsinglePods?.[zone];
    const pod = single ?? this.opts.vmselectPods[zone];
    if (!pod) return;
    const [name, port] = single ? [`vmsingle-${zone}`, VMSINGLE_POD_PORT] : [`vmselect-${zone}`, VMSELECT_POD_PORT];
    await this.putEndpointSlice(name, () => this.endpointSliceBody(name, port, [{ ip: pod.podIP, ready: !this.zonesRestarting.has(zone), pod: `${name}-0` }]));
  }

  // -------------------------------------------------------------------------------------
  // reconcile

  private onEvent(kind: VMKind, type: 'add' | 'update' | 'delete', o: KObj): void {
    if (kind === 'VMUser') {
      // vmuser_controller.go: GenerationChangedPredicate; a create or a spec change reconciles the
      // config for that VMUser only; a deletion (finalizer) rebuilds the VMAuth's config.
      const name = o.metadata.name;
      const g = o.metadata.generation ?? 0;
      if (type === 'delete') {
        this.userGenerations.delete(name);
        this.triggerVmauth({ full: true });
      } else if (this.userGenerations.get(name) !== g) {
        this.userGenerations.set(name, g);
        this.triggerVmauth({ user: name });
      }
      return;
    }
    this.enqueue(kind, o.metadata.name);
  }

  private enqueue(kind: VMKind, name: string): void {
    if (this.stopped) return;
    switch (kind) {
      case 'VMAuth':
        this.triggerVmauth({ full: true });
        return;
      case 'VMUser':
        this.triggerVmauth({ user: name });
        return;
      case 'VMCluster':
      case 'VMSingle':
        this.queue.trigger(`${kind}/${name}`, () => this.reconcileStorage(kind, name));
        return;
      case 'VMAgent':
        this.queue.trigger(`VMAgent/${name}`, () => this.reconcileVmagent(name));
        return;
    }
  }

  private triggerVmauth(t: { full?: boolean; user?: string }): void {
    if (this.stopped) return;
    if (t.full) this.pendingVmauth.full = true;
    if (t.user) this.pendingVmauth.users.add(t.user);
    this.queue.trigger('vmauth', async () => {
      const work = this.pendingVmauth;
      this.pendingVmauth = { full: false, users: new Set() };
      if (!work.full && work.users.size === 0) return;
      try {
        await this.reconcileVmauth(work);
      } catch (err) {
        // an API error of the simulator: retried (KeyedQueue), with everything still to do
        this.pendingVmauth.full ||= work.full;
        for (const u of work.users) this.pendingVmauth.users.add(u);
        throw err;
      }
    });
  }

  /** Re-reads everything and reconciles it now (tests: after changing annotations). */
  poke(kind: VMKind, name: string): void {
    this.enqueue(kind, name);
  }

  private reconcileError(kind: VMKind, name: string, error: string): void {
    const record: ReconcileErrorRecord = { at: Date.now(), kind, name, error };
    this.reconcileErrors.push(record);
    this.log(`zone simulator: operator reconcile of ${kind} ${name} failed: ${error}`);
    this.emit('sim', { type: 'reconcile-error', record } satisfies SimEvent);
  }

  private async reconcileVmauth(work: { full: boolean; users: Set<string> }): Promise<void> {
    let vmauth: KObj | undefined;
    if (this.opts.vmauthName) vmauth = await this.get('VMAuth', this.opts.vmauthName);
    else vmauth = (await this.list('VMAuth')).items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))[0];
    if (!vmauth) return;
    const hang = vmauth.metadata.annotations?.[ANNOTATION_HANG] === 'true';
    if (!work.full) {
      // VMUser controller: CreateOrUpdateConfig(vmauth, user) per changed VMUser; the VMAuth status is not touched.
      try {
        await this.createOrUpdateConfig(vmauth, hang, work.users);
      } catch (err) {
        if (!(err instanceof ReconcileError)) throw err;
        for (const u of work.users) this.reconcileError('VMUser', u, err.message);
      }
      return;
    }
    // VMAuth controller: reconcileAndTrackStatus(CreateOrUpdate)
    const specChanged = vmauth.status?.lastAppliedSpec === undefined || JSON.stringify(vmauth.status.lastAppliedSpec) !== JSON.stringify(vmauth.spec ?? {});
    if (specChanged) await this.writeVmauthStatus(vmauth, EXPANDING);
    let failure: string | undefined;
    try {
      await this.createOrUpdateConfig(vmauth, hang);
    } catch (err) {
      if (!(err instanceof ReconcileError)) throw err;
      failure = `cannot create or update vmauth deploy: ${err.message}`;
      this.reconcileError('VMAuth', vmauth.metadata.name, failure);
    }
    if (hang) {
      const key = `VMAuth/${vmauth.metadata.name}@${vmauth.metadata.generation}`;
      if (!this.hangsLogged.has(key)) {
        this.hangsLogged.add(key);
        this.log(`zone simulator: VMAuth ${vmauth.metadata.name} reconcile stuck after the config Secret (annotation ${ANNOTATION_HANG}): no status written`);
      }
      return;
    }
    await this.writeVmauthStatus(vmauth, failure ? FAILED : OPERATIONAL, failure);
  }

  /** factory/vmauth/vmauth.go CreateOrUpdateConfig. `onlyUsers`: the VMUser-controller fast path. */
  private async createOrUpdateConfig(vmauth: KObj, hang: boolean, onlyUsers?: Set<string>): Promise<void> {
    const ns = this.opts.namespace;
    const [users, vmclusters, vmsingles] = await Promise.all([this.list('VMUser'), this.list('VMCluster'), this.list('VMSingle')]);
    this.lastVmclusters = vmclusters.items;
    this.lastVmsingles = vmsingles.items;
    const r = renderVmauthConfig(vmauth, users.items, vmclusters.items, vmsingles.items);
    if (r.vmauthError) throw new ReconcileError(r.vmauthError);
    const gz = gzipConfig(r.yaml);
    const hash = configHash(gz);
    await this.writeConfigSecret(vmauth, gz, hash, r);
    if (vmauth.spec?.waitForConfigReload === true) await this.waitForConfigReloadHash(vmauth, hash);
    if (hang) return;
    const parent = `${vmauth.metadata.name}.${vmauth.metadata.namespace ?? ns}.vmauth`;
    const selected = users.items.filter((u) => r.selectedUsers.includes(u.metadata.name));
    if (onlyUsers) {
      for (const u of selected) if (onlyUsers.has(u.metadata.name)) await this.applyChildStatus(u.metadata.name, parent, r.userErrors[u.metadata.name]);
      return;
    }
    for (const u of users.items) {
      if (!r.selectedUsers.includes(u.metadata.name) && u.status?.conditions?.some((c) => c.type === parent + APPLIED_SUFFIX))
        await this.releaseChildStatus(u.metadata.name, parent);
    }
    for (const u of selected) await this.applyChildStatus(u.metadata.name, parent, r.userErrors[u.metadata.name]);
  }

  private async writeConfigSecret(vmauth: KObj, gz: Buffer, hash: number, r: ReturnType<typeof renderVmauthConfig>): Promise<void> {
    const ns = this.opts.namespace;
    const name = `vmauth-config-${vmauth.metadata.name}`;
    const b64 = gz.toString('base64');
    let existing: k8s.V1Secret | undefined;
    try {
      existing = await this.core.readNamespacedSecret({ name, namespace: ns });
    } catch (err) {
      if (httpCode(err) !== 404) throw err;
    }
    const first = this.configs.length === 0;
    if (existing?.data?.[CONFIG_KEY] === b64 && !first) return;
    if (existing?.data?.[CONFIG_KEY] !== b64) {
      const body: k8s.V1Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name,
          namespace: ns,
          labels: {
            'app.kubernetes.io/name': 'vmauth',
            'app.kubernetes.io/instance': vmauth.metadata.name,
            'app.kubernetes.io/component': 'monitoring',
            'managed-by': 'vm-operator',
          },
          annotations: { generated: 'true' },
          ...(vmauth.metadata.uid
            ? {
                ownerReferences: [
                  {
                    apiVersion: `${VM_GROUP}/${VM_VERSION}`,
                    kind: 'VMAuth',
                    name: vmauth.metadata.name,
                    uid: vmauth.metadata.uid,
                    controller: true,
                    blockOwnerDeletion: true,
                  },
                ],
              }
            : {}),
        },
        type: 'Opaque',
        data: { ...(existing?.data ?? {}), [CONFIG_KEY]: b64 },
      };
      if (existing)
        await this.core.replaceNamespacedSecret({
          name,
          namespace: ns,
          body: { ...body, metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion } },
        });
      else await this.core.createNamespacedSecret({ namespace: ns, body });
    }
    const routes = this.routesOf(r.config);
    const baseline: Record<string, string[]> = {};
    for (const c of [...this.configs, { routes }])
      for (const [rt, zs] of Object.entries(c.routes)) baseline[rt] = [...new Set([...(baseline[rt] ?? []), ...zs])];
    const record: RenderedConfigRecord = {
      at: Date.now(),
      vmauthName: vmauth.metadata.name,
      vmauthGeneration: vmauth.metadata.generation ?? 0,
      config: r.config,
      yaml: r.yaml,
      hash,
      routes,
      outOfRotation: zonesOutOfRotation(baseline, routes),
      userErrors: r.userErrors,
    };
    this.configs.push(record);
    this.log(
      `zone simulator: config Secret ${name} written for VMAuth ${vmauth.metadata.name} generation ${record.vmauthGeneration} (hash ${hash}): ${JSON.stringify(routes)}`,
    );
    this.emit('sim', { type: 'config', record } satisfies SimEvent);
  }

  /** reconcile/config_reload.go WaitForConfigReloadHash over the vmauth pods. */
  private async waitForConfigReloadHash(vmauth: KObj, hash: number): Promise<void> {
    const pods = this.opts.vmauthPods;
    if (pods.length === 0) return;
    const interval = this.opts.configReloadWaitIntervalMs ?? 2000;
    const deadline = Date.now() + (this.opts.configReloadWaitTimeoutMs ?? 60_000);
    for (;;) {
      let ok = true;
      for (const p of pods) {
        if (!p.ready) {
          ok = false;
          break;
        }
        const got = await this.scrapeContentHash(p.podIP);
        if (got === 'error' || (got !== undefined && got !== hash)) {
          ok = false;
          break;
        }
      }
      if (ok) return;
      if (this.stopped) throw new ReconcileError('context canceled');
      if (Date.now() + interval > deadline) {
        await sleep(Math.max(0, deadline - Date.now()));
        throw new ReconcileError(
          `timed out waiting for ${vmauth.metadata.namespace ?? this.opts.namespace}/${vmauth.metadata.name} to reload config: context deadline exceeded`,
        );
      }
      await sleep(interval);
    }
  }

  private async scrapeContentHash(podIP: string): Promise<number | undefined | 'error'> {
    try {
      const res = await podNetworkFetch(`http://${podIP}:${CONFIG_RELOADER_PORT}/metrics`, { signal: AbortSignal.timeout(5000) });
      if (res.status !== 200) return 'error';
      const m = /^configreloader_reload_content_hash\{[^}]*key="main"[^}]*\} (\S+)$/m.exec(await res.text());
      return m ? Number(m[1]) >>> 0 : undefined;
    } catch {
      return 'error';
    }
  }

  /** reconcile/status.go applyChildStatusCondition + updateChildStatusConditions + writeAggregatedStatus. */
  private async applyChildStatus(name: string, parent: string, syncError: string | undefined): Promise<void> {
    const type = parent + APPLIED_SUFFIX;
    await this.updateUserStatus(name, (u, st) => {
      const now = metaNow();
      const cond: StatusCondition = {
        type,
        status: syncError ? 'False' : 'True',
        reason: APPLIED_REASON,
        ...(syncError ? { message: syncError } : {}),
        observedGeneration: u.metadata.generation ?? 0,
        lastTransitionTime: now,
        lastUpdateTime: now,
      };
      const conds = [...(st.conditions ?? [])];
      const i = conds.findIndex((c) => c.type === type);
      if (i >= 0) {
        const c = conds[i]!;
        if (c.status === cond.status) cond.lastTransitionTime = c.lastTransitionTime;
        const force = c.status !== cond.status || c.observedGeneration !== cond.observedGeneration;
        // statusUpdateTTL: 60 min (+ jitter): a condition unchanged is not rewritten in a test's lifetime
        if (!force && Date.now() - new Date(c.lastUpdateTime).getTime() <= 60 * 60_000) cond.lastUpdateTime = c.lastUpdateTime;
        conds[i] = cond;
      } else conds.push(cond);
      st.conditions = conds;
      return cond;
    });
  }

  /** releaseChildStatusCondition */
  private async releaseChildStatus(name: string, parent: string): Promise<void> {
    const type = parent + APPLIED_SUFFIX;
    await this.updateUserStatus(name, (_u, st) => {
      st.conditions = (st.conditions ?? []).filter((c) => c.type !== type);
      return undefined;
    });
  }

  private async updateUserStatus(name: string, mutate: (u: KObj, st: KStatus) => StatusCondition | undefined): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const u = await this.get('VMUser', name);
      if (!u) return;
      const prev = JSON.stringify(u.status ?? {});
      const st: KStatus = JSON.parse(prev) as KStatus;
      const cond = mutate(u, st);
      st.observedGeneration = u.metadata.generation ?? 0;
      // writeAggregatedStatus
      const applied = (st.conditions ?? []).filter((c) => c.type.endsWith(APPLIED_SUFFIX));
      const failed = applied.filter((c) => c.status === 'False');
      const errs = failed.map((c) => c.message ?? '').sort();
      delete st.reason;
      if (applied.length === 0) st.updateStatus = 'ignored';
      else if (failed.length === applied.length) {
        st.updateStatus = FAILED;
        st.reason = errs[0];
      } else {
        st.updateStatus = OPERATIONAL;
        if (failed.length > 0) st.reason = `applied on ${applied.length - failed.length} parent(s), failed on ${failed.length}: ${errs[0]}`;
      }
      if (!st.reason) delete st.reason;
      if (JSON.stringify(st) === prev) return;
      try {
        await this.api.replaceNamespacedCustomObjectStatus({
          group: VM_GROUP,
          version: VM_VERSION,
          namespace: this.opts.namespace,
          plural: PLURAL.VMUser,
          name,
          body: { ...u, status: st },
        });
        this.record('VMUser', u, st, cond);
        return;
      } catch (err) {
        if (httpCode(err) === 404) return;
        if (httpCode(err) !== 409 || attempt >= 10) throw err;
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

  /** A zone's storage object, a VMCluster or a VMSingle (the operator reconciles both alike). */
  private async reconcileStorage(kind: StorageKind, name: string): Promise<void> {
    const o = await this.get(kind, name);
    if (!o) return;
    const gen = o.metadata.generation ?? 0;
    const st = o.status ?? {};
    const ann = o.metadata.annotations ?? {};
    if (!st.updateStatus) {
      // First sight (existing object, or one just created from a full spec): the operator rolls it
      // out (`expanding`, then `operational`); its zone already runs, so no restart.
      await this.patchStatus(kind, o, { observedGeneration: gen, updateStatus: EXPANDING, reason: null });
      await this.patchStatus(kind, o, { observedGeneration: gen, updateStatus: OPERATIONAL, reason: null });
      return;
    }
    const specChanged = (st.observedGeneration ?? 0) < gen;
    if (!specChanged && st.updateStatus === OPERATIONAL) return;
    const key = `${kind}/${name}`;
    if (!specChanged && st.updateStatus === FAILED && this.badSpecs.get(key) === gen) return;
    // As the operator's: `expanding` already carries the generation being rolled out. A reconcile that
    // finds it so (a hang released, a later event) goes on with that generation's restart.
    if (specChanged) await this.patchStatus(kind, o, { observedGeneration: gen, updateStatus: EXPANDING, reason: null });
    const fail = ann[ANNOTATION_FAIL];
    if (fail === 'true' || fail === FAIL_SPEC) {
      if (fail === FAIL_SPEC) this.badSpecs.set(key, gen);
      if (!specChanged && st.updateStatus === FAILED) return;
      const reason = ann[ANNOTATION_FAIL_REASON] ?? `simulated failure of ${kind} ${name} (annotation ${ANNOTATION_FAIL})`;
      await this.patchStatus(kind, o, { observedGeneration: gen, updateStatus: FAILED, reason });
      return;
    }
    if (ann[ANNOTATION_HANG] === 'true') {
      const hangKey = `${key}@${gen}`;
      if (!this.hangsLogged.has(hangKey)) {
        this.hangsLogged.add(hangKey);
        this.log(`zone simulator: ${kind} ${name} hangs in ${EXPANDING} at generation ${gen} (annotation ${ANNOTATION_HANG})`);
      }
      return; // re-evaluated at the next event for this object
    }
    const delay = Number(ann[ANNOTATION_DELAY_MS] ?? 0);
    if (delay > 0) await sleep(delay);
    // A zone process is one kind's: a VMCluster and a VMSingle of the same name are not one zone.
    const zone = this.isSingle(name) === (kind === 'VMSingle') ? this.opts.zones[name] : undefined;
    if (zone) {
      const record: RestartRecord = {
        zone: name,
        generation: gen,
        startedAt: Date.now(),
        routesAtStart: this.servingRoutesAt(),
        secretRoutesAtStart: this.currentConfig?.routes ?? {},
      };
      this.restarts.push(record);
      this.log(`zone simulator: restarting zone process of ${kind} ${name} (generation ${gen})`);
      this.emit('sim', { type: 'restart-start', record } satisfies SimEvent);
      this.zonesRestarting.add(name);
      await this.writeReadSlice(name).catch(() => undefined);
      try {
        const downtime = this.opts.zoneDowntimeMs ?? 0;
        if (downtime > 0 && zone.stop && zone.start) {
          await zone.stop();
          await sleep(downtime);
          await zone.start();
        } else await zone.restart();
      } catch (err) {
        record.error = err instanceof Error ? err.message : String(err);
        throw err;
      } finally {
        record.finishedAt = Date.now();
        this.zonesRestarting.delete(name);
        await this.writeReadSlice(name).catch(() => undefined);
        this.emit('sim', { type: 'restart-done', record } satisfies SimEvent);
      }
    }
    await this.patchStatus(kind, o, { observedGeneration: gen, updateStatus: OPERATIONAL, reason: null });
  }
}
