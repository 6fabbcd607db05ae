// Pure: from one vmagent's /metrics text to the pending bytes of one zone's remote write queues,
// and from per-pod readings to a QueueSample. See url.ts for the vmagent facts. The page is
// read strictly (../pods/prometheus-text.ts) for the families we rely on (QUEUE_FAMILIES): a damaged page
// is unreadable ("not drained", with the line and the reason), never a silent 0.
import { redactSecrets } from '../../api/redact';
import type { QueueSample } from '../../api/rollout-contract';
import { badValue, parseSeries, type MetricSeries } from '../pods/prometheus-text';
import type { RemoteWriteQueue } from './url';

/** memory + disk bytes not yet sent, per remote write queue (labels path, url). */
export const PENDING_METRIC = 'vmagent_remotewrite_pending_data_bytes';
/**
 * Disk-only bytes per persistent queue (label path). Never read as the queue's pending bytes (see
 * readQueue); still parsed strictly, as a line of the queue block vmagent prints well-formed, so a
 * damaged one marks a damaged page.
 */
export const DISK_PENDING_METRIC = 'vm_persistentqueue_bytes_pending';
/** Send retries per remote write (label url only): grows while a block in flight keeps failing. */
export const RETRIES_METRIC = 'vmagent_remotewrite_retries_count_total';
/** Failed sends without an answer (label url). */
export const ERRORS_METRIC = 'vmagent_remotewrite_errors_total';
/** Answered sends per status code (labels url, status_code: "2XX" or the code). */
export const REQUESTS_METRIC = 'vmagent_remotewrite_requests_total';
/** Blocks given up on, never re-sent (label url). */
export const DROPPED_METRIC = 'vmagent_remotewrite_packets_dropped_total';
/** The families read from the page, strictly; every other line is skipped unread. */
export const QUEUE_FAMILIES: readonly string[] = [PENDING_METRIC, DISK_PENDING_METRIC, RETRIES_METRIC, ERRORS_METRIC, REQUESTS_METRIC, DROPPED_METRIC];

/** The queue series of a vmagent /metrics text. */
export const parseQueueSeries = (text: string): MetricSeries[] => parseSeries(text, QUEUE_FAMILIES);

/** Whether a series' `path` label is the queue directory `dirName` (any parent directory). */
export function pathMatches(path: string | undefined, dirName: string): boolean {
  if (!path) return false;
  return path === dirName || path.endsWith(`/${dirName}`) || path.endsWith(`\\${dirName}`);
}

/** The series of `metric` for queue `q`: by the queue's path, else by its sanitized URL in `label`. */
export function queueSeries(series: MetricSeries[], metric: string, q: RemoteWriteQueue, label: 'url' | 'name'): MetricSeries[] {
  const of = series.filter((s) => s.metric === metric);
  const byPath = of.filter((s) => pathMatches(s.labels.path, q.dirName));
  if (byPath.length > 0) return byPath;
  const prefix = `${q.index + 1}:`;
  return of.filter((s) => s.labels[label] === `${prefix}secret-url` || s.labels[label] === `${prefix}${q.url}`);
}

export type MatchedBy = 'path' | 'url';

export type QueueReading =
  { ok: true; bytes: number; matchedBy: MatchedBy; series: number; retries?: number; inBackoff?: number } | { ok: false; message: string };

const sum = (found: MetricSeries[]) => found.reduce((a, s) => a + s.value, 0);

/**
 * Blocks of one remote write that its workers hold in a send-retry backoff, from the send counters
 * of that remote write (one scrape, one process); undefined when the page lacks one of them. Such a
 * block is in neither the pending bytes nor, until its next attempt, the retries counter: without
 * this count a backoff longer than queueDrainedFor could end a queue wait with the block undelivered.
 *
 * vmagent v1.150.0 app/vmagent/remotewrite/client.go `sendBlockHTTP`, per attempt of a block:
 *  - no answer: errors_total + 1, backoff wait, retries_count_total + 1, again;
 *  - 2XX: requests_total{status_code="2XX"} + 1, done;
 *  - 409, or 400/415 not re-packable: requests_total{status_code=code} + 1, packets_dropped_total + 1, done;
 *  - 400/415 re-packed from zstd to snappy: requests_total{code} + 1, retries_count_total + 1, again (no wait);
 *  - any other code: requests_total{code} + 1, backoff wait, retries_count_total + 1, again.
 * So errors + requests{code != 2XX} - dropped - retries grows by one when a block enters a backoff
 * and falls back when it leaves it: it is the number of blocks waiting out a backoff. A scrape between
 * two increments of one step can only see one too many (each step increments the failure first).
 */
