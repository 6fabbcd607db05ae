// Lines as styled segments: the renderers measure, wrap and cut plain text, and colour (or a
// terminal hyperlink) is added only when a line is written out, so a line measured at 100 columns
// is 100 columns with or without colour.
import { printable } from './printable';

export type Colour = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'blue' | 'cyan';

export interface Segment {
  text: string;
  style?: Colour[];
  /** Where a terminal hyperlink (OSC 8) leads; written only with colour on. */
  link?: string;
}

export type Line = Segment[];

export const seg = (text: string, ...style: Colour[]): Segment => (style.length ? { text, style } : { text });

/** Columns a text takes. Every symbol the renderers use (✔ ◌ █ …) is one column wide. */
export const textWidth = (text: string): number => [...text].length;

const lineWidth = (line: Line): number => line.reduce((n, s) => n + textWidth(s.text), 0);

/** The line cut to `width` columns, its last visible character replaced by `…` when cut. */
export function fit(line: Line, width: number): Line {
  if (lineWidth(line) <= width) return line;
  const out: Line = [];
  let left = width - 1;
  for (const s of line) {
    if (left <= 0) break;
    const chars = [...s.text];
    out.push({ ...s, text: chars.slice(0, left).join('') });
    left -= Math.min(left, chars.length);
  }
  out.push({ text: '…' });
  return out;
}

/**
 * Word-wraps `text` into lines of at most `width` columns; a word longer than a line is split.
 * Past `maxLines` the last line ends with `…`: messages quoting API errors can be pages long, and
 * `-o json` has them whole.
 */
export function wrap(text: string, width: number, maxLines = Infinity): string[] {
  const lines: string[] = [];
  let cur = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    let w = word;
    if (cur && textWidth(cur) + 1 + textWidth(w) <= width) {
      cur += ` ${w}`;
      continue;
    }
    if (cur) lines.push(cur);
    while (textWidth(w) > width) {
      const chars = [...w];
      lines.push(chars.slice(0, width).join(''));
      w = chars.slice(width).join('');
    }
    cur = w;
  }
  if (cur) lines.push(cur);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  const last = [...kept[maxLines - 1]!];
  kept[maxLines - 1] = (textWidth(kept[maxLines - 1]!) < width ? last : last.slice(0, width - 1)).join('') + '…';
  return kept;
}

const CODES: Record<Colour, number> = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, blue: 34, cyan: 36 };

/** The line as terminal text: its segments made printable (they quote the cluster), then styled. */
export function serialize(line: Line, colour: boolean): string {
  return line
    .map((s) => {
      const text = printable(s.text, { oneLine: true });
      if (!colour) return text;
      const styled = s.style?.length ? `\x1b[${s.style.map((c) => CODES[c]).join(';')}m${text}\x1b[0m` : text;
      return s.link ? `\x1b]8;;${printable(s.link, { oneLine: true })}\x1b\\${styled}\x1b]8;;\x1b\\` : styled;
    })
    .join('')
    .trimEnd();
}

/**
 * Colour only for a person at a terminal: not when the output is piped or logged, not when
 * NO_COLOR is set to anything non-empty (no-color.org), not on a dumb terminal.
 */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv, flagOff = false): boolean {
  return !flagOff && stream.isTTY === true && !env.NO_COLOR && env.TERM !== 'dumb';
}
