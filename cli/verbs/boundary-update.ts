// The I/O `promote` and `abort` share: find the workflow in status.workflow, send it the Update,
// and say what it answered (cli/boundary-outcome.ts). Temporal: UpdateWorkflowExecution on that
// workflow. The workflow decides: its validators refuse, saying why, outside a gate or the
// pauseBetweenZones wait, so an Update sent a moment late cannot skip or stop anything else.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from '../args';
import { deliver, refusedOutcome, type UpdateOutcome, type UpdateTarget } from '../boundary-outcome';
import { Refused } from '../exit-codes';
import type { Io } from '../io';
import { getVmdc, loadKube } from '../kube';
import { actionPrinter } from '../output';
import type { Temporal } from '../temporal';
import { onRunningWorkflow } from './workflow-source';

type BoundaryCommand = Extract<Command, { verb: 'promote' | 'abort' }>;

export async function boundaryUpdate<R>(
  cmd: BoundaryCommand,
  io: Io,
  send: (t: Temporal, workflowId: string) => Promise<R>,
  outcome: (target: UpdateTarget, answer: R) => UpdateOutcome,
): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const out = actionPrinter(cmd.output, io.print);
  const obj = await getVmdc(kube, cmd.name);
  const workflowId = obj.status?.workflow?.id;
  if (!workflowId) throw new Refused(`status.workflow names no workflow to ${cmd.verb}`);
  const target: UpdateTarget = { verb: cmd.verb, namespace: kube.namespace, name: cmd.name, uid: obj.metadata?.uid, workflowId };
  let said: UpdateOutcome | undefined;
  await onRunningWorkflow(cmd.temporal, io.env, workflowId, cmd.verb, async (t) => {
    try {
      said = outcome(target, await send(t, workflowId));
    } catch (err) {
      // The workflow's answer is a result a script branches on: the document says it (exit 1 all the same).
      if (err instanceof WorkflowUpdateFailedError) said = refusedOutcome(target, err.cause?.message ?? err.message);
      else throw err;
    }
  });
  return deliver(said!, out);
}
