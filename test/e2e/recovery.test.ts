/**
 * End to end, "never strand a zone": what a rollout took out of read rotation is recorded on the
 * route objects (annotation vmrollout.io/out-of-rotation on the VMAuth / VMUsers), and whatever
 * ends a rollout early — a failure, a new generation, a cancel, a cancel while paused — every zone
 * comes back into reads: by a later generation that adopts it, by the cancelled run's own cleanup,
 * or by a person (`kubectl vmdc release-zone`, cli/verbs/release-zone.ts).
 *
 * The whole real stack (test/e2e/support.ts startE2EStack): Temporal dev server, kube-apiserver,
 * 3 real VictoriaMetrics zones, a real vmagent writing to every zone, a real vmauth, the ZONE
 * SIMULATOR playing the VM operator (test/infra/simulator/), the real worker and trigger. One
 * VMDistributedCluster, `demo`, edited generation after generation by the scenarios in order.
 * Throughout, a writer pushes a sample every 200 ms and readers query through vmauth (the
 * unauthenticated route and every VMUser's token): every scenario checks 0 failed and 0 stale
 * reads, and at most one zone missing from vmauth's rendered config at any time.
 */
import type { VMDistributedClusterStatus } from '../../api/types';
import { OUT_OF_ROTATION_ANNOTATION } from '../../api/route-records';
import { QUERY_PROGRESS, workflowIdFor, type Progress, type RolloutResult } from '../../api/rollout-contract';
import { waitFor } from '../infra/harness/processes';
import { ANNOTATION_FAIL, ANNOTATION_HANG, FAIL_SPEC, type RestartRecord } from '../infra/simulator/simulator';
import {
  getObject,
  kubectl,
  mergePatch,
  recordsOnRoutes,
  releaseZone,
  routeObjectsOf,
  routeSpecs,
  startE2EStack,
  temporalCli,
  zonesMissingFrom,
  type E2EStack,
  DEMO_CLUSTERS,
  DEMO_TOKENS,
  V1,
  V2,
} from './support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const VMDC = 'demo';
const CLUSTERS = DEMO_CLUSTERS;
const TOKENS = DEMO_TOKENS;
/**
 * A zone is down this long during its "upgrade" (simulator restart): longer than STALE_AFTER_MS
 * (support.ts, 9 s), so a zone serving reads before its write backlog is delivered shows as stale
 * reads. Shorter than rollout.test.ts's 15 s to keep this file's six zone restarts quick.
 */
const ZONE_DOWNTIME_MS = 12_000;
/** strategy.queueDrainedFor; see rollout.test.ts for why 6 s on this stack. */
const QUEUE_DRAINED_FOR_MS = 6_000;
const STRATEGY = { order: 'Declared', readDrainDelay: '1s', queueDrainedFor: `${QUEUE_DRAINED_FOR_MS / 1000}s`, pollInterval: '250ms', zoneTimeout: '2m' };

/** The route objects that send reads to each zone (examples/demo): the VMAuth and two VMUsers. */
const ROUTES_OF: Record<string, string[]> = {
  'az-a': ['VMAuth/vm-global', 'VMUser/reads-az-a', 'VMUser/reads-az-c'],
  'az-b': ['VMAuth/vm-global', 'VMUser/reads-az-a', 'VMUser/reads-az-b'],
  'az-c': ['VMAuth/vm-global', 'VMUser/reads-az-b', 'VMUser/reads-az-c'],
};
const clusterOf = (zone: string) => `vm-${zone}`;
const zoneOf = (cluster: string) => cluster.replace(/^vm-/, '');

let s: E2EStack;
let routes: Array<{ kind: string; name: string }>;
let uid: string;
/** When the stack was up (generation 1 Succeeded). */
let tStart: number;

const log = (m: string) => {
  if (process.env.E2E_VERBOSE) console.log(`${Date.now()} ${m}`);
};

beforeAll(async () => {
  s = await startE2EStack({
    namespace: NS,
    vmdcName: VMDC,
    clusters: CLUSTERS,
    tokens: TOKENS,
    initialVersion: V1,
    zoneDowntimeMs: ZONE_DOWNTIME_MS,
    strategy: STRATEGY,
    finalizerRecheckIntervalMs: 1000,
    log,
  });
  routes = routeObjectsOf(s.manifests);
  uid = s.vmdc.metadata.uid!;
  tStart = Date.now();
}, 5 * 60_000);

afterAll(async () => {
  await s?.stop();
}, 120_000);

// ---------------------------------------------------------------------------------------
// the spec, as a user edits it

/** What the scenarios ask for: clusterVersion, per-zone VMCluster overlays, paused. */
const desired: { clusterVersion: string; overlays: Record<string, Record<string, unknown>>; paused: boolean } = {
  clusterVersion: V1,
  overlays: {},
  paused: false,
};