function blocksInBackoff(counters: MetricSeries[]): number | undefined {
  const of = (metric: string) => counters.filter((s) => s.metric === metric);
  const [errors, dropped, retries] = [of(ERRORS_METRIC), of(DROPPED_METRIC), of(RETRIES_METRIC)];
  if (errors.length === 0 || dropped.length === 0 || retries.length === 0) return undefined;
  const failedAnswers = of(REQUESTS_METRIC).filter((s) => s.labels.status_code !== '2XX');
  return Math.max(0, sum(errors) + sum(failedAnswers) - sum(dropped) - sum(retries));
}

/**
 * Pending bytes of one remote write queue in one vmagent's series:
 *  1. `vmagent_remotewrite_pending_data_bytes` whose `path` ends in `/<i+1>_<XXH64>`;
 *  2. else the same metric whose `url` is `<i+1>:secret-url` or `<i+1>:<url>`.
 * Never the bare URL. No series, or a value that is not a finite number >= 0 (NaN, ±Inf, negative),
 * is unreadable; so is such a value of the queue's send-retries counter.
 *
 * Never `vm_persistentqueue_bytes_pending`, even on a page without the main metric: it counts the
 * disk part only (the v1.150.0 fixture: 0 there, 210 in vmagent_remotewrite_pending_data_bytes), and
 * no vmagent prints it without the main metric (newRemoteWriteCtx registers the main gauge for every
 * queue it opens; so did the first vmagents), so such a page is one that lost lines, e.g. a body cut
 * short. Reading the disk gauge there said "drained" over a backlog held in memory.
 */
export function readQueue(series: MetricSeries[], queue: RemoteWriteQueue): QueueReading {
  const primary = series.filter((s) => s.metric === PENDING_METRIC);
  const prefix = `${queue.index + 1}:`;
  const urlMatches = (s: MetricSeries) => s.labels.url === `${prefix}secret-url` || s.labels.url === `${prefix}${queue.url}`;
  const candidates: Array<[MatchedBy, MetricSeries[]]> = [
    ['path', primary.filter((s) => pathMatches(s.labels.path, queue.dirName))],
    ['url', primary.filter(urlMatches)],
  ];
  for (const [matchedBy, found] of candidates) {
    if (found.length === 0) continue;
    const bad = badValue(found, 'pending bytes');
    if (bad) return { ok: false, message: bad };
    const counters = series.filter((s) => s.metric !== PENDING_METRIC && s.metric !== DISK_PENDING_METRIC && urlMatches(s));
    const badCounter = badValue(counters, 'a send counter');
    if (badCounter) return { ok: false, message: badCounter };
    const retries = counters.filter((s) => s.metric === RETRIES_METRIC);
    const inBackoff = blocksInBackoff(counters);
    return {
      ok: true,
      bytes: sum(found),
      matchedBy,
      series: found.length,
      ...(retries.length > 0 ? { retries: sum(retries) } : {}),
      ...(inBackoff !== undefined ? { inBackoff } : {}),
    };
  }
  return {
    ok: false,
    message: `no ${PENDING_METRIC} series for remoteWrite[${queue.index}] (path */${queue.dirName} or url ${prefix}secret-url|${prefix}<url>)`,
  };
}

