// Error classification shared by the activities: Kubernetes API status codes and the
// non-retryable failures the workflow branches on.
import { ApplicationFailure } from '@temporalio/common';

/** Failure types the workflow recognises (ApplicationFailure.type). */
export const FAILURE_EMPTY_ROUTE = 'EmptyRoute';
export const FAILURE_OBJECT_FAILED = 'ObjectFailed';
export const FAILURE_NOT_FOUND = 'ObjectNotFound';
export const FAILURE_ROUTE_CONFLICT = 'RouteConflict';

/** HTTP status code of a @kubernetes/client-node ApiException (or anything with a numeric `code`). */
export function statusCode(err: unknown): number | undefined {
  if (err && typeof err === 'object') {
    const code = (err as { code?: unknown; statusCode?: unknown }).code ?? (err as { statusCode?: unknown }).statusCode;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

export const isNotFound = (err: unknown): boolean => statusCode(err) === 404;
export const isConflict = (err: unknown): boolean => statusCode(err) === 409;

export function nonRetryable(type: string, message: string, details?: unknown): ApplicationFailure {
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
      return `HTTP ${code}${reason ? `: ${reason}` : ''}`.slice(0, 500);
    }
    if (err instanceof Error) {
      const cause = (err as { cause?: unknown }).cause;
      const causeMsg = cause instanceof Error ? `: ${cause.message}` : '';
      return `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}${causeMsg}`.slice(0, 500);
    }
  }
  return String(err).slice(0, 500);
}
