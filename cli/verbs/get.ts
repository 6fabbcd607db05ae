// `kubectl vmdc get NAME [--watch] [-o wide|json|yaml]`.
import type { Command } from '../args';
import { EXIT, exitCodeForPhase } from '../exit-codes';
import { followRollout, viewInput, type FollowEnd } from '../follow';
import type { Io } from '../io';
import { getVmdc, loadKube } from '../kube';
import { isDocument, renderDocument, WIDE_COLUMNS } from '../output';
import { viewDocument } from '../render-json';
import { DEFAULT_WIDTH, renderText } from '../render-text';
import { appendScreen, redrawScreen } from '../screen';
import { colourWanted } from '../style';
import { buildView } from '../view';
import { workflowSource } from './workflow-source';

type GetCommand = Extract<Command, { verb: 'get' }>;

/** The exit code a followed rollout ends with (the `status` codes); the reason goes to stderr. */
export function followExit(end: FollowEnd | { kind: 'interrupted' }, io: Io, name: string): number {
  switch (end.kind) {
    case 'ended':
      return exitCodeForPhase(end.phase);
    case 'gone':
      io.warn(`VMDistributedCluster ${name} was deleted (its rollout is cancelled)`);
      return EXIT.failed;
    case 'error':
      throw end.error;
    default:
      return EXIT.interrupted;
  }
}

export async function get(cmd: GetCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const source = await workflowSource(cmd.temporal, io.env);
  const colour = !isDocument(cmd.output) && colourWanted(io.stdout, io.env, cmd.noColour);
  // A narrower terminal would wrap every line (and break the redraw).
  const fitted = io.stdout.isTTY && io.stdout.columns ? Math.min(DEFAULT_WIDTH, io.stdout.columns) : DEFAULT_WIDTH;
  const width = cmd.output === 'wide' ? WIDE_COLUMNS : fitted;
  try {
    if (!cmd.watch) {
      const view = buildView(await viewInput(await getVmdc(kube, cmd.name), source));
      const now = new Date();
      if (isDocument(cmd.output)) io.print(renderDocument(viewDocument(view, now), cmd.output));
      else for (const line of renderText(view, { now, colour, width })) io.stdout.write(`${line}\n`);
      return EXIT.ok;
    }
    const screen =
      !isDocument(cmd.output) && io.stdout.isTTY
        ? redrawScreen((s) => io.stdout.write(s), { colour, width, intervalMs: cmd.intervalMs })
        : appendScreen(io.print, { colour, width, output: cmd.output });
    // The object, not one workflow: a new generation's rollout is shown as soon as the trigger starts it.
    const following = followRollout({
      kube,
      name: cmd.name,
      source,
      intervalMs: cmd.intervalMs,
      acrossRollouts: true,
      onView: (v, now) => screen.show(v, now),
    });
    const end = await Promise.race([following.done, io.interrupted.then(() => ({ kind: 'interrupted' as const }))]);
    following.stop();
    return followExit(end, io, cmd.name);
  } finally {
    await source.temporal?.connection.close();
  }
}