/** Edits the spec (one merge patch, the whole zones list) and returns the new generation. */
async function editSpec(change: { clusterVersion?: string; overlays?: Record<string, Record<string, unknown>>; paused?: boolean }): Promise<number> {
  if (change.clusterVersion) desired.clusterVersion = change.clusterVersion;
  if (change.overlays) desired.overlays = { ...desired.overlays, ...change.overlays };
  if (change.paused !== undefined) desired.paused = change.paused;
  const declared = s.manifests.find((o) => o.kind === 'VMDistributedCluster')!.spec!.zones as Array<{ name: string; vmcluster: Record<string, unknown> }>;
  const zones = declared.map((z) => (desired.overlays[z.name] ? { ...z, vmcluster: { ...z.vmcluster, overrideSpec: desired.overlays[z.name] } } : z));
  const o = await mergePatch(s.kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: desired.clusterVersion, paused: desired.paused, zones } });
  log(`spec edited: generation ${o.metadata.generation} ${JSON.stringify(desired)}`);
  return o.metadata.generation!;
}

const wid = (generation: number) => workflowIdFor({ namespace: NS, name: VMDC, uid, generation });
const handle = (id: string) => s.client.workflow.getHandle(id);
const progress = (id: string) => handle(id).query<Progress>(QUERY_PROGRESS);

async function vmdcStatus(): Promise<VMDistributedClusterStatus> {
  return ((await getObject(s.kc, 'VMDistributedCluster', NS, VMDC)).status ?? {}) as VMDistributedClusterStatus;
}

const zoneStatus = (st: VMDistributedClusterStatus, zone: string) => st.zones?.find((z) => z.name === zone);

/**
 * Waits until workflow `id` reports one of `phases` (its progress query: no confusion with the
 * phase an earlier workflow left in the status), then until the CR status — written by that
 * workflow, status.workflow naming it — says the same, and returns that status.
 */
async function waitWorkflowPhase(id: string, phases: string[], timeoutMs = 3 * 60_000): Promise<VMDistributedClusterStatus> {
  const diagnostics = () => `simulator errors: ${s.vm.simulator.errors.slice(-5).join('\n')}`;
  await waitFor(async () => phases.includes((await progress(id)).phase), {
    timeoutMs,
    intervalMs: 200,
    description: `workflow ${id} to reach phase ${phases.join('|')}`,
    diagnostics,
  });
  return waitFor(
    async () => {
      const st = await vmdcStatus();
      return st.workflow?.id === id && phases.includes(st.phase ?? '') ? st : undefined;
    },
    { timeoutMs: 30_000, description: `the status of workflow ${id} to say ${phases.join('|')}`, diagnostics },
  );
}

/** Waits until the CR status (of workflow `id`) satisfies `pred`. */
function waitStatus(id: string, what: string, pred: (st: VMDistributedClusterStatus) => boolean, timeoutMs = 2 * 60_000): Promise<VMDistributedClusterStatus> {
  return waitFor(
    async () => {
      const st = await vmdcStatus();
      return st.workflow?.id === id && pred(st) ? st : undefined;
    },
    { timeoutMs, intervalMs: 100, description: `workflow ${id}: ${what}` },
  );
}

// ---------------------------------------------------------------------------------------
// what is out of read rotation, three ways; and the end state

const baselineRoutes = () => s.baseline.config.routes;

/** The zones missing from vmauth's rendered config, recorded on the route objects (this object's uid), and in status.zonesOutOfRotation. */
async function outOfRotation(): Promise<{ vmauthConfig: string[]; records: string[]; status: string[] }> {
  const recs = await recordsOnRoutes(s.kc, NS, routes);
  return {
    vmauthConfig: zonesMissingFrom(s.vm.simulator.currentConfig!.routes, baselineRoutes()).map(zoneOf),
    records: [...new Set(recs.filter((r) => r.uid === uid).map((r) => r.zone))].sort(),
    status: [...((await vmdcStatus()).zonesOutOfRotation ?? [])].sort(),
  };
}

/** The three agree on `zones` (vmauth's config follows the route objects through the simulator: waited for). */
async function expectOutOfRotation(zones: string[]): Promise<void> {
  const want = { vmauthConfig: zones, records: zones, status: zones };
  await waitFor(async () => JSON.stringify(await outOfRotation()) === JSON.stringify(want), { timeoutMs: 10_000 }).catch(() => undefined);
  expect(await outOfRotation()).toEqual(want);
}

/** The records of `zone` sit exactly on the route objects that sent it reads, and name its VMCluster. */
async function expectRecordsOf(zone: string): Promise<void> {
  const recs = (await recordsOnRoutes(s.kc, NS, routes)).filter((r) => r.uid === uid);
  expect(recs.map((r) => [r.route, r.key, r.zone, r.vmcluster])).toEqual(ROUTES_OF[zone]!.map((route) => [route, `${uid}/${zone}`, zone, clusterOf(zone)]));
}

