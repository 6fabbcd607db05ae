// The plugin's Io (cli/io.ts) for tests: no terminal, what is printed kept in `out`, warnings in `err`.
import type { Io } from '../../cli/io';

export function fakeIo(env: NodeJS.ProcessEnv = {}): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    env,
    stdout: { isTTY: false, write: (s: string) => out.push(s) },
    print: (l) => void out.push(l),
    warn: (l) => void err.push(l),
    confirm: async () => undefined,
    interrupted: new Promise(() => {}),
    out,
    err,
  };
}
