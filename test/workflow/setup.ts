// Shared set-up of the workflow tests: the real time-skipping test server, one workflow bundle,
// and a 3-zone scenario on the in-memory fake cluster.
import type { TrafficMode } from '../../api/traffic-mode';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { workflowIdFor, type RolloutInput, type Progress } from '../../api/rollout-contract';
import type { Canary, CapacityGuard, Gate, SampleParitySpec, JsonObject, NormalizedSpec, ObjectGeneration } from '../../api/types';
import { installQuietRuntime, startTimeSkippingEnv } from '../infra/harness/temporal';
import { checkInvariants, type Breach } from '../infra/oracle/invariants';
import type { rolloutWorkflow } from '../../workflows';
import { FakeCluster, type Held } from './fake-cluster';
import { workflowBundleOptions } from '../../process/workflow-bundle';

export const NS = 'default';
export const ZONES = ['az-a', 'az-b', 'az-c'] as const;
export const OLD_VERSION = 'v1.149.0-cluster';
export const NEW_VERSION = 'v1.150.0-cluster';

/** One time-skipping server per test file (beforeAll/afterAll); returns its getter. */
export function useTimeSkippingEnv(): () => TestWorkflowEnvironment {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await createEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });
  return () => env!;
}

/**
 * The real time-skipping test server (binary from scripts/install-tools.sh; missing = test failure),
 * guarded by the harness so it never outlives the test process. Activity-failure warnings of the
 * SDK are expected here (the scenarios fail activities on purpose), so only errors are logged.
 */
export async function createEnv(): Promise<TestWorkflowEnvironment> {
  installQuietRuntime('ERROR');
  return startTimeSkippingEnv();
}

let bundle: Promise<WorkflowBundle> | undefined;
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleWorkflowCode({ ...workflowBundleOptions(), logger: new DefaultLogger('WARN') });
  return bundle;
}

export function vmselect(...names: string[]): JsonObject {
  // crd.name and crd.namespace: the operator's CRD requires both keys ("" = only crd.objects route).
  return { crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: names.map((name) => ({ name, namespace: NS })) }, paths: ['/select/.*'] };
}

export interface ScenarioOptions {
  generation?: number;
  uid?: string;
  paused?: boolean;
  order?: 'Declared' | 'Shuffle';
  /** Zones whose VMCluster already has NEW_VERSION. */
  upToDate?: string[];
  readDrainDelayMs?: number;
  zoneTimeoutMs?: number;
  pauseBetweenZonesMs?: number;
  gates?: Gate[];
  queueHeadroom?: 'Off';
  dataCompleteness?: 'Off';
  dryRun?: true;
  expectedDowntimeMs?: number;
  canary?: Canary;
  capacityGuard?: CapacityGuard;
  sampleParity?: SampleParitySpec;
  vmuserSelector?: string;
  /** Replace the VMAuth's targetRefs. */
  vmauthTargetRefs?: JsonObject[];
  /** spec.zones[].vmagent by zone (its own VMAgent, an existing one: a reference). */
  zoneVmagents?: Partial<Record<(typeof ZONES)[number], string>>;
  /** spec.zones[].trafficMode by zone. */
  trafficModes?: Partial<Record<(typeof ZONES)[number], TrafficMode>>;
}

export function makeSpec(o: ScenarioOptions = {}): NormalizedSpec {
  return {
    paused: o.paused ?? false,
    clusterVersion: NEW_VERSION,
    overrideSpec: { vmselect: { extraArgs: { 'search.maxQueryDuration': '1m' } } },
    zones: ZONES.map((z) => ({
      name: z,
      vmcluster: { name: `vm-${z}`, overrideSpec: (z === 'az-b' ? { vmstorage: { replicaCount: 4 } } : {}) as JsonObject },
      ...(z === 'az-a' ? { vmuser: { name: 'reads-az-a', overrideSpec: { tokenRef: { key: 'token' } } } } : {}),
      ...(o.trafficModes?.[z] ? { trafficMode: o.trafficModes[z] } : {}),
      ...(o.zoneVmagents?.[z] ? { vmagent: { name: o.zoneVmagents[z] } } : {}),
    })),
    vmauth: { name: 'vm-global' },
    vmagent: { name: 'vm-global', overrideSpec: { extraArgs: { 'remoteWrite.showURL': 'false' } } },
    ...(o.vmuserSelector ? { vmuserSelector: o.vmuserSelector } : {}),
    strategy: {
      order: o.order ?? 'Declared',
      readDrainDelayMs: o.readDrainDelayMs ?? 30_000,
      queueDrainedForMs: 60_000,
      queueEmptyBytes: 0,
      pollIntervalMs: 5_000,
      zoneTimeoutMs: o.zoneTimeoutMs ?? 10 * 60_000,
      pauseBetweenZonesMs: o.pauseBetweenZonesMs ?? 0,
      ...(o.gates ? { gates: o.gates } : {}),
      ...(o.queueHeadroom ? { queueHeadroom: o.queueHeadroom } : {}),
      ...(o.dataCompleteness ? { dataCompleteness: o.dataCompleteness } : {}),
      ...(o.dryRun ? { dryRun: o.dryRun } : {}),
      ...(o.expectedDowntimeMs ? { expectedDowntimeMs: o.expectedDowntimeMs } : {}),
      ...(o.canary ? { canary: o.canary } : {}),
      ...(o.capacityGuard ? { capacityGuard: o.capacityGuard } : {}),
      ...(o.sampleParity ? { sampleParity: o.sampleParity } : {}),
    },
  };
}

