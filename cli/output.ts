// `-o`: the output formats every verb that prints a rollout, a list or a version takes, declared
// once (args.ts parses them, completion offers them) and the one place a document becomes text.
// Pure. Documents are built by the verbs from our own keys; every value in them may be hostile
// (a status message, a name) and is escaped, never removed, so a script reads what is stored.
import { stringify } from 'yaml';
import { printableJson } from './printable';

/** text: the view for a person; wide: the same with every column and nothing cut; json, yaml: one document. */
export const OUTPUTS = ['text', 'wide', 'json', 'yaml'] as const;
export type Output = (typeof OUTPUTS)[number];
/** What `-o` accepts (text is the default, not a value). */
export const OUTPUT_FLAG_VALUES = OUTPUTS.filter((o) => o !== 'text');

/** -o wide: the text views' lines up to this many columns instead of 100 (a long message, a Web UI URL on one line). */
export const WIDE_COLUMNS = 400;

export const isDocument = (o: Output): o is 'json' | 'yaml' => o === 'json' || o === 'yaml';

// What YAML leaves raw inside a double-quoted scalar: it escapes C0 (\e, \a), but not DEL, C1 or the
// bidirectional overrides. Every string is double-quoted (below), where \uXXXX is an escape.
const YAML_RAW_CONTROLS = /[\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function printableYaml(value: unknown): string {
  return stringify(value, { defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN', lineWidth: 0 }).replace(
    YAML_RAW_CONTROLS,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * One document as text. `stream`: one of several (get --watch, status): JSON on one line each
 * (a line per document, for `jq`), YAML documents each opened by `---`.
 */
export function renderDocument(doc: unknown, output: 'json' | 'yaml', opts: { stream?: boolean } = {}): string {
  if (output === 'json') return printableJson(doc, opts.stream ? undefined : 2);
  const text = printableYaml(doc).replace(/\n$/, '');
  return opts.stream ? `---\n${text}` : text;
}

/** What the verbs that act (pause, undo, promote, …) take: a document says what they did; no table to widen. */
export type ActionOutput = Exclude<Output, 'wide'>;
export const ACTION_OUTPUT_FLAG_VALUES = OUTPUT_FLAG_VALUES.filter((o): o is Exclude<ActionOutput, 'text'> => o !== 'wide');

/**
 * What an action verb did, as its -o json|yaml document. `result`: what happened (e.g. `signalled`,
 * `unchanged`, `refused`); the rest is the verb's own.
 */
export interface ActionDocument {
  verb: string;
  namespace: string;
  name?: string;
  uid?: string;
  result: string;
  [detail: string]: unknown;
}

/**
 * How an action verb speaks: its lines for a person with text output, else nothing but the one
 * document at the end, so stdout is a single document a script can parse.
 */
export function actionPrinter(output: ActionOutput, print: (line: string) => void) {
  return {
    line: (l: string): void => {
      if (output === 'text') print(l);
    },
    document: (doc: ActionDocument): void => {
      if (isDocument(output)) print(renderDocument(doc, output));
    },
  };
}
