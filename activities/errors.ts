// The activities' failures: non-retryable ones of the types declared in workflows/failures.ts, and
// a short description of any error (Kubernetes API status codes: kube/errors.ts).
import { ApplicationFailure } from '@temporalio/common';
import { statusCode } from '../kube/errors';
import type { FailureType } from '../workflows/failures';
import { redactURLsIn } from '../api/url';

export function nonRetryable(type: FailureType, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: details === undefined ? undefined : [details] });
}

/** A short, single-line description of an error (ApiException messages embed the whole body and headers). */
export function describeError(err: unknown): string {
  if (err && typeof err === 'object') {
    const code = statusCode(err);
    const body = (err as { body?: unknown }).body;
    if (code !== undefined) {
      let reason = '';
      if (typeof body === 'string') {
        try {
          reason = (JSON.parse(body) as { message?: string }).message ?? body;
        } catch {
          reason = body;
        }
      } else if (body && typeof body === 'object') {
        reason = (body as { message?: string }).message ?? '';
      }
      return redactURLsIn(`HTTP ${code}${reason ? `: ${reason}` : ''}`).slice(0, 500);
    }
    if (err instanceof Error) {
      const cause = (err as { cause?: unknown }).cause;
      const causeMsg = cause instanceof Error ? `: ${cause.message}` : '';
      return redactURLsIn(`${err.name === 'Error' ? '' : `${err.name}: `}${err.message}${causeMsg}`).slice(0, 500);
    }
  }
  return redactURLsIn(String(err)).slice(0, 500);
}
