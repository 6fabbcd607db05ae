// Read-modify-write under optimistic concurrency, the one loop behind every edit of an object that
// others edit too (the VMDistributedCluster's status and finalizers, read routes): read fresh,
// decide from what is there now, write with the resourceVersion that was read; a conflict (409:
// someone changed the object meanwhile) starts over from the read.
import { isConflict, isNotFound } from './errors';

/** What one attempt decided: a result without writing, or a write and what it means. */
export type RmwStep<R> = { done: R } | { write: () => Promise<unknown>; result: R; ifGone?: R };

/**
 * Runs `attempt` (a fresh read and a decision) until its write lands, at most `maxAttempts` times.
 * A write answered 404 ends with `ifGone` when the step gives one; any other error but a conflict
 * is thrown; after the last conflict, `exhausted(attempts, lastConflict)` is thrown.
 */
export async function readModifyWrite<R>(
  attempt: (n: number) => Promise<RmwStep<R>>,
  opts: { maxAttempts: number; exhausted: (attempts: number, lastConflict: unknown) => Error },
): Promise<R> {
  let lastConflict: unknown;
  for (let n = 1; n <= opts.maxAttempts; n++) {
    const step = await attempt(n);
    if ('done' in step) return step.done;
    try {
      await step.write();
      return step.result;
    } catch (err) {
      if (isNotFound(err) && step.ifGone !== undefined) return step.ifGone;
      if (!isConflict(err)) throw err;
      lastConflict = err;
    }
  }
  throw opts.exhausted(opts.maxAttempts, lastConflict);
}
