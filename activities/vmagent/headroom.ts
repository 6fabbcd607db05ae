// Pure: from vmagent /metrics pages to whether each pod's queue for a zone survives the zone's
// expected downtime (strategy.queueHeadroom). The families are read strictly, as the queue's are
// (../pods/prometheus-text.ts): a damaged page is unreadable, never a guess.
//
// vmagent facts (v1.150.0):
//  - lib/persistentqueue/fastqueue.go registers, per queue,
//      vm_persistentqueue_free_disk_space_bytes{path, name} = maxPendingBytes == 0
//        ? free disk space at path
//        : min(maxPendingBytes - disk bytes pending, free disk space at path)
//    with maxPendingBytes the effective -remoteWrite.maxDiskUsagePerURL of the queue (raised to
//    persistentqueue.DefaultChunkFileSize, ~512 MiB, when set below it: remotewrite.go
//    newRemoteWriteCtx). It is what the queue can still take on disk before vmagent drops its oldest
//    blocks (vm_persistentqueue_bytes_dropped_total), so it is the room, as vmagent itself computes it.
//  - With -remoteWrite.disableOnDiskQueue for the queue's URL the gauge still reports the disk, but
//    nothing is written there: the queue holds only its in-memory blocks, so the room is 0.
//    disableOnDiskQueue is a flagutil.ArrayBool: printed as "true,false,…"; entry i applies to
//    -remoteWrite.url i, a single entry to every URL, none is false (GetOptionalArg).
//  - What enters a queue leaves it sent (vmagent_remotewrite_bytes_sent_total{url}, block bytes as
//    they sit in the queue) or is still pending (vmagent_remotewrite_pending_data_bytes): their sum
//    over vm_app_uptime_seconds is the queue's intake since the process started.
import { formatDuration } from '../../api/duration';
import type { QueueHeadroom } from '../../api/rollout-contract';
import { badValue, parseSeries, type MetricSeries } from '../pods/prometheus-text';
import { formatBytes, PENDING_METRIC, queueSeries, readQueue } from './match';
import type { PageReading } from './pod-readings';
import type { RemoteWriteQueue } from './url';

export const BYTES_SENT_METRIC = 'vmagent_remotewrite_bytes_sent_total';
export const FREE_DISK_METRIC = 'vm_persistentqueue_free_disk_space_bytes';
export const UPTIME_METRIC = 'vm_app_uptime_seconds';
/** vmagent's flags, one series each: flag{name, value, is_set} 1. */
export const FLAG_METRIC = 'flag';
export const DISABLE_ON_DISK_FLAG = 'remoteWrite.disableOnDiskQueue';
export const MAX_DISK_USAGE_FLAG = 'remoteWrite.maxDiskUsagePerURL';
export const HEADROOM_FAMILIES: readonly string[] = [PENDING_METRIC, BYTES_SENT_METRIC, FREE_DISK_METRIC, UPTIME_METRIC, FLAG_METRIC];

/**
 * Below this uptime the average intake says little (a pod that just started may not have taken in
 * anything yet): such a pod is read again later, not judged.
 */
export const MIN_UPTIME_SECONDS = 10;

/** One queue of the zone on one pod. */
export interface QueueRoom {
  index: number;
  rateBytesPerSecond: number;
  roomBytes: number;
  /** The on-disk queue is off for this URL: the room is 0 whatever the disk has. */
  onDiskOff: boolean;
  /** -remoteWrite.maxDiskUsagePerURL as vmagent prints it for this URL ('' or '0': unlimited). */
  maxDiskUsage: string;
  uptimeSeconds: number;
}

/** Entry `index` of a vmagent array flag as printed (comma-joined), by flagutil's GetOptionalArg. */
export function arrayFlagEntry(printed: string, index: number): string | undefined {
  const entries = printed === '' ? [] : printed.split(',');
  if (index < entries.length) return entries[index];
  return entries.length === 1 ? entries[0] : undefined;
}

function flagValue(series: MetricSeries[], name: string): string | undefined {
  return series.find((s) => s.metric === FLAG_METRIC && s.labels.name === name)?.labels.value;
}

const total = (found: MetricSeries[]) => found.reduce((a, s) => a + s.value, 0);

