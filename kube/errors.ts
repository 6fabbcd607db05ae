// Kubernetes API errors: the HTTP status code of a failed @kubernetes/client-node request.

/** HTTP status code of an ApiException (numeric `code`) or of anything with a numeric `statusCode`. */
export function statusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | undefined;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}

export const isNotFound = (err: unknown): boolean => statusCode(err) === 404;
export const isConflict = (err: unknown): boolean => statusCode(err) === 409;
