// The read switch, confirmed where reads happen: the operator's config Secret says what we wait for,
// and every ready vmauth pod runs exactly that Secret content. The VMAuth/VMUser statuses are not
// enough: the operator marks them applied when it writes the Secret, and kubelet delivers a Secret
// to the pods tens of seconds later (unless spec.waitForConfigReload, operator >= 0.74).
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import type { RouteRef } from '../../api/route-records';
import type { PodConfirmation, SwitchConfirmed, SwitchInput } from '../../workflows/activity-types';
import { describeError, isNotFound, refusedForGood } from '../../kube/errors';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../../kube/request-timeout';
import type { PollContext } from '../activity-context';
import { sleepHeartbeating } from '../activity-context';
import { vmKind, type KubeObjects } from '../../kube/custom-objects';
import { MetricsPageError, parseSeries } from '../pods/prometheus-text';
import { readablePods, type ServicePod, type ServicePods } from '../pods/service-pods';
import {
  CONFIG_RELOADER_PORT,
  CONTENT_HASH_METRIC,
  ConfigUnreadableError,
  RELOAD_OK_METRIC,
  RELOAD_TIME_METRIC,
  VMAUTH_CONFIG_KEY,
  configSecretName,
  contentHash,
  decodeConfig,
  routeLabel,
  routesNotSwitched,
  userIdentity,
  vmauthServiceName,
  vmauthWorkloads,
  readHosts,
  type ManagedRoute,
} from './config';
import { refOf } from '../../api/storage';

/**
 * What a pods-only look needs once a check found the operator's config right: the Secret content's
 * hash and when the Secret changed (for the fallback), as that check read them.
 */
export interface KnownConfig {
  hash: number;
  changedAt: number | undefined;
}

/**
 * One look at the switch: done with the pods' confirmations, or what is still awaited; `config` when
 * only the pods were still awaited (the Secret says what we wait for).
 */
export type SwitchCheck = { done: true; confirmed: SwitchConfirmed } | { done: false; waitingFor: string; config?: KnownConfig };

/** A pods-only look: whether every ready vmauth pod runs the known config now, or what is awaited. */
export type PodsCheck = { ready: true } | { ready: false; waitingFor: string };

/** Never above: the pods-only look once the config is known (see confirmSwitch). */
export const POD_POLL_MAX_MS = 250;

export interface SwitchDeps {
  kube: KubeObjects;
  kubeConfig: KubeConfig;
  pods: ServicePods;
  now?: () => number;
}

/** The time the Secret last changed: the latest write in its managedFields (else its creation). */
export function secretChangedAt(secret: V1Secret): number | undefined {
  const times = (secret.metadata?.managedFields ?? []).map((f) => (f.time ? new Date(f.time).getTime() : NaN)).filter(Number.isFinite);
  if (times.length > 0) return Math.max(...times);
  const created = secret.metadata?.creationTimestamp;
  return created ? new Date(created).getTime() : undefined;
}

const hex = (h: number) => h.toString(16).padStart(8, '0');

