// The pods behind a Kubernetes service (its EndpointSlices) and their /metrics pages: how vmrollout
// looks at vmagent, vmauth (and its config-reloader) and vmselect pods. Reading never trusts a page:
// size-capped, time-bounded, never redirected, and any problem is reported, never guessed around.
import { DiscoveryV1Api, type KubeConfig, type V1EndpointSlice } from '@kubernetes/client-node';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../../kube/request-timeout';
import { describeError } from '../../kube/errors';
import { SERVICE_NAME_LABEL, sliceOwnerProblem, targetRefProblem, type ServiceRef } from './service-ownership';
import { formatBytes } from '../vmagent/match';
import type { Scheme } from '../vmagent/service';

/** The port every VictoriaMetrics component's service names `http` (its /metrics is there too). */
export const HTTP_PORT_NAME = 'http';
/** Default time for one scrape: connecting, the headers and the whole body. */
export const DEFAULT_SCRAPE_TIMEOUT_MS = 5_000;
/**
 * The largest /metrics page read, in bytes of the body (after content decoding). A vmagent page is
 * ~100 KiB, plus ~30 lines per remote write and a few per scrape target; a larger page is refused
 * (unreadable) once this many bytes have come, instead of being buffered whole (a 300 MiB page once
 * took 600 MiB of worker memory).
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

export interface ServicePod {
  /** Pod name (targetRef) or address. */
  name: string;
  address?: string;
  port?: number;
  ready: boolean;
  /** Why the pod cannot be scraped, when it cannot. */
  problem?: string;
}

/**
 * Pure: the pods listed by a service's EndpointSlices. An endpoint is one pod (deduplicated
 * across slices, e.g. dual-stack, by targetRef uid/name, preferring IPv4); `conditions.ready === false`
 * or a slice without a port named `http` makes it unscrapeable. With `owner` (the pods are to get
 * credentials), so does an endpoint that is not a Pod of `owner`'s namespace listed by the
 * EndpointSlice controller for `owner`'s Service (./service-ownership.ts).
 */
export function podsFromEndpointSlices(slices: V1EndpointSlice[], owner?: ServiceRef): ServicePod[] {
  const byKey = new Map<string, ServicePod & { ipv4: boolean }>();
  for (const slice of slices) {
    const port = slice.ports?.find((p) => p.name === HTTP_PORT_NAME)?.port;
    const ipv4 = slice.addressType === 'IPv4';
    const sliceProblem = owner && sliceOwnerProblem(slice, owner);
    for (const ep of slice.endpoints ?? []) {
      const address = ep.addresses?.[0];
      const name = ep.targetRef?.name ?? address ?? '?';
      const key = ep.targetRef?.uid ?? ep.targetRef?.name ?? address ?? `${slice.metadata?.name}/${byKey.size}`;
      const pod: ServicePod & { ipv4: boolean } = { name, address, port, ready: ep.conditions?.ready !== false, ipv4 };
      const ownerProblem = owner && (sliceProblem ?? targetRefProblem(ep, owner.namespace));
      if (!address) pod.problem = 'endpoint has no address';
      else if (ownerProblem) pod.problem = `credentials withheld: ${ownerProblem}`;
      else if (port === undefined) pod.problem = `EndpointSlice ${slice.metadata?.name ?? ''} has no port named ${HTTP_PORT_NAME}`;
      else if (!pod.ready) pod.problem = 'endpoint not ready';
      const prev = byKey.get(key);
      // One pod in several slices (dual-stack): prefer a scrapeable view, then the IPv4 one. A
      // foreign slice naming a Service's pod thus never displaces the controller's own view of it.
      const better = !prev || (!!prev.problem !== !!pod.problem ? !pod.problem : pod.ipv4 && !prev.ipv4);
      if (better) byKey.set(key, pod);
    }
  }
  return [...byKey.values()].map(({ ipv4: _ipv4, ...p }) => p);
}

/** The pod's /metrics URL, on its `http` port or on `port` (a sidecar's). */
export function metricsURL(pod: ServicePod, port = pod.port, scheme: Scheme = 'http'): string {
  const host = pod.address!.includes(':') ? `[${pod.address}]` : pod.address!;
  return `${scheme}://${host}:${port}/metrics`;
}

export interface ServicePodsDeps {
  kubeConfig: KubeConfig;
  fetch?: typeof fetch;
  /** One scrape, body included (default DEFAULT_SCRAPE_TIMEOUT_MS). */
  scrapeTimeoutMs?: number;
  /** Default MAX_METRICS_PAGE_BYTES; tests lower it. */
  maxPageBytes?: number;
}

export class ServicePods {
  private readonly discovery: DiscoveryV1Api;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly deps: ServicePodsDeps) {
    this.discovery = deps.kubeConfig.makeApiClient(DiscoveryV1Api);
    this.fetchFn = deps.fetch ?? fetch;
  }

  /**
   * The pods of service `service` (by its EndpointSlices' service-name label); with `verifyOwner`
   * (the pods are to get credentials) only the Service's own pods are scrapeable.
   */
  async list(namespace: string, service: string, opts: { verifyOwner?: boolean } = {}): Promise<ServicePod[]> {
    const list = await this.discovery.listNamespacedEndpointSlice(
      { namespace, labelSelector: `${SERVICE_NAME_LABEL}=${service}` },
      withRequestTimeout(REQUEST_TIMEOUT_MS),
    );
    return podsFromEndpointSlices(list.items, opts.verifyOwner ? { namespace, service } : undefined);
  }

  /**
   * The pod's /metrics page (on `opts.port`, default its `http` port; `opts.scheme`, default http).
   * The timeout bounds the whole exchange: connecting, the headers and the body. A redirect is
   * never followed: it could take the request, and its credentials, to another host or to http.
   */
  async scrape(pod: ServicePod, opts: { headers?: Record<string, string>; signal?: AbortSignal; port?: number; scheme?: Scheme } = {}): Promise<string> {
    const timeout = AbortSignal.timeout(this.deps.scrapeTimeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS);
    const both = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    const url = metricsURL(pod, opts.port, opts.scheme);
    const res = await this.fetchFn(url, { headers: opts.headers ?? {}, signal: both, redirect: 'manual' });
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      const redirect = res.status >= 300 && res.status < 400 ? ' (a redirect: not followed)' : '';
      throw new Error(`HTTP ${res.status} from ${url}${redirect}`);
    }
    return await readBodyCapped(res, this.deps.maxPageBytes ?? MAX_METRICS_PAGE_BYTES, both);
  }

  /** Why a scrape failed, in words (a timeout is named as one). */
  describeScrapeError(err: unknown): string {
    if (err instanceof PageTooLargeError) return err.message;
    // A DOMException's legacy `code` (23 for TimeoutError) is no HTTP status: say what happened.
    if ((err as { name?: unknown } | undefined)?.name === 'TimeoutError') {
      return `scrape error: no complete answer within ${this.deps.scrapeTimeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS} ms`;
    }
    return `scrape error: ${describeError(err)}`;
  }
}
