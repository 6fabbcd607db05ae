// The pods behind a Kubernetes service (its EndpointSlices) and their /metrics pages: how vmrollout
// looks at vmagent, vmauth (and its config-reloader) and vmselect pods. Reading never trusts a page:
// size-capped, time-bounded, never redirected, and any problem is reported, never guessed around.
import { CoreV1Api, DiscoveryV1Api, type KubeConfig, type V1Endpoint, type V1EndpointSlice, type V1Pod, type V1Service } from '@kubernetes/client-node';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../../kube/request-timeout';
import { describeError, statusCode } from '../../kube/errors';
import { SERVICE_NAME_LABEL, sliceOwnerProblem, targetRefProblem } from './service-ownership';
import { podAddressProblem } from './pod-address';
import { podIdentityProblem, type Workload } from './pod-identity';
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
  /**
   * A ready endpoint that is not verified as one of the workload's pods (the problem says why):
   * something claims to serve there. It is never scraped nor counted; callers wait on it.
   */
  unverified?: true;
}

/** What the endpoints are checked against: what the API server says of the Service and its pods. */
export interface PodEvidence {
  /** The Service the slices are labelled for; undefined when there is none. */
  service: V1Service | undefined;
  /** The pods the Service's selector selects, by name. */
  pods: ReadonlyMap<string, V1Pod>;
  /** The workloads whose pods the Service may list. */
  workloads: readonly Workload[];
}

/** Why an endpoint of `slice` is not one of the evidence's workload's pods at `address` (undefined: it is). */
function endpointProblem(slice: V1EndpointSlice, ep: V1Endpoint, address: string, namespace: string, evidence: PodEvidence): string | undefined {
  const addressProblem = podAddressProblem(address, slice.addressType);
  if (addressProblem) return addressProblem;
  const { service } = evidence;
  const uid = service?.metadata?.uid;
  const serviceName = slice.metadata?.labels?.[SERVICE_NAME_LABEL] ?? '?';
  if (!service || !uid) return `Service ${namespace}/${serviceName} not found`;
  const owner = sliceOwnerProblem(slice, { namespace, service: service.metadata!.name!, uid });
  if (owner) return owner;
  const target = targetRefProblem(ep, namespace);
  if (target) return target;
  return podIdentityProblem(evidence.pods.get(ep.targetRef!.name!), ep, address, evidence.workloads);
}

/**
 * Pure: the pods listed by a service's EndpointSlices. An endpoint is one pod (deduplicated
 * across slices, e.g. dual-stack, by targetRef uid/name, preferring IPv4); `conditions.ready === false`
 * or a slice without a port named `http` makes it unscrapeable. With `evidence`, a ready endpoint
 * is scrapeable only when it is verified: an IPv4/IPv6 address no pod can lack a reason to have
 * (./pod-address.ts), in a slice the EndpointSlice controller wrote for the Service (by uid,
 * ./service-ownership.ts), naming a Pod of the namespace the Service selects, with that address in
 * its status.podIPs, not being deleted, controlled by one of the workloads (./pod-identity.ts).
 * Without `evidence` nothing is verified: only the test switch `verifyPods: false` does that.
 */