export function makeFake(o: ScenarioOptions = {}): FakeCluster {
  const f = new FakeCluster(NS);
  for (const z of ZONES) {
    const upToDate = o.upToDate?.includes(z);
    const base: JsonObject = { clusterVersion: OLD_VERSION, vmselect: { replicaCount: 2 }, vmstorage: { replicaCount: 3 } };
    f.addObject(
      'VMCluster',
      `vm-${z}`,
      upToDate
        ? {
            ...base,
            clusterVersion: NEW_VERSION,
            vmselect: { replicaCount: 2, extraArgs: { 'search.maxQueryDuration': '1m' } },
            ...(z === 'az-b' ? { vmstorage: { replicaCount: 4 } } : {}),
          }
        : base,
      3,
    );
  }
  f.addObject('VMAuth', 'vm-global', { unauthorizedUserAccessSpec: {} }, 5);
  f.addObject('VMAgent', 'vm-global', { remoteWrite: ZONES.map((z) => ({ url: `http://vminsert-vm-${z}:8480/insert/0/prometheus/api/v1/write` })) }, 2);
  f.addObject('VMUser', 'reads-az-a', { username: 'reads' }, 1);
  f.setRoute(
    'VMAuth/vm-global',
    o.vmauthTargetRefs ?? [{ static: { url: 'http://vminsert-lb:8480' }, paths: ['/insert/.*'] }, vmselect('vm-az-a', 'vm-az-b', 'vm-az-c')],
  );
  f.setRoute('VMUser/reads-az-a', [
    { crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: NS }, paths: ['/select/.*'] },
    vmselect('vm-az-b', 'vm-az-c'),
  ]);
  f.objectGeneration = o.generation ?? 1;
  return f;
}

export const DEFAULT_UID = 'c0ffee00-1111-2222-3333-444455556666';
export function objectOf(o: ScenarioOptions = {}): ObjectGeneration {
  return { namespace: NS, name: 'vmdc', uid: o.uid ?? DEFAULT_UID, generation: o.generation ?? 1 };
}

export function inputOf(o: ScenarioOptions = {}, previousWorkflowIds: string[] = []): RolloutInput {
  return { object: objectOf(o), spec: makeSpec(o), previousWorkflowIds };
}

export const zoneOf: Record<string, string> = Object.fromEntries(ZONES.map((z) => [`vm-${z}`, z]));

export interface Running {
  env: TestWorkflowEnvironment;
  fake: FakeCluster;
  taskQueue: string;
  initialRoutes: Record<string, JsonObject[]>;
  start(input: RolloutInput): Promise<WorkflowHandle<typeof rolloutWorkflow>>;
  workflowIdOf(input: RolloutInput): string;
  progress(h: WorkflowHandle<typeof rolloutWorkflow>): Promise<Progress>;
  /**
   * Waits until the workflow's progress satisfies `pred`, letting the test server skip `stepMs` of
   * workflow time between queries (timers, retry backoffs and timeouts fire without real waiting).
   */
  progressUntil(h: WorkflowHandle<typeof rolloutWorkflow>, pred: (p: Progress) => boolean, stepMs?: number): Promise<Progress>;
  /**
   * Cancels the workflow and waits until it has asked to cancel its in-flight activity (history
   * event ActivityTaskCancelRequested), so that releasing a held activity afterwards does not race
   * with the cancel request.
   */
  /** Cancels the workflow and waits until its activity in flight (`held`, when it is a local activity) is asked to cancel. */
  cancelAndWaitForActivityCancel(h: WorkflowHandle<typeof rolloutWorkflow>, held?: Held): Promise<void>;
  /** Waits for a held activity call, letting workflow time advance meanwhile (timers fire). */
  reach(held: { reached: Promise<void> }, stepMs?: number): Promise<void>;
  /** Invariant breaches over the fake's log so far (`held`: VMClusters a trafficMode holds out of reads). */
  breaches(final?: boolean, held?: readonly string[]): Breach[];
}

