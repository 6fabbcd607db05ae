// The process entry behaviour shared by the worker and the trigger: a bad environment exits 2 with
// the ConfigError's list, and so does a Temporal namespace without vmrollout's search attributes;
// SIGTERM/SIGINT stop gracefully (exit 0, or 1 if stopping fails) and a second signal exits 1 at once.
import { Connection } from '@temporalio/client';
import { ConfigError, temporalConnectionOptions, type TemporalConnectionConfig } from './env';
import { checkSearchAttributes, type SearchAttributeCheck } from './search-attributes';

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

/**
 * Exits 2 with what is missing and the command that creates it when the namespace lacks a search
 * attribute a rollout sets; `warn`s and goes on when the frontend will not list them.
 */
export async function requireSearchAttributesOrExit(cfg: TemporalConnectionConfig, warn: (message: string) => void): Promise<void> {
  const connection = await Connection.connect(temporalConnectionOptions(cfg));
  let check: SearchAttributeCheck;
  try {
    check = await checkSearchAttributes(connection, cfg);
  } finally {
    await connection.close();
  }
  if (check.ok === false) {
    process.stderr.write(`${check.message}\n`);
    process.exit(2);
  }
  if (check.ok === 'unchecked') warn(check.reason);
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
