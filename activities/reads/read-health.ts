// How the zones carrying the reads serve them, read from the pods that serve them (strategy.capacityGuard):
// every vmauth pod's users' requests, errors and request durations (vmauth v1.150.0 app/vmauth:
// vmauth_[unauthorized_]user_requests_total, _request_errors_total, _request_duration_seconds
// summary), and each carrier's vmselect pods' /select/ requests and errors (app/vmselect:
// vm_http_requests_total, vm_http_request_errors_total). Cumulative counters: the workflow judges
// their growth between two readings (workflows/capacity.ts). Pages are parsed, never trusted; a pod
// that cannot be listed, verified or read makes the reading `unreadable` (nothing judged on part of them).
import type { ReadCounters, ReadHealthReading } from '../../api/types';
import type { ReadHealthInput } from '../../workflows/activity-types';
import { nonNegative, parseSeries } from '../pods/prometheus-text';
import { readablePods, type ServicePods } from '../pods/service-pods';
import { readWorkloads, vmauthServiceName, vmauthWorkloads } from '../vmauth/config';
import { kindOf, readServiceName, refOf, STORAGE, type StorageKind } from '../../api/storage';
import type { Workload } from '../pods/pod-identity';

const VMAUTH = {
  requests: ['vmauth_user_requests_total', 'vmauth_unauthorized_user_requests_total'],
  errors: ['vmauth_user_request_errors_total', 'vmauth_unauthorized_user_request_errors_total'],
  durationSum: ['vmauth_user_request_duration_seconds_sum', 'vmauth_unauthorized_user_request_duration_seconds_sum'],
  durationCount: ['vmauth_user_request_duration_seconds_count', 'vmauth_unauthorized_user_request_duration_seconds_count'],
};
const VMSELECT = { requests: ['vm_http_requests_total'], errors: ['vm_http_request_errors_total'] };

const sum = (page: string, families: readonly string[], keep: (labels: Record<string, string>) => boolean = () => true) =>
  nonNegative(parseSeries(page, families), 'a read counter')
    .filter((s) => keep(s.labels))
    .reduce((a, s) => a + s.value, 0);

/** Pure: a vmauth pod's read counters, every user's summed (MetricsPageError when a value is not a count). */
export function vmauthCounters(page: string): ReadCounters {
  return {
    requests: sum(page, VMAUTH.requests),
    errors: sum(page, VMAUTH.errors),
    durationSeconds: sum(page, VMAUTH.durationSum),
    durationCount: sum(page, VMAUTH.durationCount),
  };
}

/** Pure: a vmselect (or VMSingle) pod's read counters (no durations: vmauth's are the reads' latency). */
export function vmselectCounters(page: string, kind: StorageKind = 'VMCluster'): ReadCounters {
  const { countsRead } = STORAGE[kind];
  const select = (l: Record<string, string>) => l.path !== undefined && countsRead(l.path);
  return { requests: sum(page, VMSELECT.requests, select), errors: sum(page, VMSELECT.errors, select), durationSeconds: 0, durationCount: 0 };
}

export async function readReadHealth(pods: ServicePods, input: ReadHealthInput, signal: AbortSignal, now: () => number = Date.now): Promise<ReadHealthReading> {
  const out: ReadHealthReading['pods'] = [];
  const services: Array<{ kind: 'vmauth' | 'vmselect'; service: string; workloads: Workload[]; read: (page: string) => ReadCounters }> = [
    { kind: 'vmauth', service: vmauthServiceName(input.vmauthName), workloads: vmauthWorkloads(input.vmauthName), read: vmauthCounters },
    ...input.carriers.map((s) => {
      const ref = refOf(input.namespace, s);
      return {
        kind: 'vmselect' as const,
        service: readServiceName(ref),
        workloads: readWorkloads(ref),
        read: (page: string) => vmselectCounters(page, kindOf(ref)),
      };
    }),
  ];
  const unreadable = (why: string): ReadHealthReading => ({ at: new Date(now()).toISOString(), pods: [], unreadable: why.slice(0, 500) });
  for (const s of services) {
    let list;
    try {
      list = await pods.list(input.namespace, s.service, s.workloads);
    } catch (err) {
      if (signal.aborted) throw err;
      return unreadable(`cannot list the pods of service ${s.service}: ${pods.describeScrapeError(err)}`);
    }
    const ready = readablePods(list, s.service, s.kind);
    if (typeof ready === 'string') return unreadable(ready);
    for (const pod of ready) {
      try {
        out.push({ pod: `${s.kind}/${pod.name}`, counters: s.read(await pods.scrape(pod, { signal })) });
      } catch (err) {
        if (signal.aborted) throw err;
        return unreadable(`${s.kind} pod ${pod.name}: ${pods.describeScrapeError(err)}`);
      }
    }
  }
  return { at: new Date(now()).toISOString(), pods: out };
}
