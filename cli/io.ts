// What a verb may do to the outside world besides Kubernetes and Temporal: the process's streams,
// environment, a question to the person, and Ctrl-C. main.ts gives the real ones.
import { DEFAULT_WIDTH } from './render-text';
import { wrap } from './style';

export interface Io {
  env: NodeJS.ProcessEnv;
  stdout: { isTTY?: boolean; columns?: number; write(s: string): unknown };
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
