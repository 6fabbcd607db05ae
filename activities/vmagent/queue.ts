// One queue sample: each VMAgent's remoteWrite list → the zone's queues in it; its Service's
// EndpointSlices → its pods; each pod's /metrics (https when the VMAgent serves TLS) → pending
// bytes, summed over the pods of every VMAgent (spec.vmagent and the zones' own). Anything
// unknown or unreadable is "not drained". Only pods verified as the VMAgent's own are scraped (and
// get the credentials, when configured); an endpoint that is not is a not-drained reading
// (../pods/service-pods.ts).
import type { QueueSample } from '../../api/rollout-contract';
import type { QueueTarget } from '../../workflows/activity-types';
import { describeError } from '../../kube/errors';
import { vmKind, type KubeObjects } from '../../kube/custom-objects';
import { ServicePods, type ServicePod, type ServicePodsDeps } from '../pods/service-pods';
import { buildQueueSample, readZoneQueues, type PodReading } from './match';
import { findZoneQueues, type RemoteWriteQueue } from './url';
import { later, settled } from '../../kube/at-once';
import type { VmagentAuth } from './auth';
import { vmagentScheme, vmagentServiceName, vmagentWorkloads, type Scheme } from './service';

export interface QueueReaderDeps extends ServicePodsDeps {
  kube: KubeObjects;
  auth?: VmagentAuth;
  now?: () => Date;
}

/** One vmagent pod's /metrics page and the zone's queues in its VMAgent's remoteWrite list, or why it could not be read. */
export type PodPage = { pod: string; ok: true; text: string; queues: RemoteWriteQueue[] } | { pod: string; ok: false; message: string };

export type ZonePages = { ok: false; problem: string } | { ok: true; pages: PodPage[] };

export class QueueReader {
  readonly pods: ServicePods;

  constructor(private readonly deps: QueueReaderDeps) {
    this.pods = new ServicePods(deps);
  }

  /** The VMAgent's pods; only those verified as its own are scrapeable. */
  listPods(namespace: string, vmagentName: string): Promise<ServicePod[]> {
    return this.pods.list(namespace, vmagentServiceName(vmagentName), vmagentWorkloads(vmagentName));
  }

  /** Never throws for a read problem (it becomes a not-drained sample); rethrows only an abort by `signal`. */
  async sample(target: QueueTarget, signal?: AbortSignal): Promise<QueueSample> {
    const at = () => (this.deps.now ?? (() => new Date()))();
    const opts = { queueEmptyBytes: target.queueEmptyBytes };
    const found = await this.pages(target, signal);
    if (!found.ok) return buildQueueSample([], { ...opts, at: at(), problem: found.problem });
    const readings: PodReading[] = found.pages.map((p) => ({ pod: p.pod, reading: p.ok ? readZoneQueues(p.text, p.queues) : p }));
    return buildQueueSample(readings, { ...opts, at: at() });
  }

  /**
   * Each pod's /metrics page of every VMAgent of the target (or why not), with the zone's queues in
   * its VMAgent's remoteWrite list. One VMAgent that cannot be read makes the whole reading a
   * problem. Never throws for a read problem; rethrows only an abort by `signal`.
   */
  async pages(target: QueueTarget, signal?: AbortSignal): Promise<ZonePages> {
    const agents = [target.vmagentName, ...(target.zoneVmagents ?? [])];
    const read = await Promise.all(agents.map((name) => this.agentPages(target, name, signal)));
    const problem = read.find((r) => !r.ok);
    if (problem) return problem;
    return { ok: true, pages: read.flatMap((r) => (r.ok ? r.pages : [])) };
  }

  private async agentPages(target: QueueTarget, vmagentName: string, signal?: AbortSignal): Promise<ZonePages> {
    let queues: RemoteWriteQueue[];
    let pods: ServicePod[];
    let scheme: Scheme;
    let headers: Record<string, string> = {};
    // The VMAgent, its Service's EndpointSlices and the credentials are independent reads: made at
    // once (one round trip of latency instead of three), all fresh on every sample (a remoteWrite
    // edit, a pod added or removed, rotated credentials are seen at the next sample: nothing is
    // cached between samples, see below), then judged in the order of the checks, the VMAgent's
    // first, so a sample says what it said when they were made one after another.
    //
    // Not cached within a wait, although it rarely changes: the Kubernetes API has no conditional
    // GET, so seeing a change still costs the read, and a VMAgent read once per wait would keep
    // matching the queues of a remoteWrite list someone has since edited (an index-based `url`
    // label match can then be another zone's queue). In parallel, the read costs no latency.
    const { auth } = this.deps;
    const [vmagentRead, podsRead, headersRead] = await Promise.allSettled([
      later(() => this.deps.kube.get(vmKind('VMAgent'), target.namespace, vmagentName)),
      later(() => this.listPods(target.namespace, vmagentName)),
      later(async () => (auth ? auth.headers(target.namespace) : headers)),
    ]);
    try {
      const vmagent = settled(vmagentRead);
      if (!vmagent) return { ok: false, problem: `VMAgent ${target.namespace}/${vmagentName} not found` };
      const spec = (vmagent.spec ?? {}) as { remoteWrite?: unknown; extraArgs?: unknown };
      const found = await findZoneQueues(spec.remoteWrite, target);
      if (!found.ok) return { ok: false, problem: `VMAgent ${vmagentName}: ${found.message}` };
      queues = found.queues;
      const schemeFound = vmagentScheme(spec.extraArgs);
      if (!schemeFound.ok) return { ok: false, problem: `VMAgent ${vmagentName}: ${schemeFound.message}` };
      scheme = schemeFound.scheme;
      pods = settled(podsRead);
      headers = settled(headersRead);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      return { ok: false, problem: `cannot read vmagent queues: ${describeError(err)}` };
    }
    const pages = await Promise.all(
      pods.map(async (pod): Promise<PodPage> => {
        if (pod.problem) return { pod: pod.name, ok: false, message: pod.problem };
        try {
          return { pod: pod.name, ok: true, text: await this.pods.scrape(pod, { headers, signal, scheme }), queues };
        } catch (err) {
          return { pod: pod.name, ok: false, message: this.pods.describeScrapeError(err) };
        }
      }),
    );
    if (signal?.aborted) throw signal.reason;
    return { ok: true, pages };
  }
}
