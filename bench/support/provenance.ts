// What every benchmark's JSON document carries so that a figure read from it can be traced and run
// again: the commit, the machine, the command, and whether the tree had changes beside the commit.
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { round } from '../analysis/stats';

const REPO = path.resolve(__dirname, '..', '..');
/** Enough to see whose work was in the tree; a shared tree can have many. */
const MAX_LISTED_CHANGES = 40;

const git = (...args: string[]) => execFileSync('git', args, { cwd: REPO, encoding: 'utf8' });

export interface Provenance {
  commit: string;
  /** Files that differed from the commit when the run started (`git status --porcelain`: other work in a shared tree). */
  uncommittedChanges: string[];
  date: string;
  /**
   * The make target or script that ran it (they set BENCH_COMMAND), else the caller's default, else
   * the script and its arguments.
   */
  command: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; kernel: string; loadavgAtStart: number[] };
}

/**
 * Call it when the run starts (the load average is the machine's then). `defaultCommand`: for a
 * jest file, whose process's arguments are jest's and do not name the file.
 */
export function provenance(defaultCommand?: string): Provenance {
  const changes = git('status', '--porcelain').split('\n').filter(Boolean);
  const cpus = os.cpus();
  return {
    commit: git('rev-parse', 'HEAD').trim(),
    uncommittedChanges:
      changes.length > MAX_LISTED_CHANGES ? [...changes.slice(0, MAX_LISTED_CHANGES), `… ${changes.length - MAX_LISTED_CHANGES} more`] : changes,
    date: new Date().toISOString(),
    command: process.env.BENCH_COMMAND ?? defaultCommand ?? ['npx tsx', path.relative(REPO, process.argv[1] ?? '?'), ...process.argv.slice(2)].join(' '),
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model.trim() ?? '?',
      memoryGiB: round(os.totalmem() / 2 ** 30),
      node: process.version,
      kernel: os.release(),
      loadavgAtStart: os.loadavg().map((x) => round(x, 2)),
    },
  };
}
