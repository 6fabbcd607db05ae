// One queue sample: the VMAgent's remoteWrite list → the zone's queues; its EndpointSlices → the
// pods; each pod's /metrics → pending bytes. Anything unknown or unreadable is "not drained".
import type { QueueSample, QueueTarget } from '../workflows/activity-types';
import { describeError } from './errors';
import { vmKind, type KubeObjects } from './kube-objects';
import { ServicePods, type ServicePod, type ServicePodsDeps } from './service-pods';
import { buildQueueSample, readZoneQueues, type PodReading } from './vmagent-match';
import { findZoneQueues, type RemoteWriteQueue } from './vmagent-url';
import type { VmagentAuth } from './vmagent-auth';

export interface QueueReaderDeps extends ServicePodsDeps {
  kube: KubeObjects;
  auth?: VmagentAuth;
  now?: () => Date;
}

export class QueueReader {
  readonly pods: ServicePods;

  constructor(private readonly deps: QueueReaderDeps) {
    this.pods = new ServicePods(deps);
  }

  listPods(namespace: string, vmagentName: string): Promise<ServicePod[]> {
    return this.pods.list(namespace, `vmagent-${vmagentName}`);
  }

  /** Never throws for a read problem (it becomes a not-drained sample); rethrows only an abort by `signal`. */
  async sample(target: QueueTarget, signal?: AbortSignal): Promise<QueueSample> {
    const now = this.deps.now ?? (() => new Date());
    const opts = { queueEmptyBytes: target.queueEmptyBytes };
    let queues: RemoteWriteQueue[];
    let pods: ServicePod[];
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
          const text = await this.pods.scrape(pod, { headers, signal });
          return { pod: pod.name, reading: readZoneQueues(text, queues) };
        } catch (err) {
          return { pod: pod.name, reading: { ok: false, message: this.pods.describeScrapeError(err) } };
        }
      }),
    );
    if (signal?.aborted) throw signal.reason;
    return buildQueueSample(readings, { ...opts, at: now() });
  }
}
