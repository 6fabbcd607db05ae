// The failure types a rollout step can end with: declared once, thrown by activities (and by the
// workflow's own route planning) as ApplicationFailure types, and read back here by the workflow.
// Only @temporalio/common, so activities and deterministic workflow code can both import it.
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { redactURLsIn } from '../api/url';

export const FailureType = {
  /** The object reports updateStatus `failed`. */
  ObjectFailed: 'ObjectFailed',
  /** A referenced object does not exist (and the spec does not define it in full). */
  ObjectNotFound: 'ObjectNotFound',
  /** Taking the zone out would leave a read route with no backend: nothing was edited. */
  EmptyRoute: 'EmptyRoute',
  /** A route kept changing under every edit attempt (retryable). */
  RouteConflict: 'RouteConflict',
  /** A route's out-of-rotation record is not what vmrollout writes: a person must look at it. */
  RecordsUnreadable: 'RecordsUnreadable',
  /** A zone no longer in the spec is recorded out of reads: a person must release it or add it back. */
  OrphanedRecord: 'OrphanedRecord',
  /** The API server refuses a write (400/403/404/422): retrying the same request cannot help. */
  PatchRejected: 'PatchRejected',
  /** The API server refuses the status (4xx other than conflict/not found): it will not go away by itself. */
  StatusRejected: 'StatusRejected',
  /** Server-side apply: another field manager owns a field vmrollout would change (and forceConflicts is off). */
  FieldConflict: 'FieldConflict',
  /** A full spec names an object this VMDistributedCluster does not own (adoption not asked for, or another controller's). */
  NotOwned: 'NotOwned',
  /** The workflow's input does not describe its object, or asks for what the trust policy forbids: nothing was done. */
  InputRefused: 'InputRefused',
  /** A zone's VMCluster changed while it was in reads (an edit landed between the dry run and the apply): a person must look. */
  ChangedInReads: 'ChangedInReads',
  /** A vmagent queue for the zone would overflow within the expected downtime (strategy.queueHeadroom): the zone stays in reads. */
  InsufficientHeadroom: 'InsufficientHeadroom',
  /** vmagent dropped data for the zone while it was out, or cannot tell (strategy.dataCompleteness): the zone stays out. */
  DataDropped: 'DataDropped',
  /** The canary's analysis (strategy.canary) Failed, or a person aborted it after it was Inconclusive: the canary stays out. */
  AnalysisFailed: 'AnalysisFailed',
  /** The capacity guard (strategy.capacityGuard) breached while the zone was out, and a person aborted: the zone stays out. */
  CapacityBreached: 'CapacityBreached',
  /** spec.vmuserSelector matches more VMUsers than vmrollout edits (MAX_SELECTED_VMUSERS): the zone stays in reads. */
  SelectorTooBroad: 'SelectorTooBroad',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/** Failures that retrying the same activity cannot fix. */
export const NON_RETRYABLE_TYPES: FailureType[] = [
  FailureType.ObjectFailed,
  FailureType.EmptyRoute,
  FailureType.RecordsUnreadable,
  FailureType.StatusRejected,
  FailureType.OrphanedRecord,
  FailureType.PatchRejected,
  FailureType.FieldConflict,
  FailureType.NotOwned,
  FailureType.InputRefused,
];

/** A non-retryable failure the workflow raises itself, in the same form activities raise theirs. */
export function stepFailure(type: FailureType, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** Whether `err` is a step failure (from an activity or the workflow), as opposed to a bug. */
export function isStepFailure(err: unknown): err is ActivityFailure | ApplicationFailure {
  return err instanceof ActivityFailure || err instanceof ApplicationFailure;
}

/** The ApplicationFailure type of a step failure, whether raised by an activity or the workflow. */
export function failureType(err: unknown): string | undefined {
  const f = err instanceof ActivityFailure ? err.cause : err;
  return f instanceof ApplicationFailure ? (f.type ?? undefined) : undefined;
}

/** One line for the status saying why a step failed (credentials in URLs never shown). */
export function failureMessage(err: unknown): string {
  return redactURLsIn(rawFailureMessage(err));
}

function rawFailureMessage(err: unknown): string {
  if (err instanceof ActivityFailure) {
    const c = err.cause;
    if (c instanceof TimeoutFailure)
      return `${err.activityType} timed out (${c.timeoutType === 'SCHEDULE_TO_CLOSE' ? 'zoneTimeout exhausted' : String(c.timeoutType ?? 'unknown').toLowerCase()}): ${c.message}`;
    if (c instanceof ApplicationFailure) return `${err.activityType} failed${c.type ? ` (${c.type})` : ''}: ${c.message}`;
    return `${err.activityType} failed: ${c?.message ?? err.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}
