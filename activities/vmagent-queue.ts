// One queue sample: the VMAgent's remoteWrite list → the zone's queues; its EndpointSlices → the
// pods; each pod's /metrics → pending bytes. Anything unknown or unreadable is "not drained".
import { DiscoveryV1Api, type KubeConfig, type V1EndpointSlice } from '@kubernetes/client-node';
import type { QueueSample, QueueTarget } from '../workflows/activity-types';
import { describeError } from './errors';
import { vmKind, type KubeObjects } from './kube-objects';
import { buildQueueSample, formatBytes, readZoneQueues, type PodReading } from './vmagent-match';
import { findZoneQueues, type RemoteWriteQueue } from './vmagent-url';
import type { VmagentAuth } from './vmagent-auth';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../kube/request-timeout';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const METRICS_PORT_NAME = 'http';
/** Default time for one scrape: connecting, the headers and the whole body. */
export const DEFAULT_SCRAPE_TIMEOUT_MS = 5_000;
/**
 * The largest vmagent /metrics page read, in bytes of the body (after content decoding). A vmagent
 * page is ~100 KiB, plus ~30 lines per remote write and a few per scrape target; a larger page is
 * refused (not drained) once this many bytes have come, instead of being buffered whole (a 300 MiB
 * page once took 600 MiB of worker memory).
 */
export const MAX_METRICS_PAGE_BYTES = 16 * 1024 * 1024;

/** A /metrics page over MAX_METRICS_PAGE_BYTES (or the cap given): not read further. */
export class PageTooLargeError extends Error {
  override name = 'PageTooLargeError';
  constructor(maxBytes: number, detail: string) {
    super(`page larger than ${formatBytes(maxBytes)} (${detail})`);
  }
}

/**
 * The body of `res` as UTF-8 text (invalid bytes become U+FFFD, which the parser refuses in a queue
 * line), at most `maxBytes` of it: a larger Content-Length is refused unread, and a body that grows
 * past the cap is cancelled at once. An abort of `signal` (the scrape timeout) cancels the read too,
 * whether or not the fetch implementation ties its body to the signal.
 */
export async function readBodyCapped(res: Response, maxBytes: number, signal: AbortSignal): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw new PageTooLargeError(maxBytes, `Content-Length ${declared}`);
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const onAbort = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener('abort', onAbort, { once: true });
  let complete = false;
  try {
    const decoder = new TextDecoder('utf-8');
    const parts: string[] = [];
    let size = 0;
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const { done, value } = await reader.read();
      if (signal.aborted) throw signal.reason;
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw new PageTooLargeError(maxBytes, `stopped reading after ${size} bytes`);
      parts.push(decoder.decode(value, { stream: true }));
    }
    complete = true;
    parts.push(decoder.decode());
    return parts.join('');
  } finally {
    signal.removeEventListener('abort', onAbort);
    // Whatever stopped the read, the rest of the body is not wanted: close the connection.
    if (!complete) void reader.cancel().catch(() => {});
  }
}

export interface VmagentPod {
  /** Pod name (targetRef) or address. */
  name: string;
  address?: string;
  port?: number;
  ready: boolean;
  /** Why the pod cannot be scraped, when it cannot. */
  problem?: string;
}

/**
 * Pure: the vmagent pods listed by a service's EndpointSlices. An endpoint is one pod (deduplicated
 * across slices, e.g. dual-stack, by targetRef uid/name, preferring IPv4); `conditions.ready === false`
 * or a slice without a port named `http` makes it unscrapeable.
 */
export function podsFromEndpointSlices(slices: V1EndpointSlice[]): VmagentPod[] {
  const byKey = new Map<string, VmagentPod & { ipv4: boolean }>();
  for (const slice of slices) {
    const port = slice.ports?.find((p) => p.name === METRICS_PORT_NAME)?.port;
    const ipv4 = slice.addressType === 'IPv4';
    for (const ep of slice.endpoints ?? []) {
      const address = ep.addresses?.[0];
      const name = ep.targetRef?.name ?? address ?? '?';
      const key = ep.targetRef?.uid ?? ep.targetRef?.name ?? address ?? `${slice.metadata?.name}/${byKey.size}`;
      const pod: VmagentPod & { ipv4: boolean } = { name, address, port, ready: ep.conditions?.ready !== false, ipv4 };
      if (!address) pod.problem = 'endpoint has no address';
      else if (port === undefined) pod.problem = `EndpointSlice ${slice.metadata?.name ?? ''} has no port named ${METRICS_PORT_NAME}`;
      else if (!pod.ready) pod.problem = 'endpoint not ready';
      const prev = byKey.get(key);
      // One pod in several slices (dual-stack): prefer a scrapeable view, then the IPv4 one.
      const better = !prev || (!!prev.problem !== !!pod.problem ? !pod.problem : pod.ipv4 && !prev.ipv4);
      if (better) byKey.set(key, pod);
    }
  }
  return [...byKey.values()].map(({ ipv4: _ipv4, ...p }) => p);
}

