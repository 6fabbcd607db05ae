// Temporal for the verbs that show a rollout: a view without it is still a view (from the status),
// so an unreachable frontend is a note in the header, not an error. Settings that do not parse are.
import type { TemporalFlags } from '../args';
import type { WorkflowSource } from '../follow';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Refused } from '../exit-codes';
import { connectTemporal, temporalProblem, temporalSettings, type Temporal } from '../temporal';

export async function workflowSource(flags: TemporalFlags, env: NodeJS.ProcessEnv): Promise<WorkflowSource> {
  const s = temporalSettings(flags, env);
  const webUI = s.uiUrl ? { baseUrl: s.uiUrl, namespace: s.connection.namespace } : undefined;
  try {
    return { temporal: await connectTemporal(s), ...(webUI ? { webUI } : {}) };
  } catch (err) {
    return { note: `Temporal at ${s.connection.address} unreachable (${temporalProblem(err)})`, ...(webUI ? { webUI } : {}) };
  }
}

/** Temporal for the verbs that act through it (retry, cancel, history): unreachable is an error. */
export async function requireTemporal(flags: TemporalFlags, env: NodeJS.ProcessEnv): Promise<Temporal> {
  const s = temporalSettings(flags, env);
  try {
    return await connectTemporal(s);
  } catch (err) {
    throw new Error(`Temporal at ${s.connection.address} (namespace ${s.connection.namespace}) unreachable: ${temporalProblem(err)}`);
  }
}

/** `act` on the running workflow `id` (a verb's request); one that has ended is refused: nothing to `what`. */
export async function onRunningWorkflow(
  flags: TemporalFlags,
  env: NodeJS.ProcessEnv,
  id: string,
  what: string,
  act: (t: Temporal) => Promise<void>,
): Promise<void> {
  const t = await requireTemporal(flags, env);
  try {
    await act(t);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new Refused(`workflow ${id} is not running any more: nothing to ${what}`);
    throw err;
  } finally {
    await t.connection.close();
  }
}