/** Every zone back: routes exactly as before the test, no record left, vmauth's config the baseline. */
async function expectAllBack(): Promise<void> {
  expect(await routeSpecs(s.kc, NS, routes)).toEqual(s.baseline.routeSpecs);
  for (const r of routes)
    expect({
      route: `${r.kind}/${r.name}`,
      annotation: (await getObject(s.kc, r.kind, NS, r.name)).metadata.annotations?.[OUT_OF_ROTATION_ANNOTATION],
    }).toEqual({ route: `${r.kind}/${r.name}`, annotation: undefined });
  await waitFor(() => JSON.stringify(s.vm.simulator.currentConfig!.config) === JSON.stringify(s.baseline.config.config), {
    timeoutMs: 10_000,
    description: "vmauth's rendered config to be the baseline again",
  }).catch(() => undefined);
  expect(s.vm.simulator.currentConfig!.config).toEqual(s.baseline.config.config);
  await expectOutOfRotation([]);
}

/** 0 failed and 0 stale reads between t0 and t1, no write error, and at most one zone out of vmauth's rendered config at any time. */
function expectReadsAndInvariant(t0: number, t1: number): void {
  const inWindow = s.traffic.reads.filter((r) => r.at >= t0 && r.at <= t1);
  expect(['unauthorized', ...TOKENS].filter((route) => !inWindow.some((r) => r.route === route))).toEqual([]); // every route was read
  expect(s.traffic.failed(t0, t1)).toEqual([]);
  expect(s.traffic.stale(t0, t1)).toEqual([]);
  expect(s.traffic.writeErrors).toEqual([]);
  const configs = s.vm.simulator.configs.filter((c) => c.at >= t0 && c.at <= t1);
  const tooMany = configs.filter((c) => zonesMissingFrom(c.routes, baselineRoutes()).length > 1).map((c) => ({ at: c.at, routes: c.routes }));
  expect(tooMany).toEqual([]);
}

/** When vmauth's rendered config first routed to `cluster` on every route again, after `after`. */
function rejoinedAt(cluster: string, after: number): number | undefined {
  return s.vm.simulator.configs.find((c) => c.at > after && !zonesMissingFrom(c.routes, baselineRoutes()).includes(cluster))?.at;
}

/**
 * A zone restarted by its upgrade rejoined reads only after its backlog had drained for
 * queueDrainedFor: the worker's last non-empty sample (or the end of the restart) is at least
 * queueDrainedFor before the rejoin, with empty samples in between; and its data, read straight
 * from the zone just before it was readable again, had caught up.
 */
function expectRejoinedDrained(r: RestartRecord): void {
  const rejoin = rejoinedAt(r.zone, r.finishedAt!);
  expect({ zone: r.zone, rejoined: rejoin !== undefined }).toEqual({ zone: r.zone, rejoined: true });
  const mine = s.queueSamples.filter((q) => clusterOf(q.zone) === r.zone && q.at >= r.startedAt && q.at <= rejoin!);
  const lastBusy = Math.max(r.finishedAt!, ...mine.filter((q) => q.bytes > 0).map((q) => q.at));
  expect({ zone: r.zone, polledEmpty: mine.filter((q) => q.bytes === 0 && q.at > lastBusy).length >= 3 }).toEqual({ zone: r.zone, polledEmpty: true });
  expect({ zone: r.zone, drainedBeforeRejoin: rejoin! - lastBusy >= QUEUE_DRAINED_FOR_MS }).toEqual({ zone: r.zone, drainedBeforeRejoin: true });
  const direct = s.probe.records.filter((p) => p.zone === r.zone && p.at >= r.startedAt && p.at < rejoin! && p.ageMs !== undefined);
  expect({ zone: r.zone, caughtUp: (direct[direct.length - 1]?.ageMs ?? Infinity) <= 9_000 }).toEqual({ zone: r.zone, caughtUp: true });
}

/** vmagent's backlog for `cluster` is gone (its last 4 probe samples show 0 pending bytes) and the zone serves fresh data. */
function waitZoneDrained(cluster: string, since: number): Promise<unknown> {
  return waitFor(
    () => {
      const recs = s.probe.records.filter((p) => p.zone === cluster && p.at > since).slice(-4);
      return recs.length === 4 && recs.every((p) => p.pendingBytes === 0 && p.ageMs !== undefined && p.ageMs <= 9_000);
    },
    { timeoutMs: 60_000, intervalMs: 200, description: `vmagent's backlog for ${cluster} to drain` },
  );
}

