/**
 * End to end: real Temporal dev server, real kube-apiserver, 3 real VictoriaMetrics zones,
 * a real vmagent writing every sample to every zone, a real vmauth in front of the zones,
 * the real worker (real rollout workflow + real activities) and the real trigger, in process.
 * The VM operator's part is played by the ZONE SIMULATOR (test/infra/simulator/): it renders the
 * vmauth config from VMAuth/VMUser objects and restarts a zone's process when its VMCluster changes.
 *
 * While a writer pushes a fresh sample every 200 ms and readers query through vmauth (the
 * unauthenticated route and every VMUser's bearer token), bumping clusterVersion must upgrade
 * every zone exactly once with zero failed and zero stale reads, at most one zone out of
 * vmauth's rendered config at any time, and every route restored exactly.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { defaultPayloadConverter } from '@temporalio/common';
import { DEFAULT_TASK_QUEUE } from '../../api/rollout-contract';
import { EncryptionCodec } from '../../process/payload-codec';
import { waitFor } from '../infra/harness/processes';
import type { VmEnvironment } from '../infra/simulator/environment';
import { ANNOTATION_FAIL } from '../infra/simulator/simulator';
import {
  createObjects,
  kubeRaw,
  startTraffic,
  eventNames,
  getObject,
  workerEvents,
  mergePatch,
  REPO_ROOT,
  routeSpecs,
  startE2EStack,
  STALE_AFTER_MS,
  waitVmdcPhase,
  watchVmdc,
  type E2EStack,
  type Traffic,
  type WorkerQueueSample,
  type ZoneProbe,
  DEMO_CLUSTERS,
  DEMO_TOKENS,
  V1,
  V2,
  V3,
  V4,
} from './support';
import { VMAGENT_ARGS } from '../infra/simulator/environment';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const VMDC = 'demo';
const CLUSTERS = DEMO_CLUSTERS;
const TOKENS = DEMO_TOKENS;
const TASK_QUEUE = `${DEFAULT_TASK_QUEUE}-e2e`;
/**
 * Freshness. A sample written to vmagent becomes searchable in a zone after vmagent's flush
 * (-remoteWrite.flushInterval=200ms) and the zone's pending-rows flush (~2 s; -search.latencyOffset=0s
 * and -search.disableCache are set on the zones, see test/infra/simulator/environment.ts): measured on this
 * stack, a healthy read is at most ~5-6 s old (p50 ~2.5 s, p99 ~5 s, max 5.9 s on a 2-core machine
 * at load average 11; writer and readers polling every 100-200 ms). STALE_AFTER_MS leaves ~3 s of
 * margin above that.
 *
 * Each zone is down ZONE_DOWNTIME_MS during its upgrade, so vmagent builds a backlog for it and a
 * zone that served reads before that backlog was delivered and searchable answers with its newest
 * sample from before the outage: at least ZONE_DOWNTIME_MS old, well above STALE_AFTER_MS.
 *
 * QUEUE_DRAINED_FOR_MS must exceed the zone's ingestion-to-search lag (~2 s, measured up to ~4-5 s
 * right after a restart with a backlog); otherwise "drained" rejoins a zone whose last blocks are
 * delivered but not yet searchable. (A block vmagent is still retrying is not in the pending bytes,
 * but each sample counts it as one in a send-retry backoff: activities/vmagent/match.ts.)
 */
const ZONE_DOWNTIME_MS = 15_000;
const QUEUE_DRAINED_FOR_MS = 6_000;

let stack: E2EStack;
let kc: k8s.KubeConfig;
let vm: VmEnvironment;
let traffic: Traffic;
let probe: ZoneProbe;
/** Every pending-bytes sample the worker's activities observed (zone = VMDistributedCluster zone name). */
let queueSamples: WorkerQueueSample[];

const log = (m: string) => {
  if (process.env.E2E_VERBOSE) console.log(`${Date.now()} ${m}`);
};

