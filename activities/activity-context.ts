// The little of the Temporal activity Context the polling activities need, so their loops can be
// driven outside an activity too (scripts, tests).
import { Context } from '@temporalio/activity';

export interface PollContext {
  heartbeat(details?: unknown): void;
  /** Sleeps, rejecting with a CancelledFailure when the activity is cancelled. */
  sleep(ms: number): Promise<void>;
  /** Details of the last heartbeat of a previous attempt, if any. */
  heartbeatDetails(): unknown;
  readonly signal: AbortSignal;
}

export function activityPollContext(): PollContext {
  const ctx = Context.current();
  return {
    heartbeat: (d) => ctx.heartbeat(d),
    sleep: (ms) => ctx.sleep(ms),
    heartbeatDetails: () => ctx.info.heartbeatDetails,
    signal: ctx.cancellationSignal,
  };
}

/** Outside an activity: plain timers, an optional abort signal. */
export function plainPollContext(signal: AbortSignal = new AbortController().signal, details?: unknown): PollContext {
  return {
    heartbeat: () => {},
    sleep: (ms) =>
      new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        const t = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        const onAbort = () => {
          clearTimeout(t);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    heartbeatDetails: () => details,
    signal,
  };
}

/** The running activity's attempt (1 for the first); outside an activity, as if retries were over. */
export function activityAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return Infinity;
  }
}

/** Logs through the activity's logger; outside an activity nothing is logged (the caller reports). */
export function activityLog(level: 'info' | 'warn', message: string, meta: Record<string, unknown>): void {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return;
  }
  ctx.log[level](message, meta);
}

/** Sleeps `ms` in slices of at most `sliceMs`, heartbeating `details` between slices. */
export async function sleepHeartbeating(ctx: PollContext, ms: number, details: unknown, sliceMs = 5_000): Promise<void> {
  let left = ms;
  while (left > 0) {
    const step = Math.min(left, sliceMs);
    await ctx.sleep(step);
    left -= step;
    if (left > 0) ctx.heartbeat(details);
  }
}

/** The workflow whose activity this is; outside an activity none (nothing is bound to it, nothing is written). */
export function callingWorkflowId(): string {
  try {
    return Context.current().info.workflowExecution?.workflowId ?? '';
  } catch {
    return '';
  }
}
