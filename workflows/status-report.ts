// The run's one way to tell its state: the CR status and the Web UI's current details, derived from
// it (status.ts), written by a status activity. The rollout never moves on without telling it.
import { log, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { VMDistributedClusterStatus } from '../api/types';
import { FailureType, failureMessage, failureType } from './failures';
import type { RunContext } from './run-context';
import { now } from './run-context';
import type { RolloutState } from './state';
import { deriveStatus, type Told } from './status';

export class StatusReport {
  constructor(
    private readonly ctx: RunContext,
    private readonly state: RolloutState,
  ) {}

  /** The CR status as of now. */
  status(): VMDistributedClusterStatus {
    return this.tell().status;
  }

  /** What the state says now; its conditions (with their transition times) are kept for the next. */
  private tell(): Told {
    const told = deriveStatus(this.state, this.ctx.object, this.ctx.workflow, now());
    this.state.conditions = told.status.conditions ?? [];
    return told;
  }

  /** Set once the run is ending (a cancel's cleanup): a rejected write is then tried a bounded number of times. */
  private ending = false;

  /**
   * From now on, a status the API server keeps rejecting is given up after ENDING_WRITE_ATTEMPTS
   * (a cancel, whose cleanup cannot be cancelled, always ends).
   */
  endingRun(): void {
    this.ending = true;
  }

  /**
   * Write the status. A status the API server rejects (an error that will not go away, e.g. an
   * older CRD) is reported in the progress query and the worker log, and tried again every
   * pollInterval: until it lands while the rollout goes on (it never moves on without telling),
   * ENDING_WRITE_ATTEMPTS times once it is ending; then the Web UI's current details and the log say
   * what could not be written.
   */
  async write(): Promise<{ written: boolean }> {
    const { state, ctx } = this;
    for (let attempt = 1; ; attempt++) {
      const { status, details } = this.tell();
      setCurrentDetails(details);
      try {
        const r = await ctx.acts.status.writeStatus({ object: ctx.object, status });
        state.statusError = undefined;
        return r;
      } catch (err) {
        if (failureType(err) !== FailureType.StatusRejected) throw err;
        state.statusError = failureMessage(err);
        if (this.ending && attempt >= ENDING_WRITE_ATTEMPTS) {
          const unwritten = `phase ${status.phase}: ${status.message ?? ''}`;
          log.error('could not write the status (rejected by the API server); giving up as the rollout ends', {
            unwritten,
            error: state.statusError,
            attempts: attempt,
          });
          setCurrentDetails(`${details}\n\n**could not write the status** (${unwritten}): ${state.statusError}`);
          return { written: false };
        }
        log.warn('status write rejected by the API server; retrying', { error: state.statusError, retryInMs: ctx.st.pollIntervalMs });
        await sleep(ctx.st.pollIntervalMs);
      }
    }
  }
}

/** How many times a rejected status write is tried once the rollout is ending. */
const ENDING_WRITE_ATTEMPTS = 3;
