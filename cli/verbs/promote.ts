// `kubectl vmdc promote NAME`: ends the running pauseBetweenZones wait so the next zone starts now,
// through the workflow's validated `promote` Update (Temporal: UpdateWorkflowExecution on the
// workflow in status.workflow). The workflow decides: its validator refuses, saying why, when no
// such wait runs, so a promote sent a moment late cannot skip anything else.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { Command } from '../args';
import { EXIT, Refused } from '../exit-codes';
import { formatAge } from '../format';
import { prose, type Io } from '../io';
import { getVmdc, loadKube } from '../kube';
import { actionPrinter } from '../output';
import { promoteWait } from '../temporal';
import { onRunningWorkflow } from './workflow-source';

type PromoteCommand = Extract<Command, { verb: 'promote' }>;

export async function promote(cmd: PromoteCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const out = actionPrinter(cmd.output, io.print);
  const obj = await getVmdc(kube, cmd.name);
  const id = obj.status?.workflow?.id;
  if (!id) throw new Refused('status.workflow names no workflow to promote');
  const doc = { verb: cmd.verb, namespace: kube.namespace, name: cmd.name, uid: obj.metadata?.uid, workflowId: id };
  let done: { after: string; skippedMs: number } | undefined;
  await onRunningWorkflow(cmd.temporal, io.env, id, 'promote', async (t) => {
    try {
      done = await promoteWait(t, id);
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        // The workflow's answer is a result a script branches on: the document says it (exit 1 all the same).
        const reason = err.cause?.message ?? err.message;
        out.document({ ...doc, result: 'refused', reason });
        throw new Refused(`${id} refused the promote: ${reason}`);
      }
      throw err;
    }
  });
  for (const l of prose(`${id}: the wait after zone ${done!.after} ended ${formatAge(done!.skippedMs)} early; the next zone starts now`)) out.line(l);
  out.line(`follow it: kubectl vmdc get ${cmd.name} -n ${kube.namespace} --watch`);
  out.document({ ...doc, result: 'accepted', afterZone: done!.after, skippedMs: done!.skippedMs });
  return EXIT.ok;
}
