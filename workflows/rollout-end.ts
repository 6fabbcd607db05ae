// How a run ends: its last transition, told in the status, and the result the workflow returns.
import type { RolloutSignals } from './signals';
import { rolloutMessage, rolloutPhase } from './status';
import type { RolloutResult } from '../api/rollout-contract';
import { zoneState, zonesOutOfRotation, type RolloutState, type RunNote } from './state';
import type { StatusReport } from './status-report';

export function rolloutResult(state: RolloutState): RolloutResult {
  return {
    phase: rolloutPhase(state),
    message: rolloutMessage(state),
    zones: state.order.map((n) => {
      const z = zoneState(state, n);
      return { name: n, phase: z.phase, ...(z.vmclusterGeneration !== undefined ? { vmclusterGeneration: z.vmclusterGeneration } : {}) };
    }),
    zonesOutOfRotation: zonesOutOfRotation(state),
  };
}

/** Record the end of the rollout (`end`) in the status and return its result. */
export async function finish(
  { state, report }: { state: RolloutState; report: StatusReport },
  end: Extract<RunNote, { kind: 'succeeded' | 'superseded' | 'aborted' | 'planned' }>,
): Promise<RolloutResult> {
  state.run = end;
  state.currentStep = undefined;
  if (end.kind !== 'superseded') state.currentZone = undefined;
  await report.write();
  return rolloutResult(state);
}

export function finishSuperseded(run: { state: RolloutState; report: StatusReport; signals: RolloutSignals }): Promise<RolloutResult> {
  return finish(run, { kind: 'superseded', generation: run.signals.supersededBy });
}

/** A newer generation asks for another rollout: act on nothing, not even the status. */
export function endStale(state: RolloutState, message: string): RolloutResult {
  state.run = { kind: 'stale', message };
  return rolloutResult(state);
}

/** A refused status write means the object moved on without this run: stop, before touching anything. */
export function stopRefused(state: RolloutState, signals: RolloutSignals, generation: number): void {
  signals.supersede(generation + 1);
  state.run = { kind: 'status-refused' };
}
