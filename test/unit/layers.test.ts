// The layers `make lint` enforces with dependency-cruiser (.dependency-cruiser.cjs, drawn in
// docs/architecture.md): the repository passes, and in a small tree of the same folders every kind of
// forbidden import is reported by its rule while the allowed ones are not (the negative controls:
// the same check finds what it must refuse).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(ROOT, 'node_modules/.bin/depcruise');

interface Run {
  status: number | null;
  output: string;
}

/** dependency-cruiser with the repository's configuration over `cwd`, as `make lint` runs it. */
function depcruise(cwd: string, ...args: string[]): Run {
  const r = spawnSync(DEPCRUISE, ['--config', CONFIG, ...args, '.'], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status, output: r.stdout + r.stderr };
}

/** Each violation as `rule from → to`. */
function violations(cwd: string): string[] {
  const run = depcruise(cwd, '--output-type', 'json');
  const result = JSON.parse(run.output) as { summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> } };
  return result.summary.violations.map((v) => `${v.rule.name} ${v.from} → ${v.to}`).sort();
}

/** Stand-ins of the packages the rules name (resolved as packages, like the real ones). */
const PACKAGES: Record<string, string> = Object.fromEntries(
  ['@temporalio/workflow', '@temporalio/common'].flatMap((name) => [
    [`node_modules/${name}/package.json`, JSON.stringify({ name, version: '1.0.0', main: 'index.js' })],
    [`node_modules/${name}/index.js`, 'module.exports = {};\n'],
  ]),
);

