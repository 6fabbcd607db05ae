/**
 * Upgrading vmrollout itself, live: a worker of the NEW version takes over, on the same task queue,
 * a rollout that a worker of the OLD version started and left mid-zone. Real Temporal dev server
 * (not the time-skipping one), the real workflow bundles as the image's worker builds them (failure
 * converter in the bundle, payload codec in the data converter), the in-memory fake cluster of the
 * workflow suite as the activities of both workers.
 *
 * OLD = the workflow code before the commit that added the `step-started-at` patch
 * (workflows/rollout-run.ts: `this.stepTimes = this.localCalls && patched('step-started-at')`):
 * `workflows/` and `api/` of commit b3983bb, kept as test/fixtures/workflow-versions/
 * before-step-started-at.tar.gz (`git archive --format=tar.gz b3983bb workflows api`) because CI
 * may clone without history, and bundled from a temporary directory. NEW = this tree. The activities' interface did not
 * change between the two (workflows/activity-types.ts is identical), so one set serves both.
 *
 * What is proved: the takeover replays without a nondeterminism error (no WorkflowTaskFailed event)
 * and the rollout succeeds on the new worker; since the patch is evaluated once, in the workflow's
 * constructor, the rollout started by the old code keeps the old behaviour for its whole life (no
 * status ever carries zones[].stepStartedAt), while a rollout started on the new worker afterwards
 * dates every zone in a step.
 *
 * Negative control (the last test): the same takeover by a NEW tree whose guard is removed
 * (`this.stepTimes = this.localCalls`). It still replays and succeeds — stepStartedAt is workflow
 * state only, it adds no command, so determinism alone does not need the patch — but the old
 * rollout's statuses change shape mid-life (stepStartedAt appears after the takeover). So what the
 * patch guards is the version's behaviour, not replay; and the "never carries stepStartedAt"
 * assertion above is the one that would catch the guard's removal.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, type WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, Worker, type WorkflowBundle } from '@temporalio/worker';
import { workflowIdFor, type RolloutInput } from '../../api/rollout-contract';
import { ZONE_STEPS, type VMDistributedClusterStatus } from '../../api/types';
import { failureConverterPath, parsePayloadKeys, payloadDataConverter } from '../../process/payload-codec';
import { PRELOAD_MODULES, workflowBundleOptions } from '../../process/workflow-bundle';
import type { RolloutActivities } from '../../workflows/activity-types';
import type { rolloutWorkflow } from '../../workflows';
import { useTemporalDevEnv } from '../harness/temporal';
import { inputOf, makeFake } from '../workflow/setup';
import type { FakeCluster } from '../workflow/fake-cluster';

jest.setTimeout(120_000);

const REPO = path.resolve(__dirname, '..', '..');
/** The workflow sources before `step-started-at` (commit b3983bb, the parent of ba23d3b). */
const OLD_SOURCES = path.join(__dirname, '..', 'fixtures', 'workflow-versions', 'before-step-started-at.tar.gz');
const PATCH_ID = 'step-started-at';
const STEPS = new Set<string>(ZONE_STEPS);

const env = useTemporalDevEnv();
const dataConverter = payloadDataConverter(parsePayloadKeys(`upgrade:${randomBytes(32).toString('base64')}`))!;
const trees: string[] = [];
let oldBundle: WorkflowBundle;
let newBundle: WorkflowBundle;
let client: Client;

