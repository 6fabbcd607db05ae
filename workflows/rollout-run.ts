// The parts of one rollout run, each with its own job: what it reads (RunContext), its state, what
// the signals asked (RolloutSignals), how it tells its state (StatusReport), the read switch and the
// failure hold. A part of the rollout gets only the parts it uses.
import type { WorkflowRef } from '../api/types';
import { Boundary } from './boundary';
import { FailureHold } from './failure-hold';
import { ReadSwitch } from './read-switch';
import { runContext, type RunContext } from './run-context';
import { RolloutSignals } from './signals';
import { initialState, type RolloutState, type RolloutWorkflowInput } from './state';
import { StatusReport } from './status-report';

export interface RolloutRun {
  readonly ctx: RunContext;
  readonly state: RolloutState;
  readonly signals: RolloutSignals;
  readonly report: StatusReport;
  readonly reads: ReadSwitch;
  readonly hold: FailureHold;
  readonly boundary: Boundary;
}

export function startRun(input: RolloutWorkflowInput, workflow: WorkflowRef): RolloutRun {
  const { object, spec, carried } = input;
  const ctx = runContext(object, spec, workflow);
  const state = initialState(spec, object, carried);
  const signals = new RolloutSignals(carried?.pauseRequested ?? spec.paused, carried?.supersededBy);
  const report = new StatusReport(ctx, state);
  return Object.freeze({
    ctx,
    state,
    signals,
    report,
    reads: new ReadSwitch(ctx, state, report),
    hold: new FailureHold(state, signals, report),
    boundary: new Boundary(state, signals),
  });
}