/** Waits until the workflow of `generation` reports one of `phases` (see waitVmdcPhase). */
const waitPhase = (generation: number, phases: string[], opts: { timeoutMs?: number; fresh?: boolean } = {}) =>
  waitVmdcPhase(kc, NS, VMDC, generation, phases, { ...opts, diagnostics: () => `simulator errors: ${vm.simulator.errors.slice(-5).join('\n')}` });

beforeAll(async () => {
  // Generation 1 at the version every zone already runs: nothing to upgrade, every zone skipped.
  stack = await startE2EStack({
    namespace: NS,
    vmdcName: VMDC,
    clusters: CLUSTERS,
    tokens: TOKENS,
    initialVersion: V1,
    zoneDowntimeMs: ZONE_DOWNTIME_MS,
    strategy: { order: 'Declared', readDrainDelay: '1s', queueDrainedFor: `${QUEUE_DRAINED_FOR_MS / 1000}s`, pollInterval: '250ms', zoneTimeout: '2m' },
    taskQueue: TASK_QUEUE,
    temporalUi: true,
    log,
  });
  ({ kc, vm, traffic, probe, queueSamples } = stack);
}, 5 * 60_000);

afterAll(() => stack?.stop(), 120_000);

/** E2E_VERBOSE: everything that happened between t0 and t1, in time order, to E2E_TIMELINE_DIR (default .tmp/). */
function dumpTimeline(name: string, t0: number, t1: number): void {
  if (!process.env.E2E_VERBOSE) return;
  const rows: Array<[number, string]> = [];
  for (const r of traffic!.reads) if (r.at >= t0 && r.at <= t1) rows.push([r.at, `read ${r.route} ${r.error ?? `age ${r.ageMs}`}`]);
  for (const p of probe!.records) if (p.at >= t0 && p.at <= t1) rows.push([p.at, `probe ${p.zone} age ${p.ageMs ?? p.error} pending ${p.pendingBytes}`]);
  for (const c of vm.simulator.configs) if (c.at >= t0 && c.at <= t1) rows.push([c.at, `vmauth config ${JSON.stringify(c.routes)}`]);
  for (const r of vm.simulator.restarts) {
    rows.push([r.startedAt, `restart start ${r.zone}`]);
    if (r.finishedAt) rows.push([r.finishedAt, `restart done ${r.zone}`]);
  }
  for (const q of queueSamples) if (q.at >= t0 && q.at <= t1) rows.push([q.at, `worker queue ${q.zone} ${q.bytes}`]);
  rows.sort((a, b) => a[0] - b[0]);
  const dir = process.env.E2E_TIMELINE_DIR ?? path.join(REPO_ROOT, '.tmp');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `e2e-timeline-${name}.txt`), rows.map(([at, m]) => `${at - t0} ${m}`).join('\n') + '\n');
}

const specOf = async (kind: string, name: string) => (await getObject(kc, kind, NS, name)).spec;

