// `kubectl vmdc completion bash|zsh`: prints the script (source <(kubectl vmdc completion bash)).
import type { Command } from '../args';
import { completionScript } from '../completion';
import { EXIT } from '../exit-codes';
import type { Io } from '../io';

export function completion(cmd: Extract<Command, { verb: 'completion' }>, io: Io): Promise<number> {
  io.print(completionScript(cmd.shell).replace(/\n$/, ''));
  return Promise.resolve(EXIT.ok);
}
