// Worker RSS with many rollouts at once, the real activities against a real kube-apiserver (issue 28
// item 11; bench/stack/scale.ts measures the same with in-memory activities).
//
// What is real: the worker process as production runs it (`node --import tsx worker/main.ts`,
// test/infra/chaos/control-processes.ts, configured by environment with the chart's settings:
// worker.maxConcurrentActivities, worker.maxCachedWorkflows, worker.malloc of
// charts/vmrollout/values.yaml, the chart's ServiceAccount and RBAC for every namespace), its
// activities and workflow bundle, the real trigger process starting the workflows, kube-apiserver +
// etcd with the CRDs, the Temporal dev server, payload encryption, and one VMDistributedCluster of
// the demo's objects (examples/demo: 3 VMClusters, a VMAuth, 3 VMUsers, a VMAgent) per namespace
// `scale-<i>`. The worker reaches the pods through the pod gateway as in the chaos campaign, and
// verifies them (EndpointSlice owner, Pod, workload) as in production.
// What stands in (bench/stack/vm-namespaces.ts): the VM operator is the zone simulator, one per
// namespace; a zone's upgrade is ZONE_DOWNTIME_MS of downtime with no process; vmselect is the
// simulator's front with real request counters; the vmauth pod is its config-reloader alone (the
// content hash it publishes is what the worker confirms a switch by); every vmagent pod serves the
// /metrics page of one real vmagent at rest, its queue directories renamed per namespace. So the
// queues are drained at the first sample: a rollout's queue wait lasts queueDrainedFor.
//
// Steps: the stack; every object's generation 1 (every zone already at the version: nothing to
// upgrade) settles; a warm-up rollout; one rollout alone; then every object's clusterVersion bumped
// at once. Measured: the time until every rollout Succeeded, against the one alone; the worker
// process's VmRSS every 100 ms (idle before the batch, and its peak) and VmHWM; the SDK's activity
// slots in use (its Prometheus exporter); the Temporal history events per zone of every rollout.
// Compares within one run, never asserts timings; a rollout that does not succeed fails the run
// (exit 1, named). Prints ONE JSON document (also .tmp/bench/scale-real.json).
//   npx tsx bench/stack/scale-real.ts [--quick]      (200 rollouts; --quick: 20)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { buildWorkflowBundle, processesOf, startTriggerProcess, startWorkerProcess, writePayloadKeysFile } from '../../test/infra/chaos/control-processes';
import { startPodGateway } from '../../test/infra/chaos/pod-gateway';
import { installChartIdentities } from '../../test/infra/harness/chart-identities';
import { assertPodIpNotLocal } from '../../test/infra/harness/pod-network';
import { startKube, VM_OPERATOR_CRDS } from '../../test/infra/harness/kube';
import { freePort } from '../../test/infra/harness/ports';
import { harnessTempDir, httpGet, runHarnessMain, waitFor } from '../../test/infra/harness/processes';
import { startTemporalDevServer } from '../../test/infra/harness/temporal';
import {
  CHART_RELEASE_NAMESPACE,
  DEMO_CLUSTERS,
  DEMO_MANIFESTS_DIR,
  DEMO_TOKENS,
  REPO_ROOT,
  V1,
  V2,
  V3,
  V4,
  createObjects,
  installCrdFiles,
  loadManifests,
  mergePatch,
  resourceOf,
  waitVmauthRendered,
  writeUrlVar,
} from '../../test/e2e/support';
import { minMaxMean, quantile, round } from '../analysis/stats';
import { forEachLimit } from '../support/concurrency';
import { chartWorkerEnv } from '../support/chart-worker';
import { fullHistory } from '../support/history';
import { procMemoryMB } from '../support/proc-memory';
import { provenance } from '../support/provenance';
import { startVmagentPages, startVmNamespace, type VmNamespace } from './vm-namespaces';

