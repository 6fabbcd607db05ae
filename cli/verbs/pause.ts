// `kubectl vmdc pause|resume NAME`: spec.paused, as `kubectl patch` would set it. The trigger
// forwards it to the workflow in charge as a signal; going around it (signalling directly) would
// leave the spec saying otherwise than the rollout does.
import type { Command } from '../args';
import { EXIT } from '../exit-codes';
import { prose, type Io } from '../io';
import { getVmdc, loadKube, setPaused } from '../kube';
import { endedPhase } from '../rollout-end';

type PauseCommand = Extract<Command, { verb: 'pause' | 'resume' }>;

export async function pauseOrResume(cmd: PauseCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const paused = cmd.verb === 'pause';
  const who = `VMDistributedCluster ${kube.namespace}/${cmd.name}`;
  const before = await getVmdc(kube, cmd.name);
  if (((before.spec as { paused?: unknown } | undefined)?.paused === true) === paused) {
    io.print(`${who}: spec.paused is already ${paused}; nothing changed`);
    return EXIT.ok;
  }
  const after = await setPaused(kube, cmd.name, paused);
  io.print(`${who}: spec.paused set to ${paused} (generation ${after.metadata?.generation ?? '?'})`);
  const workflow = after.status?.workflow?.id;
  const ended = endedPhase(before);
  if (!workflow || (ended && ended !== 'Failed')) {
    io.print(paused ? 'no rollout is running: the next one starts paused' : 'no rollout is running: the next one starts right away');
  } else if (paused) {
    for (const l of prose(
      `the trigger signals pause to ${workflow}: it stops at its next safe point (between steps), keeps every zone as it is, and reports Paused`,
    ))
      io.print(l);
  } else {
    for (const l of prose(`the trigger signals resume to ${workflow}: it goes on from where it stopped`)) io.print(l);
  }
  io.print(`follow it: kubectl vmdc get ${cmd.name} -n ${kube.namespace} --watch`);
  return EXIT.ok;
}
