// `kubectl vmdc retry NAME`: a Failed zone waits for the workflow's `resume` signal, which retries
// the failed step (docs/operations.md#runbook-failed-zone). Sent only to a rollout that is Failed.
import type { Command } from '../args';
import { EXIT, Refused } from '../exit-codes';
import { prose, type Io } from '../io';
import { getVmdc, loadKube } from '../kube';
import { actionPrinter } from '../output';
import { signalResume } from '../temporal';
import { onRunningWorkflow } from './workflow-source';

type RetryCommand = Extract<Command, { verb: 'retry' }>;

export async function retry(cmd: RetryCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const out = actionPrinter(cmd.output, io.print);
  const obj = await getVmdc(kube, cmd.name);
  const st = obj.status ?? {};
  if (st.phase !== 'Failed') throw new Refused(`nothing to retry: the rollout is ${st.phase ?? 'without a status'}, not Failed`);
  // The signal also lifts a pause, which the spec would still ask for: the trigger keeps the two in step.
  if ((obj.spec as { paused?: unknown } | undefined)?.paused === true) {
    throw new Refused(
      `spec.paused is true: run \`kubectl vmdc resume ${cmd.name}\`, which lifts the pause; the resume signal the trigger then sends retries the failed zone too`,
    );
  }
  const id = st.workflow?.id;
  if (!id) throw new Refused('status.workflow names no workflow to signal');
  const failed = st.zones?.find((z) => z.phase === 'Failed');
  await onRunningWorkflow(cmd.temporal, io.env, id, 'retry', (t) => signalResume(t, id));
  const what = failed ? `zone ${failed.name} retries its failed step` : 'the failed step is retried';
  for (const l of prose(`resume signal sent to ${id}: ${what} (a failed WaitingOperational restarts at the patch)`)) out.line(l);
  out.line(`follow it: kubectl vmdc get ${cmd.name} -n ${kube.namespace} --watch`);
  out.document({
    verb: cmd.verb,
    namespace: kube.namespace,
    name: cmd.name,
    uid: obj.metadata?.uid,
    result: 'signalled',
    signal: { name: 'resume', workflowId: id },
    zone: failed?.name ?? null,
  });
  return EXIT.ok;
}
