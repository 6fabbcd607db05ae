/**
 * The chaos campaign (issue 14): rollouts of a 3-zone VMDistributedCluster on the real stack while
 * the worker process is SIGKILLed and restarted, the Temporal dev server (persistent database), the
 * trigger and kube-apiserver restart, 20 % of the worker's and the trigger's API requests fail
 * (test/infra/chaos/kube-fault-proxy.ts) and vmagent's /metrics pages time out, come truncated or as
 * garbage (test/infra/chaos/pod-gateway.ts); before the first rollout, a zone's VictoriaMetrics outlasts
 * zoneTimeout, and the last one is cancelled mid-way. Judged from what really happened, not from the workflow:
 * every write kube-apiserver received (its audit log, test/infra/chaos/oracle.ts), every config the
 * operator (the zone simulator) rendered for vmauth, every zone restart and what routed reads to the
 * zone at that moment, and the readers' results.
 *
 *   make chaos                          3 rollouts, 20 kills each, seed printed
 *   CHAOS_SEED=N make chaos             replay a campaign
 *   npx tsx test/infra/chaos/campaign.ts [--short] [--seed=N] [--rollouts=N] [--kills=N] [--rejoin-early-ms=N]
 *     --short: the variant test/infra/chaos/short.test.ts runs; --rejoin-early-ms: a negative control of check b
 * Prints one JSON document (also .tmp/chaos/campaign-<seed>.json), with the commit, machine and
 * command of the run (bench/support/provenance.ts); exit status 1 on any breach.
 * test/infra/chaos/short.test.ts runs a short seeded variant in `make test` (`make test-chaos`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { optionalTsToMs, tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { provenance, type Provenance } from '../../../bench/support/provenance';
import { routeTargetRefs } from '../../../api/route-targets';
import type { RouteRef } from '../../../api/route-records';
import { DEFAULT_TASK_QUEUE } from '../../../api/rollout-contract';
import { DEFAULT_QUEUE_EMPTY_BYTES } from '../../../api/limits';
import { queueDirName, type RemoteWriteQueue } from '../../../activities/vmagent/url';
import { jsonEqual } from '../../../api/json-value';
import type { JsonObject, VMDistributedClusterStatus } from '../../../api/types';
import { parsePayloadKeys, payloadDataConverter } from '../../../process/payload-codec';
import { installChartIdentities } from '../harness/chart-identities';
import { startKube, VM_OPERATOR_CRDS } from '../harness/kube';
import { harnessTempDir, runHarnessMain, waitFor } from '../harness/processes';
import { startTemporalDevServer } from '../harness/temporal';
import { startVmEnvironment } from '../simulator/environment';
import { ANNOTATION_DELAY_MS } from '../simulator/simulator';
import {
  CHART_RELEASE_NAMESPACE,
  DEMO_CLUSTERS,
  DEMO_MANIFESTS_DIR,
  DEMO_TOKENS,
  REPO_ROOT,
  STALE_AFTER_MS,
  createObjects,
  getObject,
  installCrdFiles,
  kubeRaw,
  loadManifests,
  mergePatch,
  routeObjectsOf,
  startTraffic,
  startZoneProbe,
  waitVmauthRendered,
  waitVmdcPhase,
  writeUrlVar,
  zonesMissingFrom,
} from '../../e2e/support';
import { followAuditLog, readAuditLog, type AuditEvent } from './audit-log';
import { buildWorkflowBundle, startTriggerProcess, startWorkerProcess, writePayloadKeysFile } from './control-processes';
import { startKubeFaultProxy } from './kube-fault-proxy';
import { judge, type Breach, type JudgeInput, type Verdict } from './oracle';
import { watchQueues } from './queue-watch';
import { startGapReader } from './read-gaps';
import { aimKill, owedAfter, partSeeds, planRollout, type InfraFault, type KillMoment, type RolloutPlan, type WorkerKill } from './plan';
import { metricsOf, startPodGateway } from './pod-gateway';

const EventType = temporal.api.enums.v1.EventType;
const PendingState = temporal.api.enums.v1.PendingActivityState;

export interface CampaignOptions {
  seed: number;
  rollouts: number;
  /** Worker SIGKILLs per rollout. */
  kills: number;
  /** How long a killed worker stays down (default 1–5 s). */
  restartAfterMs?: [number, number];
  /** Share of the worker's and trigger's API requests that fail while API faults are on. */
  kubeFaultRate: number;
  /**
   * API faults are on for this long from the start of each rollout (bounded in time): at 20 % a route
   * edit of four objects fails most attempts and waits out Temporal's growing backoff, so faults
   * all along would measure the backoff.
   */
  kubeFaultWindowMs: number;
  /** Share of vmagent /metrics pages that fail. */
  metricsFaultRate: number;
  /** Infrastructure restarts, dealt to the rollouts in turn (all in one rollout when there is one). */
  infra: readonly InfraFault[];
  /** Cancel the last rollout once a zone is out of reads, kill the worker during its cleanup, then roll out again. */
  cancel: boolean;
  /**
   * Before the first rollout, a generation whose first zone's VictoriaMetrics comes back only after
   * zoneTimeout: it must end Failed with that zone kept out of reads and named in the status; the
   * zone recovers on its own and the next rollout adopts it.
   */
  zoneTimeout: boolean;
  zoneDowntimeMs: number;
  /**
   * A negative control of check b (default 0): the rollouts wait for queueDrainedFor less this much
   * (strategy.queueDrainedFor, the user's setting), while the oracle still judges them against
   * queueDrainedFor: a real rejoin this much early.
   */
  rejoinEarlyMs?: number;
  log?: (m: string) => void;
}

