// The trigger's per-object state gauges, read from each VMDistributedCluster's status as the watch
// shows it. One trigger watches every object, so each series exists once, whichever worker wrote
// the status: summed over objects (or scrapes) they add up, which a gauge kept by each worker
// replica of the phases it wrote itself cannot do. Pure: an object → its series.
import type { ZonePhase } from '../api/types';
import type { VmdcObject } from '../kube/vmdc-object';

export const ROLLOUT_PHASE = 'vmrollout_rollout_phase';
export const ZONE_OUT_OF_READS = 'vmrollout_zone_out_of_reads';
export const ZONE_STEP = 'vmrollout_zone_step';

/** Zone phases with no step in flight: not started, nothing to do, done. Failed is shown: the zone waits out of reads. */
export const IDLE_ZONE_PHASES: ReadonlySet<ZonePhase> = new Set<ZonePhase>(['Pending', 'Skipped', 'Done']);

/** One series of value 1. */
export type StatusSeries =
  | { metric: typeof ROLLOUT_PHASE; labels: { namespace: string; name: string; phase: string } }
  | { metric: typeof ZONE_OUT_OF_READS; labels: { namespace: string; name: string; zone: string } }
  | { metric: typeof ZONE_STEP; labels: { namespace: string; name: string; zone: string; step: string } };

/**
 * The series one object's status makes: its phase (none before a phase is written), each zone in
 * `zonesOutOfRotation`, and each zone of `zones` in a step (or Failed) with that phase as `step`.
 */
export function statusSeries(obj: VmdcObject): StatusSeries[] {
  const namespace = obj.metadata?.namespace;
  const name = obj.metadata?.name;
  const st = obj.status;
  if (!namespace || !name || !st) return [];
  const out: StatusSeries[] = [];
  if (st.phase) out.push({ metric: ROLLOUT_PHASE, labels: { namespace, name, phase: st.phase } });
  for (const zone of new Set(st.zonesOutOfRotation ?? [])) out.push({ metric: ZONE_OUT_OF_READS, labels: { namespace, name, zone } });
  const stepped = new Set<string>();
  for (const z of st.zones ?? []) {
    if (IDLE_ZONE_PHASES.has(z.phase) || stepped.has(z.name)) continue;
    stepped.add(z.name);
    out.push({ metric: ZONE_STEP, labels: { namespace, name, zone: z.name, step: z.phase } });
  }
  return out;
}
