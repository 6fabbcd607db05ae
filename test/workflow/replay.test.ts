// Replays the recorded histories of test/fixtures/histories/*.json against the current workflow
// code: any non-determinism fails. Regenerate them with
//   RECORD_HISTORIES=1 npx jest --selectProjects workflow   (adds the newest version's histories; see maybeRecord)
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { failureConverterPath, parsePayloadKeys, payloadDataConverter } from '../../process/payload-codec';
import { createEnv, HISTORY_VERSION } from './setup';
import { workflowBundleOptions } from '../../process/workflow-bundle';

jest.setTimeout(120_000);
const DIR = path.resolve(__dirname, '..', 'fixtures', 'histories');
const files = fs.existsSync(DIR) ? fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort() : [];

beforeAll(async () => {
  // Installs the quiet runtime the other workflow suites use (and checks the test server exists).
  await (await createEnv()).teardown();
});

/** The ids of the patch markers (`patched()`) recorded in a history file. */
function patchIds(file: string): string[] {
  type Marker = { markerName?: string; details?: Record<string, { payloads?: Array<{ data?: string }> }> };
  const events = (JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as { events: Array<{ markerRecordedEventAttributes?: Marker }> }).events;
  return events
    .map((e) => e.markerRecordedEventAttributes)
    .filter((m): m is Marker => m?.markerName === 'core_patch')
    .map((m) => (JSON.parse(Buffer.from(m.details?.['patch-data']?.payloads?.[0]?.data ?? '', 'base64').toString('utf8')) as { id: string }).id);
}

test('recorded histories exist for the newest workflow version and for older ones', () => {
  const newest = files.filter((f) => f.endsWith(`@${HISTORY_VERSION}.json`));
  expect(newest.length).toBeGreaterThanOrEqual(6);
  expect(files.length - newest.length).toBeGreaterThanOrEqual(6);
  // The newest version's histories carry its patch marker; the older ones do not.
  const marked = (f: string) => patchIds(f).includes(HISTORY_VERSION);
  expect(newest.filter((f) => !marked(f))).toEqual([]);
  expect(files.filter((f) => !newest.includes(f) && marked(f))).toEqual([]);
});

test('every recorded history replays deterministically', async () => {
  const histories = files.map((f) => ({
    workflowId: f.replace(/\.json$/, ''),
    history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8'))),
  }));
  const failures: string[] = [];
  let n = 0;
  // As the image's worker runs them: the bundle of scripts/bundle-workflows.ts (with the failure
  // converter) and the payload codec, through which these histories, recorded before payloads were
  // encrypted, pass unchanged.
  const workflowBundle = await bundleWorkflowCode({ ...workflowBundleOptions(failureConverterPath()), logger: new DefaultLogger('WARN') });
  const dataConverter = payloadDataConverter(parsePayloadKeys(`replay:${randomBytes(32).toString('base64')}`));
  for await (const r of Worker.runReplayHistories({ workflowBundle, dataConverter }, histories)) {
    n++;
    if (r.error) failures.push(`${r.workflowId}: ${r.error.name}: ${r.error.message}`);
  }
  expect(failures).toEqual([]);
  expect(n).toBe(files.length);
});