export interface KillRecord {
  rollout: number;
  /** Where it really hit: a drawn moment that did not come within its wait is a `timer` kill. */
  moment: WorkerKill['moment'];
  at: number;
  /** Step of the zone in flight when it hit (from the status). */
  step?: string;
  restartedAt: number;
  readyAt: number;
  /** First workflow task started after the kill (history): ms after the kill, and after the new boot was ready. */
  resumedAfterKillMs?: number;
  resumedAfterReadyMs?: number;
  /** An activity attempt started after the kill (the server's lastStartedTime, polled live), ms after the new boot was ready. */
  attemptResumedAfterReadyMs?: number;
  /** For a kill during a queue wait: the wait's next attempt started, ms after the new boot was ready. */
  waitResumedAfterReadyMs?: number;
}

export interface CampaignReport {
  seed: number;
  options: Omit<CampaignOptions, 'log'>;
  rollouts: Array<{
    generation: number;
    phase: string;
    durationMs: number;
    plan: RolloutPlan;
    /** Worker kills that landed while this generation ran. */
    kills: number;
    /** Generations cut short before this one (it adopts the zones they left out). */
    interrupted: Interruption[];
  }>;
  faults: {
    workerKills: number;
    infra: Array<{ fault: InfraFault; at: number; rollout: number }>;
    kube: Record<string, number>;
    metrics: Record<string, number>;
  };
  kills: KillRecord[];
  recovery: { resumedAfterReadyMs: Stats; attemptResumedAfterReadyMs: Stats; waitResumedAfterReadyMs: Stats; workerStartupMs: Stats };
  oracle: { breaches: Breach[]; counts: Verdict['counts'] };
  /**
   * Check b against its own data: at each rejoin, how long the campaign's looks at vmagent had seen
   * the zone's queues drained beyond queueDrainedFor (the margin: a rejoin earlier by more than it is
   * caught), and how many rejoins the oracle flags when the API server's log is replayed with each
   * restore received earlier: by one worker poll, and by its own margin and one look.
   */
  drainCheck: { queueDrainedForMs: number; margins: Array<{ zone: string; marginMs: number }>; earlierByOnePoll: number; earlierThanMargin: number };
  physical: { vmauthConfigs: number; maxZonesOutOfVmauth: number; zoneRestarts: number; restartsWhileRouted: string[] };
  reads: { total: number; failed: number; stale: number; gapReads: number; gappy: number; maxGapMs?: number };
  passed: boolean;
}

/** A generation that ended without finishing: how, and whether its status told the truth about vmauth. */
export interface Interruption {
  cause: 'cancel' | 'zone-timeout';
  generation: number;
  phase: string;
  /** Its status message at the end. */
  message?: string;
  /** The zones its status names out of reads at the end, and the zones vmauth's rendered config lacks then. */
  zonesOutAfter: string[];
  zonesOutOfVmauthAfter: string[];
}

/** The phase each kind of interruption must end in. */
const INTERRUPTION_END: Record<Interruption['cause'], string> = { cancel: 'Cancelled', 'zone-timeout': 'Failed' };

interface Stats {
  n: number;
  p50?: number;
  max?: number;
}

const stats = (xs: number[]): Stats => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? { n: s.length, p50: s[Math.floor((s.length - 1) / 2)], max: s[s.length - 1] } : { n: 0 };
};

const NS = 'default';
const VMDC = 'demo';
/** VMCluster vm-az-a → zone az-a. */
const zoneOf = (vmcluster: string) => vmcluster.replace(/^vm-/, '');
const VERSIONS = ['v1.150.0-cluster', 'v1.151.0-cluster', 'v1.152.0-cluster', 'v1.153.0-cluster', 'v1.154.0-cluster', 'v1.155.0-cluster'];
const POLL_MS = 250;
/** How often the campaign looks at vmagent's queues itself (check b's resolution: finer than the worker's poll). */
const QUEUE_LOOK_MS = 100;
/** The gap reader's window: longer than the longest zone downtime of a campaign (40 s). */
const GAP_WINDOW_MS = 60_000;
/** The vmagent's EndpointSlice as test/infra/simulator/environment.ts publishes it (VMAgent vm-global). */
const VMAGENT_SLICE = 'vmagent-vm-global';
/**
 * Longer than a short kill's outage (1–2 s down, ≈ 4 s to start): a queue wait resumed by the next
 * boot still has to watch, so its attempt can be seen running and its resumption timed.
 */
const QUEUE_DRAINED_FOR_MS = 8_000;
const STRATEGY = {
  order: 'Declared',
  readDrainDelay: '1s',
  queueDrainedFor: `${QUEUE_DRAINED_FOR_MS / 1000}s`,
  pollInterval: `${POLL_MS}ms`,
  zoneTimeout: '10m',
};
/** The zone-timeout generation: its zoneTimeout, and how late the slow zone's VictoriaMetrics starts its upgrade. */
const SLOW_ZONE_TIMEOUT = '30s';
const SLOW_ZONE_DELAY_MS = 40_000;