/** Pure: the value of `metric` (with `labels`, if given) on a page; undefined when absent. */
export function metricValue(page: string, metric: string, labels: Record<string, string> = {}): number | undefined {
  return parseSeries(page, [metric]).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/** How far a pod's clock may run ahead of the worker's: a reload time later than that is not believed. */
export const CLOCK_SKEW_MS = 5_000;

/**
 * Pure: the content hash a config-reloader reports; undefined when absent. A CRC32 is an integer
 * 0…2^32-1: any other value is unreadable (MetricsPageError), not a hash that merely differs.
 */
export function reportedHash(page: string): number | undefined {
  const got = metricValue(page, CONTENT_HASH_METRIC, { key: 'main' });
  if (got === undefined || (Number.isInteger(got) && got >= 0 && got <= 0xffffffff)) return got;
  throw new MetricsPageError(`${CONTENT_HASH_METRIC}{key="main"} has value ${got}: a CRC32 is an integer 0…4294967295`);
}

/**
 * Pure: when vmauth last reloaded its config successfully (seconds), per its page at `nowMs`;
 * undefined when its last reload failed or a metric is absent. A time that is not finite, negative
 * or later than now (beyond CLOCK_SKEW_MS) is unreadable (MetricsPageError): believed, +Inf or a
 * future time would prove a reload after any Secret change.
 */
export function lastReloadAt(page: string, nowMs: number): number | undefined {
  const at = metricValue(page, RELOAD_TIME_METRIC);
  if (metricValue(page, RELOAD_OK_METRIC) !== 1 || at === undefined) return undefined;
  if (!Number.isFinite(at) || at < 0) throw new MetricsPageError(`${RELOAD_TIME_METRIC} has value ${at}: a time must be a finite number >= 0`);
  if (at * 1000 > nowMs + CLOCK_SKEW_MS) {
    throw new MetricsPageError(`${RELOAD_TIME_METRIC} is ${at} (${describeTime(at * 1000)}), later than the worker's clock (${describeTime(nowMs)}) allows`);
  }
  return at;
}

const describeTime = (ms: number) => (Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ms} ms`);

/**
 * Whether a vmauth reload at `reloadAtSeconds` (vmauth's metric: whole seconds) surely came after
 * the Secret changed at `changedAtMs` (managedFields: whole seconds too). A reload within the same
 * second may have been of the old config, so only a later second counts; a same-second reload of
 * the new one is left to the bounded wait. vmauth reads that time from a clock that lags up to a
 * second (v1.150.0 lib/fasttime: a ticker stores time.Now().Unix() every second), so the metric is
 * never later than the reload, only earlier: a later second is still proof, and a reload in the
 * first second or two after the change is left to the bounded wait too.
 */
export function reloadedAfter(reloadAtSeconds: number, changedAtMs: number): boolean {
  return reloadAtSeconds > Math.floor(changedAtMs / 1000);
}

export class SwitchChecker {
  private readonly core: CoreV1Api;
  private readonly now: () => number;

  constructor(private readonly deps: SwitchDeps) {
    this.core = deps.kubeConfig.makeApiClient(CoreV1Api);
    this.now = deps.now ?? Date.now;
  }

  private async managedRoutes(namespace: string, routes: readonly RouteRef[]): Promise<ManagedRoute[]> {
    return Promise.all(
      routes.map(async (route): Promise<ManagedRoute> => {
        if (route.kind === 'VMAuth') return { route };
        const obj = await this.deps.kube.get(vmKind('VMUser'), namespace, route.name);
        const identity = userIdentity(route.name, obj?.spec as never);
        return identity ? { route, identity } : { route };
      }),
    );
  }

  /** How one ready pod stands: confirmed (and how), or what it still lacks. */
  private async podSwitch(
    pod: ServicePod,
    hash: number,
    changedAt: number | undefined,
    input: SwitchInput,
    signal?: AbortSignal,
  ): Promise<PodConfirmation | string> {
    let why: string;
    try {
      const got = reportedHash(await this.deps.pods.scrape(pod, { port: CONFIG_RELOADER_PORT, signal }));
      if (got !== undefined) return got === hash ? 'content-hash' : `vmauth pod ${pod.name} runs config ${hex(got)}, not yet ${hex(hash)}`;
      why = `its config-reloader has no ${CONTENT_HASH_METRIC}`;
    } catch (err) {
      why = `its config-reloader cannot be read (${this.deps.pods.describeScrapeError(err)})`;
    }
    // An older config-reloader: vmauth's own reload metrics, then a bounded wait.
    const since = changedAt ?? this.now();
    try {
      const at = lastReloadAt(await this.deps.pods.scrape(pod, { signal }), this.now());
      if (at !== undefined && reloadedAfter(at, since)) return 'vmauth-reload';
    } catch (err) {
      // Only the bounded wait below decides; a page that cannot be believed is said so.
      if (err instanceof MetricsPageError) why += `; its reload metrics are not believed (${err.message})`;
    }
    if (this.now() - since >= input.fallbackWaitMs) return 'bounded-wait';
    return `vmauth pod ${pod.name}: ${why}; waiting for vmauth to report a reload after the Secret changed (${new Date(since).toISOString()}), at most ${Math.round(input.fallbackWaitMs / 1000)} s`;
  }

  async check(input: SwitchInput, signal?: AbortSignal): Promise<SwitchCheck> {
    const secretName = configSecretName(input.vmauthName);
    let secret: V1Secret;
    try {
      secret = await this.core.readNamespacedSecret({ name: secretName, namespace: input.namespace }, withRequestTimeout(REQUEST_TIMEOUT_MS));
    } catch (err) {
      if (isNotFound(err)) return { done: false, waitingFor: `Secret ${secretName}, where the operator writes the VMAuth's config, does not exist` };
      throw err;
    }
    const data = secret.data?.[VMAUTH_CONFIG_KEY];
    if (!data) return { done: false, waitingFor: `Secret ${secretName} has no ${VMAUTH_CONFIG_KEY}` };
    const gz = Buffer.from(data, 'base64');
    const hash = contentHash(gz);
    let config;
    try {
      config = decodeConfig(gz);
    } catch (err) {
      if (err instanceof ConfigUnreadableError) return { done: false, waitingFor: `Secret ${secretName}: ${err.message}` };
      throw err;
    }
    const hosts = readHosts(refOf(input.namespace, input));
    const pending = routesNotSwitched(config, await this.managedRoutes(input.namespace, input.routes), hosts, input.expect);
    if (pending.length > 0) {
      const what = input.expect === 'absent' ? 'still routes' : 'does not yet route';
      return {
        done: false,
        waitingFor: `the operator's config (Secret ${secretName}) ${what} ${pending.map(routeLabel).join(', ')} to VMCluster ${input.vmcluster}`,
      };
    }
    const known: KnownConfig = { hash, changedAt: secretChangedAt(secret) };
    const pods = await this.podsSwitch(known, input, signal);
    if (!pods.ok) return { done: false, waitingFor: pods.waitingFor, config: known };
    return { done: true, confirmed: { hash, pods: pods.pods, message: describeConfirmed(input, hash, pods.pods) } };
  }

  /** Every ready vmauth pod, confirmed running `config`, or what is still awaited. */
  private async podsSwitch(
    config: KnownConfig,
    input: SwitchInput,
    signal?: AbortSignal,
  ): Promise<{ ok: true; pods: SwitchConfirmed['pods'] } | { ok: false; waitingFor: string }> {
    const { hash, changedAt } = config;
    const service = vmauthServiceName(input.vmauthName);
    const listed = await this.deps.pods.list(input.namespace, service, vmauthWorkloads(input.vmauthName));
    // Something claims to serve as a vmauth pod and is not verified as one: a pod it might be is
    // not confirmed, so neither is the switch.
    const ready = readablePods(listed, service, 'vmauth');
    if (typeof ready === 'string') return { ok: false, waitingFor: ready };
    const results = await Promise.all(ready.map((p) => this.podSwitch(p, hash, changedAt, input, signal)));
    const waiting = results.filter((r) => !isConfirmation(r));
    if (waiting.length > 0)
      return {
        ok: false,
        waitingFor: `${ready.length - waiting.length}/${ready.length} vmauth pods run config ${hex(hash)}; ${waiting.slice(0, 3).join('; ')}`,
      };
    return { ok: true, pods: ready.map((p, i) => ({ pod: p.name, via: results[i] as PodConfirmation })) };
  }

  /**
   * Only the pods (their EndpointSlices and config-reloaders, with the same fallback), against a
   * config a check found right: no Secret read, no VMUser read. It only says when to check again;
   * the switch is confirmed by a whole check.
   */
  async checkPods(config: KnownConfig, input: SwitchInput, signal?: AbortSignal): Promise<PodsCheck> {
    const r = await this.podsSwitch(config, input, signal);
    return r.ok ? { ready: true } : { ready: false, waitingFor: r.waitingFor };
  }
}

