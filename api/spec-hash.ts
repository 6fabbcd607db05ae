// What identifies one rollout: the normalized spec without `paused` (pausing is not a new rollout).
// The trigger records it in each workflow's memo; the worker checks a workflow's input against the
// object with it. Uses node:crypto: not for workflow code.
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json';
import type { NormalizedSpec } from './types';

export function specHash(spec: NormalizedSpec): string {
  const { paused: _paused, ...rest } = spec;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex').slice(0, 32);
}