export async function runCampaign(opts: CampaignOptions): Promise<CampaignReport> {
  const log = opts.log ?? (() => {});
  const dir = harnessTempDir('chaos');
  const stops: Array<() => Promise<unknown>> = [];
  try {
    // ---- the stack ---------------------------------------------------------------------------------
    log(`seed ${opts.seed}: starting kube-apiserver (audit log), Temporal (database file), the zones`);
    const kube = await startKube({ audit: true });
    stops.push(() => kube.stop());
    const kc = kube.kubeConfig;
    await installCrdFiles(kc, VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds'));
    const identities = await installChartIdentities(kc, {
      releaseNamespace: CHART_RELEASE_NAMESPACE,
      values: [`watchNamespaces={${NS}}`, `createNamespaces={${NS}}`, `vmauths={${NS}/vm-global}`],
    });
    const tdev = await startTemporalDevServer({ ui: false, dbFilename: path.join(dir, 'temporal.db') });
    stops.push(() => tdev.stop());
    const keys = writePayloadKeysFile(dir);
    const connection = await Connection.connect({ address: tdev.address });
    stops.push(() => connection.close());
    const client = new Client({ connection, namespace: tdev.namespace, dataConverter: payloadDataConverter(parsePayloadKeys(keys.text)) });
    // vmauth reloads slowly: every pod gets its config Secret 2 s late (kubelet's volume sync).
    const vm = await startVmEnvironment({
      kubeConfig: kc,
      namespace: NS,
      vmclusters: DEMO_CLUSTERS,
      vmagentName: 'vm-global',
      vmauthName: 'vm-global',
      zoneDowntimeMs: opts.zoneDowntimeMs,
      vmauthPods: 2,
      configPropagationDelayMs: 2_000,
    });
    stops.push(() => vm.stop());

    const seeds = partSeeds(opts.seed, 0);
    const workerProxy = await startKubeFaultProxy({ kube, seed: seeds.kubeWorker, rate: opts.kubeFaultRate, enabled: false, timeoutHoldMs: 35_000 });
    const triggerProxy = await startKubeFaultProxy({ kube, seed: seeds.kubeTrigger, rate: opts.kubeFaultRate, enabled: false, timeoutHoldMs: 35_000 });
    stops.push(
      () => workerProxy.stop(),
      () => triggerProxy.stop(),
    );
    const vmagentTarget = new URL(vm.vmagent.url).port;
    const gateway = await startPodGateway({
      faults: { seed: seeds.metrics, rate: opts.metricsFaultRate, kinds: ['timeout', 'truncated', 'garbage'], enabled: false, timeoutHoldMs: 8_000 },
      eligible: metricsOf(`${vm.vmagentEndpointIP}:${vmagentTarget}`),
    });
    stops.push(() => gateway.close());

    const taskQueue = `${DEFAULT_TASK_QUEUE}-chaos`;
    const workflowBundle = await buildWorkflowBundle();
    const common = {
      temporalAddress: tdev.address,
      temporalNamespace: tdev.namespace,
      taskQueue,
      payloadKeysFile: keys.path,
      createNamespaces: [NS],
      logDir: dir,
    };
    const worker = await startWorkerProcess({
      ...common,
      kubeConfig: workerProxy.kubeConfigFor(identities.worker),
      workflowBundle,
      podGatewayUrl: gateway.url,
      extraEnv: { WORKER_INSTANCE: 'vmrollout-worker-chaos' },
    });
    stops.push(() => worker.stop());
    const trigger = await startTriggerProcess({
      ...common,
      kubeConfig: triggerProxy.kubeConfigFor(identities.trigger),
      watchNamespaces: [NS],
      relistInterval: '30s',
      watchIdleTimeout: '30s',
    });
    stops.push(() => trigger.stop());

    // ---- the objects, generation 1 at the version every zone runs ------------------------------------
    const vars: Record<string, string> = { NAMESPACE: NS, INITIAL_VERSION: VERSIONS[0]! };
    for (const c of DEMO_CLUSTERS) vars[writeUrlVar(c)] = vm.remoteWriteURLs[c]!;
    const manifests = loadManifests(DEMO_MANIFESTS_DIR, vars);
    const vmdc = manifests.find((o) => o.kind === 'VMDistributedCluster')!;
    vmdc.metadata.name = VMDC;
    const strategy = { ...STRATEGY, queueDrainedFor: `${(QUEUE_DRAINED_FOR_MS - (opts.rejoinEarlyMs ?? 0)) / 1000}s` };
    vmdc.spec!.strategy = strategy;
    await createObjects(
      kc,
      manifests.filter((o) => o.kind !== 'VMDistributedCluster'),
    );
    await waitVmauthRendered(vm, DEMO_CLUSTERS.length, DEMO_TOKENS.length, 40_000);
    const traffic = startTraffic({
      vmagentURL: vm.vmagent.url,
      vmauthURL: vm.vmauthPods.map((p) => p.vmauth.url),
      bearerTokens: DEMO_TOKENS,
      staleAfterMs: STALE_AFTER_MS,
    });
    stops.push(() => traffic.stop());
    await traffic.waitHealthy();
    // vmagent's queues as the campaign itself sees them, and reads that see holes (checks b and g).
    const zoneQueues: Record<string, RemoteWriteQueue[]> = {};
    for (const [index, c] of DEMO_CLUSTERS.entries())
      zoneQueues[zoneOf(c)] = [{ index, url: vm.remoteWriteURLs[c]!, dirName: await queueDirName(index, vm.remoteWriteURLs[c]!) }];
    const queueWatch = watchQueues({
      metricsURL: `${vm.vmagent.url}/metrics`,
      zones: zoneQueues,
      queueEmptyBytes: DEFAULT_QUEUE_EMPTY_BYTES,
      intervalMs: QUEUE_LOOK_MS,
    });
    stops.push(() => queueWatch.stop());
    const gapReader = startGapReader({
      vmauthURLs: vm.vmauthPods.map((p) => p.vmauth.url),
      bearerTokens: DEMO_TOKENS,
      series: 'vmrollout_e2e_heartbeat{source="e2e"}',
      windowMs: GAP_WINDOW_MS,
    });
    stops.push(() => gapReader.stop());
    const probe = startZoneProbe({
      zones: Object.fromEntries(DEMO_CLUSTERS.map((c) => [c, vm.zones[c]!.url])),
      vmagentURL: vm.vmagent.url,
      series: 'vmrollout_e2e_heartbeat',
    });
    stops.push(() => probe.stop());
    await createObjects(kc, [vmdc]);
    await waitVmdcPhase(kc, NS, VMDC, 1, ['Succeeded'], { timeoutMs: 120_000 });
    const created = await getObject(kc, 'VMDistributedCluster', NS, VMDC);

    // The oracle's starting point: routes and VMCluster generations once generation 1 is done.
    const routes = routeObjectsOf(manifests);
    const initialRoutes: Record<string, JsonObject[]> = {};
    for (const r of routes) {
      const obj = (await getObject(kc, r.kind, NS, r.name)) as unknown as Parameters<typeof routeTargetRefs>[1];
      initialRoutes[`${r.kind}/${r.name}`] = routeTargetRefs(r.kind as RouteRef['kind'], obj);
    }
    const initialGenerations: Record<string, number> = {};
    for (const c of DEMO_CLUSTERS) initialGenerations[c] = (await getObject(kc, 'VMCluster', NS, c)).metadata.generation ?? 0;
    const baselineConfig = vm.simulator.currentConfig!.routes;
    const configsFrom = vm.simulator.configs.length;
    const restartsFrom = vm.simulator.restarts.length;
    const t0 = Date.now();
    const audit = followAuditLog(kube.auditLogPath!, { intervalMs: 100 });
    stops.push(async () => audit.stop());

    // ---- the rollouts --------------------------------------------------------------------------------
    const isWorkerWrite = (e: AuditEvent) => /vmrollout-worker$/.test(e.user) && !e.dryRun && e.code < 300 && ['patch', 'update'].includes(e.verb);
    const status = async () => ((await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status ?? {}) as VMDistributedClusterStatus;
    const stepNow = async () => {
      const st = await status().catch(() => undefined);
      const z = st?.zones?.find((x) => x.name === st.currentZone);
      return z ? `${z.name}:${z.phase}` : st?.phase;
    };
    /** Until the worker's next successful route edit (or `done`). */
    const nextRouteEdit = async (done: () => boolean, timeoutMs = 20 * 60_000) => {
      audit.poll();
      const from = audit.events.length;
      await waitFor(() => done() || audit.events.slice(from).some((e) => isWorkerWrite(e) && (e.resource === 'vmauths' || e.resource === 'vmusers')), {
        timeoutMs,
        intervalMs: 50,
        description: "the worker's next route edit",
      });
    };
    const kills: KillRecord[] = [];
    const measuring: Array<Promise<void>> = [];
    const infraDone: CampaignReport['faults']['infra'] = [];
    const results: CampaignReport['rollouts'] = [];
    const upgrades: Record<number, string[]> = {};
    let generation = 1;
    let versionIndex = 0;

    let faultWindow: NodeJS.Timeout | undefined;
    /** Scrape faults all along; API faults for the window. */
    const setFaults = (on: boolean) => {
      clearTimeout(faultWindow);
      workerProxy.enabled = on;
      triggerProxy.enabled = on;
      gateway.setFaultsEnabled(on);
      if (on) {
        faultWindow = setTimeout(() => {
          workerProxy.enabled = false;
          triggerProxy.enabled = false;
        }, opts.kubeFaultWindowMs);
      }
    };

    /** Until a zone's queue is watched: the status says so and the workflow's watchQueue attempt runs (or `done`). */
    const queueWait = (done: () => boolean, timeoutMs = 10 * 60_000) =>
      waitFor(
        async () => {
          if (done()) return true;
          const st = await status();
          if (!st.workflow || !st.zones?.some((z) => z.phase === 'WaitingForQueue')) return false;
          const { raw } = await client.workflow.getHandle(st.workflow.id).describe();
          return raw.pendingActivities?.some((a) => a.activityType?.name === 'watchQueue' && a.state === PendingState.PENDING_ACTIVITY_STATE_STARTED);
        },
        { timeoutMs, intervalMs: 100, description: 'a queue wait' },
      );

    /** Where the kill hits: its moment, or `timer` when the moment did not come within `waitMs`. */
    const awaitMoment = async (k: WorkerKill, waitMs: number | undefined, done: () => boolean): Promise<KillMoment> => {
      const reached = (wait: Promise<unknown>) =>
        wait.then(
          () => true,
          () => false,
        );
      if (k.moment === 'after-route-edit') return (await reached(nextRouteEdit(done, waitMs))) ? k.moment : 'timer';
      if (k.moment === 'queue-wait') {
        if (!(await reached(queueWait(done, waitMs)))) return 'timer';
        // Well inside the wait: it lasts queueDrainedFor at least.
        await sleep(k.delayMs % 500);
        return k.moment;
      }
      await sleep(k.delayMs);
      return k.moment;
    };

    /** Kills the worker at `k`'s moment (awaited at most `waitMs`) and restarts it; where it hit, or undefined when the rollout ended first. */
    const killWorker = async (rollout: number, k: WorkerKill, waitMs: number | undefined, done: () => boolean): Promise<KillMoment | undefined> => {
      const moment = await awaitMoment(k, waitMs, done);
      if (done()) return undefined;
      const step = await stepNow();
      const workflowId = (await status()).workflow?.id;
      await worker.kill('SIGKILL');
      // Once it is gone: an attempt started after this is the next boot's.
      const at = Date.now();
      log(`rollout ${rollout}: worker SIGKILLed (${moment}, ${step}); back in ${k.restartAfterMs} ms`);
      await worker.restartAfter(k.restartAfterMs);
      const readyAt = worker.startups.at(-1)!.readyAt ?? Date.now();
      const record: KillRecord = { rollout, moment, at, step, restartedAt: at + k.restartAfterMs, readyAt };
      kills.push(record);
      // Measured beside the next kills, not before them: the workflow may be between activities.
      if (workflowId) {
        measuring.push(
          attemptStartedAfter(client, workflowId, at).then((attempt) => {
            if (!attempt) return;
            record.attemptResumedAfterReadyMs = attempt.at - readyAt;
            if (attempt.activityType === 'watchQueue' && step?.endsWith('WaitingForQueue')) record.waitResumedAfterReadyMs = attempt.at - readyAt;
          }),
        );
      }
      return moment;
    };

    const infraFault = async (rollout: number, fault: InfraFault, done: () => boolean) => {
      // The vmagent pod goes not-ready where it matters: while a zone's queue is watched.
      if (fault === 'vmagent-not-ready') await queueWait(done);
      if (done()) return;
      log(`rollout ${rollout}: ${fault}`);
      infraDone.push({ fault, at: Date.now(), rollout });
      if (fault === 'restart-temporal') await tdev.process.restart();
      else if (fault === 'restart-trigger') {
        await trigger.kill('SIGKILL');
        await trigger.restartAfter(1_000);
      } else if (fault === 'restart-apiserver') await kube.apiserver.restart();
      else {
        // As kubelet reports a failing readiness probe: the endpoint stays, marked not ready, 3 s.
        await setEndpointsReady(kc, VMAGENT_SLICE, false);
        await sleep(3_000);
        await setEndpointsReady(kc, VMAGENT_SLICE, true);
      }
    };

    /** Runs the plan's faults against the running rollout until it ends; the number of kills that landed. */
    const chaos = async (rollout: number, plan: RolloutPlan, done: () => boolean): Promise<number> => {
      const infra = [...plan.infra];
      let owed: KillMoment[] = [];
      const landed = new Set<KillMoment>();
      let count = 0;
      for (const [i, k] of plan.kills.entries()) {
        if (done()) break;
        const aim = aimKill(k.moment, owed, plan.kills.length - i);
        const hit = await killWorker(rollout, { ...k, moment: aim.moment }, aim.waitMs, done);
        if (!hit) break;
        count++;
        owed = owedAfter(owed, aim.moment, hit, landed);
        landed.add(hit);
        while (infra[0] && infra[0].afterKill <= i && !done()) await infraFault(rollout, infra.shift()!.fault, done);
      }
      for (const f of infra) if (!done()) await infraFault(rollout, f.fault, done);
      return count;
    };

    /** Patches the next version in (and the strategy, which a zone-timeout generation shortened). */
    const nextGeneration = async (generationStrategy: typeof STRATEGY = strategy) => {
      generation++;
      const version = VERSIONS[++versionIndex % VERSIONS.length]!;
      await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: version, strategy: generationStrategy } });
    };

    const rollOut = async (rollout: number, plan: RolloutPlan): Promise<{ phase: string; durationMs: number; kills: number }> => {
      const started = Date.now();
      await nextGeneration();
      upgrades[generation] = [...DEMO_CLUSTERS];
      let finished = false;
      const faults = chaos(rollout, plan, () => finished);
      const final = await waitVmdcPhase(kc, NS, VMDC, generation, ['Succeeded', 'Failed', 'Cancelled'], { timeoutMs: 20 * 60_000 });
      finished = true;
      const kills = await faults;
      log(`rollout ${rollout}: generation ${generation} ${final.phase} in ${Date.now() - started} ms, ${kills} worker kills`);
      return { phase: final.phase ?? '?', durationMs: Date.now() - started, kills };
    };

    for (let r = 1; r <= opts.rollouts; r++) {
      const infra = opts.infra.filter((_, i) => i % opts.rollouts === r - 1);
      const plan = planRollout(partSeeds(opts.seed, r).plan, {
        kills: opts.kills,
        infra,
        cancel: opts.cancel && r === opts.rollouts,
        zoneTimeout: opts.zoneTimeout && r === 1,
        restartAfterMs: opts.restartAfterMs,
      });
      const interrupted: Interruption[] = [];
      if (plan.zoneTimeoutBefore) {
        // Faults off: with a zoneTimeout this short, a step slowed by API faults would fail the zone
        // in reads first, and this generation is about the zone that outlasts it.
        setFaults(false);
        interrupted.push(await zoneOutlastsTimeout(r));
      }
      if (plan.cancelDuringRollout) {
        setFaults(true);
        interrupted.push(await cancelAndClean(r));
      }
      setFaults(true);
      const res = await rollOut(r, plan);
      results.push({ generation, ...res, plan, interrupted });
    }
    setFaults(false);

    /** The end of an interrupted generation: its status, and (once the operator rendered it) what vmauth lacks. */
    async function interruption(cause: Interruption['cause'], restartsBefore: number): Promise<Interruption> {
      const final = await waitVmdcPhase(kc, NS, VMDC, generation, ['Cancelled', 'Failed', 'Succeeded'], { timeoutMs: 10 * 60_000 });
      // The zones this generation really restarted: what it upgraded before it ended.
      upgrades[generation] = [...new Set(vm.simulator.restarts.slice(restartsBefore).map((x) => x.zone))];
      const zonesOut = [...(final.zonesOutOfRotation ?? [])].sort();
      const outOfVmauth = () => zonesMissingFrom(vm.simulator.currentConfig!.routes, baselineConfig).map(zoneOf).sort();
      // The operator renders vmauth's config a moment after the last route edit.
      await waitFor(() => jsonEqual(outOfVmauth(), zonesOut), { timeoutMs: 30_000, description: 'vmauth rendered as the status says' }).catch(() => {});
      return { cause, generation, phase: final.phase ?? '?', message: final.message, zonesOutAfter: zonesOut, zonesOutOfVmauthAfter: outOfVmauth() };
    }

    /**
     * A generation whose first zone's VictoriaMetrics starts its upgrade only after zoneTimeout (the
     * operator slow: the simulator's delay annotation): the zone times out while out of reads. Then
     * the zone comes up on its own, the annotation goes, and the next rollout adopts the zone.
     */
    async function zoneOutlastsTimeout(rollout: number): Promise<Interruption> {
      const slow = DEMO_CLUSTERS[0]!;
      const restartsBefore = vm.simulator.restarts.length;
      await mergePatch(kc, 'VMCluster', NS, slow, { metadata: { annotations: { [ANNOTATION_DELAY_MS]: String(SLOW_ZONE_DELAY_MS) } } });
      await nextGeneration({ ...strategy, zoneTimeout: SLOW_ZONE_TIMEOUT });
      log(`rollout ${rollout}: generation ${generation}, ${slow} slower than zoneTimeout ${SLOW_ZONE_TIMEOUT}`);
      const end = await interruption('zone-timeout', restartsBefore);
      await waitFor(() => vm.simulator.restarts.slice(restartsBefore).some((x) => x.zone === slow && x.finishedAt), {
        timeoutMs: SLOW_ZONE_DELAY_MS + opts.zoneDowntimeMs + 60_000,
        description: `${slow} upgraded late`,
      });
      await mergePatch(kc, 'VMCluster', NS, slow, { metadata: { annotations: { [ANNOTATION_DELAY_MS]: null } } });
      upgrades[generation] = [slow];
      log(`rollout ${rollout}: generation ${generation} ${end.phase} (${end.zonesOutAfter.join(',')} out of reads); ${slow} came up late`);
      return end;
    }

    /**
     * Rolls out a generation, cancels it once a zone is out of reads, and kills the worker a second
     * into the cleanup (while it confirms the patched zone's queue: a heartbeating activity). The
     * zone rejoins if that confirmation succeeds, or stays out, named in the status, for the next
     * generation to adopt (docs/design.md#control-pause-cancel-supersede-failure).
     */
    async function cancelAndClean(rollout: number): Promise<Interruption> {
      const restartsBefore = vm.simulator.restarts.length;
      await nextGeneration();
      const st = await waitFor(
        async () => {
          const s = await status();
          return s.observedGeneration === generation &&
            (s.zonesOutOfRotation?.length ?? 0) > 0 &&
            s.zones?.some((z) => z.phase === 'WaitingForQueue' || z.phase === 'WaitingOperational')
            ? s
            : undefined;
        },
        { timeoutMs: 10 * 60_000, intervalMs: 100, description: 'a zone out of reads to cancel in' },
      );
      log(`rollout ${rollout}: cancelling generation ${generation} (${st.zonesOutOfRotation!.join(',')} out of reads)`);
      await client.workflow.getHandle(st.workflow!.id).cancel();
      await sleep(1_000);
      const at = Date.now();
      const step = await stepNow();
      await worker.kill('SIGKILL');
      log(`rollout ${rollout}: worker SIGKILLed during the cleanup after the cancel`);
      await worker.restartAfter(2_000);
      kills.push({
        rollout,
        moment: 'after-route-edit',
        at,
        step: `cleanup ${step}`,
        restartedAt: at + 2_000,
        readyAt: worker.startups.at(-1)!.readyAt ?? Date.now(),
      });
      return interruption('cancel', restartsBefore);
    }

    // ---- judging -------------------------------------------------------------------------------------
    const t1 = Date.now();
    await sleep(500);
    audit.stop();
    const events = readAuditLog(kube.auditLogPath!);
    const reads = traffic.reads.filter((x) => x.at >= t0 && x.at <= t1);
    const gapReads = gapReader.reads.filter((x) => x.at >= t0 && x.at <= t1);
    const judged: JudgeInput = {
      events,
      namespace: NS,
      vmdc: { name: VMDC, uid: created.metadata.uid },
      zoneOf: Object.fromEntries(DEMO_CLUSTERS.map((c) => [c, zoneOf(c)])),
      initialRoutes,
      initialGenerations,
      upgrades,
      queues: queueWatch.observations,
      queueDrainedForMs: QUEUE_DRAINED_FOR_MS,
      reads: [...reads, ...gapReads],
      staleAfterMs: STALE_AFTER_MS,
    };
    const verdict = judge(judged);
    const drainCheck = checkDrainCheck(judged, verdict);

    // What vmauth was told to serve, and which zones were restarted while something routed reads to them.
    const configs = vm.simulator.configs.slice(configsFrom);
    const maxOut = Math.max(0, ...configs.map((c) => zonesMissingFrom(c.routes, baselineConfig).length));
    const zoneRestarts = vm.simulator.restarts.slice(restartsFrom);
    const restartsWhileRouted = zoneRestarts
      .filter((x) => Object.values(x.routesAtStart).some((zs) => zs.includes(x.zone)))
      .map((x) => `${x.zone}@${x.startedAt}`);

    await Promise.all(measuring);
    await measureRecovery(client, kills);
    const failed = reads.filter((x) => x.error).length + gapReads.filter((x) => x.error).length;
    const stale = reads.filter((x) => !x.error && (x.ageMs ?? 0) > STALE_AFTER_MS).length;
    const gaps = gapReads.flatMap((x) => (x.gapMs === undefined ? [] : [x.gapMs]));
    const report: CampaignReport = {
      seed: opts.seed,
      options: { ...opts, log: undefined } as Omit<CampaignOptions, 'log'>,
      rollouts: results,
      faults: {
        workerKills: kills.length,
        infra: infraDone,
        kube: { ...sumCounts(workerProxy.faultCounts(), triggerProxy.faultCounts()) },
        metrics: sumCounts(...gateway.faultKinds.map((k) => ({ [k]: 1 }))),
      },
      kills,
      recovery: {
        resumedAfterReadyMs: stats(kills.flatMap((k) => (k.resumedAfterReadyMs === undefined ? [] : [k.resumedAfterReadyMs]))),
        attemptResumedAfterReadyMs: stats(kills.flatMap((k) => (k.attemptResumedAfterReadyMs === undefined ? [] : [k.attemptResumedAfterReadyMs]))),
        waitResumedAfterReadyMs: stats(kills.flatMap((k) => (k.waitResumedAfterReadyMs === undefined ? [] : [k.waitResumedAfterReadyMs]))),
        workerStartupMs: stats(worker.startups.slice(1).flatMap((s) => (s.readyAt ? [s.readyAt - s.startedAt] : []))),
      },
      oracle: verdict,
      drainCheck,
      physical: { vmauthConfigs: configs.length, maxZonesOutOfVmauth: maxOut, zoneRestarts: zoneRestarts.length, restartsWhileRouted },
      reads: {
        total: reads.length,
        failed,
        stale,
        gapReads: gapReads.length,
        gappy: verdict.counts.gappyReads,
        ...(gaps.length ? { maxGapMs: Math.max(...gaps) } : {}),
      },
      passed: false,
    };
    report.passed =
      verdict.breaches.length === 0 &&
      maxOut <= 1 &&
      restartsWhileRouted.length === 0 &&
      failed === 0 &&
      stale === 0 &&
      verdict.counts.gappyReads === 0 &&
      results.every((x) => x.phase === 'Succeeded' && x.kills >= opts.kills) &&
      // The status never lies: what it names out after a cancel or a failure is what vmauth no longer routes to.
      results.every((x) => x.interrupted.every((i) => i.phase === INTERRUPTION_END[i.cause] && jsonEqual(i.zonesOutAfter, i.zonesOutOfVmauthAfter))) &&
      // A zone that outlasts zoneTimeout fails while out of reads, and stays out (the only one).
      results.every((x) => x.interrupted.every((i) => i.cause !== 'zone-timeout' || jsonEqual(i.zonesOutAfter, [zoneOf(DEMO_CLUSTERS[0]!)])));
    return report;
  } finally {
    for (const f of stops.reverse()) await f().catch(() => {});
  }
}

