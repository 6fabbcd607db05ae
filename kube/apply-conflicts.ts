// The answer of a server-side apply that another field manager's fields stopped (HTTP 409 with
// causes of reason FieldManagerConflict: `conflict with "<manager>" using <apiVersion>`, field
// `.spec.x`), and the 500 the API server gives for an applied object its schema cannot type. Pure.
import { statusCode } from './errors';

export interface FieldConflict {
  manager: string;
  field: string;
}

function bodyOf(err: unknown): { message?: string; details?: { causes?: Array<{ reason?: string; message?: string; field?: string }> } } | undefined {
  const body = (err as { body?: unknown } | undefined)?.body;
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as ReturnType<typeof bodyOf>;
    } catch {
      return undefined;
    }
  }
  return body && typeof body === 'object' ? (body as ReturnType<typeof bodyOf>) : undefined;
}

/** The field conflicts of a refused apply, or undefined when `err` is not one (e.g. a uid precondition's 409). */
export function applyConflicts(err: unknown): FieldConflict[] | undefined {
  if (statusCode(err) !== 409) return undefined;
  const causes = (bodyOf(err)?.details?.causes ?? []).filter((c) => c.reason === 'FieldManagerConflict');
  if (causes.length === 0) return undefined;
  return causes.map((c) => ({ manager: /conflict with "([^"]*)"/.exec(c.message ?? '')?.[1] ?? 'unknown', field: c.field ?? '?' }));
}

/**
 * An applied object the schema cannot type (a field the CRD does not declare, a value of the wrong
 * type): the API server answers 500 "failed to create typed patch object", the same every time.
 */
export function untypableApply(err: unknown): string | undefined {
  if (statusCode(err) !== 500) return undefined;
  const message = bodyOf(err)?.message;
  return message?.includes('failed to create typed patch object') ? message : undefined;
}