// ---------------------------------------------------------------------------------------
// the commands of docs/operations.md

const KUBECTL_RECORDS = [
  '-n',
  NS,
  'get',
  'vmauth,vmuser',
  '-o',
  'custom-columns=KIND:.kind,NAME:.metadata.name,OUT-OF-ROTATION:.metadata.annotations.vmrollout\\.io/out-of-rotation',
];

/** `kubectl get vmauth,vmuser -o custom-columns=...`: row `Kind/name` → the OUT-OF-ROTATION column. */
async function kubectlRecords(): Promise<Record<string, string>> {
  const r = await kubectl(s.kube.kubeconfigPath, KUBECTL_RECORDS);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  const lines = r.stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^KIND\s+NAME\s+OUT-OF-ROTATION$/);
  return Object.fromEntries(
    lines.slice(1).map((l) => {
      const [kind, name, ...rest] = l.trim().split(/\s+/);
      return [`${kind}/${name}`, rest.join(' ')];
    }),
  );
}

/** docs/operations.md's two ways to see what is out: kubectl on the route objects, and release-zone --list. */
async function expectVisibleByCommands(zone: string): Promise<void> {
  const rows = await kubectlRecords();
  expect(Object.keys(rows).sort()).toEqual(routes.map((r) => `${r.kind}/${r.name}`).sort());
  for (const [route, value] of Object.entries(rows)) {
    if (ROUTES_OF[zone]!.includes(route)) {
      expect({ route, names: value.includes(`"zone":"${zone}"`) && value.includes(`"${uid}/${zone}"`) }).toEqual({ route, names: true });
    } else expect({ route, value }).toEqual({ route, value: '<none>' });
  }
  const list = await releaseZone(['--namespace', NS, '--vmdc', VMDC, '--list', '--kubeconfig', s.kube.kubeconfigPath]);
  expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: '' });
  const [header, ...rows2] = list.stdout.trim().split('\n');
  expect(header).toMatch(/^ZONE\s+ROUTE\s+VMCLUSTER\s+SINCE\s+GENERATION\s+WORKFLOW$/);
  expect(rows2.map((l) => l.split(/\s{2,}/).slice(0, 3))).toEqual(
    ROUTES_OF[zone]!.map((route) => [zone, `${route.replace('/', ` ${NS}/`)}`, `VMCluster ${NS}/${clusterOf(zone)}`]),
  );
}

