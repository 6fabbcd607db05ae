// Kubernetes API errors: the HTTP status code of a failed @kubernetes/client-node request.

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
export const isConflict = (err: unknown): boolean => statusCode(err) === 409;
