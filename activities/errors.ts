// The activities' failures: non-retryable ones of the types declared in workflows/failures.ts.
import { ApplicationFailure } from '@temporalio/common';
import type { FailureType } from '../workflows/failures';

export function nonRetryable(type: FailureType, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: details === undefined ? undefined : [details] });
}
