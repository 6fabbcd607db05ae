// Kubernetes API errors: the HTTP status code of a failed @kubernetes/client-node request, and a
// short description of any error for logs, statuses and the CLI.
import { redactURLsIn } from '../api/url';

const isHttpStatus = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 100 && v <= 599;

/**
 * HTTP status code of an ApiException (numeric `code`) or of anything with a numeric `statusCode`.
 * Other numeric codes (a DOMException's legacy `code`, a gRPC status) are not HTTP statuses.
 */
export function statusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  if (isHttpStatus(e?.code)) return e.code;
  if (isHttpStatus(e?.statusCode)) return e.statusCode;
  return undefined;
}

export const isNotFound = (err: unknown): boolean => statusCode(err) === 404;

/**
 * A kube-apiserver that has just (re)started answers 403 until its authorizer's caches are filled
 * (seen by the chaos campaign, docs/reliability.md): a denial counts as for good only from this
 * attempt of an activity on — after about 15 s of Temporal's retries (1, 2, 4, 8 s).
 */
export const FORBIDDEN_FOR_GOOD_FROM_ATTEMPT = 5;

/**
 * An API answer that retrying the same request cannot change: a 4xx other than 401 (credentials
 * may be refreshed), 408 (timeout), 409 (conflict: read again) and 429 (throttled) — e.g. 400,
 * 403, 404, 422. Server errors and timeouts are retried. `attempt` (an activity's): a 403 before
 * FORBIDDEN_FOR_GOOD_FROM_ATTEMPT may still go away.
 */
export function refusedForGood(err: unknown, attempt = Infinity): boolean {
  const code = statusCode(err);
  if (code === 403 && attempt < FORBIDDEN_FOR_GOOD_FROM_ATTEMPT) return false;
  return code !== undefined && code >= 400 && code < 500 && ![401, 408, 409, 429].includes(code);
}
export const isConflict = (err: unknown): boolean => statusCode(err) === 409;

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
