// The plugin's exit codes (docs/cli.md): CI pipelines branch on them.
import type { Phase } from '../api/types';
import type { Verb } from './args';

export const EXIT = {
  /** Done; for `status` and `get --watch`: the rollout Succeeded; for `import`: converted (notes on stderr). */
  ok: 0,
  /**
   * The rollout ended Failed, Cancelled, Superseded, Aborted or Invalid; for the other verbs: refused (nothing to
   * retry, not confirmed, …); for `import`: not convertible, or the converted spec is not valid.
   */
  failed: 1,
  /** `status --timeout` ran out before the rollout ended. */
  timeout: 2,
  /** Bad arguments, no such object, or Kubernetes / Temporal could not be asked; for `import`: a file unreadable or refused (size, aliases, depth). */
  error: 3,
  /** Ctrl-C (128 + SIGINT, as a shell reports it). */
  interrupted: 130,
} as const;

/**
 * release-zone has codes of its own (0 done, 1 refused or an API or record error, 2 bad arguments):
 * runbooks (docs/operations.md#runbook-release-zone) and the trigger's messages call it.
 */
export const RELEASE_ZONE_EXIT = { ok: 0, refused: 1, usage: 2 } as const;

/**
 * The one table of which codes each verb can end with (docs/cli.md lists it; a unit test holds the
 * two equal; `import` is parsed on its own, cli/verbs/import.ts). 130 for all: Ctrl-C ends any verb
 * that does not wrap up within its grace (main.ts).
 */
export const VERB_EXIT_CODES: Record<Verb | 'import', readonly number[]> = {
  get: [EXIT.ok, EXIT.failed, EXIT.error, EXIT.interrupted],
  list: [EXIT.ok, EXIT.error, EXIT.interrupted],
  status: [EXIT.ok, EXIT.failed, EXIT.timeout, EXIT.error, EXIT.interrupted],
  pause: [EXIT.ok, EXIT.error, EXIT.interrupted],
  resume: [EXIT.ok, EXIT.error, EXIT.interrupted],
  retry: [EXIT.ok, EXIT.failed, EXIT.error, EXIT.interrupted],
  undo: [EXIT.ok, EXIT.failed, EXIT.error, EXIT.interrupted],
  promote: [EXIT.ok, EXIT.failed, EXIT.error, EXIT.interrupted],
  abort: [EXIT.ok, EXIT.failed, EXIT.error, EXIT.interrupted],
  diff: [EXIT.ok, EXIT.failed, EXIT.error, EXIT.interrupted],
  plan: [EXIT.ok, EXIT.failed, EXIT.error, EXIT.interrupted],
  cancel: [EXIT.ok, EXIT.failed, EXIT.error, EXIT.interrupted],
  history: [EXIT.ok, EXIT.error, EXIT.interrupted],
  fleet: [EXIT.ok, EXIT.error, EXIT.interrupted],
  'release-zone': [RELEASE_ZONE_EXIT.ok, RELEASE_ZONE_EXIT.refused, RELEASE_ZONE_EXIT.usage, EXIT.interrupted],
  import: [EXIT.ok, EXIT.failed, EXIT.error, EXIT.interrupted],
  version: [EXIT.ok, EXIT.error, EXIT.interrupted],
  completion: [EXIT.ok, EXIT.error, EXIT.interrupted],
};

/** Phases after which nothing moves without a person: a Failed rollout waits for retry, cancel or a new spec. */
export const ENDED_PHASES: readonly Phase[] = ['Succeeded', 'Failed', 'Cancelled', 'Superseded', 'Aborted', 'Invalid', 'Planned'];

export function exitCodeForPhase(phase: Phase): number {
  return phase === 'Succeeded' || phase === 'Planned' ? EXIT.ok : EXIT.failed;
}

/** A verb that will not act, saying why (exit 1): nothing to retry, not confirmed, … */
export class Refused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Refused';
  }
}
