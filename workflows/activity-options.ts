// How the rollout calls its activities: timeouts, retries and cancellation, per kind of call.
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { ActivityCancellationType, proxyActivities, proxyLocalActivities, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import type { Strategy } from '../api/types';
import type { RolloutActivities } from './activity-types';
import { activitySummary } from './activity-summary';
import { NON_RETRYABLE_TYPES } from './failures';

/** A duration for Temporal (whole milliseconds, at least 1). */
export const ms = (n: number): number => Math.max(1, Math.round(n));

export interface RolloutProxies {
  /** Every step of a zone: retried with backoff until zoneTimeout is exhausted. */
  step: RolloutActivities;
  /**
   * The short calls of a step (reads, dry runs, applies), with the step's timeouts and retries, as
   * local activities: a marker in the history instead of a task round trip each.
   */
  short: RolloutActivities;
  /** The heartbeating waits of a zone, within the same zoneTimeout. */
  wait: RolloutActivities;
  /** Status writes retry forever: the workflow does not move on without telling the status (local activities). */
  status: RolloutActivities;
  /** Taking over waits for older workflows to stop at a safe point: long, heartbeating. */
  takeOver: RolloutActivities;
  /** Cleanup after a cancel or supersede: bounded, so a stuck zone is reported rather than awaited. */
  cleanup: RolloutActivities;
  /** Cleanup's confirmation that a patched zone's queues stay empty for queueDrainedFor. */
  confirmDrain: RolloutActivities;
}

export function rolloutProxies(st: Strategy): RolloutProxies {
  const retry: ActivityOptions['retry'] = {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
  };
  // On cancel, wait for an in-flight activity to finish or acknowledge: the cleanup must see every
  // edit or patch that may still land, never race with it.
  const cancellationType = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED;
  const heartbeatTimeout = ms(Math.max(30_000, 3 * st.pollIntervalMs));
  const stepOptions = { scheduleToCloseTimeout: ms(st.zoneTimeoutMs), startToCloseTimeout: '2m', retry, cancellationType };
  const statusOptions = { startToCloseTimeout: '30s', retry: { ...retry, maximumInterval: '1m' } };
  const step = remote(stepOptions);
  return {
    step,
    short: local(stepOptions),
    wait: remote({ scheduleToCloseTimeout: ms(st.zoneTimeoutMs), heartbeatTimeout, retry, cancellationType }),
    status: local(statusOptions),
    takeOver: remote({ startToCloseTimeout: '7d', heartbeatTimeout: '1m', retry }),
    cleanup: remote({ scheduleToCloseTimeout: ms(Math.min(st.zoneTimeoutMs, 5 * 60_000)), startToCloseTimeout: '1m', retry }),
    confirmDrain: remote({
      scheduleToCloseTimeout: ms(st.queueDrainedForMs + 3 * st.pollIntervalMs + 30_000),
      heartbeatTimeout,
      retry,
    }),
  };
}

/**
 * Every call carries its summary (workflows/activity-summary.ts) into the Web UI: the SDK takes it
 * from the options, so each call goes through activities made with its own summary.
 */
function summarized(make: (summary?: string) => RolloutActivities): RolloutActivities {
  return new Proxy({} as RolloutActivities, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      return (input: unknown) => {
        const call = make(activitySummary(name, input))[name as keyof RolloutActivities] as (i: unknown) => Promise<unknown>;
        return call(input);
      };
    },
  });
}

const remote = (options: ActivityOptions): RolloutActivities =>
  summarized((summary) => proxyActivities<RolloutActivities>(summary ? { ...options, summary } : options));
const local = (options: LocalActivityOptions): RolloutActivities => summarized((summary) => localActivities(summary ? { ...options, summary } : options));

/**
 * Local activities whose failures read like a regular activity's. The SDK raises a local activity's
 * own ApplicationFailure unwrapped (only its timeouts come as an ActivityFailure): wrapped here, so
 * one failureType/failureMessage reads both kinds, and a status names the activity either way.
 */
function localActivities(options: LocalActivityOptions): RolloutActivities {
  // Retries after the first second wait in a workflow timer, not inside the worker: a local activity
  // that keeps failing (an API server away) must not hold its workflow task, or a worker shutdown
  // waits for it in vain.
  const local = proxyLocalActivities<RolloutActivities>({ ...options, localRetryThreshold: '1s' });
  return new Proxy(local, {
    get(target, name: string) {
      const call = target[name as keyof RolloutActivities] as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        try {
          return await call(...args);
        } catch (err) {
          if (!(err instanceof ApplicationFailure)) throw err;
          throw new ActivityFailure(
            'Activity task failed',
            name,
            undefined,
            err.nonRetryable ? RetryState.NON_RETRYABLE_FAILURE : RetryState.MAXIMUM_ATTEMPTS_REACHED,
            undefined,
            err,
          );
        }
      };
    },
  });
}
