// The one configuration of every property test (fast-check): reproducible in CI, replayable from
// a failure message.
//
// assertProperty(property, params) runs the property
//   * once per seed of FIXED_SEEDS (params.numRuns each): the same inputs on every machine and run;
//   * then once with a fresh random seed, numRuns capped at RANDOM_RUNS_MAX (FC_RANDOM_RUNS=<n>
//     sets the cap, FC_RANDOM_RUNS=0 turns the random part off): it keeps finding new cases,
//     boundedly.
// A failure names its seed and the command that replays it:
//   FC_SEED=<seed> make test-unit ARGS=<test file>
// With FC_SEED set, only that seed runs (params.numRuns), for every property of the run: the same
// inputs as the failing run, the same counterexample, the same shrinking. FC_PATH=<path> (with
// FC_SEED, and jest -t to select the one property it belongs to) replays the shrunk counterexample
// directly.
import { relative, resolve } from 'node:path';
import fc from 'fast-check';

/** Seeds every run of every property uses. -460821825 is the seed of the `queueEmptyBytes: -0` report. */
export const FIXED_SEEDS: readonly number[] = [-460821825, 1, 20260611];
/** Default cap on the runs of the random-seed part. */
export const RANDOM_RUNS_MAX = 200;
/** fast-check's default numRuns. */
const DEFAULT_NUM_RUNS = 100;

const ROOT = resolve(__dirname, '..', '..');

type Params<Ts> = Omit<fc.Parameters<Ts>, 'seed' | 'path' | 'reporter' | 'asyncReporter'>;

interface Run {
  seed: number;
  numRuns: number;
  path?: string;
  what: string;
}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, min: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min} (got ${JSON.stringify(raw)})`);
  return n;
}

/** The runs one property gets, from the environment. */
export function plannedRuns(numRuns = DEFAULT_NUM_RUNS, env: NodeJS.ProcessEnv = process.env): Run[] {
  const seed = intFromEnv(env, 'FC_SEED', -(2 ** 31));
  const path = env.FC_PATH?.trim() || undefined;
  if (seed !== undefined) return [{ seed, numRuns, path, what: 'FC_SEED' }];
  if (path !== undefined) throw new Error('FC_PATH replays a counterexample of one seed: set FC_SEED too');
  const runs: Run[] = FIXED_SEEDS.map((s, i) => ({ seed: s, numRuns, what: `fixed seed ${i + 1}/${FIXED_SEEDS.length}` }));
  const randomRuns = Math.min(numRuns, intFromEnv(env, 'FC_RANDOM_RUNS', 0) ?? RANDOM_RUNS_MAX);
  if (randomRuns > 0) {
    runs.push({ seed: (Date.now() ^ Math.floor(Math.random() * 0x1_0000_0000)) | 0, numRuns: randomRuns, what: 'random seed' });
  }
  return runs;
}

const shellQuote = (s: string) => (/^[\w./=:-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const regexEscape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The failure message's first lines: which run failed and how to replay it. */
export function replayHint(run: Run, counterexamplePath: string | null, testPath?: string, testName?: string): string {
  const file = testPath ? relative(ROOT, testPath) : '<test file>';
  const lines = [
    `Property failed with seed ${run.seed} (${run.what}, numRuns ${run.numRuns}).`,
    `Replay: FC_SEED=${run.seed} make test-unit ARGS=${shellQuote(file)}`,
  ];
  if (counterexamplePath && testName) {
    lines.push(
      `Straight to the shrunk counterexample: FC_SEED=${run.seed} FC_PATH=${shellQuote(counterexamplePath)} npx jest ${shellQuote(file)} -t ${shellQuote(`^${regexEscape(testName)}$`)} --selectProjects unit`,
    );
  }
  return lines.join('\n');
}

/**
 * fc.assert with the seeds above. Synchronous properties only (every property test is); throws on
 * the first failing run, with the replay hint before fast-check's own report.
 */
export function assertProperty<Ts>(property: fc.IProperty<Ts>, params: Params<Ts> = {}): void {
  const state = expect.getState();
  for (const run of plannedRuns(params.numRuns)) {
    const details = fc.check(property, { ...params, seed: run.seed, numRuns: run.numRuns, path: run.path });
    if (details.failed) {
      const hint = replayHint(run, details.counterexamplePath, state.testPath, state.currentTestName);
      throw new Error(`${hint}\n\n${fc.defaultReportMessage(details) ?? ''}`, { cause: details.errorInstance });
    }
  }
}