/** A tree of `files`, with a tsconfig.json and the packages above. */
function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vmrollout-layers-'));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true } }));
  for (const [file, text] of Object.entries({ ...PACKAGES, ...files })) {
    fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** Every import the layers allow, one module per folder. */
const ALLOWED: Record<string, string> = {
  'api/a.ts': `export const a = 1;\n`,
  'kube/k.ts': `import { a } from '../api/a';\nexport const k = a;\n`,
  'process/p.ts': `import { a } from '../api/a';\nexport const p = a;\n`,
  'workflows/w.ts': `import { sleep } from '@temporalio/workflow';\nimport { ApplicationFailure } from '@temporalio/common';\nimport { a } from '../api/a';\nexport const w = [a, sleep, ApplicationFailure];\nexport type W = number;\n`,
  'activities/x.ts': `import { a } from '../api/a';\nimport { k } from '../kube/k';\nimport { w } from '../workflows/w';\nexport const x = [a, k, w];\n`,
  'trigger/t.ts': `import { a } from '../api/a';\nimport { k } from '../kube/k';\nimport { p } from '../process/p';\nexport const t = [a, k, p];\n`,
  'cli/c.ts': `import { a } from '../api/a';\nimport { k } from '../kube/k';\nimport { p } from '../process/p';\nexport const c = [a, k, p];\n`,
  'worker/main.ts': `import { a } from '../api/a';\nimport { k } from '../kube/k';\nimport { p } from '../process/p';\nimport { w } from '../workflows/w';\nimport { x } from '../activities/x';\nexport const main = [a, k, p, w, x];\n`,
  'test/anything.ts': `import { t } from '../trigger/t';\nimport { c } from '../cli/c';\nimport { main } from '../worker/main';\nexport const all = [t, c, main];\n`,
  'scripts/anything.ts': `import { all } from '../test/anything';\nexport const s = all;\n`,
};

/** One forbidden import per file, and the violation each must be reported as. */
const FORBIDDEN: Array<[file: string, text: string, violation: string]> = [
  ['api/to-kube.ts', `import { k } from '../kube/k';\nexport const v = k;\n`, 'api-imports-only-itself api/to-kube.ts → kube/k.ts'],
  ['api/to-test.ts', `import { all } from '../test/anything';\nexport const v = all;\n`, 'api-imports-only-itself api/to-test.ts → test/anything.ts'],
  ['kube/to-workflows.ts', `import type { W } from '../workflows/w';\nexport const v: W = 1;\n`, 'kube-imports-only-api kube/to-workflows.ts → workflows/w.ts'],
  [
    'kube/to-temporal-workflow.ts',
    `import { sleep } from '@temporalio/workflow';\nexport const v = sleep;\n`,
    'temporal-workflow-only-in-workflows kube/to-temporal-workflow.ts → node_modules/@temporalio/workflow/index.js',
  ],
  ['process/to-kube.ts', `import { k } from '../kube/k';\nexport const v = k;\n`, 'process-imports-only-api process/to-kube.ts → kube/k.ts'],
  ['workflows/to-kube.ts', `import { k } from '../kube/k';\nexport const v = k;\n`, 'workflows-imports-only-api workflows/to-kube.ts → kube/k.ts'],
  [
    'workflows/to-node.ts',
    `import * as fs from 'node:fs';\nexport const v = fs;\n`,
    'workflows-imports-only-temporal-workflow-packages workflows/to-node.ts → fs',
  ],
  [
    'activities/to-trigger.ts',
    `import { t } from '../trigger/t';\nexport const v = t;\n`,
    'activities-imports-only-api-kube-workflows activities/to-trigger.ts → trigger/t.ts',
  ],
  [
    'activities/to-process.ts',
    `import { p } from '../process/p';\nexport const v = p;\n`,
    'activities-imports-only-api-kube-workflows activities/to-process.ts → process/p.ts',
  ],
  [
    'trigger/to-activities.ts',
    `import { x } from '../activities/x';\nexport const v = x;\n`,
    'trigger-imports-only-api-kube-process trigger/to-activities.ts → activities/x.ts',
  ],
  [
    'trigger/to-workflows.ts',
    `import type { W } from '../workflows/w';\nexport const v: W = 1;\n`,
    'trigger-imports-only-api-kube-process trigger/to-workflows.ts → workflows/w.ts',
  ],
  ['cli/to-trigger.ts', `import { t } from '../trigger/t';\nexport const v = t;\n`, 'cli-imports-only-api-kube-process cli/to-trigger.ts → trigger/t.ts'],
  [
    'cli/to-activities.ts',
    `import { x } from '../activities/x';\nexport const v = x;\n`,
    'cli-imports-only-api-kube-process cli/to-activities.ts → activities/x.ts',
  ],
  [
    'cli/to-workflows-value.ts',
    `import { w } from '../workflows/w';\nexport const v = w;\n`,
    'cli-imports-only-api-kube-process cli/to-workflows-value.ts → workflows/w.ts',
  ],
  [
    'cli/to-workflows-type.ts',
    `import type { W } from '../workflows/w';\nexport const v: W = 1;\n`,
    'cli-imports-only-api-kube-process cli/to-workflows-type.ts → workflows/w.ts',
  ],
  [
    'cli/to-workflows-inline-type.ts',
    `import { type W } from '../workflows/w';\nexport const v: W = 1;\n`,
    'cli-imports-only-api-kube-process cli/to-workflows-inline-type.ts → workflows/w.ts',
  ],
  [
    'worker/to-trigger.ts',
    `import { t } from '../trigger/t';\nexport const v = t;\n`,
    'worker-imports-only-api-kube-process-workflows-activities worker/to-trigger.ts → trigger/t.ts',
  ],
  [
    'worker/to-cli.ts',
    `import { c } from '../cli/c';\nexport const v = c;\n`,
    'worker-imports-only-api-kube-process-workflows-activities worker/to-cli.ts → cli/c.ts',
  ],
  // With kube/cycle-b.ts importing it back (added by the test): one cycle, reported once.
  ['kube/cycle-a.ts', `import { b } from './cycle-b';\nexport const a = () => b;\n`, 'no-circular kube/cycle-a.ts → kube/cycle-b.ts'],
  ['api/unresolvable.ts', `import { gone } from './gone';\nexport const v = gone;\n`, 'not-to-unresolvable api/unresolvable.ts → ./gone'],
];

describe('layers (.dependency-cruiser.cjs, make lint)', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it('the repository keeps its layers and has no import cycle', () => {
    expect(violations(ROOT)).toEqual([]);
  });

  it('every import the layers allow passes', () => {
    const dir = tree(ALLOWED);
    dirs.push(dir);
    expect(violations(dir)).toEqual([]);
    expect(depcruise(dir).status).toBe(0);
  });

  it('negative controls: each forbidden import and the cycle is reported by its rule, and fails the command make lint runs', () => {
    const cycleBack = `import type { a } from './cycle-a';\nexport const b = (f: typeof a) => f;\n`;
    const dir = tree({ ...ALLOWED, 'kube/cycle-b.ts': cycleBack, ...Object.fromEntries(FORBIDDEN.map(([file, text]) => [file, text])) });
    dirs.push(dir);
    expect(violations(dir)).toEqual(FORBIDDEN.map(([, , violation]) => violation).sort());
    const lint = depcruise(dir);
    expect(lint.status).not.toBe(0);
    expect(lint.output).toContain(`${FORBIDDEN.length} dependency violations`);
  });
});
