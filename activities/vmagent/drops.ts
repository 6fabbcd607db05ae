// Pure: a vmagent /metrics page → what it dropped for a zone's remote writes (api/types.ts
// DropCounters), read strictly as the queue's families are (../pods/prometheus-text.ts). A page
// without one of the counters is unreadable, never a silent 0 (vmagent v1.150.0 registers each for
// every remote write it opens: remotewrite.go newRemoteWriteCtx, client.go, lib/persistentqueue).
import type { DropCounters } from '../../api/types';
import { badValue, parseSeries, type MetricSeries } from '../pods/prometheus-text';
import { queueSeries } from './match';
import type { PageReading } from './pod-readings';
import type { RemoteWriteQueue } from './url';

export const SAMPLES_DROPPED_METRIC = 'vmagent_remotewrite_samples_dropped_total';
export const PQ_BYTES_DROPPED_METRIC = 'vm_persistentqueue_bytes_dropped_total';
export const PQ_BLOCKS_DROPPED_METRIC = 'vm_persistentqueue_blocks_dropped_total';
export const PACKETS_DROPPED_METRIC = 'vmagent_remotewrite_packets_dropped_total';
const DROP_FAMILIES: readonly string[] = [SAMPLES_DROPPED_METRIC, PQ_BYTES_DROPPED_METRIC, PQ_BLOCKS_DROPPED_METRIC, PACKETS_DROPPED_METRIC];

/** Each counter, in DropCounters' order, and the label that names a queue's series besides `path`. */
const COUNTERS: ReadonlyArray<[string, 'url' | 'name']> = [
  [SAMPLES_DROPPED_METRIC, 'url'],
  [PQ_BYTES_DROPPED_METRIC, 'name'],
  [PQ_BLOCKS_DROPPED_METRIC, 'name'],
  [PACKETS_DROPPED_METRIC, 'url'],
];

/** The zone's drop counters on one page, summed over its queues. */
export function readDrops(text: string, queues: RemoteWriteQueue[]): PageReading<DropCounters> {
  let series: MetricSeries[];
  try {
    series = parseSeries(text, DROP_FAMILIES);
  } catch (err) {
    return { ok: false, message: (err instanceof Error ? err.message : String(err)).slice(0, 300) };
  }
  const totals = COUNTERS.map(() => 0);
  for (const q of queues) {
    for (const [i, [metric, label]] of COUNTERS.entries()) {
      const found = queueSeries(series, metric, q, label);
      if (found.length === 0) return { ok: false, message: `no ${metric} series for remoteWrite[${q.index}]` };
      const bad = badValue(found, 'a drop counter');
      if (bad) return { ok: false, message: bad };
      totals[i]! += found.reduce((a, s) => a + s.value, 0);
    }
  }
  const [samples, bytes, blocks, packets] = totals as [number, number, number, number];
  return { ok: true, value: { samples, bytes, blocks, packets } };
}
