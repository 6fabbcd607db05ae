// Pure: whether vmagent dropped anything for a zone between two readings of its drop counters
// (strategy.dataCompleteness). An empty queue is not proof of completeness: a full queue drops
// blocks and vmagent goes on reporting success. Deterministic (workflow code).
import type { DataCompleteness, DropCounters, DropReading } from '../api/types';

const ZERO: DropCounters = { samples: 0, bytes: 0, blocks: 0, packets: 0 };
const values = (c: DropCounters): number[] => [c.samples, c.bytes, c.blocks, c.packets];

/** `f` of two readings, counter by counter. */
const zip = (a: DropCounters, b: DropCounters, f: (x: number, y: number) => number): DropCounters => ({
  samples: f(a.samples, b.samples),
  bytes: f(a.bytes, b.bytes),
  blocks: f(a.blocks, b.blocks),
  packets: f(a.packets, b.packets),
});

function describeDropped(d: DropCounters): string {
  const parts = [
    d.samples ? `${d.samples} samples refused by its full in-memory queue (vmagent_remotewrite_samples_dropped_total)` : '',
    d.bytes || d.blocks ? `${d.bytes} bytes in ${d.blocks} blocks dropped from its full on-disk queue (vm_persistentqueue_bytes_dropped_total)` : '',
    d.packets ? `${d.packets} blocks the zone refused for good (vmagent_remotewrite_packets_dropped_total)` : '',
  ];
  return parts.filter(Boolean).join(', ');
}

/**
 * What the pods dropped for the zone from `before` (the reading taken before its upgrade; undefined
 * for a zone found out of reads: since each pod started) to `after`. A pod whose counters went down
 * (restarted) or that is gone cannot say what it lost in between (a killed vmagent loses what it held
 * in memory): the zone is not proven complete.
 */
export function compareDrops(before: DropReading | undefined, after: DropReading): DataCompleteness {
  const was = new Map((before?.pods ?? []).map((p) => [p.pod, p.counters]));
  let dropped = ZERO;
  const droppedBy: string[] = [];
  const unverified: string[] = [];
  for (const { pod, counters } of after.pods) {
    const base = was.get(pod);
    const reset = base !== undefined && values(counters).some((v, i) => v < values(base)[i]!);
    if (reset) unverified.push(`${pod} restarted (its counters went down)`);
    const from = base && !reset ? base : ZERO;
    const delta = zip(counters, from, (x, y) => x - y);
    if (values(delta).some((v) => v > 0)) droppedBy.push(pod);
    dropped = zip(dropped, delta, (x, y) => x + y);
  }
  const now = new Set(after.pods.map((p) => p.pod));
  for (const pod of was.keys()) if (!now.has(pod)) unverified.push(`${pod} is gone`);
  const since = before ? ` since ${before.at}` : ' since each vmagent pod started (no reading from before the zone left reads)';
  const base = { at: after.at, ...(before ? { since: before.at } : {}), dropped, unverifiedPods: unverified.length };
  if (droppedBy.length === 0 && unverified.length === 0) {
    return {
      ...base,
      complete: true,
      message: `nothing dropped for the zone by ${after.pods.length} vmagent pod${after.pods.length === 1 ? '' : 's'}${since}`,
    };
  }
  const what = [
    droppedBy.length
      ? `vmagent dropped data for the zone${since}: ${describeDropped(dropped)} (pods ${droppedBy.slice(0, 3).join(', ')}${droppedBy.length > 3 ? ', …' : ''})`
      : '',
    unverified.length
      ? `cannot tell what ${unverified.length === 1 ? 'one pod' : `${unverified.length} pods`} lost: ${unverified.slice(0, 3).join('; ')}${unverified.length > 3 ? '; …' : ''}`
      : '',
  ];
  return { ...base, complete: false, message: what.filter(Boolean).join('; ').slice(0, 1000) };
}