export function metricsURL(pod: VmagentPod): string {
  const host = pod.address!.includes(':') ? `[${pod.address}]` : pod.address!;
  return `http://${host}:${pod.port}/metrics`;
}

export interface QueueReaderDeps {
  kube: KubeObjects;
  kubeConfig: KubeConfig;
  fetch?: typeof fetch;
  auth?: VmagentAuth;
  /** One scrape, body included (default DEFAULT_SCRAPE_TIMEOUT_MS). */
  scrapeTimeoutMs?: number;
  /** Default MAX_METRICS_PAGE_BYTES; tests lower it. */
  maxPageBytes?: number;
  now?: () => Date;
}

export class QueueReader {
  private readonly discovery: DiscoveryV1Api;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly deps: QueueReaderDeps) {
    this.discovery = deps.kubeConfig.makeApiClient(DiscoveryV1Api);
    this.fetchFn = deps.fetch ?? fetch;
  }

  async listPods(namespace: string, vmagentName: string): Promise<VmagentPod[]> {
    const list = await this.discovery.listNamespacedEndpointSlice(
      { namespace, labelSelector: `${SERVICE_NAME_LABEL}=vmagent-${vmagentName}` },
      withRequestTimeout(REQUEST_TIMEOUT_MS),
    );
    return podsFromEndpointSlices(list.items);
  }

  /** The pod's /metrics page; the timeout bounds the whole exchange, the body read included. */
  async scrape(pod: VmagentPod, headers: Record<string, string>, signal?: AbortSignal): Promise<string> {
    const timeout = AbortSignal.timeout(this.deps.scrapeTimeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS);
    const both = signal ? AbortSignal.any([timeout, signal]) : timeout;
    const res = await this.fetchFn(metricsURL(pod), { headers, signal: both });
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new Error(`HTTP ${res.status} from ${metricsURL(pod)}`);
    }
    return await readBodyCapped(res, this.deps.maxPageBytes ?? MAX_METRICS_PAGE_BYTES, both);
  }

  private describeScrapeError(err: unknown): string {
    if (err instanceof PageTooLargeError) return err.message;
    // A DOMException's legacy `code` (23 for TimeoutError) is no HTTP status: say what happened.
    if ((err as { name?: unknown } | undefined)?.name === 'TimeoutError') {
      return `scrape error: no complete answer within ${this.deps.scrapeTimeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS} ms`;
    }
    return `scrape error: ${describeError(err)}`;
  }

  /** Never throws for a read problem (it becomes a not-drained sample); rethrows only an abort by `signal`. */
  async sample(target: QueueTarget, signal?: AbortSignal): Promise<QueueSample> {
    const now = this.deps.now ?? (() => new Date());
    const opts = { queueEmptyBytes: target.queueEmptyBytes };
    let queues: RemoteWriteQueue[];
    let pods: VmagentPod[];
    let headers: Record<string, string> = {};
    try {
      const vmagent = await this.deps.kube.get(vmKind('VMAgent'), target.namespace, target.vmagentName);
      if (!vmagent) {
        return buildQueueSample([], { ...opts, at: now(), problem: `VMAgent ${target.namespace}/${target.vmagentName} not found` });
      }
      const spec = (vmagent.spec ?? {}) as { remoteWrite?: unknown };
      const found = await findZoneQueues(spec.remoteWrite, target);
      if (!found.ok) return buildQueueSample([], { ...opts, at: now(), problem: `VMAgent ${target.vmagentName}: ${found.message}` });
      queues = found.queues;
      pods = await this.listPods(target.namespace, target.vmagentName);
      if (this.deps.auth) headers = await this.deps.auth.headers(target.namespace);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      return buildQueueSample([], { ...opts, at: now(), problem: `cannot read vmagent queues: ${describeError(err)}` });
    }
    const readings: PodReading[] = await Promise.all(
      pods.map(async (pod): Promise<PodReading> => {
        if (pod.problem) return { pod: pod.name, reading: { ok: false, message: pod.problem } };
        try {
          const text = await this.scrape(pod, headers, signal);
          return { pod: pod.name, reading: readZoneQueues(text, queues) };
        } catch (err) {
          return { pod: pod.name, reading: { ok: false, message: this.describeScrapeError(err) } };
        }
      }),
    );
    if (signal?.aborted) throw signal.reason;
    return buildQueueSample(readings, { ...opts, at: now() });
  }
}