/** Marks every endpoint of an EndpointSlice of the namespace ready or not (read, then replaced). */
async function setEndpointsReady(kc: Parameters<typeof kubeRaw>[0], slice: string, ready: boolean): Promise<void> {
  const url = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/${slice}`;
  const got = await kubeRaw(kc, 'GET', url);
  if (got.status !== 200) throw new Error(`GET ${url}: ${got.status} ${got.body}`);
  const obj = JSON.parse(got.body) as { endpoints?: Array<{ conditions?: Record<string, boolean> }> };
  for (const ep of obj.endpoints ?? []) ep.conditions = { ...ep.conditions, ready };
  const put = await kubeRaw(kc, 'PUT', url, obj);
  if (put.status !== 200) throw new Error(`PUT ${url}: ${put.status} ${put.body}`);
}

/**
 * Check b run against the campaign's own data: each rejoin's margin, and the rejoins the oracle flags
 * when the same audit log is judged with each restore received `earlierMs(margin)` earlier.
 */
function checkDrainCheck(input: JudgeInput, verdict: Verdict): CampaignReport['drainCheck'] {
  const drainedFor = input.queueDrainedForMs!;
  const flagged = (earlierMs: (marginMs: number) => number) => {
    const shift = new Map(verdict.counts.rejoins.map((r) => [r.seq, earlierMs(r.drainedForMs - drainedFor)]));
    const events = input.events.map((e) => (shift.has(e.seq) ? { ...e, receivedAt: e.receivedAt - shift.get(e.seq)! } : e));
    return judge({ ...input, events }).breaches.filter((b) => b.check === 'b' && /seen drained for/.test(b.message)).length;
  };
  return {
    queueDrainedForMs: drainedFor,
    margins: verdict.counts.rejoins.map((r) => ({ zone: r.zone, marginMs: r.drainedForMs - drainedFor })),
    earlierByOnePoll: flagged(() => POLL_MS),
    earlierThanMargin: flagged((margin) => margin + QUEUE_LOOK_MS),
  };
}

function sumCounts(...cs: Array<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of cs) for (const [k, v] of Object.entries(c)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/**
 * The first activity attempt of the workflow that started after `after`, as the server recorded it
 * (a retried attempt's start is in history only once the activity closes, so it is polled live);
 * undefined when none starts within 30 s (the workflow was between activities, or done).
 */
async function attemptStartedAfter(client: Client, workflowId: string, after: number): Promise<{ at: number; activityType: string } | undefined> {
  const found = await waitFor(
    async () => {
      const { raw, status } = await client.workflow.getHandle(workflowId).describe();
      const p = (raw.pendingActivities ?? []).find((a) => (optionalTsToMs(a.lastStartedTime) ?? 0) > after);
      return p ? { at: tsToMs(p.lastStartedTime), activityType: p.activityType?.name ?? '' } : status.name !== 'RUNNING' ? null : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, description: 'an activity attempt after the kill' },
  ).catch(() => null);
  return found ?? undefined;
}

/** From the histories: after each kill, when the first workflow task started (the new boot at work). */
async function measureRecovery(client: Client, kills: KillRecord[]): Promise<void> {
  const started: number[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = 'rolloutWorkflow'` })) {
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    for (const e of history.events ?? []) if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) started.push(tsToMs(e.eventTime));
  }
  started.sort((a, b) => a - b);
  for (const k of kills) {
    const first = started.find((at) => at > k.at);
    if (first !== undefined) {
      k.resumedAfterKillMs = first - k.at;
      k.resumedAfterReadyMs = first - k.readyAt;
    }
  }
}

