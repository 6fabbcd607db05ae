// Never two workflows acting on one object: before a rollout acts, every other running workflow of
// the same object is told to stop (supersede signal) and awaited until closed. A workflow of a newer
// generation of the same object makes this one stale instead.
import { WorkflowFailedError, WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { SA_GENERATION, SIGNAL_SUPERSEDE, parseWorkflowId, runningWorkflowsQuery, uidPrefix, type SupersedeSignal } from '../../api/rollout-contract';
import type { ObjectGeneration } from '../../api/types';
import type { PollContext } from '../activity-context';

export interface OtherWorkflow {
  workflowId: string;
  generation?: number;
}

export type TakeOverDecision = { stale: true; newer: string } | { stale: false; supersede: string[] };

/**
 * Pure: stale when another running workflow of the same object (same uid prefix, or unknown uid)
 * has a greater generation; otherwise every other one is superseded (older generations, and any
 * workflow of a deleted-and-recreated object with another uid).
 */
export function decideTakeOver(own: { object: ObjectGeneration; ownWorkflowId: string }, others: OtherWorkflow[]): TakeOverDecision {
  const ownUid = uidPrefix(own.object.uid);
  const supersede: string[] = [];
  for (const o of others) {
    if (o.workflowId === own.ownWorkflowId) continue;
    const parsed = parseWorkflowId(o.workflowId);
    const generation = o.generation ?? parsed?.generation;
    const sameObject = !parsed || !ownUid || parsed.uidPrefix === ownUid;
    if (sameObject && generation !== undefined && generation > own.object.generation) {
      return { stale: true, newer: o.workflowId };
    }
    if (!supersede.includes(o.workflowId)) supersede.push(o.workflowId);
  }
  return { stale: false, supersede };
}

function generationOf(d: { typedSearchAttributes?: { get(k: typeof SA_GENERATION): number | undefined } }): number | undefined {
  try {
    const g = d.typedSearchAttributes?.get(SA_GENERATION);
    return typeof g === 'number' ? g : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an error of handle.result() means the workflow is closed (any outcome). */
function isClosedOutcome(err: unknown): boolean {
  return err instanceof WorkflowFailedError || err instanceof WorkflowNotFoundError;
}

export async function takeOverObject(
  client: Client,
  ctx: PollContext,
  input: { object: ObjectGeneration; ownWorkflowId: string; previousWorkflowIds: string[] },
  opts: { heartbeatEveryMs?: number } = {},
): Promise<{ stale: boolean; superseded: string[] }> {
  const { object } = input;
  const running = new Map<string, OtherWorkflow>();

  for await (const wf of client.workflow.list({ query: runningWorkflowsQuery(object) })) {
    if (wf.status.name !== 'RUNNING') continue;
    running.set(wf.workflowId, { workflowId: wf.workflowId, generation: generationOf(wf) });
  }
  // Visibility is eventually consistent: the ids the trigger knows are checked directly.
  for (const id of input.previousWorkflowIds) {
    if (id === input.ownWorkflowId || running.has(id)) continue;
    let d: WorkflowExecutionDescription;
    try {
      d = await client.workflow.getHandle(id).describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) continue;
      throw err;
    }
    if (d.status.name === 'RUNNING') running.set(id, { workflowId: id, generation: generationOf(d) });
  }

  const decision = decideTakeOver(input, [...running.values()]);
  if (decision.stale) return { stale: true, superseded: [] };

  const signal: SupersedeSignal = { generation: object.generation };
  const every = opts.heartbeatEveryMs ?? 5_000;
  for (const id of decision.supersede) {
    const handle = client.workflow.getHandle(id);
    try {
      await handle.signal(SIGNAL_SUPERSEDE, signal);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) continue; // closed meanwhile
      throw err;
    }
    ctx.heartbeat({ waitingFor: id });
    const timer = setInterval(() => ctx.heartbeat({ waitingFor: id }), every);
    try {
      await client
        .withAbortSignal(ctx.signal, () => handle.result())
        .catch((err: unknown) => {
          if (!isClosedOutcome(err)) throw err;
        });
    } finally {
      clearInterval(timer);
    }
  }
  return { stale: false, superseded: decision.supersede };
}
