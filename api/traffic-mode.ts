// A zone's traffic mode (spec.zones[].trafficMode), named as the VictoriaMetrics operator's
// VMDistributed names them. vmrollout switches reads only, so a mode is about reads: write-only and
// maintenance hold the zone out of reads across rollouts (recorded like any zone out), and read-only
// is refused: a zone serving reads while its writes are held back serves stale reads. Pure.

export const TRAFFIC_MODES = ['read-write', 'write-only', 'maintenance', 'read-only'] as const;
export type TrafficMode = (typeof TRAFFIC_MODES)[number];

/** The modes that hold a zone out of reads: write-only (still upgraded), maintenance (left alone). */
export type HeldMode = Extract<TrafficMode, 'write-only' | 'maintenance'>;

export const READ_ONLY_MESSAGE =
  'read-only is not supported: a zone serving reads while its writes are held back serves stale reads; ' +
  'use write-only (out of reads, still written and upgraded) or maintenance (out of reads, left alone by rollouts)';
export const SERVING_ZONE_MESSAGE = 'at least one zone must be read-write (trafficMode unset or read-write): otherwise no zone serves reads';
export const CANARY_HELD_MESSAGE = 'must name a read-write zone: a canary rejoins reads after its analysis';

/** The mode holding the zone out of reads, or undefined when it serves reads. */
export function heldMode(zone: { trafficMode?: TrafficMode }): HeldMode | undefined {
  const m = zone.trafficMode;
  return m === 'write-only' || m === 'maintenance' ? m : undefined;
}

/** CEL: whether zone `v` serves reads (mode unset or read-write). */
export const SERVES_READS_CEL = (v: string) => `(!has(${v}.trafficMode) || ${v}.trafficMode == 'read-write')`;