/** A report as it is written (.tmp/chaos/*.json): what ran and where it came from, then the report. */
export function campaignDocument(what: string, runInfo: Provenance, report: CampaignReport) {
  return { benchmark: 'chaos', what, ...runInfo, ...report };
}

// ---- CLI ----------------------------------------------------------------------------------------------

function flag(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** `make chaos`: 3 rollouts of 20 kills, 20 % API faults, the zone-timeout and the cancel generations. */
export const FULL_CAMPAIGN: Omit<CampaignOptions, 'seed' | 'log'> = {
  rollouts: 3,
  kills: 20,
  kubeFaultRate: 0.2,
  kubeFaultWindowMs: 90_000,
  // An unreadable page breaks the queue's empty streak (never counted as empty): at 20 % a 3 s
  // streak of 12 samples would almost never complete.
  metricsFaultRate: 0.03,
  infra: ['restart-temporal', 'restart-trigger', 'restart-apiserver', 'vmagent-not-ready'],
  cancel: true,
  zoneTimeout: true,
  // A zone down 40 s: a rollout lasts long enough for its 20 kills (a kill cycle: the moment, up to
  // 5 s; 1-5 s down; about 4 s to start again).
  zoneDowntimeMs: 40_000,
};

/**
 * The short variant (test/infra/chaos/short.test.ts, `--short`): one rollout, 3 kills restarted 1–2 s
 * later, 5 % API faults for a minute; zones down 12 s, longer than the stale threshold (9 s), so a
 * zone back in reads before its backlog is delivered shows as a stale read or a hole.
 */
export const SHORT_CAMPAIGN: Omit<CampaignOptions, 'seed' | 'log'> = {
  rollouts: 1,
  kills: 3,
  restartAfterMs: [1_000, 2_000],
  kubeFaultRate: 0.05,
  kubeFaultWindowMs: 60_000,
  metricsFaultRate: 0.03,
  infra: ['restart-temporal', 'restart-trigger', 'restart-apiserver', 'vmagent-not-ready'],
  cancel: false,
  zoneTimeout: false,
  zoneDowntimeMs: 12_000,
};

async function main(): Promise<void> {
  const seed = Number(flag('seed') ?? process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const short = process.argv.includes('--short');
  const base = short ? SHORT_CAMPAIGN : FULL_CAMPAIGN;
  const runInfo = provenance();
  const log = (m: string) => process.stderr.write(`[chaos ${new Date().toISOString()}] ${m}\n`);
  log(`seed ${seed} (replay: CHAOS_SEED=${seed} make chaos)`);
  const report = await runCampaign({
    ...base,
    seed,
    rollouts: Number(flag('rollouts') ?? base.rollouts),
    kills: Number(flag('kills') ?? base.kills),
    rejoinEarlyMs: Number(flag('rejoin-early-ms') ?? 0),
    log,
  });
  const out = path.join(REPO_ROOT, '.tmp', 'chaos');
  fs.mkdirSync(out, { recursive: true });
  const doc = JSON.stringify(
    campaignDocument(
      `test/infra/chaos/campaign.ts, the ${short ? 'short' : 'full'} campaign: rollouts of a 3-zone VMDistributedCluster under worker kills, restarts, API and /metrics faults, judged by the oracle; recovery after each kill`,
      runInfo,
      report,
    ),
    null,
    2,
  );
  fs.writeFileSync(path.join(out, `campaign-${seed}.json`), doc + '\n');
  process.stdout.write(doc + '\n');
  log(
    `${report.passed ? 'PASSED' : 'FAILED'}: ${report.oracle.breaches.length} breaches, ${report.reads.failed} failed / ${report.reads.stale} stale reads of ${report.reads.total}, seed ${seed}`,
  );
  process.exitCode = report.passed ? 0 : 1;
}

if (require.main === module) runHarnessMain('chaos', main);
