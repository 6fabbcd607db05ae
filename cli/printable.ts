// What the terminal is given of text that other people wrote (status messages, names, Events,
// API errors, workflow history): the text, never instructions to the terminal. An escape sequence
// in a status message could otherwise clear the screen, rewrite earlier lines, set the window title
// or plant a hyperlink; a carriage return could overwrite what vmrollout printed before it.
// Pure. Every line the CLI prints goes through printable (io.ts `printableIo`; style.ts `serialize`,
// before it adds colour); -o json is written by printableJson, which escapes instead of removing.

// Whole sequences go, not only their ESC: "[2J" left behind would still be noise. 7-bit and 8-bit
// introducers (ESC [ and U+009B, ESC ] and U+009D, …) as ECMA-48 defines them; an unterminated
// string sequence runs to the end of the text, as a terminal would read it.
const SEQUENCES = new RegExp(
  [
    '(?:\\x1b\\[|\\x9b)[\\x30-\\x3f]*[\\x20-\\x2f]*[\\x40-\\x7e]?', // CSI … final
    '(?:\\x1b[\\]PX^_]|[\\x90\\x98\\x9d\\x9e\\x9f])[^\\x07\\x1b\\x9c]*(?:\\x07|\\x1b\\\\|\\x9c)?', // OSC, DCS, SOS, PM, APC … ST
    '\\x1b[\\x20-\\x2f]*[\\x30-\\x7e]?', // any other ESC sequence
  ].join('|'),
  'g',
);
// C0 but tab and newline, DEL, C1; and the bidirectional overrides, which reorder what is shown
// (a name displayed differently from what it is).
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` without escape sequences and control characters. Tab and newline are kept in lines of
 * text; within one line (`oneLine`: a cell, a field of a view) they become spaces, so a value
 * cannot start a line that looks like vmrollout's own.
 */
export function printable(text: string, opts: { oneLine?: boolean } = {}): string {
  const clean = text.replace(SEQUENCES, '').replace(CONTROLS, '');
  return opts.oneLine ? clean.replace(/[\t\n]/g, ' ') : clean;
}

// What JSON.stringify leaves raw of the characters above: it escapes only C0, the quote and the backslash.
const JSON_RAW_CONTROLS = /[\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `-o json`: `value` as JSON with every control character escaped (`\u009b`), so a script reads
 * exactly what the cluster holds and the terminal is given no control character to act on.
 */
export function printableJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(JSON_RAW_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
