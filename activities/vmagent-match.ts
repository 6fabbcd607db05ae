// Pure: from one vmagent's /metrics text to the pending bytes of one zone's remote write queues,
// and from per-pod readings to a QueueSample. See vmagent-url.ts for the vmagent facts.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { QueueSample } from '../workflows/activity-types';
import type { RemoteWriteQueue } from './vmagent-url';

/** memory + disk bytes not yet sent, per remote write queue (labels path, url). */
export const PENDING_METRIC = 'vmagent_remotewrite_pending_data_bytes';
/** disk-only bytes per persistent queue (label path): the fallback. */
export const FALLBACK_METRIC = 'vm_persistentqueue_bytes_pending';
/** Send retries per remote write (label url only): grows while a block in flight keeps failing. */
export const RETRIES_METRIC = 'vmagent_remotewrite_retries_count_total';

export interface PendingSeries {
  metric: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Drops blanks between label pairs (`{a="x", b="y"}` → `{a="x",b="y"}`), outside quoted values.
 * vmagent registers its queue gauges as `name{path=%q, url=%q}` and prints them verbatim; the
 * Prometheus text format allows those blanks, but parse-prometheus-text-format rejects them.
 */
export function normalizeSampleLine(line: string): string {
  let out = '';
  let inLabels = false;
  let inQuote = false;
  let afterComma = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (inQuote) {
      out += c;
      if (c === '\\' && i + 1 < line.length) {
        out += line[++i];
      } else if (c === '"') {
        inQuote = false;
      }
      continue;
    }
    if (inLabels) {
      if (c === '"') {
        inQuote = true;
        afterComma = false;
      } else if (c === ',') {
        afterComma = true;
      } else if (c === '}') {
        inLabels = false;
        afterComma = false;
      } else if ((c === ' ' || c === '\t') && afterComma) {
        continue;
      }
      out += c;
      continue;
    }
    if (c === '{') inLabels = true;
    out += c;
  }
  return out;
}

function metricNameOf(line: string): string {
  const m = /^[^\s{]+/.exec(line);
  return m ? m[0] : '';
}

/**
 * The queue series of a vmagent /metrics text: only the lines of the two queue metrics are
 * handed to the parser, so an unrelated exotic line elsewhere cannot make the scrape unreadable.
 * Throws when those lines themselves cannot be parsed.
 */
export function parseQueueSeries(text: string): PendingSeries[] {
  const wanted = new Set([PENDING_METRIC, FALLBACK_METRIC, RETRIES_METRIC]);
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith('#') && wanted.has(metricNameOf(l)))
    .map(normalizeSampleLine);
  if (lines.length === 0) return [];
  const out: PendingSeries[] = [];
  for (const family of parsePrometheusTextFormat(lines.join('\n') + '\n')) {
    if (!wanted.has(family.name)) continue;
    for (const s of family.metrics) {
      out.push({ metric: family.name, labels: s.labels ?? {}, value: s.value === undefined ? NaN : Number(s.value) });
    }
  }
  return out;
}

function pathMatches(path: string | undefined, dirName: string): boolean {
  if (!path) return false;
  return path === dirName || path.endsWith(`/${dirName}`) || path.endsWith(`\\${dirName}`);
}

export type MatchedBy = 'path' | 'url' | 'fallback-path';

export type QueueReading =
  | { ok: true; bytes: number; matchedBy: MatchedBy; series: number; retries?: number }
  | { ok: false; message: string };

/**
 * Pending bytes of one remote write queue in one vmagent's series:
 *  1. `vmagent_remotewrite_pending_data_bytes` whose `path` ends in `/<i+1>_<XXH64>`;
 *  2. else the same metric whose `url` is `<i+1>:secret-url` or `<i+1>:<url>`;
 *  3. else `vm_persistentqueue_bytes_pending` whose `path` ends in `/<i+1>_<XXH64>`.
 * Never the bare URL. No series, or a value that is not a finite number >= 0, is unreadable.
 */
