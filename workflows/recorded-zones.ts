// Zones an earlier generation (or a run that died, was cancelled or terminated) left out of reads,
// found from the records on the route objects: this run adopts them first, before any other zone
// leaves: each is confirmed out in the vmauth pods before its VMCluster changes, and rejoins only
// once operational at the desired spec and drained. A zone its trafficMode holds out of reads is not
// adopted: it stays out, and is upgraded at its turn (write-only).
import { RELEASE_COMMAND } from '../api/route-records';
import { FailureType, stepFailure } from './failures';
import type { Outcome } from './failure-hold';
import { syncRecorded } from './read-switch';
import type { RolloutRun } from './rollout-run';
import { zoneState } from './state';

export function adoptRecordedZones({ ctx, state, report, hold }: Pick<RolloutRun, 'ctx' | 'state' | 'report' | 'hold'>): Promise<Outcome> {
  return hold.run(async () => {
    const recorded = await ctx.acts.short.readRecords({ namespace: ctx.ns, uid: ctx.object.uid });
    const orphans = recorded.filter((r) => !state.zones.some((z) => z.name === r.zone));
    if (orphans.length > 0) {
      const where = orphans.map((r) => `${r.zone} (${r.removals.map((x) => `${x.route.kind} ${x.route.name}`).join(', ')})`).join('; ');
      throw stepFailure(
        FailureType.OrphanedRecord,
        `out of read rotation but no longer in the spec: ${where}; add the zone back to the spec, or release it: ` +
          `${RELEASE_COMMAND} --namespace ${ctx.ns} --vmdc ${ctx.object.name} --zone <zone>`,
      );
    }
    syncRecorded(state, recorded);
    const adoptable = recorded.filter((r) => !zoneState(state, r.zone).held);
    if (adoptable.length === 0) return 'done';
    for (const r of adoptable) {
      const z = zoneState(state, r.zone);
      // The run that took it out may have ended before any vmauth pod was confirmed to run a config
      // without it [I2]: confirm the switch first, then upgrade; it may already have been patched:
      // never skipped, never rejoined early.
      z.step = 'WaitingForSwitch';
      z.patchAttempted = true;
      z.drainedConfirmed = false;
      z.note = { kind: 'adopted', since: r.since, generation: r.generation };
      z.outSince = r.since;
      z.adopted = true;
    }
    const adopted = new Set(adoptable.map((r) => r.zone));
    state.order = [...state.order.filter((n) => adopted.has(n)), ...state.order.filter((n) => !adopted.has(n))];
    state.run = { kind: 'adopted', zones: [...adopted] };
    await report.write();
    return 'done';
  });
}
