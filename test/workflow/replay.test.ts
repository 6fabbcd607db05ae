// Replays the recorded histories of test/fixtures/histories/*.json against the current workflow
// code: any non-determinism fails. Regenerate them with
//   RECORD_HISTORIES=1 npx jest --selectProjects workflow   (adds the newest version's histories; see maybeRecord)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { createEnv, workflowBundle } from './setup';

jest.setTimeout(120_000);
const DIR = path.resolve(__dirname, '..', 'fixtures', 'histories');
const files = fs.existsSync(DIR) ? fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort() : [];

beforeAll(async () => {
  // Installs the quiet runtime the other workflow suites use (and checks the test server exists).
  await (await createEnv()).teardown();
});

test('recorded histories exist (several scenarios)', () => {
  expect(files.length).toBeGreaterThanOrEqual(6);
});

test('every recorded history replays deterministically', async () => {
  const histories = files.map((f) => ({
    workflowId: f.replace(/\.json$/, ''),
    history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8'))),
  }));
  const failures: string[] = [];
  let n = 0;
  for await (const r of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) {
    n++;
    if (r.error) failures.push(`${r.workflowId}: ${r.error.name}: ${r.error.message}`);
  }
  expect(failures).toEqual([]);
  expect(n).toBe(files.length);
});