export function readQueue(series: PendingSeries[], queue: RemoteWriteQueue): QueueReading {
  const primary = series.filter((s) => s.metric === PENDING_METRIC);
  const prefix = `${queue.index + 1}:`;
  const urlMatches = (s: PendingSeries) => s.labels.url === `${prefix}secret-url` || s.labels.url === `${prefix}${queue.url}`;
  const candidates: Array<[MatchedBy, PendingSeries[]]> = [
    ['path', primary.filter((s) => pathMatches(s.labels.path, queue.dirName))],
    ['url', primary.filter(urlMatches)],
    ['fallback-path', series.filter((s) => s.metric === FALLBACK_METRIC && pathMatches(s.labels.path, queue.dirName))],
  ];
  for (const [matchedBy, found] of candidates) {
    if (found.length === 0) continue;
    const bad = found.find((s) => !Number.isFinite(s.value) || s.value < 0);
    if (bad) return { ok: false, message: `${bad.metric} has value ${bad.value}` };
    const retries = series.filter((s) => s.metric === RETRIES_METRIC && urlMatches(s));
    return {
      ok: true,
      bytes: found.reduce((a, s) => a + s.value, 0),
      matchedBy,
      series: found.length,
      ...(retries.length > 0 ? { retries: retries.reduce((a, s) => a + s.value, 0) } : {}),
    };
  }
  return {
    ok: false,
    message: `no ${PENDING_METRIC} series for remoteWrite[${queue.index}] (path */${queue.dirName} or url ${prefix}secret-url|${prefix}<url>)`,
  };
}

/** Pending bytes of all the zone's queues in one vmagent's /metrics text. */
export function readZoneQueues(text: string, queues: RemoteWriteQueue[]): QueueReading {
  let series: PendingSeries[];
  try {
    series = parseQueueSeries(text);
  } catch (err) {
    return { ok: false, message: `cannot parse /metrics: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300) };
  }
  let bytes = 0;
  let count = 0;
  let retries: number | undefined;
  let matchedBy: MatchedBy = 'path';
  for (const q of queues) {
    const r = readQueue(series, q);
    if (!r.ok) return r;
    bytes += r.bytes;
    count += r.series;
    if (r.retries !== undefined) retries = (retries ?? 0) + r.retries;
    if (r.matchedBy !== 'path') matchedBy = r.matchedBy;
  }
  return { ok: true, bytes, matchedBy, series: count, ...(retries !== undefined ? { retries } : {}) };
}

export interface PodReading {
  pod: string;
  reading: QueueReading;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1).replace(/\.0$/, '')} ${units[u]}`;
}

/**
 * A QueueSample from per-pod readings. Drained only when there is at least one pod, every pod was
 * read, and the pending bytes summed over the pods are <= queueEmptyBytes.
 */
export function buildQueueSample(
  pods: PodReading[],
  opts: { queueEmptyBytes: number; at: Date; problem?: string },
): QueueSample {
  const at = opts.at.toISOString();
  if (opts.problem) {
    return { at, pendingBytes: 0, unreadablePods: pods.length, totalPods: pods.length, drained: false, message: opts.problem };
  }
  const readable = pods.filter((p) => p.reading.ok);
  const unreadable = pods.filter((p) => !p.reading.ok);
  const pendingBytes = readable.reduce((a, p) => a + (p.reading.ok ? p.reading.bytes : 0), 0);
  const totalPods = pods.length;
  if (totalPods === 0) {
    return { at, pendingBytes: 0, unreadablePods: 0, totalPods: 0, drained: false, message: 'no vmagent pods found (EndpointSlices list no endpoints)' };
  }
  const drained = unreadable.length === 0 && pendingBytes <= opts.queueEmptyBytes;
  let message = drained
    ? `drained: ${formatBytes(pendingBytes)} pending on ${totalPods} vmagent pod${totalPods === 1 ? '' : 's'}`
    : `${formatBytes(pendingBytes)} pending on ${readable.length}/${totalPods} vmagent pods`;
  if (!drained && unreadable.length === 0) message += ` (threshold ${formatBytes(opts.queueEmptyBytes)})`;
  if (unreadable.length > 0) {
    const shown = unreadable.slice(0, 3).map((p) => `${p.pod}: ${p.reading.ok ? '' : p.reading.message}`);
    message += `; ${unreadable.length} unreadable: ${shown.join('; ')}${unreadable.length > 3 ? '; …' : ''}`;
  }
  const sample: QueueSample = { at, pendingBytes, unreadablePods: unreadable.length, totalPods, drained, message: message.slice(0, 1000) };
  const retries = readable.flatMap((p) => (p.reading.ok && p.reading.retries !== undefined ? [[p.pod, p.reading.retries] as const] : []));
  if (retries.length > 0) sample.sendRetries = Object.fromEntries(retries);
  return sample;
}
