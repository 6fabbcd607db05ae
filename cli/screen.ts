// How a followed rollout is written out: redrawn in place on a terminal (the clocks tick), or
// appended whenever it changed (a pipe, a CI log, `make demo`), as text, one JSON document a line, or YAML documents each after `---`.
import type { Output } from './args';
import { isDocument, renderDocument } from './output';
import { viewDocument } from './render-json';
import { renderText } from './render-text';
import { formatTime } from './format';
import { changeKey, type RolloutView } from './view';

export interface Screen {
  show(view: RolloutView, now: Date): void;
}

export interface ScreenOptions {
  colour: boolean;
  width?: number;
}

/** Home and clear-to-end: the view replaces the previous one on a terminal. */
const CLEAR = '\x1b[H\x1b[J';

export function redrawScreen(write: (s: string) => void, opts: ScreenOptions & { intervalMs: number }): Screen {
  return {
    show(view, now) {
      const lines = renderText(view, { now, ...opts });
      const footer = `watching every ${opts.intervalMs / 1000}s and on each change · ${formatTime(now.toISOString())} · Ctrl-C to stop`;
      write(`${CLEAR}${[...lines, '', footer].join('\n')}\n`);
    },
  };
}

export function appendScreen(writeLine: (line: string) => void, opts: ScreenOptions & { output: Output }): Screen {
  let last: string | undefined;
  return {
    show(view, now) {
      const key = changeKey(view);
      if (key === last) return;
      last = key;
      if (isDocument(opts.output)) return writeLine(renderDocument(viewDocument(view, now), opts.output, { stream: true }));
      writeLine(`── ${formatTime(now.toISOString())} ${'─'.repeat(Math.max(0, (opts.width ?? 100) - 24))}`);
      for (const l of renderText(view, { now, ...opts })) writeLine(l);
    },
  };
}
