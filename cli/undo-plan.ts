// `kubectl vmdc undo`: which clusterVersion rolling back means, from the object alone. Pure.
import type { VmdcObject } from '../kube/vmdc-object';

export type UndoPlan = { kind: 'undo'; from: string | undefined; to: string; succeededGeneration: number } | { kind: 'refused'; reason: string };

/**
 * The last succeeded clusterVersion (status.lastSucceeded, written by the rollout that succeeded), as
 * a new generation. Refused when nothing recorded one, or when the spec already asks for it (the
 * status keeps only the last success: an earlier one is a hand edit, see `history`).
 */
export function undoPlan(obj: VmdcObject): UndoPlan {
  const last = obj.status?.lastSucceeded;
  const current = (obj.spec as { clusterVersion?: unknown } | undefined)?.clusterVersion;
  const from = typeof current === 'string' ? current : undefined;
  if (!last || typeof last.clusterVersion !== 'string' || last.clusterVersion === '')
    return {
      kind: 'refused',
      reason:
        'no succeeded rollout is recorded in status.lastSucceeded (none has succeeded since vmrollout records it); `kubectl vmdc history` lists earlier versions to set by hand',
    };
  if (from === last.clusterVersion)
    return {
      kind: 'refused',
      reason: `spec.clusterVersion is already ${last.clusterVersion}, the last version that succeeded (generation ${last.generation}): nothing to undo; \`kubectl vmdc history\` lists earlier ones`,
    };
  return { kind: 'undo', from, to: last.clusterVersion, succeededGeneration: last.generation };
}
