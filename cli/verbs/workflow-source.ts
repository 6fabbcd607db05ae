// Temporal for the verbs that show a rollout: a view without it is still a view (from the status),
// so an unreachable frontend is a note in the header, not an error. Settings that do not parse are.
import type { TemporalFlags } from '../args';
import type { WorkflowSource } from '../follow';
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
