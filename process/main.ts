// The process entry behaviour shared by the worker and the trigger: a bad environment exits 2 with
// the ConfigError's list; SIGTERM/SIGINT stop gracefully (exit 0, or 1 if stopping fails) and a
// second signal exits 1 at once.
import { ConfigError } from './env';

/** Runs `load`; on a ConfigError writes its message to stderr and exits with status 2. */
export function loadConfigOrExit<C>(load: () => C): C {
  try {
    return load();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/** How a process reports the stages of a signalled stop (stderr lines, a structured log, …). */
export interface StopReporter {
  stopping(signal: string): void;
  secondSignal(signal: string): void;
  stopFailed(err: unknown): void;
}

/** On the first SIGTERM/SIGINT calls `stop` then exits (0, or 1 if it failed); a second signal exits 1 now. */
export function stopOnSignals(stop: () => Promise<void>, report: StopReporter): void {
  let signals = 0;
  const onSignal = (sig: string) => {
    if (++signals > 1) {
      report.secondSignal(sig);
      process.exit(1);
    }
    report.stopping(sig);
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        report.stopFailed(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}
