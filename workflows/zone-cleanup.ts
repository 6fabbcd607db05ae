// Cleanup of a zone in flight when the workflow stops early (cancel, or supersede after a
// failure): an unpatched zone rejoins at once; a patched one only when operational at the patched
// generation and drained (a sample, then queueDrainedFor confirmed); else it stays out, and the
// status says why. A zone its trafficMode holds stays out. Runs in a non-cancellable scope (the caller's).
import { isCancellation } from '@temporalio/workflow';
import { failureMessage } from './failures';
import { isOperationalAt, patchMayHaveLanded } from './plan';
import type { RolloutRun } from './rollout-run';
import { queueTarget, zoneSpec } from './run-context';
import { heldStaysOut, type RejoinedHow, type ZoneState } from './state';
import { checkComplete } from './completeness';
import { storageObject, zoneStorage } from '../api/storage';

export async function cleanupZone(
  { ctx, state, report, reads }: Pick<RolloutRun, 'ctx' | 'state' | 'report' | 'reads'>,
  z: ZoneState,
  why: string,
): Promise<void> {
  if (!z.outOfRotation) return;
  if (z.held) {
    z.note = heldStaysOut(z, why);
    await report.write();
    return;
  }
  const zs = zoneSpec(ctx, z.name);
  const { cleanup, confirmDrain } = ctx.acts;
  const { ns, st } = ctx;
  const stayOut = async (reason: string) => {
    z.note = { kind: 'stays-out', why, reason };
    await report.write();
  };
  const rejoin = async (how: RejoinedHow, generation?: number) => {
    await reads.rejoin(z, cleanup);
    z.note = { kind: 'rejoined', why, how, ...(generation !== undefined ? { generation } : {}) };
  };
  const a = z.analysis;
  // A canary put back only once its analysis passed (or a person promoted it): never by a cancel.
  if (z.patchAttempted && a && a.verdict !== 'Successful' && !a.promoted) return await stayOut(`canary analysis ${a.verdict}: ${a.message}`);
  try {
    if (!z.patchAttempted || z.drainedConfirmed) {
      await rejoin(z.drainedConfirmed ? 'after-upgrade' : 'before-upgrade');
      await report.write();
      return;
    }
    const cur = await cleanup.readObject(storageObject(zs, ns));
    if (!patchMayHaveLanded(z, cur)) {
      // The patch never landed: the zone is as it was before, safe to rejoin.
      await rejoin('not-changed');
      z.patchAttempted = false;
      await report.write();
      return;
    }
    const gen = z.vmclusterGeneration ?? cur.generation;
    if (!isOperationalAt(cur, gen)) {
      return await stayOut(
        `${zoneStorage(zs).kind} not operational at generation ${gen} (${cur.updateStatus ?? 'unknown'}, observed ${cur.observedGeneration ?? '-'})`,
      );
    }
    if (z.dataCompleteness && !z.dataCompleteness.complete) return await stayOut(z.dataCompleteness.message);
    if (z.sampleParity && !z.sampleParity.complete) return await stayOut(z.sampleParity.message);
    const sample = await cleanup.sampleQueue(queueTarget(ctx, zs));
    state.lastQueueSample = { ...sample, zone: z.name };
    if (!sample.drained) return await stayOut(`vmagent queue not drained: ${sample.message}`);
    const confirmed = await confirmDrain.waitQueueDrained({
      ...queueTarget(ctx, zs),
      queueDrainedForMs: st.queueDrainedForMs,
      pollIntervalMs: st.pollIntervalMs,
    });
    state.lastQueueSample = { ...confirmed, zone: z.name };
    await checkComplete(ctx, state, z, zs, cleanup);
    z.drainedConfirmed = true;
    await rejoin('drained', gen);
    await report.write();
  } catch (e) {
    if (isCancellation(e)) throw e;
    await stayOut(failureMessage(e));
  }
}
