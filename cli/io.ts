// What a verb may do to the outside world besides Kubernetes and Temporal: the process's streams,
// environment, a question to the person, and Ctrl-C. main.ts gives the real ones.
import { printable } from './printable';
import { DEFAULT_WIDTH } from './render-text';
import { wrap } from './style';

export interface Io {
  env: NodeJS.ProcessEnv;
  stdout: { isTTY?: boolean; columns?: number; write(s: string): unknown };
  /** Text (run() makes it printable); lines with our own colour go to stdout.write, see printableIo. */
  print(line: string): void;
  warn(line: string): void;
  /** The person's yes or no; undefined when nobody can be asked (stdin is not a terminal). */
  confirm(question: string): Promise<boolean | undefined>;
  /** Resolves on Ctrl-C. */
  interrupted: Promise<void>;
}

/** Sentences for a person, wrapped to the views' 100 columns. */
export function prose(text: string): string[] {
  return wrap(text, DEFAULT_WIDTH);
}

/**
 * `io` whose print and warn give the terminal only printable text: everything a verb prints may
 * quote the cluster or Temporal. stdout.write is left as it is: only rendered views use it, and
 * serialize has cleaned their text before adding the colour and links that are ours.
 */
export function printableIo(io: Io): Io {
  return { ...io, print: (line) => io.print(printable(line)), warn: (line) => io.warn(printable(line)) };
}
