// How a run ends: its last status and the result the workflow returns.
import type { Phase } from '../api/types';
import type { RolloutSignals } from './signals';
import { zoneState, zonesOutOfRotation, type RolloutResult, type RolloutState } from './state';
import type { StatusReport } from './status-report';

export function rolloutResult(state: RolloutState): RolloutResult {
  return {
    phase: state.phase,
    message: state.message,
    zones: state.order.map((n) => {
      const z = zoneState(state, n);
      return { name: n, phase: z.phase, ...(z.vmclusterGeneration !== undefined ? { vmclusterGeneration: z.vmclusterGeneration } : {}) };
    }),
    zonesOutOfRotation: zonesOutOfRotation(state),
  };
}

/** Record the end of the rollout in the status and return its result. */
export async function finish({ state, report }: { state: RolloutState; report: StatusReport }, phase: Phase, message: string): Promise<RolloutResult> {
  state.phase = phase;
  state.message = message;
  state.currentStep = undefined;
  if (phase === 'Succeeded') state.currentZone = undefined;
  await report.write();
  return rolloutResult(state);
}

export function finishSuperseded(run: { state: RolloutState; report: StatusReport; signals: RolloutSignals }): Promise<RolloutResult> {
  return finish(run, 'Superseded', `superseded by generation ${run.signals.supersededBy}`);
}

/** A newer generation asks for another rollout: act on nothing, not even the status. */
export function endStale(state: RolloutState, message: string): RolloutResult {
  state.phase = 'Superseded';
  state.message = message;
  return rolloutResult(state);
}

/** A refused status write means the object moved on without this run: stop, before touching anything. */
export function stopRefused(state: RolloutState, signals: RolloutSignals, generation: number): void {
  signals.supersede(generation + 1);
  state.message = 'the status is no longer ours to write (a newer generation, or the object is gone): stopping';
}
