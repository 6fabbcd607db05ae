#!/usr/bin/env node
// Prints one last line `N passed, N failed[, N skipped]` from the results written by
// scripts/test-all.sh and exits non-zero if anything failed. A failing non-jest step
// (deps, tools, typecheck, lint) counts as one failure; so does a jest project that
// exited non-zero without reporting a failing test (e.g. a suite that did not compile).
import * as fs from 'node:fs';
import * as path from 'node:path';

const dir = process.argv[2] ?? '.tmp/test-results';
let passed = 0;
let failed = 0;
let skipped = 0;
const notes = [];
const files = fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
if (files.length === 0) (notes.push(`no results in ${dir}`), (failed += 1));
for (const f of files.filter((n) => n.endsWith('.rc'))) {
  const step = f.slice(0, -3);
  const rc = Number(fs.readFileSync(path.join(dir, f), 'utf8').trim());
  if (step.startsWith('jest-')) {
    const json = path.join(dir, `${step}.json`);
    let r;
    try {
      r = JSON.parse(fs.readFileSync(json, 'utf8'));
    } catch {
      if (rc !== 0) (notes.push(`${step}: exit ${rc} and no JSON results`), (failed += 1));
      continue;
    }
    passed += r.numPassedTests ?? 0;
    failed += r.numFailedTests ?? 0;
    skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    const brokenSuites = (r.testResults ?? []).filter((s) => s.status === 'failed' && (s.assertionResults ?? []).every((a) => a.status !== 'failed'));
    failed += brokenSuites.length;
    for (const s of brokenSuites) notes.push(`${step}: suite failed to run: ${path.relative(process.cwd(), s.name)}`);
    if (rc !== 0 && (r.numFailedTests ?? 0) === 0 && brokenSuites.length === 0) (notes.push(`${step}: exit ${rc} without failing tests`), (failed += 1));
  } else if (rc !== 0) {
    notes.push(`${step} failed (exit ${rc})`);
    failed += 1;
  }
}
for (const n of notes) console.log(`  ${n}`);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
