// The capacity guard (strategy.capacityGuard), pure: how the reads the other zones carried while a
// zone was out went, from two readings of the pods that serve them (activities/reads/read-health.ts).
// vmauth starts its counters over at each config reload (a zone leaving or rejoining is one): a pod
// whose counters went down counts from zero, as Prometheus' rate() does.
import { LATENCY_FLOOR_MS, slower } from '../api/latency';
import type { CapacityCheck, CapacityGuard, ReadCounters, ReadHealthReading } from '../api/types';

/** Fewer reads than this in a window say nothing about a ratio: not judged. */
export const MIN_READS = 10;

const ZERO: ReadCounters = { requests: 0, errors: 0, durationSeconds: 0, durationCount: 0 };
const add = (a: ReadCounters, b: ReadCounters): ReadCounters => ({
  requests: a.requests + b.requests,
  errors: a.errors + b.errors,
  durationSeconds: a.durationSeconds + b.durationSeconds,
  durationCount: a.durationCount + b.durationCount,
});

/** Each pod's growth from `from` to `to`; a pod new in `to`, or whose counters went down (restarted, reloaded), from zero. */
function growth(from: ReadHealthReading, to: ReadHealthReading): ReadCounters {
  const before = new Map(from.pods.map((p) => [p.pod, p.counters]));
  return to.pods.reduce((acc, { pod, counters: c }) => {
    const b = before.get(pod);
    const reset = !b || c.requests < b.requests || c.errors < b.errors || c.durationCount < b.durationCount || c.durationSeconds < b.durationSeconds;
    const d = reset
      ? c
      : {
          requests: c.requests - b.requests,
          errors: c.errors - b.errors,
          durationSeconds: c.durationSeconds - b.durationSeconds,
          durationCount: c.durationCount - b.durationCount,
        };
    return add(acc, d);
  }, ZERO);
}

const meanMs = (c: ReadCounters) => (c.durationCount > 0 ? Math.round((c.durationSeconds / c.durationCount) * 100_000) / 100 : undefined);
const vmauthOnly = (r: ReadHealthReading): ReadHealthReading => ({ ...r, pods: r.pods.filter((p) => p.pod.startsWith('vmauth/')) });

/**
 * The window from `prev` to `now` against the bounds: its failed reads over its reads (vmauth's
 * errors and the carriers' vmselect errors, over vmauth's reads when it counted any, else vmselect's),
 * and vmauth's mean read latency against the mean before the zone left (`baseline`, each pod's
 * counters since its last config reload). A reading that could not be made is a breach: the guard
 * cannot say the carriers are fine.
 */
export function judgeCapacity(baseline: ReadHealthReading, prev: ReadHealthReading, now: ReadHealthReading, bounds: CapacityGuard): CapacityCheck {
  if (now.unreadable) return { at: now.at, breached: true, requests: 0, message: `the carriers' reads cannot be measured: ${now.unreadable}` };
  const window = growth(prev, now);
  const auth = growth(prev, vmauthOnly(now));
  const requests = auth.requests > 0 ? auth.requests : window.requests;
  const base = baseline.unreadable ? undefined : meanMs(growth({ at: baseline.at, pods: [] }, vmauthOnly(baseline)));
  const latency = meanMs(auth);
  const out: Omit<CapacityCheck, 'message'> = {
    at: now.at,
    breached: false,
    requests,
    ...(latency !== undefined ? { latencyMs: latency } : {}),
    ...(base !== undefined ? { baselineLatencyMs: base } : {}),
  };
  if (requests < MIN_READS) return { ...out, message: `${requests} reads since the last look: too few to judge` };
  const errorRatio = Math.round((window.errors / requests) * 10_000) / 10_000;
  const problems: string[] = [];
  if (errorRatio > bounds.maxErrorRatio)
    problems.push(`${window.errors} of ${requests} reads failed (${(errorRatio * 100).toFixed(2)}% > ${bounds.maxErrorRatio * 100}%)`);
  if (latency !== undefined && base !== undefined && slower(latency, base, bounds.maxLatencyRatio))
    problems.push(`vmauth's mean read latency ${latency} ms, ${bounds.maxLatencyRatio}× and ${LATENCY_FLOOR_MS} ms over its ${base} ms before the zone left`);
  const stats = `${requests} reads, ${(errorRatio * 100).toFixed(2)}% failed${latency !== undefined ? `, mean ${latency} ms` : ''}${base !== undefined ? ` (before: ${base} ms)` : ''}`;
  return { ...out, errorRatio, breached: problems.length > 0, message: problems.length ? problems.join('; ') : `carriers healthy: ${stats}` };
}