describe('rollout of a 3-zone VMDistributedCluster', () => {
  it('upgrades every zone once, with no failed or stale read and at most one zone out of reads', async () => {
    // spec.vmuserSelector: two more readers through every zone, one labelled (selected), one not: the
    // same rollout is the selector's negative control (the unlabelled reader keeps reading from each
    // zone being upgraded).
    const team = (name: string, labels: Record<string, string>) => ({
      apiVersion: 'operator.victoriametrics.com/v1beta1',
      kind: 'VMUser',
      metadata: { name, namespace: NS, labels },
      spec: {
        bearerToken: `token-${name}`,
        targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: CLUSTERS.map((name) => ({ name, namespace: NS })) } }],
      },
    });
    await createObjects(kc, [team('team-selected', { 'vmrollout.io/reads': 'global' }), team('team-stray', {})]);
    await waitFor(
      async () =>
        ['user:token-team-selected', 'user:token-team-stray'].every((k) => vm.simulator.currentConfig?.routes[k]?.length === 3) &&
        vm.simulator.allPodsServeCurrent(),
      {
        timeoutMs: 30_000,
        description: 'vmauth to serve the two team readers',
      },
    );
    const teams = startTraffic({
      vmagentURL: vm.vmagent.url,
      vmauthURL: vm.vmauthPods.map((p) => p.vmauth.url),
      bearerTokens: ['token-team-selected', 'token-team-stray'],
      writes: false,
    });
    try {
      await teams.waitHealthy();
      await rollOut(teams);
    } finally {
      await teams.stop();
      for (const name of ['team-selected', 'team-stray'])
        await kubeRaw(kc, 'DELETE', `/apis/operator.victoriametrics.com/v1beta1/namespaces/${NS}/vmusers/${name}`);
    }
  });

  async function rollOut(teams: Traffic): Promise<void> {
    const selectedBefore = await specOf('VMUser', 'team-selected');
    const vmauthBefore = await specOf('VMAuth', 'vm-global');
    const usersBefore = await Promise.all(TOKENS.map((_, i) => specOf('VMUser', `reads-${['az-a', 'az-b', 'az-c'][i]}`)));
    const baseline = vm.simulator.currentConfig!;
    const configsBefore = vm.simulator.configs.length;
    const restartsBefore = vm.simulator.restarts.length;
    const watch = watchVmdc(kc, NS, VMDC, (s) =>
      log(`vmdc g${s.generation} ${s.status.phase} zone=${s.status.currentZone} out=${s.status.zonesOutOfRotation}`),
    );
    const eventsBefore = await eventNames(kc, NS, VMDC);

    const t0 = Date.now();
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V2, vmuserSelector: 'vmrollout.io/reads=global' } });
    const final = await waitPhase(2, ['Succeeded']);
    const t1 = Date.now();
    watch.stop();
    dumpTimeline('rollout', t0, t1);

    // Every zone's VMCluster carries the new version, and its process was restarted exactly once.
    for (const c of CLUSTERS) expect((await specOf('VMCluster', c))?.clusterVersion).toBe(V2);
    const restarts = vm.simulator.restarts.slice(restartsBefore);
    expect(restarts.map((r) => r.zone).sort()).toEqual(CLUSTERS);
    expect(restarts.filter((r) => r.error)).toEqual([]);

    // No failed and no stale read, on any route, during the whole rollout.
    expect(traffic!.reads.filter((r) => r.at >= t0 && r.at <= t1).length).toBeGreaterThan(50);
    expect(traffic!.failed(t0, t1)).toEqual([]);
    expect(traffic!.stale(t0, t1)).toEqual([]);
    expect(traffic!.writeErrors).toEqual([]);
    // The selected reader too; the unlabelled one (not selected: never edited) read from zones being upgraded.
    const team = (route: string) => ({
      failed: teams.failed(t0, t1).filter((r) => r.route === route),
      stale: teams.stale(t0, t1).filter((r) => r.route === route),
    });
    expect(teams.reads.filter((r) => r.at >= t0 && r.at <= t1 && r.route === 'token-team-selected').length).toBeGreaterThan(50);
    expect(team('token-team-selected')).toEqual({ failed: [], stale: [] });
    expect(team('token-team-stray').failed.length + team('token-team-stray').stale.length).toBeGreaterThan(0);
    expect(await specOf('VMUser', 'team-selected')).toEqual(selectedBefore);

    // At most one zone out of vmauth's rendered config at any time; each zone left exactly once.
    const configs = vm.simulator.configs.slice(configsBefore);
    const out = configs.map((c) => {
      const missing = new Set<string>();
      for (const [route, zs] of Object.entries(baseline.routes)) for (const z of zs) if (!c.routes[route]?.includes(z)) missing.add(z);
      return [...missing];
    });
    for (const m of out) expect(m.length).toBeLessThanOrEqual(1);
    expect(new Set(out.flat())).toEqual(new Set(CLUSTERS));

    // A zone was restarted only while no route sent reads to it.
    for (const r of restarts)
      for (const [route, zs] of Object.entries(r.routesAtStart)) if (route !== 'user:token-team-stray') expect(zs).not.toContain(r.zone);

    // The write backlog: each zone built one while it was down (the worker saw non-zero pending
    // bytes for it), and it rejoined reads only after the backlog had drained for queueDrainedFor
    // and its data had caught up (read straight from the zone just before it was readable again).
    const zoneOf = (z: string) => (z.startsWith('vm-') ? z : `vm-${z}`);
    for (const r of restarts) {
      const rejoinAt = configs.find((c) => c.at > r.finishedAt! && CLUSTERS.every((z) => c.routes.unauthorized?.includes(z)))?.at;
      expect({ zone: r.zone, rejoined: rejoinAt !== undefined }).toEqual({ zone: r.zone, rejoined: true });
      const mine = queueSamples.filter((q) => zoneOf(q.zone) === r.zone && q.at >= r.startedAt && q.at <= rejoinAt!);
      // The worker polled the zone's queue, and its last non-empty sample (if any) was at least
      // queueDrainedFor before the rejoin, with empty samples in between.
      const lastBusy = Math.max(r.finishedAt!, ...mine.filter((q) => q.bytes > 0).map((q) => q.at));
      expect({ zone: r.zone, polled: mine.filter((q) => q.bytes === 0 && q.at > lastBusy).length >= 3 }).toEqual({ zone: r.zone, polled: true });
      expect({ zone: r.zone, drainedBeforeRejoin: rejoinAt! - lastBusy >= QUEUE_DRAINED_FOR_MS }).toEqual({ zone: r.zone, drainedBeforeRejoin: true });
      // vmagent held a backlog for the zone while it was down (read from vmagent's /metrics).
      const backlog = probe!.records.filter((p) => p.zone === r.zone && p.at >= r.startedAt && p.at <= r.finishedAt! && (p.pendingBytes ?? 0) > 0);
      expect({ zone: r.zone, backlogWhileDown: backlog.length > 0 }).toEqual({ zone: r.zone, backlogWhileDown: true });
      const direct = probe!.records.filter((p) => p.zone === r.zone && p.at >= r.startedAt && p.at < rejoinAt!);
      expect({ zone: r.zone, behindWhileOut: direct.some((p) => p.error !== undefined || (p.ageMs ?? 0) > STALE_AFTER_MS) }).toEqual({
        zone: r.zone,
        behindWhileOut: true,
      });
      const lastBeforeRejoin = direct.filter((p) => p.ageMs !== undefined).pop();
      expect({ zone: r.zone, caughtUp: (lastBeforeRejoin?.ageMs ?? Infinity) <= STALE_AFTER_MS }).toEqual({ zone: r.zone, caughtUp: true });
    }

    // The worker itself saw a backlog (non-zero pending bytes) in at least one zone. Not per zone:
    // the zone is polled only once it is operational again, and vmagent may deliver a small backlog
    // (its next retry, <= 2 s) before the first poll.
    expect(queueSamples.filter((q) => q.at >= t0 && q.at <= t1 && q.bytes > 0).length).toBeGreaterThan(0);

    // Routes restored exactly: the objects are what they were, and so is vmauth's rendered config.
    expect(await specOf('VMAuth', 'vm-global')).toEqual(vmauthBefore);
    expect(await Promise.all(['az-a', 'az-b', 'az-c'].map((z) => specOf('VMUser', `reads-${z}`)))).toEqual(usersBefore);
    // After each route edit the workflow waits until the VMAuth and every VMUser it edited are
    // operational at their new generations, and the simulator reports operational only once vmauth
    // has reloaded the rendered config: by Succeeded the rendered config is the baseline again
    // (waitFor rather than expect only for its clearer failure message).
    await waitFor(() => JSON.stringify(vm.simulator.currentConfig!.config) === JSON.stringify(baseline.config), {
      timeoutMs: 10_000,
      description: "vmauth's rendered config to be the baseline again",
    });
    expect(vm.simulator.currentConfig!.config).toEqual(baseline.config);

    // The status tells the story: every zone Done, nothing out of rotation.
    expect(final.zones?.map((z) => [z.name, z.phase])).toEqual([
      ['az-a', 'Done'],
      ['az-b', 'Done'],
      ['az-c', 'Done'],
    ]);
    expect(final.zonesOutOfRotation ?? []).toEqual([]);
    // And the status said which zone was out while it was out.
    const seenOut = new Set(watch.history.flatMap((s) => s.status.zonesOutOfRotation ?? []));
    expect(seenOut).toEqual(new Set(['az-a', 'az-b', 'az-c']));
    for (const s of watch.history) expect((s.status.zonesOutOfRotation ?? []).length).toBeLessThanOrEqual(1);

    // The Temporal Web UI tells the same story, read from its own HTTP API and decoded as the UI
    // does through the codec (payloads are encrypted): the rollout's summary and details, each
    // activity's summary, the current details.
    const ui = await uiView(final.workflow!.id, final.workflow!.runId);
    expect(ui.summary).toBe(`${NS}/${VMDC} → ${V2} (generation 2, 3 zones)`);
    expect(ui.details).toContain('`az-a` (VMCluster `vm-az-a`), `az-b` (VMCluster `vm-az-b`), `az-c` (VMCluster `vm-az-c`)');
    for (const c of CLUSTERS) {
      const said = (re: RegExp) => expect({ zone: c, said: ui.activitySummaries.some((x) => re.test(x)) }).toEqual({ zone: c, said: true });
      said(new RegExp(`^remove ${c} from VMAuth vm-global, VMUser `));
      said(new RegExp(`^apply VMCluster ${c} \\(clusterVersion ${V2}\\)$`));
      said(new RegExp(`^wait until vmagent's queue for ${c} stays empty for ${QUEUE_DRAINED_FOR_MS / 1000}s$`));
      said(new RegExp(`^put ${c} back into `));
      said(new RegExp(`^read vmagent for ${c}: can its queue hold 2m of the zone down; what it dropped$`));
      said(new RegExp(`^read vmagent for ${c}: what it dropped$`));
    }
    expect(ui.currentDetails).toMatch(/^\*\*Succeeded\*\*/);

    // Every zone transition is an Event on the object, zone after zone, each once, then the end.
    expect(await workerEvents(kc, NS, VMDC, eventsBefore)).toEqual([
      ...['az-a', 'az-b', 'az-c'].flatMap((z) => ['ZoneLeftReads', 'ZoneUpgraded', 'ZoneOperational', 'ZoneDrained', 'ZoneRejoined'].map((r) => `${r} ${z}`)),
      'RolloutSucceeded',
    ]);
  }

  /** What the Web UI's HTTP API returns for a workflow, its payloads decoded with this run's codec (as the UI's codec endpoint does). */
  async function uiView(
    workflowId: string,
    runId: string,
  ): Promise<{ summary?: string; details?: string; activitySummaries: string[]; currentDetails?: string }> {
    const base = `${stack.temporalUiUrl}/api/v1/namespaces/default/workflows/${encodeURIComponent(workflowId)}`;
    const get = async (url: string, init?: RequestInit) => {
      const res = await fetch(url, init);
      if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const codec = new EncryptionCodec(stack.payloadKeys);
    type JsonPayload = { metadata?: Record<string, string>; data?: string };
    const decode = async <T = string>(p?: JsonPayload): Promise<T | undefined> => {
      if (!p) return undefined;
      const bytes = (v?: string) => Buffer.from(v ?? '', 'base64');
      const [plain] = await codec.decode([
        { metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, bytes(v)])), data: bytes(p.data) },
      ]);
      return defaultPayloadConverter.fromPayload<T>(plain!);
    };
    const described = (await get(`${base}?execution.runId=${runId}`)) as {
      executionConfig?: { userMetadata?: { summary?: JsonPayload; details?: JsonPayload } };
    };
    const history = (await get(`${base}/history?execution.runId=${runId}`)) as { history?: { events?: Array<{ userMetadata?: { summary?: JsonPayload } }> } };
    const activitySummaries: string[] = [];
    for (const e of history.history?.events ?? []) {
      const summary = await decode(e.userMetadata?.summary);
      if (summary) activitySummaries.push(summary);
    }
    // The UI's POSTs carry its CSRF token: the cookie its server set, echoed in a header.
    const csrf = /_csrf=([^;]+)/.exec((await fetch(`${stack.temporalUiUrl}/api/v1/settings`)).headers.getSetCookie().join('; '))?.[1] ?? '';
    const metadata = (await get(`${base}/query/__temporal_workflow_metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, cookie: `_csrf=${csrf}` },
      body: JSON.stringify({ execution: { runId }, query: { queryType: '__temporal_workflow_metadata' } }),
    })) as { queryResult?: { payloads?: JsonPayload[] } };
    const meta = await decode<{ currentDetails?: string }>(metadata.queryResult?.payloads?.[0]);
    return {
      summary: await decode(described.executionConfig?.userMetadata?.summary),
      details: await decode(described.executionConfig?.userMetadata?.details),
      activitySummaries,
      currentDetails: meta?.currentDetails,
    };
  }

  it('queue headroom and data completeness on the real vmagent: a queue that cannot hold the downtime keeps its zone in reads; one that dropped data keeps it out, by its drop counters and by its samples against a zone in reads; each with its check Off lets it through', async () => {
    // az-b's on-disk queue off (-remoteWrite.disableOnDiskQueue for remoteWrite[1]): vmagent can hold
    // only what fits in memory for it (-memory.allowedBytes=10MB: 2 blocks), while the writer keeps
    // its intake above 0; once full, it drops az-b's samples (several URLs: vmagent drops rather
    // than refuse the write), and counts them.
    await vm.vmagent.restartWith([...VMAGENT_ARGS, '-remoteWrite.disableOnDiskQueue=false,true,false', '-memory.allowedBytes=10MB']);
    try {
      const t0 = Date.now();
      // strategy.sampleParity counts each zone's samples over its window on its vmselect and on a zone
      // in reads (every series: all of them come through the one vmagent); 10s ago, every sample is
      // searchable in both (the zones run -search.latencyOffset=0s).
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V3, strategy: { sampleParity: { lag: '10s' } } } });
      const st = await waitPhase(3, ['Failed']);
      const zone = (n: string) => st.zones!.find((z) => z.name === n)!;
      const [a, b, c] = [zone('az-a'), zone('az-b'), zone('az-c')];
      // az-a was checked on the real pages (the vmagent just restarted: read again until up long
      // enough to say) and fitted: intake from the writer, room on the disk.
      expect(a).toMatchObject({ phase: 'Done', queueHeadroom: { fits: true, pods: 1, horizonSeconds: 120 } });
      expect(a.queueHeadroom!.rateBytesPerSecond).toBeGreaterThan(0);
      expect(a.queueHeadroom!.roomBytes).toBeGreaterThan(a.queueHeadroom!.needBytes!);
      // Its samples counted against az-b (in reads then): the writer's and vmagent's, as many on both.
      expect(a.sampleParity).toMatchObject({ complete: true, healthy: 'az-b', tenantCount: 1, tenants: [{ tenant: '0:0', missing: 0 }] });
      expect(a.sampleParity!.tenants[0]!.healthySamples).toBeGreaterThan(0);
      expect(Date.parse(a.sampleParity!.to) - Date.parse(a.sampleParity!.from)).toBeGreaterThan(ZONE_DOWNTIME_MS - 10_000);
      expect(b).toMatchObject({ phase: 'Failed', queueHeadroom: { fits: false, pods: 1, roomBytes: 0 } });
      expect(b.queueHeadroom!.needBytes).toBeGreaterThan(0);
      expect(b.message).toMatch(
        /remoteWrite\[1\]: takes in .*-remoteWrite\.disableOnDiskQueue is set for it: only what fits in memory; the zone stays in reads/,
      );
      expect(st.zonesOutOfRotation).toEqual([]);
      expect(c.phase).toBe('Pending');
      // Still in reads, untouched: its VMCluster at the old version, every route still sends it reads.
      expect((await specOf('VMCluster', 'vm-az-b'))?.clusterVersion).toBe(V2);
      expect(Object.values(vm.simulator.currentConfig!.routes).some((zs) => zs.includes('vm-az-b'))).toBe(true);
      expect((await workerEvents(kc, NS, VMDC)).slice(-2)).toEqual(['ZoneFailed az-b', 'RolloutFailed']);
      expect(traffic!.failed(t0, Date.now())).toEqual([]);

      // Negative control of the headroom check: Off, az-b leaves reads and is upgraded; its 15 s down
      // overflow its in-memory queue, and the completeness check keeps it out once drained.
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { strategy: { queueHeadroom: 'Off' } } });
      const held = await waitPhase(4, ['Succeeded', 'Failed']);
      expect(held.phase).toBe('Failed');
      const heldB = held.zones!.find((z) => z.name === 'az-b')!;
      expect(heldB).toMatchObject({ phase: 'Failed', dataCompleteness: { complete: false, unverifiedPods: 0 } });
      expect(heldB.queueHeadroom).toBeUndefined();
      expect(heldB.dataCompleteness!.dropped.samples).toBeGreaterThan(0);
      // What vmagent dropped is missing from the zone: counted on the real zones against az-a.
      expect(heldB.sampleParity).toMatchObject({ complete: false, healthy: 'az-a', tenants: [{ tenant: '0:0' }] });
      const lacks = heldB.sampleParity!.tenants[0]!;
      expect(lacks.missing).toBeGreaterThan(0);
      expect(lacks.samples + lacks.missing).toBe(lacks.healthySamples);
      expect(heldB.message).toMatch(
        /^failed at WaitingForQueue, kept out of read rotation: vmagent dropped data for the zone since .*: \d+ samples refused by its full in-memory queue .*; \d+ samples missing against az-a over its window .*: tenant 0:0 lacks \d+ of \d+ .*the zone stays out of reads/,
      );
      expect(held.zonesOutOfRotation).toEqual(['az-b']);
      expect((await specOf('VMCluster', 'vm-az-b'))?.clusterVersion).toBe(V3);
      for (const zs of Object.values(vm.simulator.currentConfig!.routes)) expect(zs).not.toContain('vm-az-b');

      // The drop counters' check Off: the next generation takes az-b over from its records, and its
      // samples still miss what vmagent dropped (its window from its records): held by the count alone.
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { strategy: { dataCompleteness: 'Off' } } });
      const counted = await waitPhase(5, ['Succeeded', 'Failed']);
      expect(counted.phase).toBe('Failed');
      const countedB = counted.zones!.find((z) => z.name === 'az-b')!;
      expect(countedB).toMatchObject({ phase: 'Failed', sampleParity: { complete: false, healthy: 'az-a' } });
      // Its window from its route records' `since` (written as the edit landed, just after it left).
      expect(Date.parse(countedB.sampleParity!.from) - Date.parse(heldB.sampleParity!.from)).toBeGreaterThanOrEqual(0);
      expect(Date.parse(countedB.sampleParity!.from) - Date.parse(heldB.sampleParity!.from)).toBeLessThan(5_000);
      expect(countedB.dataCompleteness).toBeUndefined();
      expect(countedB.sampleParity!.tenants[0]!.missing).toBeGreaterThanOrEqual(lacks.missing);
      expect(countedB.message).toMatch(/^failed at WaitingForQueue, kept out of read rotation: \d+ samples missing against az-a/);
      expect(counted.zonesOutOfRotation).toEqual(['az-b']);

      // Negative control of both checks: without them, the next generation puts the same az-b back
      // (its samples as short), then upgrades az-c.
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { strategy: { sampleParity: null } } });
      const off = await waitPhase(6, ['Succeeded', 'Failed']);
      expect(off.phase).toBe('Succeeded');
      expect(off.zonesOutOfRotation).toEqual([]);
      expect(off.zones!.find((z) => z.name === 'az-b')!.dataCompleteness).toBeUndefined();
      expect(off.zones!.find((z) => z.name === 'az-b')!.sampleParity).toBeUndefined();
      expect((await specOf('VMCluster', 'vm-az-c'))?.clusterVersion).toBe(V3);
    } finally {
      await vm.vmagent.restartWith([...VMAGENT_ARGS]);
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, {
        spec: { strategy: { queueHeadroom: 'Enforce', dataCompleteness: 'Enforce', sampleParity: null } },
      });
    }
  });

  it('strategy.dryRun plans the next rollout into status.plan from the real objects and vmagent, changing nothing', async () => {
    const routes = stack.manifests.filter((o) => o.kind === 'VMAuth' || o.kind === 'VMUser').map((o) => ({ kind: o.kind, name: o.metadata.name }));
    const before = { clusters: await Promise.all(CLUSTERS.map((c) => specOf('VMCluster', c))), routes: await routeSpecs(kc, NS, routes) };
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V4, strategy: { dryRun: true } } });
    const st = await waitPhase(8, ['Planned', 'Failed']);
    expect(st.phase).toBe('Planned');
    expect(st.message).toBe('dry run (strategy.dryRun), nothing changed: 3 zones would be upgraded, 0 skipped: status.plan');
    expect(st.plan).toMatchObject({ generation: 8, order: ['az-a', 'az-b', 'az-c'] });
    for (const z of st.plan!.zones) {
      expect(z).toMatchObject({ would: 'upgrade', gates: [], queueHeadroom: { fits: true, pods: 1, horizonSeconds: 120 } });
      expect(z.routes).toEqual(expect.arrayContaining(['VMAuth/vm-global', `VMUser/reads-${z.zone}`]));
      expect(z.removedRefs).toBeGreaterThanOrEqual(2);
    }
    expect(st.zonesOutOfRotation).toEqual([]);
    // Nothing changed: every VMCluster and route object's spec as before.
    expect({ clusters: await Promise.all(CLUSTERS.map((c) => specOf('VMCluster', c))), routes: await routeSpecs(kc, NS, routes) }).toEqual(before);
  });

  it('a zone whose VMCluster fails: phase Failed, the zone stays out of reads, the status says so, reads stay fresh', async () => {
    await mergePatch(kc, 'VMCluster', NS, 'vm-az-b', { metadata: { annotations: { [ANNOTATION_FAIL]: 'true' } } });
    const t0 = Date.now();
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V4, strategy: { dryRun: false } } });
    const st = await waitPhase(9, ['Failed']);
    const t1 = Date.now();
    dumpTimeline('failed-zone', t0, t1 + 2000);

    expect(st.zonesOutOfRotation).toEqual(['az-b']);
    expect(st.zones?.find((z) => z.name === 'az-a')?.phase).toBe('Done');
    const b = st.zones?.find((z) => z.name === 'az-b');
    expect(b?.phase).toBe('Failed');
    expect(`${st.message ?? ''} ${b?.message ?? ''}`).toMatch(/vm-az-b|az-b/);
    expect(st.zones?.find((z) => z.name === 'az-c')?.phase).not.toBe('Done');
    expect((await specOf('VMCluster', 'vm-az-c'))?.clusterVersion).toBe(V3); // never moved on
    // The failure is a Warning Event saying the zone is kept out of reads.
    const events = await workerEvents(kc, NS, VMDC);
    expect(events.slice(-2)).toEqual(['ZoneFailed az-b', 'RolloutFailed']);

    // vmauth no longer routes to the failed zone, on any route; the others still serve fresh reads.
    for (const zs of Object.values(vm.simulator.currentConfig!.routes)) expect(zs).not.toContain('vm-az-b');
    await new Promise((r) => setTimeout(r, 2000));
    expect(traffic!.failed(t0, Date.now())).toEqual([]);
    const stale = traffic!.stale(t0, Date.now());
    if (stale.length) log(`stale: ${JSON.stringify(stale)} restarts: ${JSON.stringify(vm.simulator.restarts)}`);
    expect(stale).toEqual([]);
    expect(t1).toBeGreaterThan(t0);
  });
});
