// `kubectl vmdc`: the entry point (dist/kubectl-vmdc.cjs, or `npx tsx cli/main.ts`). Parses the
// command line, runs the verb and turns what went wrong into the documented exit codes.
import * as readline from 'node:readline';
import { ApplicationFailure } from '@temporalio/common';
import { describeError } from '../kube/errors';
import { UnreadableRecordsError } from '../api/route-records';
import { ConfigError } from '../process/env';
import { parseCommand, USAGE, UsageError, type Command } from './args';
import { EXIT, Refused, RELEASE_ZONE_EXIT } from './exit-codes';
import { printableIo, type Io } from './io';
import { NotFound } from './kube';
import { abort } from './verbs/abort';
import { cancel } from './verbs/cancel';
import { complete } from './verbs/complete';
import { completion } from './verbs/completion';
import { diff } from './verbs/diff';
import { fleet } from './verbs/fleet';
import { get } from './verbs/get';
import { history } from './verbs/history';
import { importVerb } from './verbs/import';
import { list } from './verbs/list';
import { pauseOrResume } from './verbs/pause';
import { plan } from './verbs/plan';
import { promote } from './verbs/promote';
import { releaseZone } from './verbs/release-zone';
import { retry } from './verbs/retry';
import { status } from './verbs/status';
import { undo } from './verbs/undo';
import { version } from './verbs/version';

function dispatch(cmd: Exclude<Command, { verb: 'help' }>, io: Io): Promise<number> {
  switch (cmd.verb) {
    case 'get':
      return get(cmd, io);
    case 'list':
      return list(cmd, io);
    case 'version':
      return version(cmd, io);
    case 'completion':
      return completion(cmd, io);
    case 'status':
      return status(cmd, io);
    case 'pause':
    case 'resume':
      return pauseOrResume(cmd, io);
    case 'retry':
      return retry(cmd, io);
    case 'undo':
      return undo(cmd, io);
    case 'promote':
      return promote(cmd, io);
    case 'abort':
      return abort(cmd, io);
    case 'diff':
      return diff(cmd, io);
    case 'plan':
      return plan(cmd, io);
    case 'cancel':
      return cancel(cmd, io);
    case 'history':
      return history(cmd, io);
    case 'fleet':
      return fleet(cmd, io);
    case 'release-zone':
      return releaseZone(cmd, io);
  }
}

/** release-zone keeps the former script's codes: every failure but bad arguments is 1. */
function releaseZoneFailure(err: unknown, io: Io): number {
  if (err instanceof UnreadableRecordsError) io.warn(`error: ${err.message}; fix or remove the annotation by hand`);
  else if (err instanceof Refused || err instanceof NotFound || err instanceof ApplicationFailure) io.warn(`error: ${err.message}`);
  else io.warn(`error: ${describeError(err)}`);
  return RELEASE_ZONE_EXIT.refused;
}

export async function run(argv: string[], terminal: Io): Promise<number> {
  const io = printableIo(terminal);
  let cmd: Command | undefined;
  // import reads a file and asks no cluster: its flags are its own (cli/verbs/import.ts).
  if (argv[0] === 'import') return await importVerb(argv.slice(1), io);
  // kubectl's TAB, through kubectl_complete-vmdc (cli/complete-protocol.ts): never a usage error.
  if (argv[0] === '__complete') return await complete(argv.slice(1), io);
  if (argv[0] === 'help' && argv[1] === 'import') return await importVerb(['--help'], io);
  try {
    cmd = parseCommand(argv);
    if (cmd.verb === 'help') {
      io.print(cmd.text);
      return EXIT.ok;
    }
    return await dispatch(cmd, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.warn(`error: ${err.message}`);
      io.warn(USAGE[(err.verb as keyof typeof USAGE | undefined) ?? 'main']);
      return err.verb === 'release-zone' ? RELEASE_ZONE_EXIT.usage : EXIT.error;
    }
    if (cmd?.verb === 'release-zone') return releaseZoneFailure(err, io);
    if (err instanceof Refused) {
      io.warn(`error: ${err.message}`);
      return EXIT.failed;
    }
    io.warn(`error: ${err instanceof ConfigError || err instanceof NotFound ? err.message : describeError(err)}`);
    return EXIT.error;
  }
}

/** Answers only from a terminal: piped input must not cancel a rollout by accident. */
function confirmOnTerminal(question: string): Promise<boolean | undefined> {
  if (!process.stdin.isTTY) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
    rl.on('SIGINT', () => {
      rl.close();
      resolve(false);
    });
    rl.question(question, (answer) => {
      rl.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
  });
}

/** After Ctrl-C, a verb that does not wrap up within this long is not waited for. */
const INTERRUPT_GRACE_MS = 3000;

function processIo(): Io {
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  process.once('SIGINT', () => {
    interrupt();
    setTimeout(() => process.exit(EXIT.interrupted), INTERRUPT_GRACE_MS).unref();
  });
  return {
    env: process.env,
    stdout: process.stdout,
    print: (line) => void process.stdout.write(`${line}\n`),
    warn: (line) => void process.stderr.write(`${line}\n`),
    confirm: confirmOnTerminal,
    interrupted,
  };
}

if (require.main === module) {
  void run(process.argv.slice(2), processIo()).then((code) => process.exit(code));
}
