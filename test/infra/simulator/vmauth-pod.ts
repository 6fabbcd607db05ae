/**
 * One vmauth "pod" of a VMAuth, as the operator's Deployment runs it: a real vmauth process
 * (test/infra/harness/vm.ts) and its config-reloader sidecar, played here:
 *
 *  - it watches the config Secret `vmauth-config-<vmauth>` (polls the API server, like the kubelet
 *    syncing a Secret volume), and delivers a changed `config.yaml.gz` only after the pod's
 *    PROPAGATION DELAY (kubelet's Secret volume delay; a newer content due earlier supersedes it);
 *  - it gunzips the content, maps the operator's service URLs to loopback (the one test stand-in:
 *    cluster DNS, `vmselect-<vmc>.<ns>.svc:8481` → that zone's vmselect front), writes vmauth's
 *    -auth.config, reloads vmauth (SIGHUP) and waits until vmauth reports the reload;
 *  - only then it publishes `configreloader_reload_content_hash{key="main"} <CRC32-IEEE of the
 *    gzipped bytes, unsigned>` on its own /metrics (reconcile/config_reload.go scrapes
 *    <podIP>:8435, build.ConfigReloaderDefaultPort). Option `noContentHashMetric`: an older
 *    config-reloader that publishes no such metric.
 *  - A config vmauth rejects is not published (the old hash stays), and recorded in reloadErrors.
 *
 * The pod gets its own address (test/infra/harness/pod-network.ts): <podIP>:8427 → vmauth,
 * <podIP>:8435 → the config-reloader's /metrics. The pod is ready once it serves its first config
 * (a real pod cannot start before its config Secret exists).
 *
 * Option `configReloaderOnly` (bench/stack/scale-real.ts: hundreds of namespaces on one machine):
 * no vmauth process and nothing on 8427; the config-reloader still gunzips and parses each Secret
 * content and publishes its hash, which is all that the operator's WaitForConfigReloadHash and the
 * worker's switch confirmation read. Nothing can read through such a pod.
 */
import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import * as zlib from 'node:zlib';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { allocatePodIP, registerPodPort } from '../harness/pod-network';
import { freePort } from '../harness/ports';
import { startVmauth, type VmauthHandle } from '../harness/vm';
import { configHash, resolveServiceURLs, type VmauthConfig } from './render';

/** build.ConfigReloaderDefaultPort in the operator. */
export const CONFIG_RELOADER_PORT = 8435;
/** vmauth's default -httpListenAddr port, the pods' `http` port. */
export const VMAUTH_POD_PORT = 8427;
export const CONFIG_KEY = 'config.yaml.gz';

export interface ServedConfigRecord {
  pod: string;
  /** When the pod started serving it (vmauth reported the reload). */
  at: number;
  /** When the pod's watcher first saw this Secret content. */
  seenAt: number;
  hash: number;
  /** The config as the operator wrote it (service URLs). */
  config: VmauthConfig;
  /** route → zone names (filled by the owner's routesOf). */
  routes: Record<string, string[]>;
}

export interface VmauthPodOptions {
  /** Pod name, e.g. vmauth-vm-global-0 */
  name: string;
  kubeConfig: k8s.KubeConfig;
  namespace: string;
  secretName: string;
  /** Cluster DNS stand-in: service origin (http://vmselect-x.ns.svc:8481) → loopback origin. */
  dns: () => Record<string, string>;
  /** Kubelet's Secret volume delay for this pod. Default 0. */
  propagationDelayMs?: number;
  /** An old config-reloader: no configreloader_reload_content_hash metric. */
  noContentHashMetric?: boolean;
  /** How often the Secret is read. Default 100 ms. */
  pollMs?: number;
  /** The config-reloader without vmauth (see the header). Default false. */
  configReloaderOnly?: boolean;
  routesOf?: (config: VmauthConfig) => Record<string, string[]>;
  log?: (msg: string) => void;
}

const PLACEHOLDER_VMAUTH_CONFIG = {
  // vmauth refuses an empty config; this user matches nothing until the pod gets its config Secret.
  users: [{ username: 'zone-simulator-placeholder', password: 'not-rendered-yet', url_prefix: 'http://127.0.0.1:9/' }],
};

export class VmauthPod extends EventEmitter {
  readonly name: string;
  readonly podIP: string;
  /** Its vmauth process (none with configReloaderOnly). */
  vmauth!: VmauthHandle;
  /** Loopback port of the config-reloader's /metrics. */
  reloaderPort = 0;
  readonly served: ServedConfigRecord[] = [];
  readonly reloadErrors: Array<{ at: number; hash: number; error: string }> = [];
  /** Hash published on /metrics (undefined before the first successful reload). */
  currentHash?: number;
  propagationDelayMs: number;
  noContentHashMetric: boolean;

  private server?: http.Server;
  private unregister: Array<() => void> = [];
  private pollTimer?: NodeJS.Timeout;
  private lastSeen?: string;
  private pending: Array<{ gz: Buffer; seenAt: number; dueAt: number }> = [];
  private applying = false;
  private applyTimer?: NodeJS.Timeout;
  private stopped = false;
  private readonly startedAt = Date.now();
  private readonly core: k8s.CoreV1Api;
  private readonly log: (m: string) => void;