const cancelWithCli = async (id: string) => {
  const r = await temporalCli(s.temporal.address, s.temporal.namespace ?? 'default', ['workflow', 'cancel', '-w', id]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
};

const annotate = (kind: string, name: string, annotations: Record<string, string | null>) => mergePatch(s.kc, kind, NS, name, { metadata: { annotations } });

// ---------------------------------------------------------------------------------------

describe('never strand a zone (real stack, under read load)', () => {
  it('failed → new generation: the old run ends Superseded keeping the zone out; the new one adopts it first, upgrades it, rejoins it and finishes the other zones', async () => {
    const t0 = Date.now();
    const restartsBefore = s.vm.simulator.restarts.length;

    // Generation 2 changes only az-b, whose VMCluster fails (the simulator is told so).
    await annotate('VMCluster', 'vm-az-b', { [ANNOTATION_FAIL]: FAIL_SPEC });
    const g2 = await editSpec({ overlays: { 'az-b': { vmselect: { replicaCount: 3 } } } });
    const failed = await waitWorkflowPhase(wid(g2), ['Failed']);
    const tFailed = Date.now();
    expect(failed.zonesOutOfRotation).toEqual(['az-b']);
    expect(zoneStatus(failed, 'az-b')).toMatchObject({ phase: 'Failed', message: expect.stringMatching(/kept out of read rotation/) as unknown });
    expect(failed.message).toMatch(/zone az-b failed/);
    await expectRecordsOf('az-b');
    await expectOutOfRotation(['az-b']);
    await expectVisibleByCommands('az-b');

    // The user fixes the cause and edits the spec: every zone to V2.
    await annotate('VMCluster', 'vm-az-b', { [ANNOTATION_FAIL]: null });
    const g3 = await editSpec({ clusterVersion: V2 });
    const old = (await handle(wid(g2)).result()) as RolloutResult;
    expect({ phase: old.phase, zonesOutOfRotation: old.zonesOutOfRotation }).toEqual({ phase: 'Superseded', zonesOutOfRotation: ['az-b'] });
    const final = await waitWorkflowPhase(wid(g3), ['Succeeded']);
    const t1 = Date.now();

    // Adopted first (listed and upgraded before az-a, which the Declared order puts first).
    expect(final.zones?.map((z) => [z.name, z.phase])).toEqual([
      ['az-b', 'Done'],
      ['az-a', 'Done'],
      ['az-c', 'Done'],
    ]);
    const restarts = s.vm.simulator.restarts.slice(restartsBefore);
    expect(restarts.map((r) => [r.zone, r.error])).toEqual([
      ['vm-az-b', undefined],
      ['vm-az-a', undefined],
      ['vm-az-c', undefined],
    ]);
    for (const c of CLUSTERS) expect((await getObject(s.kc, 'VMCluster', NS, c)).spec?.clusterVersion).toBe(V2);
    expect(((await getObject(s.kc, 'VMCluster', NS, 'vm-az-b')).spec?.vmselect as { replicaCount?: number })?.replicaCount).toBe(3);
    // az-b never served reads between its failure and its upgrade; each zone rejoined drained.
    expect(rejoinedAt('vm-az-b', tFailed)).toBeGreaterThan(restarts[0]!.finishedAt!);
    for (const r of restarts) expectRejoinedDrained(r);
    for (const r of restarts) for (const zs of Object.values(r.routesAtStart)) expect(zs).not.toContain(r.zone);

    expect(final.zonesOutOfRotation ?? []).toEqual([]);
    await expectAllBack();
    expectReadsAndInvariant(t0, t1);
  });

  it('failed → cancel → new generation: the cancelled run keeps the failed zone out (not operational); the next generation brings it back', async () => {
    const t0 = Date.now();
    const restartsBefore = s.vm.simulator.restarts.length;
    await annotate('VMCluster', 'vm-az-c', { [ANNOTATION_FAIL]: FAIL_SPEC });
    const g4 = await editSpec({ overlays: { 'az-c': { vmselect: { replicaCount: 3 } } } });
    const failed = await waitWorkflowPhase(wid(g4), ['Failed']);
    expect(failed.zonesOutOfRotation).toEqual(['az-c']);
    await expectRecordsOf('az-c');

    // docs/operations.md: temporal workflow cancel -w <id>
    await cancelWithCli(wid(g4));
    const cancelled = await waitWorkflowPhase(wid(g4), ['Cancelled']);
    expect(cancelled.zonesOutOfRotation).toEqual(['az-c']);
    expect(cancelled.message).toMatch(/cancelled; out of read rotation: az-c/);
    expect(zoneStatus(cancelled, 'az-c')?.message).toMatch(/stays out of read rotation \(cancelled\): VMCluster not operational/);
    await expectRecordsOf('az-c');
    await expectOutOfRotation(['az-c']);

    await annotate('VMCluster', 'vm-az-c', { [ANNOTATION_FAIL]: null });
    const g5 = await editSpec({ overlays: { 'az-c': { vmselect: { replicaCount: 4 } } } });
    const final = await waitWorkflowPhase(wid(g5), ['Succeeded']);
    const t1 = Date.now();
    expect(final.zones?.map((z) => [z.name, z.phase])).toEqual([
      ['az-c', 'Done'],
      ['az-a', 'Skipped'],
      ['az-b', 'Skipped'],
    ]);
    const restarts = s.vm.simulator.restarts.slice(restartsBefore);
    expect(restarts.map((r) => [r.zone, r.error])).toEqual([['vm-az-c', undefined]]);
    expectRejoinedDrained(restarts[0]!);
    expect(final.zonesOutOfRotation ?? []).toEqual([]);
    await expectAllBack();
    expectReadsAndInvariant(t0, t1);
  });

  it('cancel while paused before the upgrade (zone out, VMCluster not patched): the zone rejoins at once', async () => {
    const t0 = Date.now();
    const restartsBefore = s.vm.simulator.restarts.length;
    const vmclusterBefore = await getObject(s.kc, 'VMCluster', NS, 'vm-az-a');

    // Hold the switch (the VMAuth status is not confirmed) so that the pause lands with az-a out, unpatched.
    await annotate('VMAuth', 'vm-global', { [ANNOTATION_HANG]: 'true' });
    const g6 = await editSpec({ overlays: { 'az-a': { vmselect: { replicaCount: 3 } } } });
    const w6 = wid(g6);
    await waitStatus(
      w6,
      'az-a out of reads, waiting for the switch',
      (st) => zoneStatus(st, 'az-a')?.phase === 'WaitingForSwitch' && st.zonesOutOfRotation?.[0] === 'az-a',
    );

    // Pause as a user would: spec.paused through the API server (the trigger signals the workflow in charge).
    const p = await kubectl(s.kube.kubeconfigPath, ['-n', NS, 'patch', 'vmdc', VMDC, '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
    expect({ code: p.code, stderr: p.stderr }).toEqual({ code: 0, stderr: '' });
    desired.paused = true;
    await waitFor(async () => (await progress(w6)).pauseRequested, { timeoutMs: 30_000, description: `workflow ${w6} to get the pause` });
    await annotate('VMAuth', 'vm-global', { [ANNOTATION_HANG]: null });
    const paused = await waitWorkflowPhase(w6, ['Paused']);
    expect(paused.message).toMatch(/paused before Upgrading of zone az-a/);
    expect(paused.zonesOutOfRotation).toEqual(['az-a']);
    await expectRecordsOf('az-a');
    await expectOutOfRotation(['az-a']);
    expect((await getObject(s.kc, 'VMCluster', NS, 'vm-az-a')).metadata.generation).toBe(vmclusterBefore.metadata.generation);

    await cancelWithCli(w6);
    const cancelled = await waitWorkflowPhase(w6, ['Cancelled']);
    const t1 = Date.now();
    expect(cancelled.zonesOutOfRotation ?? []).toEqual([]);
    expect(zoneStatus(cancelled, 'az-a')?.message).toMatch(/rejoined reads \(cancelled\) before upgrade/);
    // Never patched, never restarted.
    expect((await getObject(s.kc, 'VMCluster', NS, 'vm-az-a')).metadata.generation).toBe(vmclusterBefore.metadata.generation);
    expect(s.vm.simulator.restarts.slice(restartsBefore)).toEqual([]);
    await expectAllBack();
    expectReadsAndInvariant(t0, t1);
  });

  it('cancel while paused after the upgrade (patched, operational): the zone rejoins only once drained for queueDrainedFor', async () => {
    const t0 = Date.now();
    const restartsBefore = s.vm.simulator.restarts.length;
    const vmclusterBefore = await getObject(s.kc, 'VMCluster', NS, 'vm-az-a');

    // Hold the zone in `expanding` so that the pause lands after the patch.
    await annotate('VMCluster', 'vm-az-a', { [ANNOTATION_HANG]: 'true' });
    const g8 = await editSpec({ overlays: { 'az-a': { vmselect: { replicaCount: 4 } } }, paused: false });
    const w8 = wid(g8);
    await waitStatus(
      w8,
      'az-a patched, waiting for it to be operational',
      (st) => zoneStatus(st, 'az-a')?.phase === 'WaitingOperational' && st.zonesOutOfRotation?.[0] === 'az-a',
    );
    const p = await kubectl(s.kube.kubeconfigPath, ['-n', NS, 'patch', 'vmdc', VMDC, '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
    expect({ code: p.code, stderr: p.stderr }).toEqual({ code: 0, stderr: '' });
    desired.paused = true;
    await waitFor(async () => (await progress(w8)).pauseRequested, { timeoutMs: 30_000, description: `workflow ${w8} to get the pause` });
    await annotate('VMCluster', 'vm-az-a', { [ANNOTATION_HANG]: null });
    const paused = await waitWorkflowPhase(w8, ['Paused']);
    expect(paused.message).toMatch(/paused before WaitingForQueue of zone az-a/);
    expect(paused.zonesOutOfRotation).toEqual(['az-a']);
    const patched = await getObject(s.kc, 'VMCluster', NS, 'vm-az-a');
    expect(patched.metadata.generation).toBeGreaterThan(vmclusterBefore.metadata.generation!);
    expect(patched.status).toMatchObject({ updateStatus: 'operational', observedGeneration: patched.metadata.generation });
    const restarts = s.vm.simulator.restarts.slice(restartsBefore);
    expect(restarts.map((r) => [r.zone, r.error])).toEqual([['vm-az-a', undefined]]);
    await expectRecordsOf('az-a');
    await expectOutOfRotation(['az-a']);

    // Cancel once vmagent has delivered the zone's backlog: the cleanup samples, confirms the queue
    // stays empty for queueDrainedFor, and only then puts the zone back.
    await waitZoneDrained('vm-az-a', restarts[0]!.finishedAt!);
    const tCancel = Date.now();
    await cancelWithCli(w8);
    const cancelled = await waitWorkflowPhase(w8, ['Cancelled']);
    const t1 = Date.now();
    expect(cancelled.zonesOutOfRotation ?? []).toEqual([]);
    expect(zoneStatus(cancelled, 'az-a')?.message).toMatch(/rejoined reads \(cancelled\): operational at generation \d+ and drained/);
    expect(rejoinedAt('vm-az-a', tCancel)! - tCancel).toBeGreaterThanOrEqual(QUEUE_DRAINED_FOR_MS);
    expectRejoinedDrained(restarts[0]!);
    await expectAllBack();
    expectReadsAndInvariant(t0, t1);
  });

  it("the runbook's recovery steps (docs/operations.md#runbook-failed-zone): the records are visible (kubectl, release-zone --list); a person repairs the VMCluster and releases the zone", async () => {
    const t0 = Date.now();
    const restartsBefore = s.vm.simulator.restarts.length;
    await annotate('VMCluster', 'vm-az-b', { [ANNOTATION_FAIL]: FAIL_SPEC });
    const g10 = await editSpec({ overlays: { 'az-b': { vmselect: { replicaCount: 4 } } }, paused: false });
    const w10 = wid(g10);
    await waitWorkflowPhase(w10, ['Failed']);
    // The client's cancel this time (the same request as `temporal workflow cancel`).
    await handle(w10).cancel();
    const cancelled = await waitWorkflowPhase(w10, ['Cancelled']);
    expect(cancelled.zonesOutOfRotation).toEqual(['az-b']);

    // 1. What is out of reads, on the route objects: kubectl, and release-zone --list.
    await expectRecordsOf('az-b');
    await expectVisibleByCommands('az-b');

    // 2. The person repairs the VMCluster by hand (the simulator's failure cause removed, then the
    //    spec that ran before put back) and waits until it is operational at that generation.
    await annotate('VMCluster', 'vm-az-b', { [ANNOTATION_FAIL]: null });
    const fix = await kubectl(s.kube.kubeconfigPath, [
      '-n',
      NS,
      'patch',
      'vmcluster',
      'vm-az-b',
      '--type',
      'merge',
      '-p',
      '{"spec":{"vmselect":{"replicaCount":3}}}',
    ]);
    expect({ code: fix.code, stderr: fix.stderr }).toEqual({ code: 0, stderr: '' });
    await waitFor(
      async () => {
        const r = await kubectl(s.kube.kubeconfigPath, [
          '-n',
          NS,
          'get',
          'vmcluster',
          'vm-az-b',
          '-o',
          'jsonpath={.status.updateStatus} {.status.observedGeneration} {.metadata.generation}',
        ]);
        const [st, observed, generation] = r.stdout.trim().split(' ');
        return st === 'operational' && observed === generation;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: 'VMCluster vm-az-b operational at its generation' },
    );
    const restarts = s.vm.simulator.restarts.slice(restartsBefore);
    expect(restarts.map((r) => [r.zone, r.error])).toEqual([['vm-az-b', undefined]]);
    // 3. ... and until vmagent has delivered the zone's backlog.
    await waitZoneDrained('vm-az-b', restarts[0]!.finishedAt!);

    // 4. Release.
    const rel = await releaseZone(['--namespace', NS, '--vmdc', VMDC, '--zone', 'az-b', '--kubeconfig', s.kube.kubeconfigPath]);
    expect({ code: rel.code, stderr: rel.stderr }).toEqual({ code: 0, stderr: '' });
    expect(rel.stdout).toMatch(/warning: VMCluster default\/vm-az-b of zone az-b was not checked/);
    expect(rel.stdout).toMatch(/zone az-b of VMDistributedCluster default\/demo \(uid [-0-9a-f]+\) is back in read rotation on 3 route\(s\)/);
    expect(await routeSpecs(s.kc, NS, routes)).toEqual(s.baseline.routeSpecs);
    await waitFor(() => JSON.stringify(s.vm.simulator.currentConfig!.config) === JSON.stringify(s.baseline.config.config), {
      timeoutMs: 10_000,
      description: "vmauth's rendered config to be the baseline again",
    });
    const rows = await kubectlRecords();
    expect(Object.values(rows)).toEqual(routes.map(() => '<none>'));
    const list = await releaseZone(['--namespace', NS, '--vmdc', VMDC, '--list', '--kubeconfig', s.kube.kubeconfigPath]);
    expect(list.stdout).toMatch(/no route in namespace default records a zone of VMDistributedCluster default\/demo .* out of reads/);
    expectReadsAndInvariant(t0, Date.now());
  });

  it('after a release, the status follows the records (DESIGN invariant 5): zonesOutOfRotation no longer names the released zone', async () => {
    // Nothing in the watch changes (the release edits only the route objects): give the trigger or
    // anything else that recomputes the status from the records 10 s to do so.
    await waitFor(async () => ((await vmdcStatus()).zonesOutOfRotation ?? []).length === 0, { timeoutMs: 10_000 }).catch(() => undefined);
    const st = await vmdcStatus();
    expect({ phase: st.phase, zonesOutOfRotation: st.zonesOutOfRotation ?? [], out: await outOfRotation() }).toEqual({
      phase: 'Cancelled',
      zonesOutOfRotation: [],
      out: { vmauthConfig: [], records: [], status: [] },
    });
  });

  it('the next generation (the spec now says what the person applied) finds nothing out and nothing to do', async () => {
    const t0 = Date.now();
    const g11 = await editSpec({ overlays: { 'az-b': { vmselect: { replicaCount: 3 } } } });
    const final = await waitWorkflowPhase(wid(g11), ['Succeeded']);
    const t1 = Date.now();
    expect(final.zones?.map((z) => [z.name, z.phase])).toEqual([
      ['az-a', 'Skipped'],
      ['az-b', 'Skipped'],
      ['az-c', 'Skipped'],
    ]);
    await expectAllBack();
    expectReadsAndInvariant(t0, t1);
  });

  it('deleting the object while a zone is out: the finalizer holds it and the status names the zone; release-zone --uid lets it go', async () => {
    const t0 = Date.now();
    await annotate('VMCluster', 'vm-az-c', { [ANNOTATION_FAIL]: FAIL_SPEC });
    const g12 = await editSpec({ overlays: { 'az-c': { vmselect: { replicaCount: 5 } } } });
    await waitWorkflowPhase(wid(g12), ['Failed']);

    const del = await kubectl(s.kube.kubeconfigPath, ['-n', NS, 'delete', 'vmdc', VMDC, '--wait=false']);
    expect({ code: del.code, stderr: del.stderr }).toEqual({ code: 0, stderr: '' });
    // The trigger cancels the rollout (its cleanup keeps the failed zone out), then reports what holds the object.
    const held = await waitFor(
      async () => {
        const o = await getObject(s.kc, 'VMDistributedCluster', NS, VMDC);
        const st = (o.status ?? {}) as VMDistributedClusterStatus;
        return o.metadata.deletionTimestamp && /held by finalizer vmrollout\.io\/route-records/.test(st.message ?? '') ? { o, st } : undefined;
      },
      { timeoutMs: 60_000, description: 'the deleted object to be held by its finalizer, the status saying why' },
    );
    expect(held.o.metadata.finalizers).toContain('vmrollout.io/route-records');
    expect(held.st.zonesOutOfRotation).toEqual(['az-c']);
    expect(held.st.message).toContain(`kubectl vmdc release-zone --namespace ${NS} --uid ${uid} --zone az-c`);
    const result = await handle(wid(g12))
      .result()
      .then(
        () => 'completed',
        (e: Error) => e.name,
      );
    expect(result).toBe('WorkflowFailedError'); // cancelled
    await expectRecordsOf('az-c');
    await expectOutOfRotation(['az-c']);

    // Every record of the namespace, whatever its uid (the object is being deleted): --list without --vmdc.
    const list = await releaseZone(['--namespace', NS, '--list', '--kubeconfig', s.kube.kubeconfigPath]);
    expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: '' });
    const [header, ...rows] = list.stdout.trim().split('\n');
    expect(header).toMatch(/^VMDC\s+UID\s+ZONE\s+ROUTE\s+VMCLUSTER\s+SINCE\s+GENERATION\s+WORKFLOW$/);
    expect(rows.map((l) => l.split(/\s{2,}/).slice(0, 4))).toEqual(
      ROUTES_OF['az-c']!.map((route) => [`${NS}/${VMDC}`, uid, 'az-c', route.replace('/', ` ${NS}/`)]),
    );

    // The zone's VMCluster failed before any restart: its process kept every write (checked: no
    // backlog, fresh data), so its reads may come back. Release by uid.
    await waitZoneDrained('vm-az-c', Date.now());
    const rel = await releaseZone(['--namespace', NS, '--uid', uid, '--zone', 'az-c', '--kubeconfig', s.kube.kubeconfigPath]);
    expect({ code: rel.code, stderr: rel.stderr }).toEqual({ code: 0, stderr: '' });
    expect(rel.stdout).toMatch(/zone az-c of uid [-0-9a-f]+ is back in read rotation on 3 route\(s\)/);
    expect(await routeSpecs(s.kc, NS, routes)).toEqual(s.baseline.routeSpecs);
    await waitFor(() => JSON.stringify(s.vm.simulator.currentConfig!.config) === JSON.stringify(s.baseline.config.config), {
      timeoutMs: 10_000,
      description: "vmauth's rendered config to be the baseline again",
    });
    expect(Object.values(await kubectlRecords())).toEqual(routes.map(() => '<none>'));

    // The trigger looks again (FINALIZER_RECHECK_INTERVAL, 1 s here) and lets the object go.
    await waitFor(async () => (await kubectl(s.kube.kubeconfigPath, ['-n', NS, 'get', 'vmdc', VMDC, '-o', 'name'])).stderr.includes('NotFound'), {
      timeoutMs: 30_000,
      description: 'the VMDistributedCluster to be gone',
    });
    await annotate('VMCluster', 'vm-az-c', { [ANNOTATION_FAIL]: null });
    expectReadsAndInvariant(t0, Date.now());
  });

  it('throughout the file (between the scenarios too): no failed or stale read, at most one zone out of vmauth at any time', () => {
    expectReadsAndInvariant(tStart, Date.now());
    expect(s.vm.simulator.errors).toEqual([]);
  });
});