export function podsFromEndpointSlices(slices: V1EndpointSlice[], namespace: string, evidence?: PodEvidence): ServicePod[] {
  const byKey = new Map<string, ServicePod & { ipv4: boolean }>();
  for (const slice of slices) {
    const port = slice.ports?.find((p) => p.name === HTTP_PORT_NAME)?.port;
    const ipv4 = slice.addressType === 'IPv4';
    for (const ep of slice.endpoints ?? []) {
      const address = ep.addresses?.[0];
      const name = ep.targetRef?.name ?? address ?? '?';
      const key = ep.targetRef?.uid ?? ep.targetRef?.name ?? address ?? `${slice.metadata?.name}/${byKey.size}`;
      const pod: ServicePod & { ipv4: boolean } = { name, address, port, ready: ep.conditions?.ready !== false, ipv4 };
      // A not-ready endpoint is never scraped nor counted: checking it would only report, e.g., a
      // terminating pod of a rolling restart as a forgery.
      const unverified = evidence && address && pod.ready ? endpointProblem(slice, ep, address, namespace, evidence) : undefined;
      if (!address) pod.problem = 'endpoint has no address';
      else if (!pod.ready) pod.problem = 'endpoint not ready';
      else if (unverified) {
        pod.problem = `not verified as the workload's pod, not scraped: ${unverified}`;
        pod.unverified = true;
      } else if (port === undefined) pod.problem = `EndpointSlice ${slice.metadata?.name ?? ''} has no port named ${HTTP_PORT_NAME}`;
      const prev = byKey.get(key);
      // One pod in several slices (dual-stack): prefer a scrapeable view, then the IPv4 one. A
      // foreign slice naming a Service's pod thus never displaces the controller's own view of it.
      const better = !prev || (!!prev.problem !== !!pod.problem ? !pod.problem : pod.ipv4 && !prev.ipv4);
      if (better) byKey.set(key, pod);
    }
  }
  return [...byKey.values()].map(({ ipv4: _ipv4, ...p }) => p);
}

/** The unverified endpoints among `pods`, described (at most 3 of them); undefined when there is none. */
export function unverifiedPods(pods: readonly ServicePod[]): string | undefined {
  const bad = pods.filter((p) => p.unverified);
  if (bad.length === 0) return undefined;
  const shown = bad.slice(0, 3).map((p) => `${p.name}: ${p.problem}`);
  return `${bad.length} endpoint${bad.length === 1 ? '' : 's'} not verified as the workload's pod${bad.length === 1 ? '' : 's'}: ${shown.join('; ')}`;
}

/**
 * Pure: the ready pods of `service` for a reading that must see them all, or why there are none to
 * read: an endpoint not verified as the workload's pod (one that might be sent reads is never
 * skipped), or no ready pod at all (`what`: the component, e.g. vmauth).
 */
export function readablePods(list: readonly ServicePod[], service: string, what: string): ServicePod[] | string {
  const unverified = unverifiedPods(list);
  if (unverified) return `service ${service}: ${unverified}`;
  const ready = list.filter((p) => !p.problem);
  return ready.length > 0 ? ready : `no ready ${what} pod (EndpointSlices of service ${service})`;
}

/** The label selector of a Service's `spec.selector` (keys and values are validated label text). */
export function selectorOf(service: V1Service): string | undefined {
  const entries = Object.entries(service.spec?.selector ?? {});
  return entries.length === 0 ? undefined : entries.map(([k, v]) => `${k}=${v}`).join(',');
}

/** A URL of the pod, on its `http` port or on `port` (a sidecar's). */
export function podURL(pod: ServicePod, pathAndQuery: string, port = pod.port, scheme: Scheme = 'http'): string {
  const host = pod.address!.includes(':') ? `[${pod.address}]` : pod.address!;
  return `${scheme}://${host}:${port}${pathAndQuery}`;
}

/** The pod's /metrics URL, on its `http` port or on `port` (a sidecar's). */
export const metricsURL = (pod: ServicePod, port = pod.port, scheme: Scheme = 'http'): string => podURL(pod, '/metrics', port, scheme);

export interface ServicePodsDeps {
  kubeConfig: KubeConfig;
  fetch?: typeof fetch;
  /** One scrape, body included (default DEFAULT_SCRAPE_TIMEOUT_MS). */
  scrapeTimeoutMs?: number;
  /** Default MAX_METRICS_PAGE_BYTES; tests lower it. */
  maxPageBytes?: number;
  /** TEST-ONLY, default true; false: endpoints are not verified (ActivityDeps.verifyPods). */
  verifyPods?: boolean;
}