  constructor(private readonly opts: VmauthPodOptions) {
    super();
    this.name = opts.name;
    this.podIP = allocatePodIP();
    this.propagationDelayMs = opts.propagationDelayMs ?? 0;
    this.noContentHashMetric = opts.noContentHashMetric ?? false;
    this.core = opts.kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.log = opts.log ?? (() => {});
  }

  /** Ready: serves a config from the Secret (what the EndpointSlice and the operator's wait see). */
  get ready(): boolean {
    return this.served.length > 0 && (this.opts.configReloaderOnly === true || this.vmauth?.running);
  }

  /** The config this pod serves now (undefined before its first). */
  get currentConfig(): ServedConfigRecord | undefined {
    return this.served[this.served.length - 1];
  }

  /** The config this pod served at time t. */
  servedAt(t: number): ServedConfigRecord | undefined {
    let cur: ServedConfigRecord | undefined;
    for (const r of this.served) if (r.at <= t) cur = r;
    return cur;
  }

  async start(): Promise<void> {
    if (!this.opts.configReloaderOnly) this.vmauth = await startVmauth({ name: this.name, config: PLACEHOLDER_VMAUTH_CONFIG });
    this.reloaderPort = await freePort();
    this.server = http.createServer((req, res) => {
      if ((req.url ?? '').startsWith('/metrics')) {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end(this.metricsText());
      }
      if ((req.url ?? '').startsWith('/health')) return void res.end('OK');
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.reloaderPort, '127.0.0.1', () => resolve());
    });
    this.unregister.push(registerPodPort(this.podIP, CONFIG_RELOADER_PORT, this.reloaderPort));
    if (!this.opts.configReloaderOnly) this.unregister.push(registerPodPort(this.podIP, VMAUTH_POD_PORT, this.vmauth.port));
    const poll = async () => {
      if (this.stopped) return;
      await this.pollSecret().catch(() => undefined);
      if (!this.stopped) this.pollTimer = setTimeout(() => void poll(), this.opts.pollMs ?? 100);
    };
    await poll();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearTimeout(this.pollTimer);
    if (this.applyTimer) clearTimeout(this.applyTimer);
    for (const u of this.unregister) u();
    if (this.server) {
      const s = this.server;
      await new Promise<void>((r) => {
        s.close(() => r());
        s.closeAllConnections();
      });
    }
    await this.vmauth?.stop();
  }

  /** What the config-reloader serves on /metrics. */
  metricsText(): string {
    const lines = [`process_start_time_seconds ${Math.floor(this.startedAt / 1000)}`];
    if (!this.noContentHashMetric && this.currentHash !== undefined) lines.push(`configreloader_reload_content_hash{key="main"} ${this.currentHash}`);
    return `${lines.join('\n')}\n`;
  }

  private async pollSecret(): Promise<void> {
    let secret: k8s.V1Secret;
    try {
      secret = await this.core.readNamespacedSecret({ name: this.opts.secretName, namespace: this.opts.namespace });
    } catch {
      return; // not there yet
    }
    const b64 = secret.data?.[CONFIG_KEY];
    if (b64 === undefined || b64 === this.lastSeen) return;
    this.lastSeen = b64;
    const now = Date.now();
    this.pending.push({ gz: Buffer.from(b64, 'base64'), seenAt: now, dueAt: now + this.propagationDelayMs });
    this.schedule();
  }

  /** Applies now every Secret change seen but not yet applied (a test releasing a held pod). */
  deliverNow(): void {
    const now = Date.now();
    for (const p of this.pending) p.dueAt = Math.min(p.dueAt, now);
    this.schedule();
  }

  private schedule(): void {
    if (this.applying || this.stopped || this.pending.length === 0) return;
    if (this.applyTimer) clearTimeout(this.applyTimer);
    const due = Math.min(...this.pending.map((p) => p.dueAt));
    this.applyTimer = setTimeout(() => void this.applyDue(), Math.max(0, due - Date.now()));
  }

  private async applyDue(): Promise<void> {
    this.applyTimer = undefined;
    if (this.stopped) return;
    const now = Date.now();
    const due = this.pending.filter((p) => p.dueAt <= now);
    if (due.length === 0) return this.schedule();
    // The kubelet delivers the Secret as it is at its sync: the newest due content wins.
    const item = due[due.length - 1]!;
    this.pending = this.pending.filter((p) => p.dueAt > now && p.seenAt > item.seenAt);
    this.applying = true;
    const hash = configHash(item.gz);
    try {
      const config = parse(zlib.gunzipSync(item.gz).toString('utf8')) as VmauthConfig;
      if (!this.opts.configReloaderOnly) await this.vmauth.updateConfig(resolveServiceURLs(config ?? {}, this.opts.dns()) as object);
      const record: ServedConfigRecord = {
        pod: this.name,
        at: Date.now(),
        seenAt: item.seenAt,
        hash,
        config: config ?? {},
        routes: this.opts.routesOf?.(config ?? {}) ?? {},
      };
      this.served.push(record);
      this.currentHash = hash;
      this.log(`zone simulator: vmauth pod ${this.name} serves config ${hash} (seen ${record.at - item.seenAt} ms earlier): ${JSON.stringify(record.routes)}`);
      this.emit('served', record);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.reloadErrors.push({ at: Date.now(), hash, error });
      this.log(`zone simulator: vmauth pod ${this.name} did not reload config ${hash}: ${error}`);
      this.emit('reload-error', { hash, error });
    } finally {
      this.applying = false;
      this.schedule();
    }
  }
}
