// Keeps the benchmarks runnable: each prints one JSON document with finite ratios and its provenance.
// (What the numbers are is measured by `make bench`, never asserted here.)
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const BENCH_DIR = path.resolve(__dirname, '..', '..', 'bench');

describe.each(fs.readdirSync(BENCH_DIR).filter((f) => f.endsWith('.ts')))('bench/%s', (file) => {
  test('runs and prints JSON with finite ratios', () => {
    const out = execFileSync('npx', ['--no-install', 'tsx', path.join(BENCH_DIR, file), '--quick'], { encoding: 'utf8', timeout: 120_000 });
    const result = JSON.parse(out) as { benchmark: string; ratios: Record<string, number>; commit: string; command: string; machine: { cpus: number } };
    expect(result.benchmark).toBe(path.basename(file, '.ts'));
    // Where a figure read from it came from (bench/support/provenance.ts).
    expect(result.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(result.command).toContain(file);
    expect(result.machine.cpus).toBeGreaterThan(0);
    expect(Object.keys(result.ratios).length).toBeGreaterThan(0);
    for (const ratio of Object.values(result.ratios)) expect(Number.isFinite(ratio) && ratio > 0).toBe(true);
  }, 130_000);
});