const quick = process.argv.includes('--quick');
const ROLLOUTS = quick ? 20 : 200;
const VMDC = 'demo';
const VMAGENT = 'vm-global';
const VMAUTH = 'vm-global';
const STRATEGY = { order: 'Declared', readDrainDelay: '1s', queueDrainedFor: '2s', pollInterval: '500ms', zoneTimeout: '15m' };
const ZONE_DOWNTIME_MS = 1_000;
/** The config-reloaders read their Secret this often (one GET each: 200 of them share the API server). */
const SECRET_POLL_MS = 1_000;
/** The simulators relist this seldom: their informers do the work, and 200 relisting every 3 s would load the API server. */
const RESYNC_MS = 60_000;
/** Namespaces set up at once. */
const SETUP_CONCURRENCY = 8;
/** How often every VMDistributedCluster is listed while rollouts run (the resolution of the times). */
const STATUS_POLL_MS = 500;
const RSS_SAMPLE_MS = 100;
const SLOTS_SAMPLE_MS = 500;
const OUT_FILE = path.join(REPO_ROOT, '.tmp', 'bench', 'scale-real.json');
const TERMINAL_NOT_SUCCEEDED = ['Failed', 'Cancelled', 'Superseded', 'Invalid'];

const log = (msg: string) => process.stderr.write(`[scale-real ${new Date().toISOString()}] ${msg}\n`);
const namespaceOf = (i: number) => `scale-${i}`;
const mb = (n: number) => round(n, 1);

interface RolloutOutcome {
  namespace: string;
  generation: number;
  /** ms from the first patch to this object seen Succeeded (or ended otherwise). */
  ms: number;
  phase: string;
  message?: string;
  workflow?: { id: string; runId: string };
}

/**
 * Bumps clusterVersion of every object of `namespaces` at once and waits until each rollout of the
 * new generation ended (listing them all every STATUS_POLL_MS): Succeeded = lastSucceeded names the
 * generation; another end = the generation's own workflow in a terminal phase.
 */
async function rollOut(
  kc: k8s.KubeConfig,
  namespaces: string[],
  version: string,
  timeoutMs: number,
  abortIf: () => string | undefined,
): Promise<{ ms: number; outcomes: RolloutOutcome[] }> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const r = resourceOf('VMDistributedCluster');
  const t0 = performance.now();
  const generations = new Map<string, number>();
  await Promise.all(
    namespaces.map(async (ns) => {
      const o = await mergePatch(kc, 'VMDistributedCluster', ns, VMDC, { spec: { clusterVersion: version } });
      generations.set(ns, o.metadata.generation ?? 0);
    }),
  );
  const outcomes = new Map<string, RolloutOutcome>();
  let loggedAt = Date.now();
  await waitFor(
    async () => {
      const list = (await api.listClusterCustomObject({ group: r.group, version: r.version, plural: r.plural })) as {
        items: Array<{ metadata: { namespace: string; name: string }; status?: VMDistributedClusterStatus }>;
      };
      const at = Math.round(performance.now() - t0);
      for (const o of list.items) {
        const ns = o.metadata.namespace;
        const generation = generations.get(ns);
        if (generation === undefined || o.metadata.name !== VMDC || outcomes.has(ns)) continue;
        const st = o.status ?? {};
        const ownRun = st.observedGeneration === generation && st.workflow?.id.includes(`/g${generation}-`);
        const workflow = st.workflow ? { id: st.workflow.id, runId: st.workflow.runId } : undefined;
        if (ownRun && st.lastSucceeded?.generation === generation) outcomes.set(ns, { namespace: ns, generation, ms: at, phase: 'Succeeded', workflow });
        else if (ownRun && TERMINAL_NOT_SUCCEEDED.includes(st.phase ?? '')) {
          outcomes.set(ns, { namespace: ns, generation, ms: at, phase: st.phase ?? '?', message: st.message, workflow });
        }
      }
      if (Date.now() - loggedAt >= 30_000) {
        loggedAt = Date.now();
        log(`${outcomes.size}/${namespaces.length} rollouts to ${version} ended after ${at} ms`);
      }
      return outcomes.size === namespaces.length;
    },
    { timeoutMs, intervalMs: STATUS_POLL_MS, description: `${namespaces.length} rollouts to ${version} to end`, abortIf },
  ).catch((err: unknown) => {
    // The ones still running count as failures, named.
    for (const ns of namespaces) {
      if (!outcomes.has(ns))
        outcomes.set(ns, {
          namespace: ns,
          generation: generations.get(ns) ?? 0,
          ms: Math.round(performance.now() - t0),
          phase: 'NotEnded',
          message: String(err),
        });
    }
  });
  const all = [...outcomes.values()];
  return { ms: Math.max(0, ...all.map((o) => o.ms)), outcomes: all };
}

