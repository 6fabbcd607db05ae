// `kubectl vmdc status NAME [--timeout 1h] [-o json|yaml]`: waits for the rollout of the current spec
// to end, for CI. It reads the object only (no Temporal needed): one line (or one document) whenever
// the rollout moves. The default timeout is args.ts DEFAULT_STATUS_TIMEOUT_MS; --timeout 0: none.
import type { Command } from '../args';
import { EXIT } from '../exit-codes';
import { followRollout } from '../follow';
import { formatAge, formatTime } from '../format';
import { isDocument, renderDocument, WIDE_COLUMNS } from '../output';
import { viewDocument } from '../render-json';
import { prose, type Io } from '../io';
import { loadKube } from '../kube';
import { endLines, statusLine } from '../render-text';
import type { RolloutView } from '../view';
import { followExit } from './get';

type StatusCommand = Extract<Command, { verb: 'status' }>;

/** Without Temporal there is nothing to refresh between changes of the object; the tick only re-checks. */
const TICK_MS = 5000;
/** 100 columns with the time in front. */
const LINE_WIDTH = 100 - 21;

export async function status(cmd: StatusCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  let last = '';
  let lastView: RolloutView | undefined;
  const following = followRollout({
    kube,
    name: cmd.name,
    source: {},
    intervalMs: TICK_MS,
    onView(view, now) {
      lastView = view;
      const line = statusLine(view, cmd.output === 'wide' ? WIDE_COLUMNS : LINE_WIDTH);
      if (line === last) return;
      last = line;
      if (isDocument(cmd.output)) io.print(renderDocument(viewDocument(view, now), cmd.output, { stream: true }));
      else io.print(`${formatTime(now.toISOString())} ${line}`);
    },
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<{ kind: 'timeout' }>((resolve) => {
    if (cmd.timeoutMs !== undefined) timer = setTimeout(() => resolve({ kind: 'timeout' }), cmd.timeoutMs);
  });
  try {
    const end = await Promise.race([following.done, timedOut, io.interrupted.then(() => ({ kind: 'interrupted' as const }))]);
    following.stop();
    if (end.kind === 'timeout') {
      for (const l of prose(`timed out after ${formatAge(cmd.timeoutMs!)}: the rollout has not ended${last ? ` (${last})` : ''}`)) io.warn(l);
      return EXIT.timeout;
    }
    if (end.kind === 'ended' && lastView && !isDocument(cmd.output)) for (const line of endLines(lastView)) io.print(line);
    return followExit(end, io, cmd.name);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