function isConfirmation(r: PodConfirmation | string): r is PodConfirmation {
  return r === 'content-hash' || r === 'vmauth-reload' || r === 'bounded-wait';
}

function describeConfirmed(input: SwitchInput, hash: number, pods: SwitchConfirmed['pods']): string {
  const by = (via: PodConfirmation) => pods.filter((p) => p.via === via).length;
  const how = [
    by('content-hash') ? `${by('content-hash')} by config-reloader content hash` : '',
    by('vmauth-reload') ? `${by('vmauth-reload')} by vmauth's reload after the Secret changed (no content hash)` : '',
    by('bounded-wait')
      ? `${by('bounded-wait')} only by waiting ${Math.round(input.fallbackWaitMs / 1000)} s after the Secret changed (no content hash, no reload seen)`
      : '',
  ].filter(Boolean);
  const state = input.expect === 'absent' ? 'without' : 'with';
  return `${pods.length} vmauth pod${pods.length === 1 ? '' : 's'} run config ${hex(hash)} ${state} VMCluster ${input.vmcluster}: ${how.join(', ')}`;
}

/**
 * Poll until the switch is confirmed in every ready vmauth pod (heartbeating what is awaited).
 *
 * A whole check (the Secret, the config it holds, the VMUsers, the pods) runs a pollInterval after
 * the previous one ended, as it always has. Once a check found the config right and only the
 * pods behind, they are what changes next (kubelet delivering the Secret, the config-reloader
 * reloading): until the next whole check is due, only the pods are looked at, every
 * min(pollInterval, POD_POLL_MAX_MS), and the moment they all run that config a whole check runs at
 * once. Only a whole check confirms: the Secret is read again then, so a config changed meanwhile
 * is never confirmed in its stead, and every check (config, pods, the fallback) decides as before.
 */