/** A tree holding `workflows/` and `api/` (all the workflow code imports), with this repo's node_modules. */
function treeDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vmrollout-${name}-`));
  trees.push(dir);
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** The image's bundle options (process/workflow-bundle.ts) for the workflow code in `root`, every path taken from that tree. */
function bundleOf(root: string): Promise<WorkflowBundle> {
  const inTree = (p: string) => (p.startsWith(REPO + path.sep) && !p.includes(`${path.sep}node_modules${path.sep}`) ? path.join(root, path.relative(REPO, p)) : p);
  return bundleWorkflowCode({
    workflowsPath: path.join(root, 'workflows', 'index.ts'),
    preloadModules: PRELOAD_MODULES.map(inTree),
    failureConverterPath: inTree(failureConverterPath()),
    logger: new DefaultLogger('WARN'),
  });
}

beforeAll(async () => {
  const old = treeDir('old');
  execFileSync('tar', ['-xzf', OLD_SOURCES, '-C', old]);
  // The old tree is the version without the patch (a check on the fixture, not on the code under test).
  expect(fs.readFileSync(path.join(old, 'workflows', 'rollout-run.ts'), 'utf8')).not.toContain(PATCH_ID);
  oldBundle = await bundleOf(old);
  newBundle = await bundleWorkflowCode({ ...workflowBundleOptions(failureConverterPath()), logger: new DefaultLogger('WARN') });
  client = new Client({ connection: env().connection, namespace: env().namespace ?? 'default', dataConverter });
}, 120_000);

afterAll(() => {
  for (const t of trees) fs.rmSync(t, { recursive: true, force: true });
});

/** The fake cluster's activities, served from whichever fake is current (one worker, several scenarios). */
function activitiesOf(current: () => FakeCluster): RolloutActivities {
  const names = Object.keys(makeFake().activities()) as Array<keyof RolloutActivities>;
  return Object.fromEntries(
    names.map((n) => [n, (...args: unknown[]) => (current().activities()[n] as (...a: unknown[]) => Promise<unknown>)(...args)]),
  ) as unknown as RolloutActivities;
}

interface Versioned {
  taskQueue: string;
  worker(identity: string, workflowBundle: WorkflowBundle): Promise<{ worker: Worker; run: Promise<void> }>;
  use(fake: FakeCluster): FakeCluster;
  start(input: RolloutInput): Promise<WorkflowHandle<typeof rolloutWorkflow>>;
}

function versioned(): Versioned {
  const taskQueue = `upgrade-${randomUUID()}`;
  let fake: FakeCluster | undefined;
  const activities = activitiesOf(() => fake!);
  return {
    taskQueue,
    worker: async (identity, workflowBundle) => {
      const worker = await Worker.create({
        connection: env().nativeConnection,
        namespace: env().namespace,
        taskQueue,
        identity,
        workflowBundle,
        dataConverter,
        activities,
        // The workflow task after the takeover goes to the normal queue soon, not after 10 s.
        stickyQueueScheduleToStartTimeout: '1s',
      });
      return { worker, run: worker.run() };
    },
    use: (f) => {
      f.client = client;
      fake = f;
      return f;
    },
    start: (input) => client.workflow.start<typeof rolloutWorkflow>('rolloutWorkflow', { taskQueue, workflowId: workflowIdFor(input.object), args: [input] }),
  };
}

/** Shuts a worker down and waits until it has stopped. */
async function stopWorker(w: { worker: Worker; run: Promise<void> }): Promise<void> {
  w.worker.shutdown();
  await w.run;
}

type Event = temporal.api.history.v1.IHistoryEvent;
const completedBy = (events: Event[]) => events.flatMap((e) => (e.workflowTaskCompletedEventAttributes ? [e.workflowTaskCompletedEventAttributes.identity ?? ''] : []));
const taskFailures = (events: Event[]) => events.filter((e) => e.workflowTaskFailedEventAttributes).map((e) => e.workflowTaskFailedEventAttributes?.failure?.message);
/** The patch ids marked in a history. */
const patchMarkers = (events: Event[]) =>
  events
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => (JSON.parse(Buffer.from(e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data ?? []).toString('utf8')) as { id: string }).id);
const zonesInStep = (statuses: VMDistributedClusterStatus[]) => statuses.flatMap((s) => (s.zones ?? []).filter((z) => STEPS.has(z.phase)));

/**
 * Starts a rollout on a worker of the old version, holds az-a's wait for its VMCluster (zone az-a in
 * flight: patched, WaitingOperational), shuts the old worker down, starts a worker of `upgraded` on
 * the same task queue, releases the wait, and returns the rollout's history and statuses.
 */
async function takeover(v: Versioned, upgraded: WorkflowBundle, fake: FakeCluster) {
  v.use(fake);
  const old = await v.worker('vmrollout-old', oldBundle);
  const held = fake.hold('waitOperational:VMCluster:vm-az-a');
  const h = await v.start(inputOf({ readDrainDelayMs: 0, uid: randomUUID() }));
  await held.reached;
  // The old code wrote az-a's step before waiting in it, without a step time.
  expect(fake.statuses.at(-1)?.zones?.find((z) => z.name === 'az-a')?.phase).toBe('WaitingOperational');
  const beforeTakeover = fake.statuses.length;
  old.worker.shutdown();
  const neu = await v.worker('vmrollout-new', upgraded);
  try {
    held.release();
    await old.run;
    await h.result();
    const events = (await h.fetchHistory()).events ?? [];
    return { h, events, beforeTakeover, statuses: [...fake.statuses], neu };
  } catch (e) {
    await stopWorker(neu);
    throw e;
  }
}

test('a worker of the new version takes over a rollout started by the old one: it succeeds with the old behaviour kept; a new rollout gets the new one', async () => {
  const v = versioned();
  const { events, beforeTakeover, statuses, neu } = await takeover(v, newBundle, makeFake());
  try {
    // Both versions ran it: the old up to az-a's wait, the new to the end, replaying the old's history.
    const by = completedBy(events);
    expect(by[0]).toBe('vmrollout-old');
    expect(by.at(-1)).toBe('vmrollout-new');
    expect(by.filter((i) => i === 'vmrollout-new').length).toBeGreaterThan(1);
    expect(taskFailures(events)).toEqual([]);
    expect(statuses.at(-1)).toMatchObject({ phase: 'Succeeded' });
    expect(statuses.length).toBeGreaterThan(beforeTakeover);
    // The old version's behaviour, kept after the takeover: no patch marker, no step time, though
    // the new code wrote statuses with zones in a step (az-b and az-c ran entirely on it).
    expect(patchMarkers(events)).not.toContain(PATCH_ID);
    expect(patchMarkers(events)).toContain('local-calls');
    const after = statuses.slice(beforeTakeover);
    expect(zonesInStep(after).map((z) => z.name)).toEqual(expect.arrayContaining(['az-a', 'az-b', 'az-c']));
    expect(statuses.flatMap((s) => s.zones ?? []).filter((z) => z.stepStartedAt !== undefined)).toEqual([]);

    // A rollout started afterwards, on the new worker: the new version, every zone in a step dated.
    const second = v.use(makeFake());
    const h2 = await v.start(inputOf({ readDrainDelayMs: 0, uid: randomUUID() }));
    await h2.result();
    const events2 = (await h2.fetchHistory()).events ?? [];
    expect(new Set(completedBy(events2))).toEqual(new Set(['vmrollout-new']));
    expect(patchMarkers(events2)).toContain(PATCH_ID);
    expect(second.statuses.at(-1)).toMatchObject({ phase: 'Succeeded' });
    const inStep = zonesInStep(second.statuses);
    expect(new Set(inStep.map((z) => z.name))).toEqual(new Set(['az-a', 'az-b', 'az-c']));
    expect(inStep.filter((z) => !z.stepStartedAt)).toEqual([]);
    // Done zones carry no step time.
    expect((second.statuses.at(-1)?.zones ?? []).filter((z) => z.stepStartedAt)).toEqual([]);
  } finally {
    await stopWorker(neu);
  }
});

test('negative control: without the patch guard the takeover still replays, but the old rollout changes shape mid-life', async () => {
  const mutant = treeDir('unguarded');
  for (const d of ['workflows', 'api']) fs.cpSync(path.join(REPO, d), path.join(mutant, d), { recursive: true });
  const file = path.join(mutant, 'workflows', 'rollout-run.ts');
  const guarded = `this.stepTimes = this.localCalls && patched('${PATCH_ID}');`;
  const src = fs.readFileSync(file, 'utf8');
  expect(src).toContain(guarded);
  fs.writeFileSync(file, src.replace(guarded, 'this.stepTimes = this.localCalls;'));
  const unguarded = await bundleOf(mutant);

  const v = versioned();
  const { events, beforeTakeover, statuses, neu } = await takeover(v, unguarded, makeFake());
  try {
    expect(taskFailures(events)).toEqual([]);
    expect(completedBy(events).at(-1)).toBe('vmrollout-new');
    expect(statuses.at(-1)).toMatchObject({ phase: 'Succeeded' });
    // Before the takeover: the old shape; after it: step times appear in the same rollout.
    expect(statuses.slice(0, beforeTakeover).flatMap((s) => s.zones ?? []).filter((z) => z.stepStartedAt)).toEqual([]);
    expect(zonesInStep(statuses.slice(beforeTakeover)).filter((z) => z.stepStartedAt).length).toBeGreaterThan(0);
  } finally {
    await stopWorker(neu);
  }
});
