// Replays the recorded histories (test/fixtures/histories/<scenario>.json.gz, one per scenario of
// RECORDED_SCENARIOS) against the current workflow code: any non-determinism fails. Record them
// again with
//   RECORD_HISTORIES=1 scripts/jest-project.sh workflow   (see maybeRecord in setup.ts)
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { failureConverterPath, parsePayloadKeys, payloadDataConverter } from '../../process/payload-codec';
import { workflowBundleOptions } from '../../process/workflow-bundle';
import { PATCHES } from '../../workflows/versions';
import { createEnv, HISTORIES_DIR, historyFile, RECORDED_SCENARIOS } from './setup';

jest.setTimeout(120_000);

beforeAll(async () => {
  // Installs the quiet runtime the other workflow suites use (and checks the test server exists).
  await (await createEnv()).teardown();
});

type Marker = { markerName?: string; details?: Record<string, { payloads?: Array<{ data?: string }> }> };
type HistoryJSON = { events: Array<{ markerRecordedEventAttributes?: Marker }> };

const read = (file: string): HistoryJSON => JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8')) as HistoryJSON;

/** The ids of the patch markers (the SDK's patch call) recorded in a history. */
function patchIds(history: HistoryJSON): string[] {
  return history.events
    .map((e) => e.markerRecordedEventAttributes)
    .filter((m): m is Marker => m?.markerName === 'core_patch')
    .map((m) => (JSON.parse(Buffer.from(m.details?.['patch-data']?.payloads?.[0]?.data ?? '', 'base64').toString('utf8')) as { id: string }).id);
}

test('one recorded history per scenario, and nothing else', () => {
  const files = fs.readdirSync(HISTORIES_DIR).sort();
  expect(files).toEqual(RECORDED_SCENARIOS.map((s) => historyFile(s).slice(HISTORIES_DIR.length + 1)).sort());
});

test('no recorded history carries a patch marker other than those registered in workflows/versions.ts', () => {
  const registered = new Set(PATCHES.map((p) => p.id));
  const unregistered = RECORDED_SCENARIOS.flatMap((s) =>
    patchIds(read(historyFile(s)))
      .filter((id) => !registered.has(id))
      .map((id) => `${s}: ${id}`),
  );
  expect(unregistered).toEqual([]);
});

test('every recorded history replays deterministically', async () => {
  const histories = RECORDED_SCENARIOS.map((s) => ({ workflowId: s, history: historyFromJSON(read(historyFile(s))) }));
  const failures: string[] = [];
  let n = 0;
  // As the image's worker runs them: the bundle of scripts/bundle-workflows.ts (with the failure
  // converter) and the payload codec, through which these histories, recorded without encryption,
  // pass unchanged.
  const workflowBundle = await bundleWorkflowCode({ ...workflowBundleOptions(failureConverterPath()), logger: new DefaultLogger('WARN') });
  const dataConverter = payloadDataConverter(parsePayloadKeys(`replay:${randomBytes(32).toString('base64')}`));
  for await (const r of Worker.runReplayHistories({ workflowBundle, dataConverter }, histories)) {
    n++;
    if (r.error) failures.push(`${r.workflowId}: ${r.error.name}: ${r.error.message}`);
  }
  expect(failures).toEqual([]);
  expect(n).toBe(RECORDED_SCENARIOS.length);
});