export class ServicePods {
  private readonly discovery: DiscoveryV1Api;
  private readonly core: CoreV1Api;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly deps: ServicePodsDeps) {
    this.discovery = deps.kubeConfig.makeApiClient(DiscoveryV1Api);
    this.core = deps.kubeConfig.makeApiClient(CoreV1Api);
    this.fetchFn = deps.fetch ?? fetch;
  }

  /**
   * The pods of service `service` (by its EndpointSlices' service-name label) that are verified as
   * pods of `workloads` (podsFromEndpointSlices). The Service is read, then its EndpointSlices and
   * the pods its selector selects, in one list: the pods the EndpointSlice controller itself
   * considers, one request however many endpoints there are (a get per endpoint would cost one
   * request per pod on every sample).
   */
  async list(namespace: string, service: string, workloads: readonly Workload[]): Promise<ServicePod[]> {
    const slicesRead = this.discovery.listNamespacedEndpointSlice(
      { namespace, labelSelector: `${SERVICE_NAME_LABEL}=${service}` },
      withRequestTimeout(REQUEST_TIMEOUT_MS),
    );
    if (this.deps.verifyPods === false) return podsFromEndpointSlices((await slicesRead).items, namespace);
    const [slices, evidence] = await Promise.all([slicesRead, this.evidence(namespace, service, workloads)]);
    return podsFromEndpointSlices(slices.items, namespace, evidence);
  }

  private async evidence(namespace: string, name: string, workloads: readonly Workload[]): Promise<PodEvidence> {
    let service: V1Service | undefined;
    try {
      service = await this.core.readNamespacedService({ namespace, name }, withRequestTimeout(REQUEST_TIMEOUT_MS));
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
    const pods = new Map<string, V1Pod>();
    const selector = service && selectorOf(service);
    // A Service without a selector has no slices of the EndpointSlice controller: nothing to verify against.
    if (selector) {
      const list = await this.core.listNamespacedPod({ namespace, labelSelector: selector }, withRequestTimeout(REQUEST_TIMEOUT_MS));
      for (const p of list.items) if (p.metadata?.name) pods.set(p.metadata.name, p);
    }
    return { service, pods, workloads };
  }

  /**
   * The pod's /metrics page (on `opts.port`, default its `http` port; `opts.scheme`, default http).
   * The timeout bounds the whole exchange: connecting, the headers and the body. A redirect is
   * never followed: it could take the request, and its credentials, to another host or to http.
   */
  async scrape(pod: ServicePod, opts: { headers?: Record<string, string>; signal?: AbortSignal; port?: number; scheme?: Scheme } = {}): Promise<string> {
    return (await this.get(pod, '/metrics', { ...opts, okOnly: true })).body;
  }

  /**
   * GET `pathAndQuery` of the pod, as scrape does (bounded in time and size, never redirected): its
   * status and body, whatever the status (a query's error says why in its body), unless `okOnly`.
   */
  async get(
    pod: ServicePod,
    pathAndQuery: string,
    opts: {
      headers?: Record<string, string>;
      signal?: AbortSignal;
      port?: number;
      scheme?: Scheme;
      timeoutMs?: number;
      maxBytes?: number;
      okOnly?: boolean;
    } = {},
  ): Promise<{ status: number; body: string }> {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.deps.scrapeTimeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS);
    const both = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    const url = podURL(pod, pathAndQuery, opts.port, opts.scheme);
    const res = await this.fetchFn(url, { headers: opts.headers ?? {}, signal: both, redirect: 'manual' });
    const redirect = res.status >= 300 && res.status < 400;
    if (redirect || (opts.okOnly && !res.ok)) {
      await res.body?.cancel().catch(() => {});
      throw new Error(`HTTP ${res.status} from ${url.split('?')[0]}${redirect ? ' (a redirect: not followed)' : ''}`);
    }
    return { status: res.status, body: await readBodyCapped(res, opts.maxBytes ?? this.deps.maxPageBytes ?? MAX_METRICS_PAGE_BYTES, both) };
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
