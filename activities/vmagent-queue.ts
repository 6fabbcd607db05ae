// One queue sample: the VMAgent's remoteWrite list → the zone's queues; its EndpointSlices → the
// pods; each pod's /metrics → pending bytes. Anything unknown or unreadable is "not drained".
import { DiscoveryV1Api, type KubeConfig, type V1EndpointSlice } from '@kubernetes/client-node';
import type { QueueSample, QueueTarget } from '../workflows/activity-types';
import { describeError } from './errors';
import { vmKind, type KubeObjects } from './kube-objects';
import { buildQueueSample, readZoneQueues, type PodReading } from './vmagent-match';
import { findZoneQueues, type RemoteWriteQueue } from './vmagent-url';
import type { VmagentAuth } from './vmagent-auth';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const METRICS_PORT_NAME = 'http';

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
  scrapeTimeoutMs?: number;
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
    const list = await this.discovery.listNamespacedEndpointSlice({
      namespace,
      labelSelector: `${SERVICE_NAME_LABEL}=vmagent-${vmagentName}`,
    });
    return podsFromEndpointSlices(list.items);
  }

  async scrape(pod: VmagentPod, headers: Record<string, string>, signal?: AbortSignal): Promise<string> {
    const timeout = AbortSignal.timeout(this.deps.scrapeTimeoutMs ?? 5_000);
    const res = await this.fetchFn(metricsURL(pod), {
      headers,
      signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new Error(`HTTP ${res.status} from ${metricsURL(pod)}`);
    }
    return await res.text();
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
          return { pod: pod.name, reading: { ok: false, message: `scrape error: ${describeError(err)}` } };
        }
      }),
    );
    if (signal?.aborted) throw signal.reason;
    return buildQueueSample(readings, { ...opts, at: now() });
  }
}
