// What the signals asked of the run (pause, resume, a newer generation), behind methods: handlers
// record, the run waits and reads.
import { condition } from '@temporalio/workflow';

export class RolloutSignals {
  private pauseAsked: boolean;
  private resumeAsked = false;
  private newer: number | undefined;

  constructor(pauseRequested: boolean, supersededBy?: number) {
    this.pauseAsked = pauseRequested;
    this.newer = supersededBy;
  }

  requestPause(): void {
    this.pauseAsked = true;
  }

  /** Resume: lifts a pause, and retries a failed step. */
  requestResume(): void {
    this.pauseAsked = false;
    this.resumeAsked = true;
  }

  /** A newer generation takes over; the highest one asked for wins. */
  supersede(generation: number): void {
    if (this.newer === undefined || generation > this.newer) this.newer = generation;
  }

  get pauseRequested(): boolean {
    return this.pauseAsked;
  }

  /** The generation that superseded this run, if any. */
  get supersededBy(): number | undefined {
    return this.newer;
  }

  superseded(): boolean {
    return this.newer !== undefined;
  }

  /** Until the pause is lifted or the run is superseded (a newer generation is waiting for it). */
  untilUnpaused(): Promise<void> {
    return condition(() => !this.pauseAsked || this.superseded());
  }

  /** A step failed: a resume asked before now does not retry it. */
  failed(): void {
    this.resumeAsked = false;
  }

  /** After a failure: until a resume (which also lifts a pause) or a supersede. */
  async resumeOrSupersede(): Promise<'resume' | 'superseded'> {
    await condition(() => this.resumeAsked || this.superseded());
    if (!this.resumeAsked) return 'superseded';
    this.resumeAsked = false;
    this.pauseAsked = false;
    return 'resume';
  }
}
