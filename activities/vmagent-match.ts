// Pure: from one vmagent's /metrics text to the pending bytes of one zone's remote write queues,
// and from per-pod readings to a QueueSample. See vmagent-url.ts for the vmagent facts.
//
// The page is read strictly for the three families we rely on (QUEUE_FAMILIES): a line of one of
// them that is not exactly a Prometheus text-format sample, a series that appears twice, or a value
// that is not a decimal float makes the whole page unreadable ("not drained", with the line and the
// reason), never a silent 0. No npm parser does this: parse-prometheus-text-format (which this
// replaced) passes values on unchecked (`0x10` then read as 16, an empty value as 0), reads a broken
// label quote as "no labels" and keeps the last of two duplicate series; prom2javascript and
// @platformatic/promotel use parseFloat (`1_000` → 1, `0x10` → 0).
import type { QueueSample } from '../workflows/activity-types';
import type { RemoteWriteQueue } from './vmagent-url';

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

/** One series of a /metrics page. */
export interface PendingSeries {
  metric: string;
  labels: Record<string, string>;
  value: number;
}

/** The page cannot be trusted: a line of a queue family is malformed, or a series repeats. */
export class MetricsPageError extends Error {
  override name = 'MetricsPageError';
}

const isBlank = (c: string | undefined) => c === ' ' || c === '\t';
function skipBlanks(line: string, i: number): number {
  while (isBlank(line[i])) i++;
  return i;
}
const METRIC_NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const NAME_CHAR = /[a-zA-Z0-9_:]/;
/** The characters of a label value up to the next quote, backslash or U+FFFD (invalid UTF-8). */
const PLAIN_RUN = /[^"\\\uFFFD]*/y;
/**
 * A float in decimal notation (what Go's ParseFloat reads, less hex, underscores and inf/nan
 * spellings). Written so that a failing match never backtracks (`\d+\.?\d*` would: quadratic time
 * on a long run of digits with a bad end).
 */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A sample value of the text format: a decimal float, or exactly `NaN`, `+Inf`, `-Inf` (the format's
 * special values; the caller decides what they mean). Anything else (`0x10`, `1_000`, ``, `inf`,
 * `Infinity`, `1,5`) is undefined.
 */
export function parseSampleValue(token: string): number | undefined {
  if (token === 'NaN') return NaN;
  if (token === '+Inf') return Infinity;
  if (token === '-Inf') return -Infinity;
  return DECIMAL.test(token) ? Number(token) : undefined;
}

export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * One sample line of the Prometheus text exposition format (0.0.4), strictly:
 *   name [blanks] [ "{" label="value" { "," label="value" } [","] "}" ] blanks value [blanks timestamp] [blanks]
 * with blanks (space, tab) allowed between the tokens inside the braces, label values escaped only
 * with `\\`, `\"` and `\n`, no label name twice, a value as parseSampleValue reads it, and an int64
 * timestamp (ignored). Returns the sample, or why the line is not one.
 */
export function parseSampleLine(line: string): ParsedSample | { error: string } {
  let i = 0;
  const at = () => (i < line.length ? `${JSON.stringify(line[i])} at column ${i + 1}` : 'end of line');
  i = skipBlanks(line, i);
  METRIC_NAME.lastIndex = i;
  const name = METRIC_NAME.exec(line)?.[0];
  if (!name) return { error: `expected a metric name, found ${at()}` };
  i += name.length;
  const afterName = i;
  i = skipBlanks(line, i);
  if (line[i] !== '{') i = afterName; // the blanks were the ones before the value
  const labels: Record<string, string> = Object.create(null) as Record<string, string>;
  if (line[i] === '{') {
    i++;
    for (;;) {
      i = skipBlanks(line, i);
      if (line[i] === '}') break;
      LABEL_NAME.lastIndex = i;
      const label = LABEL_NAME.exec(line)?.[0];
      if (!label) return { error: `expected a label name or "}", found ${at()}` };
      i += label.length;
      i = skipBlanks(line, i);
      if (line[i] !== '=') return { error: `expected "=" after label ${label}, found ${at()}` };
      i++;
      i = skipBlanks(line, i);
      if (line[i] !== '"') return { error: `expected '"' to open the value of label ${label}, found ${at()}` };
      i++;
      let value = '';
      for (;;) {
        PLAIN_RUN.lastIndex = i;
        const run = PLAIN_RUN.exec(line)![0];
        value += run;
        i += run.length;
        if (i >= line.length) return { error: `unterminated value of label ${label}` };
        const c = line[i++]!;
        if (c === '"') break;
        if (c === '\uFFFD') return { error: `invalid UTF-8 in the value of label ${label}` };
        const e = line[i++];
        if (e === '\\' || e === '"') value += e;
        else if (e === 'n') value += '\n';
        else return { error: `invalid escape ${JSON.stringify(`\\${e ?? ''}`)} in the value of label ${label}` };
      }
      if (Object.prototype.hasOwnProperty.call(labels, label)) return { error: `label ${label} appears twice` };
      labels[label] = value;
      i = skipBlanks(line, i);
      if (line[i] === ',') {
        i++;
        continue;
      }
      if (line[i] !== '}') return { error: `expected "," or "}" after the value of label ${label}, found ${at()}` };
      break;
    }
    i++; // the "}"
  }
  if (!isBlank(line[i])) return { error: i < line.length ? `expected a blank before the value, found ${at()}` : 'no value' };
  i = skipBlanks(line, i);
  const valueStart = i;
  while (i < line.length && !isBlank(line[i])) i++;
  const token = line.slice(valueStart, i);
  if (token === '') return { error: 'no value' };
  const value = parseSampleValue(token);
  if (value === undefined) return { error: `value ${JSON.stringify(token)} is not a decimal number, NaN, +Inf or -Inf` };
  i = skipBlanks(line, i);
  if (i < line.length) {
    const tsStart = i;
    while (i < line.length && !isBlank(line[i])) i++;
    const ts = line.slice(tsStart, i);
    if (!/^[+-]?\d{1,19}$/.test(ts) || BigInt(ts) < INT64_MIN || BigInt(ts) > INT64_MAX) {
      return { error: `timestamp ${JSON.stringify(ts)} is not an int64 of milliseconds` };
    }
    i = skipBlanks(line, i);
    if (i < line.length) return { error: `unexpected ${at()} after the timestamp` };
  }
  return { name, labels, value };
}

/** The family of `families` a line belongs to: it starts (after blanks) with the family's name and no longer name. */
function familyOf(line: string, families: readonly string[]): string | undefined {
  let i = 0;
  while (isBlank(line[i])) i++;
  for (const f of families) {
    if (line.startsWith(f, i) && !NAME_CHAR.test(line[i + f.length] ?? '')) return f;
  }
  return undefined;
}

/** The line as shown in a message: at most 100 characters, control and invisible characters escaped. */
function snippet(line: string): string {
  const shown = line.length > 100 ? `${line.slice(0, 100)}…` : line;
  return `\`${shown.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\``;
}

/** A series' identity: its name and its label set (in any order). */
function seriesKey(name: string, labels: Record<string, string>): string {
  // Names have no "{", "=", ",", ":" ambiguity left once each value carries its length.
  let key = `${name}{`;
  for (const k of Object.keys(labels).sort()) key += `${k}=${labels[k]!.length}:${labels[k]},`;
  return key;
}

/**
 * The series of `families` in a /metrics text. Only lines of those families are parsed, so an
 * unrelated exotic line elsewhere cannot make the scrape unreadable. Throws MetricsPageError, naming
 * the (1-based) line, when one of those lines is not a strict sample or a series appears twice.
 */
export function parseSeries(text: string, families: readonly string[]): PendingSeries[] {
  const firstChars = new Set(families.map((f) => f[0]));
  const out: PendingSeries[] = [];
  const seen = new Map<string, number>();
  let lineNo = 0;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    lineNo++;
    // Most lines stop at their first character.
    let c = 0;
    while (isBlank(line[c])) c++;
    if (!firstChars.has(line[c])) continue;
    const family = familyOf(line, families);
    if (!family) continue;
    const parsed = parseSampleLine(line);
    if ('error' in parsed) throw new MetricsPageError(`malformed line ${lineNo} of ${family}: ${parsed.error}: ${snippet(line)}`);
    const key = seriesKey(parsed.name, parsed.labels);
    const first = seen.get(key);
    if (first !== undefined) throw new MetricsPageError(`duplicate series on lines ${first} and ${lineNo} of ${family}: ${snippet(line)}`);
    seen.set(key, lineNo);
    out.push({ metric: parsed.name, labels: parsed.labels, value: parsed.value });
  }
  return out;
}

