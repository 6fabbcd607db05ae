// A failed step holds the rollout: Failed in the status until `resume` (the part runs again), a
// supersede (the zone is cleaned up, the run stops) or cancellation.
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import { failureMessage, isStepFailure } from './failures';
import type { RolloutSignals } from './signals';
import type { RolloutState, ZoneState } from './state';
import type { StatusReport } from './status-report';

/** How a part of the rollout ended: ran to its end, or stopped for a newer generation. */
export type Outcome = 'done' | 'superseded';

/** What a failure hold does for the zone whose step failed. */
export interface ZoneFailureHooks {
  zone: ZoneState;
  onFailure(msg: string): void;
  onResume(): void;
  /** Superseded while held: the zone's cleanup, as after a cancel. */
  cleanup(why: string): Promise<void>;
}

export class FailureHold {
  constructor(
    private readonly state: RolloutState,
    private readonly signals: RolloutSignals,
    private readonly report: StatusReport,
  ) {}

  /**
   * Run `body`; if a step fails (non-retryably or by exhausting zoneTimeout), report Failed and wait
   * for `resume` (run `body` again), a supersede (clean up the zone and stop), or cancellation.
   */
  async run(body: () => Promise<Outcome>, zone?: ZoneFailureHooks): Promise<Outcome> {
    const { state, signals } = this;
    const z = zone?.zone;
    for (;;) {
      try {
        return await body();
      } catch (err) {
        if (isCancellation(err)) throw err;
        if (!isStepFailure(err)) throw err; // a bug: fail the task, not the zone
        signals.failed();
        const msg = failureMessage(err);
        zone?.onFailure(msg);
        state.run = z ? { kind: 'failed', zone: z.name, step: z.failedStep, reason: msg } : { kind: 'failed', reason: msg };
        await this.report.write();
        if ((await signals.resumeOrSupersede()) === 'superseded') {
          this.report.endingRun();
          if (zone) await CancellationScope.nonCancellable(() => zone.cleanup('superseded after failure'));
          return 'superseded';
        }
        zone?.onResume();
        state.run = z ? { kind: 'retrying', zone: z.name, step: z.step } : { kind: 'retrying' };
        await this.report.write();
      }
    }
  }
}
