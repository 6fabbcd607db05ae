// `kubectl vmdc pause|resume NAME`: spec.paused, as `kubectl patch` would set it. The trigger
// forwards it to the workflow in charge as a signal; going around it (signalling directly) would
// leave the spec saying otherwise than the rollout does.
import type { Command } from '../args';
import { EXIT } from '../exit-codes';
import { prose, type Io } from '../io';
import { getVmdc, loadKube, setPaused } from '../kube';
import { actionPrinter } from '../output';
import { endedPhase } from '../rollout-end';

type PauseCommand = Extract<Command, { verb: 'pause' | 'resume' }>;

export async function pauseOrResume(cmd: PauseCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const out = actionPrinter(cmd.output, io.print);
  const paused = cmd.verb === 'pause';
  const who = `VMDistributedCluster ${kube.namespace}/${cmd.name}`;
  const before = await getVmdc(kube, cmd.name);
  const doc = { verb: cmd.verb, namespace: kube.namespace, name: cmd.name, uid: before.metadata?.uid, paused };
  if (((before.spec as { paused?: unknown } | undefined)?.paused === true) === paused) {
    out.line(`${who}: spec.paused is already ${paused}; nothing changed`);
    out.document({ ...doc, result: 'unchanged' });
    return EXIT.ok;
  }
  const after = await setPaused(kube, cmd.name, paused);
  out.line(`${who}: spec.paused set to ${paused} (generation ${after.metadata?.generation ?? '?'})`);
  const workflow = after.status?.workflow?.id;
  const ended = endedPhase(before);
  // The trigger, not this verb, sends the signal: the document says which it will send, and to whom.
  const running = workflow !== undefined && !(ended && ended !== 'Failed');
  if (!running) {
    out.line(paused ? 'no rollout is running: the next one starts paused' : 'no rollout is running: the next one starts right away');
  } else if (paused) {
    for (const l of prose(
      `the trigger signals pause to ${workflow}: it stops at its next safe point (between steps), keeps every zone as it is, and reports Paused`,
    ))
      out.line(l);
  } else {
    for (const l of prose(`the trigger signals resume to ${workflow}: it goes on from where it stopped`)) out.line(l);
  }
  out.line(`follow it: kubectl vmdc get ${cmd.name} -n ${kube.namespace} --watch`);
  out.document({
    ...doc,
    result: 'set',
    generation: after.metadata?.generation ?? null,
    signal: running ? { name: cmd.verb, workflowId: workflow, sentBy: 'trigger' } : null,
  });
  return EXIT.ok;
}