/** Pending bytes of all the zone's queues in one vmagent's /metrics text. */
export function readZoneQueues(text: string, queues: RemoteWriteQueue[]): QueueReading {
  let series: MetricSeries[];
  try {
    series = parseQueueSeries(text);
  } catch (err) {
    return { ok: false, message: (err instanceof Error ? err.message : `cannot parse /metrics: ${String(err)}`).slice(0, 300) };
  }
  let bytes = 0;
  let count = 0;
  let retries: number | undefined;
  let inBackoff: number | undefined;
  let matchedBy: MatchedBy = 'path';
  for (const q of queues) {
    const r = readQueue(series, q);
    if (!r.ok) return r;
    bytes += r.bytes;
    count += r.series;
    if (r.retries !== undefined) retries = (retries ?? 0) + r.retries;
    if (r.inBackoff !== undefined) inBackoff = (inBackoff ?? 0) + r.inBackoff;
    if (r.matchedBy !== 'path') matchedBy = r.matchedBy;
  }
  return { ok: true, bytes, matchedBy, series: count, ...(retries !== undefined ? { retries } : {}), ...(inBackoff !== undefined ? { inBackoff } : {}) };
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
 * read, no pod holds a block for the zone in a send-retry backoff, and the pending bytes summed over
 * the pods are <= queueEmptyBytes. Its message goes into status: what it quotes of the pages (a
 * series' `url` label: vmagent -remoteWrite.showURL prints credentials there) is redacted.
 */
export function buildQueueSample(pods: PodReading[], opts: { queueEmptyBytes: number; at: Date; problem?: string }): QueueSample {
  const at = opts.at.toISOString();
  if (opts.problem) {
    return { at, pendingBytes: 0, unreadablePods: pods.length, totalPods: pods.length, drained: false, message: redactSecrets(opts.problem) };
  }
  const readable = pods.filter((p) => p.reading.ok);
  const unreadable = pods.filter((p) => !p.reading.ok);
  const pendingBytes = readable.reduce((a, p) => a + (p.reading.ok ? p.reading.bytes : 0), 0);
  const totalPods = pods.length;
  if (totalPods === 0) {
    return { at, pendingBytes: 0, unreadablePods: 0, totalPods: 0, drained: false, message: 'no vmagent pods found (EndpointSlices list no endpoints)' };
  }
  const backoff = readable.flatMap((p) => (p.reading.ok && p.reading.inBackoff ? [[p.pod, p.reading.inBackoff] as const] : []));
  const drained = unreadable.length === 0 && backoff.length === 0 && pendingBytes <= opts.queueEmptyBytes;
  let message = drained
    ? `drained: ${formatBytes(pendingBytes)} pending on ${totalPods} vmagent pod${totalPods === 1 ? '' : 's'}`
    : `${formatBytes(pendingBytes)} pending on ${readable.length}/${totalPods} vmagent pods`;
  if (pendingBytes > opts.queueEmptyBytes && unreadable.length === 0) message += ` (threshold ${formatBytes(opts.queueEmptyBytes)})`;
  if (backoff.length > 0) {
    const blocks = backoff.reduce((a, [, n]) => a + n, 0);
    const shown = backoff.slice(0, 3).map(([pod, n]) => `${pod}: ${n}`);
    message += `; ${blocks} block${blocks === 1 ? '' : 's'} waiting out a send-retry backoff (${shown.join(', ')}${backoff.length > 3 ? ', …' : ''})`;
  }
  if (unreadable.length > 0) {
    const shown = unreadable.slice(0, 3).map((p) => `vmagent pod ${p.pod}: ${p.reading.ok ? '' : p.reading.message}`);
    message += `; ${unreadable.length} unreadable: ${shown.join('; ')}${unreadable.length > 3 ? '; …' : ''}`;
  }
  const sample: QueueSample = { at, pendingBytes, unreadablePods: unreadable.length, totalPods, drained, message: redactSecrets(message).slice(0, 1000) };
  const retries = readable.flatMap((p) => (p.reading.ok && p.reading.retries !== undefined ? [[p.pod, p.reading.retries] as const] : []));
  if (retries.length > 0) sample.sendRetries = Object.fromEntries(retries);
  if (backoff.length > 0) sample.blocksInBackoff = Object.fromEntries(backoff);
  if (readable.length > 0) sample.podPendingBytes = Object.fromEntries(readable.map((p) => [p.pod, p.reading.ok ? p.reading.bytes : 0]));
  return sample;
}
