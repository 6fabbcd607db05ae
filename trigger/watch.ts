// A watch of one resource (the VMDistributedClusters, and the VM operator's objects for drift): the
// client-node informer (ListWatch) per namespace (or cluster-wide), wrapped by a watchdog. The 1.x informer stops for good on most errors and can
// hang on a half-open connection, so the watchdog
//   * restarts it with exponential backoff on 'error',
//   * restarts it (fresh list) when nothing arrived for `idleTimeoutMs` (the watch asks the server
//     for bookmarks and a server-side timeout shorter than that, so a healthy watch is never idle),
//   * relists every `relistIntervalMs`,
// and counts the restarts. A fresh list is compared with what was seen before, so objects deleted
// while the watch was down are reported as deletes.
import * as k8s from '@kubernetes/client-node';
import type { Logger } from './log';
import type { TriggerMetrics } from './metrics';

export type WatchEventType = 'add' | 'update' | 'delete';

/** An object's key in a watch: namespace/name. */
export function objectKey(obj: k8s.KubernetesObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** A list as the informer starts from: the items and the resourceVersion to watch from. */
export interface ObjectList<T extends k8s.KubernetesObject> {
  items: T[];
  metadata?: { resourceVersion?: string };
}

/** What a watch lists and watches: a resource's collection, in one namespace or in every namespace. */
export interface WatchedResource<T extends k8s.KubernetesObject> {
  /** Names the resource in logs. */
  name: string;
  path(namespace?: string): string;
  list(namespace?: string): Promise<ObjectList<T>>;
}

/** What every watch of the trigger shares. */
export interface WatchSettings {
  kubeConfig: k8s.KubeConfig;
  /** Empty: one cluster-wide watch. */
  namespaces: string[];
  relistIntervalMs: number;
  idleTimeoutMs: number;
  log: Logger;
  metrics: TriggerMetrics;
  backoff?: { initialMs: number; maxMs: number };
}

export interface WatchOptions<T extends k8s.KubernetesObject> extends WatchSettings {
  resource: WatchedResource<T>;
  onEvent(type: WatchEventType, obj: T): void;
  /** After every successful full list (its objects), once their add events were emitted. */
  onList?(namespace: string | undefined, objects: T[]): void;
}

export interface WatchHandle {
  /** Restarts (not counting the first start) over every scope. */
  readonly restarts: number;
  /** True once every scope listed successfully and none has been idle for long. */
  healthy(): boolean;
  /** Resolves once every scope has completed its first list. */
  readonly synced: Promise<void>;
  /** Force a restart of every scope (tests, diagnostics). */
  restartAll(reason: string): void;
  stop(): Promise<void>;
}

/** A Watch that asks for bookmarks and a server-side timeout, and reports any activity. */
class ActivityWatch extends k8s.Watch {
  constructor(
    config: k8s.KubeConfig,
    private readonly timeoutSeconds: number,
    private readonly onActivity: () => void,
  ) {
    super(config);
  }

  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    return super.watch(
      path,
      { ...queryParams, allowWatchBookmarks: true, timeoutSeconds: this.timeoutSeconds },
      (phase, obj, watchObj) => {
        this.onActivity();
        callback(phase, obj, watchObj);
      },
      done,
    );
  }
}

class ScopeWatch<T extends k8s.KubernetesObject> {
  private epoch = 0;
  private informer?: k8s.ListWatch<T>;
  private readonly seen = new Map<string, T>();
  private lastActivity = Date.now();
  private listedOnce = false;
  private failures = 0;
  private stopped = false;
  private restartTimer?: NodeJS.Timeout;
  private idleTimer?: NodeJS.Timeout;
  private relistTimer?: NodeJS.Timeout;
  restarts = 0;
  private resolveSynced!: () => void;
  readonly synced = new Promise<void>((r) => (this.resolveSynced = r));

  constructor(
    private readonly opts: WatchOptions<T>,
    private readonly namespace: string | undefined,
  ) {}

  private get log(): Logger {
    return this.opts.log.child({ resource: this.opts.resource.name, scope: this.namespace ?? '*' });
  }

  start(): void {
    this.launch();
    const checkEvery = Math.max(250, Math.floor(this.opts.idleTimeoutMs / 4));
    this.idleTimer = setInterval(() => {
      if (!this.restartTimer && Date.now() - this.lastActivity > this.opts.idleTimeoutMs) this.restart('idle');
    }, checkEvery);
    this.idleTimer.unref();
  }

  healthy(): boolean {
    return this.listedOnce && !this.stopped && Date.now() - this.lastActivity <= 2 * this.opts.idleTimeoutMs;
  }