/** Every Temporal history event of each rollout, per zone. */
async function eventsPerZone(client: Client, outcomes: RolloutOutcome[]): Promise<number[]> {
  const out: number[] = [];
  for (const o of outcomes) {
    if (!o.workflow) continue;
    const { events } = await fullHistory(client, o.workflow.id, o.workflow.runId);
    out.push(events.length / DEMO_CLUSTERS.length);
  }
  return out;
}

/** The value of the first sample of `metric` on a Prometheus page whose labels include `label` (when given). */
function sampleValue(page: string, metric: string, label = ''): number | undefined {
  const line = page.split('\n').find((l) => (l.startsWith(`${metric}{`) || l.startsWith(`${metric} `)) && l.includes(label));
  const v = line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
  return Number.isFinite(v) ? v : undefined;
}

/** The SDK's activity task slots (temporal_worker_task_slots_used / _available of the ActivityWorker) on its exporter's page. */
function activitySlots(page: string): { used?: number; available?: number } {
  const activity = 'worker_type="ActivityWorker"';
  return {
    used: sampleValue(page, 'temporal_worker_task_slots_used', activity),
    available: sampleValue(page, 'temporal_worker_task_slots_available', activity),
  };
}

/**
 * What the worker's main thread holds, from its own /metrics (prom-client's default metrics,
 * worker/metrics.ts), in MB: V8's heap (the activities, the SDK's JS side; not the workflow
 * thread's isolate) and the memory of Buffers outside it, beside the process's RSS at that moment.
 */
function mainThreadMemory(page: string): { rssMB?: number; heapTotalMB?: number; heapUsedMB?: number; externalMB?: number } {
  const m = (metric: string) => {
    const v = sampleValue(page, `vmrollout_worker_${metric}`);
    return v === undefined ? undefined : mb(v / 2 ** 20);
  };
  return {
    rssMB: m('process_resident_memory_bytes'),
    heapTotalMB: m('nodejs_heap_size_total_bytes'),
    heapUsedMB: m('nodejs_heap_size_used_bytes'),
    externalMB: m('nodejs_external_memory_bytes'),
  };
}

