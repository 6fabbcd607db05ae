// Safe points: between steps, where a pause is honoured.
import type { RolloutSignals } from './signals';
import type { RolloutState } from './state';
import type { StatusReport } from './status-report';

/** Honour a pause (unless superseded: a newer generation is waiting for this run). */
export async function safePoint({ state, signals, report }: { state: RolloutState; signals: RolloutSignals; report: StatusReport }): Promise<void> {
  if (!signals.pauseRequested || signals.superseded()) return;
  state.paused = true;
  await report.write();
  await signals.untilUnpaused();
  state.paused = false;
  await report.write();
}