export async function confirmSwitch(
  checker: Pick<SwitchChecker, 'check' | 'checkPods'>,
  ctx: PollContext,
  input: SwitchInput,
  now: () => number = Date.now,
): Promise<SwitchConfirmed> {
  const poll = Math.max(100, input.pollIntervalMs);
  const podPoll = Math.min(poll, POD_POLL_MAX_MS);
  /** Runs `look`; a failure the API server does not refuse for good becomes what is awaited (`failed`). */
  const guarded = async <T>(look: () => Promise<T>, failed: (waitingFor: string) => T): Promise<T> => {
    try {
      return await look();
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      // A read the API server refuses for good fails the step; anything else is polled again.
      if (refusedForGood(err)) throw err;
      return failed(`cannot check the switch: ${describeError(err)}`);
    }
  };
  for (;;) {
    const c = await guarded(
      () => checker.check(input, ctx.signal),
      (waitingFor): SwitchCheck => ({ done: false, waitingFor }),
    );
    if (c.done) return c.confirmed;
    let { waitingFor } = c;
    const { config } = c;
    const details = () => ({ waitingFor });
    ctx.heartbeat(details());
    const nextCheck = now() + poll;
    let podsReady = false;
    // Until the next whole check: the pods only, and a whole check as soon as they are ready.
    while (config && !podsReady && nextCheck - now() > podPoll) {
      await sleepHeartbeating(ctx, podPoll, details());
      const p = await guarded(
        () => checker.checkPods(config, input, ctx.signal),
        (waitingFor): PodsCheck => ({ ready: false, waitingFor }),
      );
      podsReady = p.ready;
      if (!p.ready) {
        waitingFor = p.waitingFor;
        ctx.heartbeat(details());
      }
    }
    if (!podsReady) await sleepHeartbeating(ctx, Math.max(0, nextCheck - now()), details());
  }
}