/** The room and intake of each of the zone's queues on one vmagent page. */
export function readHeadroom(text: string, queues: RemoteWriteQueue[]): PageReading<QueueRoom[]> {
  let series: MetricSeries[];
  try {
    series = parseSeries(text, HEADROOM_FAMILIES);
  } catch (err) {
    return { ok: false, message: (err instanceof Error ? err.message : String(err)).slice(0, 300) };
  }
  const uptime = series.filter((s) => s.metric === UPTIME_METRIC);
  if (uptime.length !== 1) return { ok: false, message: `expected one ${UPTIME_METRIC} series, found ${uptime.length}` };
  const badUptime = badValue(uptime, 'the uptime');
  if (badUptime) return { ok: false, message: badUptime };
  const uptimeSeconds = uptime[0]!.value;
  if (uptimeSeconds < MIN_UPTIME_SECONDS) {
    return { ok: false, message: `up for ${uptimeSeconds} s only: its intake is estimated after ${MIN_UPTIME_SECONDS} s` };
  }
  const onDiskFlag = flagValue(series, DISABLE_ON_DISK_FLAG) ?? '';
  const out: QueueRoom[] = [];
  for (const q of queues) {
    const pending = readQueue(series, q);
    if (!pending.ok) return pending;
    const sent = queueSeries(series, BYTES_SENT_METRIC, q, 'url');
    const room = queueSeries(series, FREE_DISK_METRIC, q, 'name');
    if (sent.length === 0) return { ok: false, message: `no ${BYTES_SENT_METRIC} series for remoteWrite[${q.index}]` };
    if (room.length !== 1) return { ok: false, message: `expected one ${FREE_DISK_METRIC} series for remoteWrite[${q.index}], found ${room.length}` };
    const bad = badValue(sent, 'bytes sent') ?? badValue(room, 'free disk space');
    if (bad) return { ok: false, message: bad };
    const off = arrayFlagEntry(onDiskFlag, q.index) ?? 'false';
    if (off !== 'true' && off !== 'false')
      return { ok: false, message: `-${DISABLE_ON_DISK_FLAG} entry ${JSON.stringify(off.slice(0, 40))} is not true or false` };
    out.push({
      index: q.index,
      rateBytesPerSecond: (total(sent) + pending.bytes) / uptimeSeconds,
      roomBytes: off === 'true' ? 0 : Math.floor(room[0]!.value),
      onDiskOff: off === 'true',
      maxDiskUsage: (arrayFlagEntry(flagValue(series, MAX_DISK_USAGE_FLAG) ?? '', q.index) ?? '').slice(0, 40),
      uptimeSeconds,
    });
  }
  return { ok: true, value: out };
}

export interface PodRoom {
  pod: string;
  queues: QueueRoom[];
}

const need = (q: QueueRoom, horizonMs: number) => Math.ceil((q.rateBytesPerSecond * horizonMs) / 1000);

function describeQueue(pod: string, q: QueueRoom, horizonMs: number): string {
  const limit = q.onDiskOff
    ? `-${DISABLE_ON_DISK_FLAG} is set for it: only what fits in memory`
    : `room ${formatBytes(q.roomBytes)} (-${MAX_DISK_USAGE_FLAG}=${q.maxDiskUsage === '' || q.maxDiskUsage === '0' ? 'unset: the free disk' : q.maxDiskUsage})`;
  return (
    `vmagent pod ${pod}, remoteWrite[${q.index}]: takes in ${formatBytes(Math.round(q.rateBytesPerSecond))}/s ` +
    `(average over its ${Math.round(q.uptimeSeconds)} s up), ${formatBytes(need(q, horizonMs))} over ${formatDuration(horizonMs)}; ${limit}`
  );
}

/**
 * The verdict over every pod's queues for the zone: it fits when each queue can take what it takes
 * in over `horizonMs`. The numbers are of the tightest queue (the smallest room left after the need).
 * Every pod must have been read: the caller does not judge a partial reading.
 */
export function judgeHeadroom(pods: PodRoom[], horizonMs: number, at: Date): QueueHeadroom {
  const base = { at: at.toISOString(), horizonSeconds: Math.round(horizonMs / 1000), pods: pods.length };
  const all = pods.flatMap((p) => p.queues.map((q) => ({ pod: p.pod, q, left: q.roomBytes - need(q, horizonMs) })));
  if (all.length === 0) return { ...base, fits: false, message: 'no vmagent queue for the zone was read: the headroom cannot be predicted' };
  const tightest = all.reduce((a, b) => (b.left < a.left ? b : a));
  const short = all.filter((x) => x.left < 0);
  const numbers = {
    pod: tightest.pod,
    rateBytesPerSecond: Math.round(tightest.q.rateBytesPerSecond * 1000) / 1000,
    needBytes: need(tightest.q, horizonMs),
    roomBytes: tightest.q.roomBytes,
  };
  if (short.length === 0) {
    return {
      ...base,
      ...numbers,
      fits: true,
      message: `every vmagent queue for the zone holds its expected downtime; tightest: ${describeQueue(tightest.pod, tightest.q, horizonMs)}`,
    };
  }
  const shown = short.slice(0, 3).map((x) => describeQueue(x.pod, x.q, horizonMs));
  return {
    ...base,
    ...numbers,
    fits: false,
    message:
      `${short.length} vmagent queue${short.length === 1 ? '' : 's'} for the zone would overflow within the expected downtime (${formatDuration(horizonMs)}): ${shown.join('; ')}${short.length > 3 ? '; …' : ''}`.slice(
        0,
        1000,
      ),
  };
}
