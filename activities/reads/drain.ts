// Reads drained, measured: after the switch, the zone's vmselect pods (a VMSingle's pod) must see no new /select/ (query)
// request for a quiet period. A query that started before the switch is still counted where it
// landed; a new one after the switch would mean some vmauth still sends reads there. Bounded by
// readDrainDelay: past it the zone goes on (every vmauth pod was confirmed without it already).
import type { ReadsDrained, ReadsDrainInput } from '../../workflows/activity-types';
import type { PollContext } from '../activity-context';
import { sleepHeartbeating } from '../activity-context';
import { readWorkloads } from '../vmauth/config';
import { kindOf, readServiceName, refOf, STORAGE, type StorageKind } from '../../api/storage';
import { nonNegative, parseSeries } from '../pods/prometheus-text';
import { readablePods, type ServicePods } from '../pods/service-pods';

/** Real vmselect's request counters (app/vmselect/main.go): one series per path, e.g. `/select/{}/prometheus/api/v1/query`. */
const REQUESTS_METRIC = 'vm_http_requests_total';

/** Pure: the reads a vmselect (or VMSingle) /metrics page has counted (MetricsPageError when a count is not one). */
export function selectRequests(page: string, kind: StorageKind = 'VMCluster'): number {
  const { countsRead } = STORAGE[kind];
  // A count of +Inf never changes: believed, it would read as quiet.
  return nonNegative(parseSeries(page, [REQUESTS_METRIC]), 'a request counter')
    .filter((s) => s.labels.path !== undefined && countsRead(s.labels.path))
    .reduce((a, s) => a + s.value, 0);
}

/** Per pod, its /select/ request count; a string when the pods cannot all be read. */
async function readCounts(pods: ServicePods, input: ReadsDrainInput, signal: AbortSignal): Promise<Map<string, number> | string> {
  const ref = refOf(input.namespace, input);
  const { readPodName } = STORAGE[kindOf(ref)];
  const service = readServiceName(ref);
  let list;
  try {
    list = await pods.list(input.namespace, service, readWorkloads(ref));
  } catch (err) {
    if (signal.aborted) throw err;
    return `cannot list the pods of service ${service}: ${pods.describeScrapeError(err)}`;
  }
  // A pod that is not verified may be one still sent reads: never counted as quiet.
  const ready = readablePods(list, service, readPodName);
  if (typeof ready === 'string') return ready;
  const counts = new Map<string, number>();
  for (const pod of ready) {
    try {
      counts.set(pod.name, selectRequests(await pods.scrape(pod, { signal }), kindOf(ref)));
    } catch (err) {
      if (signal.aborted) throw err;
      return `${readPodName} pod ${pod.name}: ${pods.describeScrapeError(err)}`;
    }
  }
  return counts;
}

const sameCounts = (a: Map<string, number>, b: Map<string, number>) => a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

export async function waitReadsDrained(pods: ServicePods, ctx: PollContext, input: ReadsDrainInput, now: () => number = Date.now): Promise<ReadsDrained> {
  const started = now();
  const poll = Math.max(100, Math.min(input.pollIntervalMs, input.quietMs));
  let last: Map<string, number> | undefined;
  let quietSince = started;
  let problem: string | undefined;
  // A vmselect counts /select/ requests; a VMSingle, queries (api/storage.ts countsRead).
  const [request, pod] = input.storageKind ? ['query', 'vmsingle pod'] : ['/select/ request', 'vmselect pod'];
  for (;;) {
    const counts = await readCounts(pods, input, ctx.signal);
    const t = now();
    if (typeof counts === 'string') {
      problem = counts;
      last = undefined;
      quietSince = t;
    } else {
      problem = undefined;
      if (!last || !sameCounts(last, counts)) quietSince = t;
      last = counts;
      if (t - quietSince >= input.quietMs) {
        return {
          quiet: true,
          message: `reads drained: no new ${request} on ${counts.size} ${pod}${counts.size === 1 ? '' : 's'} for ${Math.round((t - quietSince) / 100) / 10} s`,
        };
      }
    }
    if (t - started >= input.maxMs) {
      const why = problem ?? `${pod}s still counted new ${request}s ${Math.round((t - quietSince) / 100) / 10} s ago`;
      return { quiet: false, message: `reads not seen quiet within readDrainDelay (${Math.round(input.maxMs / 100) / 10} s): ${why}; going on` };
    }
    const details = { waitingFor: problem ?? `quiet for ${t - quietSince} of ${input.quietMs} ms` };
    ctx.heartbeat(details);
    await sleepHeartbeating(ctx, Math.min(poll, Math.max(50, started + input.maxMs - t)), details);
  }
}