/** The queue series of a vmagent /metrics text. */
export const parseQueueSeries = (text: string): PendingSeries[] => parseSeries(text, QUEUE_FAMILIES);

function pathMatches(path: string | undefined, dirName: string): boolean {
  if (!path) return false;
  return path === dirName || path.endsWith(`/${dirName}`) || path.endsWith(`\\${dirName}`);
}

export type MatchedBy = 'path' | 'url';

export type QueueReading =
  | { ok: true; bytes: number; matchedBy: MatchedBy; series: number; retries?: number; inBackoff?: number }
  | { ok: false; message: string };

const describeSeries = (s: PendingSeries) =>
  `${s.metric}{${Object.entries(s.labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;

/** A value that cannot be a byte count or a counter (NaN, ±Inf, negative), described; else undefined. */
function badValue(found: PendingSeries[], what: string): string | undefined {
  const bad = found.find((s) => !Number.isFinite(s.value) || s.value < 0);
  return bad ? `${describeSeries(bad)} has value ${bad.value}: ${what} must be a finite number >= 0`.slice(0, 300) : undefined;
}

const sum = (found: PendingSeries[]) => found.reduce((a, s) => a + s.value, 0);

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
function blocksInBackoff(counters: PendingSeries[]): number | undefined {
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
export function readQueue(series: PendingSeries[], queue: RemoteWriteQueue): QueueReading {
  const primary = series.filter((s) => s.metric === PENDING_METRIC);
  const prefix = `${queue.index + 1}:`;
  const urlMatches = (s: PendingSeries) => s.labels.url === `${prefix}secret-url` || s.labels.url === `${prefix}${queue.url}`;
  const candidates: Array<[MatchedBy, PendingSeries[]]> = [
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
  let series: PendingSeries[];
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
 * the pods are <= queueEmptyBytes.
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
  const sample: QueueSample = { at, pendingBytes, unreadablePods: unreadable.length, totalPods, drained, message: message.slice(0, 1000) };
  const retries = readable.flatMap((p) => (p.reading.ok && p.reading.retries !== undefined ? [[p.pod, p.reading.retries] as const] : []));
  if (retries.length > 0) sample.sendRetries = Object.fromEntries(retries);
  if (backoff.length > 0) sample.blocksInBackoff = Object.fromEntries(backoff);
  if (readable.length > 0) sample.podPendingBytes = Object.fromEntries(readable.map((p) => [p.pod, p.reading.ok ? p.reading.bytes : 0]));
  return sample;
}