/** Runs `body` with a worker on a fresh task queue serving the fake cluster's activities. */
export async function withWorker<T>(env: TestWorkflowEnvironment, fake: FakeCluster, body: (r: Running) => Promise<T>): Promise<T> {
  const taskQueue = `tq-${randomUUID()}`;
  // A distinct object uid per run keeps workflow ids unique within one test server.
  const runUid = randomUUID();
  const withRunUid = (input: RolloutInput): RolloutInput => (input.object.uid === DEFAULT_UID ? { ...input, object: { ...input.object, uid: runUid } } : input);
  // A plain client for the fake's takeOver (awaiting other workflows): the time-skipping client's
  // result() locks/unlocks time skipping and would unbalance the test's own calls.
  fake.client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  const initialRoutes = fake.routeSnapshot();
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: fake.activities(),
  });
  const r: Running = {
    env,
    fake,
    taskQueue,
    initialRoutes,
    start: (input) => {
      const i = withRunUid(input);
      return env.client.workflow.start<typeof rolloutWorkflow>('rolloutWorkflow', { taskQueue, workflowId: workflowIdFor(i.object), args: [i] });
    },
    workflowIdOf: (input) => workflowIdFor(withRunUid(input).object),
    progress: (h) => h.query<Progress>('progress'),
    progressUntil: async (h, pred, stepMs = 5_000) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const p = await h.query<Progress>('progress');
        if (pred(p)) return p;
        if (Date.now() > deadline) throw new Error(`progressUntil: timed out; last progress: ${JSON.stringify(p)}`);
        await env.sleep(stepMs);
      }
    },
    cancelAndWaitForActivityCancel: async (h, held) => {
      await h.cancel();
      // A regular activity's cancel is in the history; a local activity's reaches the held call only.
      let cancelled = false;
      void held?.cancelled.then(() => (cancelled = true));
      await eventually(async () => cancelled || !!(await h.fetchHistory()).events?.some((e) => e.activityTaskCancelRequestedEventAttributes));
    },
    reach: async (held, stepMs = 5_000) => {
      let reached = false;
      void held.reached.then(() => (reached = true));
      const deadline = Date.now() + 60_000;
      while (!reached) {
        if (Date.now() > deadline) throw new Error('reach: held call never arrived');
        await Promise.race([held.reached, env.sleep(stepMs)]);
      }
    },
    breaches: (final = false, held = []) =>
      checkInvariants(fake.log, { initialRoutes, zoneOf, queueDrainedForMs: 60_000, namespace: NS, final, switchConfirmed: true, held }),
  };
  try {
    return await worker.runUntil(body(r));
  } finally {
    fake.releaseAll();
  }
}

/** Polls `fn` (real time) until it returns a truthy value. */
export async function eventually<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('eventually: timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The scenarios whose histories the replay test replays (test/fixtures/histories/<scenario>.json.gz):
 * one recorded history each, of the current workflow code.
 */
export const RECORDED_SCENARIOS = [
  'happy-path',
  'vmuser-switch',
  'skip-unchanged',
  'empty-route-then-resume',
  'vmcluster-failed-then-resume',
  'zone-timeout-then-resume',
  'switch-unconfirmable-then-resume',
  'vmagent-unreachable-cancel',
  'slow-queue-live-progress',
  'carrier-backlog-holds-leave',
  'stale-generation',
  'supersede-mid-zone-g1',
  'supersede-mid-zone-g2',
  'pause-resume-waiting-operational',
  'cancel-upgrading',
  'cancel-leaving-reads',
  'failed-then-new-generation-g1',
  'failed-then-new-generation-g2',
  'failed-cancel-new-generation-g2',
  'terminated-after-edit-g2',
  'terminated-before-confirm-g2',
  'partial-edit-then-resume',
  'dry-run-refused-then-resume',
  'skip-race-then-resume',
  'fleet-regions',
  'fleet-cancel',
] as const;
export type RecordedScenario = (typeof RECORDED_SCENARIOS)[number];

export const HISTORIES_DIR = path.resolve(__dirname, '..', 'fixtures', 'histories');

/** Where a scenario's recorded history is: its JSON (Temporal's history JSON form), gzipped. */
export const historyFile = (scenario: RecordedScenario): string => path.join(HISTORIES_DIR, `${scenario}.json.gz`);

/**
 * With RECORD_HISTORIES=1, saves the workflow's history as the scenario's recorded history (for the
 * replay test), replacing the one there: a change of workflow code is a new worker build, whose
 * rollouts are pinned to it (docs/upgrading.md), so the histories are those of the current code.
 */
export async function maybeRecord(scenario: RecordedScenario, h: WorkflowHandle): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  fs.mkdirSync(HISTORIES_DIR, { recursive: true });
  const json = historyToJSON(await h.fetchHistory());
  fs.writeFileSync(historyFile(scenario), zlib.gzipSync(json, { level: 9 }));
}

/** The rollout action calls (patches and route edits) in order, for readable assertions. */
export function mutations(fake: FakeCluster): string[] {
  return fake.calls.filter((c) => c.startsWith('applyObject:') || c.startsWith('editRoutes:'));
}