async function main(): Promise<number> {
  const runInfo = provenance();
  const started = Date.now();
  const namespaces = Array.from({ length: ROLLOUTS }, (_, i) => namespaceOf(i));
  const dir = harnessTempDir('scale-real');
  const stops: Array<() => Promise<unknown>> = [];
  try {
    assertPodIpNotLocal();
    // ---- kube-apiserver, the CRDs, the chart's identities for every namespace, Temporal ----------------
    log(`${ROLLOUTS} namespaces: kube-apiserver, the CRDs, the chart's identities, Temporal`);
    // 5 Services per namespace (3 vmselect, vmauth, vmagent): more than the harness's /24 of service IPs (the later flag wins).
    const kube = await startKube({ extraArgs: ['--service-cluster-ip-range=10.0.0.0/20'] });
    stops.push(() => kube.stop());
    const kc = kube.kubeConfig;
    await installCrdFiles(kc, VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds'));
    const identities = await installChartIdentities(kc, {
      releaseNamespace: CHART_RELEASE_NAMESPACE,
      values: [`watchNamespaces={${namespaces.join(',')}}`, `vmauths={${namespaces.map((ns) => `${ns}/${VMAUTH}`).join(',')}}`],
    });
    const tdev = await startTemporalDevServer({ ui: false, logDir: dir });
    stops.push(() => tdev.stop());
    const connection = await Connection.connect({ address: tdev.address });
    stops.push(() => connection.close());
    const client = new Client({ connection, namespace: tdev.namespace });

    // ---- the VM side of every namespace, its objects, vmauth rendered ------------------------------------
    const writeURLs = (sink: string, ns: string) => DEMO_CLUSTERS.map((c) => `${sink}/${ns}/${c}/api/v1/write`);
    const pages = await startVmagentPages((sink) => writeURLs(sink, namespaces[0]!));
    stops.push(() => pages.stop());
    log(`vmagent page: ${pages.templateBytes} bytes; setting up ${ROLLOUTS} namespaces`);
    const beds: VmNamespace[] = [];
    const vmdcs: Array<ReturnType<typeof loadManifests>[number]> = [];
    await forEachLimit(namespaces, SETUP_CONCURRENCY, async (ns) => {
      const urls = writeURLs(pages.sinkURL, ns);
      const vmagentPodIP = await pages.add(urls);
      const bed = await startVmNamespace({
        kubeConfig: kc,
        namespace: ns,
        vmclusters: DEMO_CLUSTERS,
        vmagentName: VMAGENT,
        vmauthName: VMAUTH,
        vmagentPodIP,
        zoneDowntimeMs: ZONE_DOWNTIME_MS,
        secretPollMs: SECRET_POLL_MS,
        resyncMs: RESYNC_MS,
      });
      beds.push(bed);
      stops.push(() => bed.stop());
      const vars: Record<string, string> = { NAMESPACE: ns, INITIAL_VERSION: V1 };
      for (const [i, c] of DEMO_CLUSTERS.entries()) vars[writeUrlVar(c)] = urls[i]!;
      const manifests = loadManifests(DEMO_MANIFESTS_DIR, vars);
      const vmdc = manifests.find((o) => o.kind === 'VMDistributedCluster')!;
      vmdc.metadata.name = VMDC;
      vmdc.spec!.strategy = STRATEGY;
      vmdcs.push(vmdc);
      await createObjects(
        kc,
        manifests.filter((o) => o.kind !== 'VMDistributedCluster'),
      );
    });
    await Promise.all(beds.map((bed) => waitVmauthRendered(bed, DEMO_CLUSTERS.length, DEMO_TOKENS.length, 10 * 60_000)));
    log('every namespace rendered; the pod gateway, the worker, the trigger');

    // ---- the real worker (the chart's settings) and trigger -------------------------------------------
    const gateway = await startPodGateway();
    stops.push(() => gateway.close());
    const keys = writePayloadKeysFile(dir);
    const taskQueue = `${DEFAULT_TASK_QUEUE}-scale-real`;
    const common = { temporalAddress: tdev.address, temporalNamespace: tdev.namespace, taskQueue, payloadKeysFile: keys.path, logDir: dir };
    const workerEnv = chartWorkerEnv();
    const sdkMetricsPort = await freePort();
    const worker = await startWorkerProcess({
      ...common,
      kubeConfig: identities.worker,
      workflowBundle: await buildWorkflowBundle(),
      podGatewayUrl: gateway.url,
      sdkMetricsPort,
      extraEnv: { ...workerEnv, WORKER_INSTANCE: 'vmrollout-worker-scale-real' },
    });
    stops.push(() => worker.stop());
    const workerProcesses = processesOf(worker.pid).length;
    const atReady = procMemoryMB(worker.pid);
    const trigger = await startTriggerProcess({ ...common, kubeConfig: identities.trigger, watchNamespaces: namespaces });
    stops.push(() => trigger.stop());
    const controlDown = () => [worker, trigger].filter((p) => !p.running).map((p) => `the ${p.name} process exited (log ${p.logPath}):\n${p.logTail(30)}`)[0];

    // ---- generation 1 of every object (nothing to upgrade) -----------------------------------------------
    const g1Start = performance.now();
    await forEachLimit(vmdcs, SETUP_CONCURRENCY, (vmdc) => createObjects(kc, [vmdc]));
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const r = resourceOf('VMDistributedCluster');
    await waitFor(
      async () => {
        const list = (await api.listClusterCustomObject({ group: r.group, version: r.version, plural: r.plural })) as {
          items: Array<{ status?: VMDistributedClusterStatus }>;
        };
        return list.items.filter((o) => o.status?.lastSucceeded?.generation === 1).length === ROLLOUTS;
      },
      { timeoutMs: 30 * 60_000, intervalMs: 1_000, description: `generation 1 of ${ROLLOUTS} objects to succeed`, abortIf: controlDown },
    );
    const generation1Ms = Math.round(performance.now() - g1Start);
    const setupMs = Date.now() - started;
    log(`generation 1 of every object Succeeded in ${generation1Ms} ms; warm-up rollout`);

    // ---- a warm-up, one rollout alone, then all at once ---------------------------------------------------
    const warmup = await rollOut(kc, [namespaces[0]!], V2, 10 * 60_000, controlDown);
    log(`warm-up: ${warmup.outcomes[0]?.phase} in ${warmup.ms} ms; one rollout alone`);
    const single = await rollOut(kc, [namespaces[0]!], V3, 10 * 60_000, controlDown);
    const singleEvents = await eventsPerZone(client, single.outcomes);
    const idle = procMemoryMB(worker.pid);
    log(`one alone: ${single.outcomes[0]?.phase} in ${single.ms} ms; worker RSS ${mb(idle.rssMB)} MB; ${ROLLOUTS} at once`);

    let rssPeak = 0;
    const rssSampler = setInterval(() => {
      const m = procMemoryMB(worker.pid).rssMB;
      if (Number.isFinite(m)) rssPeak = Math.max(rssPeak, m);
    }, RSS_SAMPLE_MS);
    const slots = { usedPeak: undefined as number | undefined, availableMin: undefined as number | undefined, samples: 0 };
    const slotSampler = setInterval(() => {
      void httpGet(`http://127.0.0.1:${sdkMetricsPort}/metrics`, { timeoutMs: 2_000 })
        .then((res) => {
          const s = activitySlots(res.body);
          slots.samples++;
          if (s.used !== undefined) slots.usedPeak = Math.max(slots.usedPeak ?? 0, s.used);
          if (s.available !== undefined) slots.availableMin = Math.min(slots.availableMin ?? Infinity, s.available);
        })
        .catch(() => undefined);
    }, SLOTS_SAMPLE_MS);
    // The main thread's heap at the sample where the process's RSS was highest.
    let atRssPeak: ReturnType<typeof mainThreadMemory> = {};
    const heapSampler = setInterval(() => {
      void httpGet(worker.metricsUrl, { timeoutMs: 2_000 })
        .then((res) => {
          const m = mainThreadMemory(res.body);
          if ((m.rssMB ?? 0) > (atRssPeak.rssMB ?? 0)) atRssPeak = m;
        })
        .catch(() => undefined);
    }, SLOTS_SAMPLE_MS);
    let batch: Awaited<ReturnType<typeof rollOut>>;
    try {
      batch = await rollOut(kc, namespaces, V4, (quick ? 15 : 45) * 60_000, controlDown);
    } finally {
      clearInterval(rssSampler);
      clearInterval(slotSampler);
      clearInterval(heapSampler);
    }
    const after = procMemoryMB(worker.pid);
    log(`${ROLLOUTS} at once: ended in ${batch.ms} ms; reading ${ROLLOUTS} histories`);
    const perZone = await eventsPerZone(client, batch.outcomes);

    const failures = [...warmup.outcomes, ...single.outcomes, ...batch.outcomes]
      .filter((o) => o.phase !== 'Succeeded')
      .map((o) => ({ namespace: o.namespace, generation: o.generation, phase: o.phase, message: o.message }));
    const durations = batch.outcomes.map((o) => o.ms);
    const result = {
      benchmark: 'scale-real',
      what:
        `${ROLLOUTS} rollouts of 3 zones at once on ONE real worker process (the chart's settings: activity slots, workflow cache, malloc; ` +
        'its ServiceAccount) and the real trigger, against a real kube-apiserver and Temporal dev server: the time until all Succeeded against one ' +
        'alone, the worker RSS (VmRSS every 100 ms, VmHWM), the activity slots in use, the history events per zone. The VM side per namespace ' +
        'is the zone simulator with stand-ins (bench/stack/scale-real.ts header)',
      quick,
      ...runInfo,
      loadavgAtEnd: os.loadavg().map((x) => round(x, 2)),
      rollouts: ROLLOUTS,
      zonesPerRollout: DEMO_CLUSTERS.length,
      totalMs: batch.ms,
      singleMs: single.ms,
      warmupMs: warmup.ms,
      totalVsSingle: round(batch.ms / Math.max(1, single.ms), 2),
      ratios: {
        totalVsSingle: round(batch.ms / Math.max(1, single.ms), 2),
        /** Against the rollouts one after another. */
        totalVsSingleSerial: round(batch.ms / Math.max(1, single.ms * ROLLOUTS), 3),
        rssPeakVsIdle: round(rssPeak / idle.rssMB, 2),
      },
      rolloutMs: { p50: Math.round(quantile(durations, 0.5)), p95: Math.round(quantile(durations, 0.95)), max: Math.max(0, ...durations) },
      workerRssAtReadyMB: mb(atReady.rssMB),
      workerRssIdleMB: mb(idle.rssMB),
      workerRssPeakMB: mb(rssPeak),
      workerRssAfterMB: mb(after.rssMB),
      workerVmHWMMB: mb(after.hwmMB),
      /** Processes of the worker's incarnation (its process group): 1 = the RSS is all of it. */
      workerProcesses,
      /** The worker's own /metrics every SLOTS_SAMPLE_MS: its main thread's V8 heap at the sample of the highest RSS (the rest of the RSS: the workflow thread, native memory). */
      workerMainThreadAtRssPeakMB: atRssPeak,
      activitySlots: {
        configured: Number(workerEnv.MAX_CONCURRENT_ACTIVITIES ?? NaN),
        usedPeak: slots.usedPeak ?? null,
        availableMin: slots.availableMin ?? null,
        samples: slots.samples,
        sampleEveryMs: SLOTS_SAMPLE_MS,
      },
      eventsPerZone: minMaxMean(perZone),
      singleEventsPerZone: minMaxMean(singleEvents).mean,
      failures,
      worker: {
        env: workerEnv,
        maxCachedWorkflows: workerEnv.MAX_CACHED_WORKFLOWS ?? "the SDK's default (sized from the heap)",
        logLevel: 'info',
      },
      strategy: STRATEGY,
      standIns: { zoneDowntimeMs: ZONE_DOWNTIME_MS, secretPollMs: SECRET_POLL_MS, simulatorResyncMs: RESYNC_MS, vmagentPageBytes: pages.templateBytes },
      statusPollMs: STATUS_POLL_MS,
      generation1Ms,
      setupMs,
      simulatorErrors: beds.reduce((n, b) => n + b.simulator.errors.length, 0),
      benchMs: Date.now() - started,
    };
    fs.mkdirSync(path.dirname(OUT_FILE), { recursive: true });
    fs.writeFileSync(OUT_FILE, JSON.stringify(result, null, 2) + '\n');
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    if (failures.length > 0) {
      log(`${failures.length} rollouts did not succeed: ${failures.map((f) => `${f.namespace} g${f.generation} ${f.phase}`).join(', ')}`);
      return 1;
    }
    return 0;
  } finally {
    log('stopping');
    for (const f of stops.reverse()) await f().catch(() => {});
  }
}

runHarnessMain('scale-real', main);
