// The canary's analysis over its bake (strategy.canary), pure: which zone it is compared with, what
// its measurements add up to. The measurements themselves are an activity's
// (activities/analysis/measure.ts); the waits between them, the workflow's (zone-steps.ts).
import type { AnalysisMeasurement, CanaryAnalysisStatus } from '../api/types';
import type { ZoneState } from './state';

/**
 * The zones the canary may be compared with, in order: those this rollout has not touched (Pending)
 * and that are in reads. Untouched is not yet "at the previous version": a zone whose VMCluster
 * already runs the new one is skipped at its turn, so the caller reads each (baselineZone).
 */
export function baselineCandidates(zones: readonly ZoneState[], order: readonly string[], canary: string): ZoneState[] {
  return order.flatMap((n) => zones.filter((z) => z.name === n && z.name !== canary && z.phase === 'Pending' && !z.outOfRotation));
}

/**
 * At most this many measurements in one bake: each adds ~8 events to the rollout's history, which
 * must stay far below Temporal's limit (51,200) whatever bake and interval a spec asks for.
 */
export const MAX_MEASUREMENTS = 500;

/** The time between measurements: the spec's interval, at most the bake, stretched to MAX_MEASUREMENTS per bake. */
export function measurementInterval(bakeMs: number, intervalMs: number): number {
  return Math.max(Math.min(intervalMs, bakeMs), Math.ceil(bakeMs / MAX_MEASUREMENTS));
}

export function startAnalysis(at: string, bakeMs: number, baseline: string | undefined): CanaryAnalysisStatus {
  return {
    verdict: 'Running',
    ...(baseline ? { baseline } : {}),
    startedAt: at,
    bakeSeconds: Math.round(bakeMs / 1000),
    measurements: 0,
    failed: 0,
    inconclusive: 0,
    message: baseline ? `comparing with zone ${baseline}` : 'no zone to compare with',
  };
}

/** The analysis with one more measurement: counted, and shown unless a Failed one is already (the first failure decides). */
export function recordMeasurement(a: CanaryAnalysisStatus, m: AnalysisMeasurement): CanaryAnalysisStatus {
  const failed = a.failed + (m.verdict === 'Failed' ? 1 : 0);
  const inconclusive = a.inconclusive + (m.verdict === 'Inconclusive' ? 1 : 0);
  const latest = a.latest?.verdict === 'Failed' ? a.latest : m;
  return { ...a, measurements: a.measurements + 1, failed, inconclusive, latest, message: `measurement ${a.measurements + 1}: ${m.verdict}: ${m.message}` };
}

/**
 * The verdict once the bake is over (or cut short, `cutShort` saying why): Failed with any Failed
 * measurement; Inconclusive with any Inconclusive one, none at all, or a bake cut short; else
 * Successful. A measurement that could not be made is never a pass.
 */
export function concludeAnalysis(a: CanaryAnalysisStatus, cutShort?: string): CanaryAnalysisStatus {
  const counts = `${a.measurements} measurement${a.measurements === 1 ? '' : 's'} against ${a.baseline ?? 'no zone'} (${a.failed} Failed, ${a.inconclusive} Inconclusive)`;
  const why = a.latest ? `: ${a.latest.message}` : '';
  if (a.failed > 0) return { ...a, verdict: 'Failed', message: `canary analysis Failed after ${counts}${why}` };
  if (a.inconclusive > 0 || a.measurements === 0 || cutShort) {
    const reason = cutShort ?? (a.measurements === 0 ? a.message : undefined);
    return { ...a, verdict: 'Inconclusive', message: `canary analysis Inconclusive after ${counts}${reason ? `: ${reason}` : why}` };
  }
  return { ...a, verdict: 'Successful', message: `canary analysis Successful after ${counts}${why}` };
}
