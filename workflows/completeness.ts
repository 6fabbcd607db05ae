// A zone's window proven complete before it rejoins reads: an empty queue is vmagent's word that it
// delivered what it held, not that it held everything. Workflow code (deterministic).
import { formatDuration } from '../api/duration';
import type { SampleParity, SampleParitySpec, ZoneSpec } from '../api/types';
import type { RolloutActivities } from './activity-types';
import { compareDrops } from './drops';
import { FailureType, stepFailure } from './failures';
import { queueTarget, type RunContext } from './run-context';
import type { RolloutState, ZoneState } from './state';
import { storageOf } from '../api/storage';

/**
 * After the zone's queue drained, its window proven complete: vmagent dropped nothing for it since it
 * left (strategy.dataCompleteness), and it holds the samples per tenant a zone in reads holds for the
 * window (strategy.sampleParity). If not, or if either cannot tell, the zone stays out, Failed, with
 * the numbers; the drop counters of this reading become their baseline, so a retry (after a
 * backfill) counts drops from here, and the samples over the whole window again.
 */
export async function checkComplete(ctx: RunContext, state: RolloutState, z: ZoneState, zs: ZoneSpec, acts: RolloutActivities): Promise<void> {
  const { st } = ctx;
  const missing: string[] = [];
  if (st.dataCompleteness !== 'Off') {
    const after = (await acts.readVmagent({ ...queueTarget(ctx, zs), drops: true })).drops!;
    const verdict = (z.dataCompleteness = compareDrops(z.dropBaseline, after));
    if (!verdict.complete) {
      z.dropBaseline = after;
      missing.push(verdict.message);
    }
  }
  if (st.sampleParity) {
    const parity = (z.sampleParity = await countSamples(ctx, state, z, st.sampleParity, acts));
    if (!parity.complete) missing.push(parity.message);
  }
  if (missing.length === 0) return;
  throw stepFailure(
    FailureType.DataDropped,
    `${missing.join('; ')}; the zone stays out of reads: backfill its window from a healthy zone (vmctl), or accept the loss, then retry, ` +
      `or turn the check off (strategy.dataCompleteness: Off, strategy.sampleParity unset)`,
  );
}

/** strategy.sampleParity: the zone's window counted against the first zone of the order in reads (none: not counted, said). */
async function countSamples(ctx: RunContext, state: RolloutState, z: ZoneState, parity: SampleParitySpec, acts: RolloutActivities): Promise<SampleParity> {
  const now = Date.now();
  const to = now - parity.lagMs;
  const from = z.outSince === undefined ? NaN : Date.parse(z.outSince);
  const healthy = state.order.map((n) => state.zones.find((o) => o.name === n)!).find((o) => o.name !== z.name && !o.outOfRotation);
  const notCounted = (why: string): SampleParity => ({
    at: new Date(now).toISOString(),
    complete: true,
    // A record's `since` is others' input: only a time read from it is written back.
    from: new Date(Number.isFinite(from) ? from : to).toISOString(),
    to: new Date(to).toISOString(),
    tenants: [],
    tenantCount: 0,
    message: `not counted: ${why}`,
  });
  if (!healthy) return notCounted('no other zone is in reads to compare with');
  if (!Number.isFinite(from)) return notCounted('when the zone left reads is not known');
  if (to <= from) return notCounted(`the zone was out less than strategy.sampleParity.lag (${formatDuration(parity.lagMs)})`);
  return acts.countSamples({
    namespace: ctx.ns,
    zone: { zone: z.name, ...storageOf(z) },
    healthy: { zone: healthy.name, ...storageOf(healthy) },
    fromMs: from,
    toMs: to,
    parity,
  });
}