  private touch(epoch: number, fromWatch: boolean): void {
    if (epoch !== this.epoch) return;
    this.lastActivity = Date.now();
    if (fromWatch) this.failures = 0;
  }

  private launch(): void {
    if (this.stopped) return;
    const epoch = ++this.epoch;
    this.lastActivity = Date.now();
    const timeoutSeconds = Math.max(1, Math.floor(this.opts.idleTimeoutMs / 2000));
    const watch = new ActivityWatch(this.opts.kubeConfig, timeoutSeconds, () => this.touch(epoch, true));
    const listFn = async (): Promise<k8s.KubernetesListObject<T>> => {
      const list = await this.opts.resource.list(this.namespace);
      if (epoch === this.epoch) this.onListed(list.items);
      return list as k8s.KubernetesListObject<T>;
    };
    const inf = new k8s.ListWatch<T>(this.opts.resource.path(this.namespace), watch, listFn, false);
    const emit = (type: WatchEventType) => (obj: T) => {
      if (epoch !== this.epoch) return;
      this.touch(epoch, false);
      if (type === 'delete') this.seen.delete(objectKey(obj));
      else this.seen.set(objectKey(obj), obj);
      this.opts.onEvent(type, obj);
    };
    inf.on('add', emit('add'));
    inf.on('update', emit('update'));
    inf.on('delete', emit('delete'));
    inf.on('connect', () => this.touch(epoch, false));
    inf.on('error', (err: unknown) => {
      if (epoch === this.epoch) this.restart('error', err);
    });
    this.informer = inf;
    inf.start().catch((err: unknown) => {
      if (epoch === this.epoch) this.restart('error', err);
    });
    if (this.relistTimer) clearTimeout(this.relistTimer);
    this.relistTimer = setTimeout(() => this.restart('relist'), this.opts.relistIntervalMs);
    this.relistTimer.unref();
  }

  /** A fresh list: whatever was seen before and is absent now (or has another uid) was deleted. */
  private onListed(items: T[]): void {
    const now = new Map(items.map((o) => [objectKey(o), o]));
    for (const [key, old] of [...this.seen]) {
      const cur = now.get(key);
      if (!cur || cur.metadata?.uid !== old.metadata?.uid) {
        this.seen.delete(key);
        this.opts.onEvent('delete', old);
      }
    }
    // The informer emits 'add' for every listed item right after this returns.
    const epoch = this.epoch;
    queueMicrotask(() => {
      if (epoch !== this.epoch) return;
      this.listedOnce = true;
      this.resolveSynced();
      this.opts.onList?.(this.namespace, items);
    });
  }

  restart(reason: string, err?: unknown): void {
    if (this.stopped) return;
    this.restarts++;
    this.opts.metrics.watchRestarts.inc({ reason });
    const old = this.informer;
    this.informer = undefined;
    this.epoch++; // callbacks of the old informer are ignored from now on
    void old?.stop().catch(() => {});
    let delay = 0;
    if (reason === 'error') {
      const { initialMs, maxMs } = this.opts.backoff ?? { initialMs: 500, maxMs: 30_000 };
      delay = Math.min(maxMs, initialMs * 2 ** Math.min(this.failures, 20));
      delay = Math.round(delay * (0.8 + Math.random() * 0.4));
      this.failures++;
      this.log.warn('watch failed; restarting', { reason, delayMs: delay, failures: this.failures, err });
    } else {
      this.log.info('restarting watch', { reason });
    }
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.launch();
    }, delay);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.epoch++;
    for (const t of [this.restartTimer, this.relistTimer]) if (t) clearTimeout(t);
    if (this.idleTimer) clearInterval(this.idleTimer);
    const inf = this.informer;
    this.informer = undefined;
    await inf?.stop().catch(() => {});
  }
}

/** Starts the watch (one scope per namespace, or one cluster-wide scope). */
export function startWatch<T extends k8s.KubernetesObject>(opts: WatchOptions<T>): WatchHandle {
  const scopes = (opts.namespaces.length ? opts.namespaces : [undefined]).map((ns) => new ScopeWatch(opts, ns));
  for (const s of scopes) s.start();
  return {
    get restarts() {
      return scopes.reduce((n, s) => n + s.restarts, 0);
    },
    healthy: () => scopes.every((s) => s.healthy()),
    synced: Promise.all(scopes.map((s) => s.synced)).then(() => undefined),
    restartAll: (reason) => scopes.forEach((s) => s.restart(reason)),
    stop: async () => {
      await Promise.all(scopes.map((s) => s.stop()));
    },
  };
}
