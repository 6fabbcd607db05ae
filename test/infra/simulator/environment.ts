/**
 * The VictoriaMetrics side of the e2e tests and `make demo`: real processes on loopback plus
 * the ZONE SIMULATOR (./simulator.ts), which plays the VM operator for them.
 *
 *   zone <VMCluster name>   real victoria-metrics single node (stands in for the zone's vmstorage + vminsert)
 *   vmselect <VMCluster>    a front with real vmselect paths and request counters (./vmselect-front.ts)
 *                           in front of the zone process; EndpointSlice vmselect-<vmc> (port http 8481)
 *   zone <VMSingle name>    real victoria-metrics single node, the VMSingle's one pod itself (it serves
 *                           /prometheus/api/v1/... and counts its requests: no front); EndpointSlice
 *                           vmsingle-<vms> (port http 8429)
 *   vmagent                 real vmagent remote-writing every sample to every zone's /api/v1/write
 *   vmauth pods             N real vmauth processes, each with a config-reloader stand-in
 *                           (./vmauth-pod.ts) that applies the operator's config Secret after the
 *                           pod's propagation delay; EndpointSlice vmauth-<name> (port http 8427)
 *   EndpointSlice vmagent-<name>  → the real vmagent (port `http`), for vmrollout's queue checks
 *
 * Everything listens on 127.0.0.1 only. kube-apiserver refuses loopback addresses in
 * EndpointSlices: the vmagent EndpointSlice carries POD_IP with vmagent's loopback port, and every
 * other pod has its own TEST-NET-2 address in the pod network registry (test/infra/harness/pod-network.ts);
 * whoever scrapes pods (the activities) must use podNetworkFetch.
 */
import * as k8s from '@kubernetes/client-node';
import { allocatePodIP, assertPodIpNotLocal, POD_IP, registerPodPort } from '../harness/pod-network';
import { startVictoriaMetrics, startVmagent, type VmagentHandle, type VmProcessHandle } from '../harness/vm';
import { VMSELECT_POD_PORT, VMSINGLE_POD_PORT, ZoneSimulator } from './simulator';
import { startServiceProxy } from './service-proxy';
import { VmauthPod } from './vmauth-pod';
import { startVmselectFront, type VmselectFront } from './vmselect-front';

/** Per vmauth pod (index = pod number). */
export interface VmauthPodOptions {
  /** Kubelet's Secret volume delay for this pod (default: VmEnvironmentOptions.configPropagationDelayMs). */
  configPropagationDelayMs?: number;
  /** An old config-reloader: no configreloader_reload_content_hash metric. */
  noContentHashMetric?: boolean;
}

export interface VmEnvironmentOptions {
  kubeConfig: k8s.KubeConfig;
  namespace: string;
  /** VMCluster names, one zone process each. */
  vmclusters: string[];
  /** VMSingle names, one zone process each (names unique across vmclusters and vmsingles). */
  vmsingles?: string[];
  vmagentName: string;
  /** More VMAgents (spec.zones[].vmagent): each a real vmagent writing to every zone, with its EndpointSlice. */
  zoneVmagents?: string[];
  vmauthName: string;
  /** See ZoneSimulatorOptions.zoneDowntimeMs. */
  zoneDowntimeMs?: number;
  /** Number of vmauth pods. Default 1. */
  vmauthPods?: number;
  /** Kubelet's Secret volume delay for every vmauth pod. Default 0. */
  configPropagationDelayMs?: number;
  /** Per pod overrides (index = pod number). */
  vmauthPodOptions?: VmauthPodOptions[];
  /** See ZoneSimulatorOptions (the operator's WaitForConfigReloadHash poll interval / timeout). */
  configReloadWaitIntervalMs?: number;
  configReloadWaitTimeoutMs?: number;
  log?: (msg: string) => void;
}

export interface VmEnvironment {
  /** VMCluster or VMSingle name → its zone process. */
  zones: Record<string, VmProcessHandle>;
  /** VMCluster name → its vmselect front (loopback) and pod address. */
  vmselects: Record<string, VmselectFront & { podIP: string }>;
  /** VMSingle name → its pod address (the zone process, at VMSINGLE_POD_PORT). */
  vmsinglePods: Record<string, { podIP: string }>;
  /**
   * VMCluster or VMSingle name → the URL the VMAgent object's spec.remoteWrite[] and zones[].remoteWriteURL use
   * (a VMSingle: its Service, `http://vmsingle-<name>.<ns>.svc:8429/api/v1/write`, reached through the
   * Service network proxy, ./service-proxy.ts); the vmagents write to every zone in the order vmclusters, then vmsingles.
   */
  remoteWriteURLs: Record<string, string>;
  vmagent: VmagentHandle;
  /** The zoneVmagents by VMAgent name. */
  zoneVmagents: Record<string, VmagentHandle>;
  /** IP the vmagent EndpointSlice points at: POD_IP, mapped to 127.0.0.1 by podNetworkFetch (vmagent listens on 127.0.0.1 only). */
  vmagentEndpointIP: string;
  /** The vmauth pods. */
  vmauthPods: VmauthPod[];
  /** The first vmauth pod's process (reads go through any pod; this is the one the traffic uses by default). */
  vmauth: VmauthPod['vmauth'];
  simulator: ZoneSimulator;
  stop(): Promise<void>;
}

/**
 * The flags the environment's vmagent runs with, beyond its URLs and paths.
 *
 * vmagent_remotewrite_pending_data_bytes counts only the blocks still in the queue: a block a
 * remote-write worker has taken and is retrying (exponential backoff, up to
 * -remoteWrite.retryMaxInterval, default 1m) is not in it. After an outage the last blocks of
 * a zone's backlog sit in those workers; the queue wait counts them from vmagent's send
 * counters and waits them out. The retry interval is fixed at 2 s here so that this takes
 * seconds, not up to a minute per zone; the rollouts' strategy.queueDrainedFor (6 s) exceeds
 * the zone's ingestion-to-search lag (~2 s, up to ~4 s right after a restart with a backlog),
 * so "drained for queueDrainedFor" means "delivered and searchable".
 */
export const VMAGENT_ARGS: readonly string[] = ['-remoteWrite.flushInterval=200ms', '-remoteWrite.retryMinInterval=2s', '-remoteWrite.retryMaxInterval=2s'];

export async function startVmEnvironment(opts: VmEnvironmentOptions): Promise<VmEnvironment> {
  const started: Array<{ stop(): Promise<void> }> = [];
  const stopAllStarted = async () => {
    for (const s of [...started].reverse()) await s.stop().catch(() => {});
  };
  try {
    assertPodIpNotLocal();
    const zones: Record<string, VmProcessHandle> = {};
    const vmselects: VmEnvironment['vmselects'] = {};
    for (const name of opts.vmclusters) {
      // -search.latencyOffset=0s (set by the harness): a sample is returned as soon as it is
      // searchable, not 30 s later. -search.disableCache: no response cache, so a read shows what
      // the zone holds right now (backlog samples land with past timestamps).
      // -search.queryStats.minQuery*: the test's reads take less than vmselect's defaults (1 ms, 1 KiB)
      // and would never show in /api/v1/status/top_queries, the canary analysis's recent queries.
      zones[name] = await startVictoriaMetrics({
        name: `zone-${name}`,
        extraArgs: ['-search.disableCache', '-search.queryStats.minQueryDuration=0s', '-search.queryStats.minQueryMemoryUsage=0'],
      });
      started.push(zones[name]);
      const front = await startVmselectFront({ backendURL: zones[name].url, name });
      const podIP = allocatePodIP();
      const unregister = registerPodPort(podIP, VMSELECT_POD_PORT, front.port);
      started.push({ stop: async () => (unregister(), await front.stop()) });
      vmselects[name] = Object.assign(front, { podIP });
    }
    const vmsinglePods: VmEnvironment['vmsinglePods'] = {};
    for (const name of opts.vmsingles ?? []) {
      if (zones[name]) throw new Error(`zone ${name}: both a VMCluster and a VMSingle`);
      // The VMSingle's pod is the single node itself: it answers /prometheus/api/v1/... and counts
      // its requests (vm_http_requests_total{path="/api/v1/query"}, the /prometheus prefix stripped).
      zones[name] = await startVictoriaMetrics({
        name: `zone-${name}`,
        extraArgs: ['-search.disableCache', '-search.queryStats.minQueryDuration=0s', '-search.queryStats.minQueryMemoryUsage=0'],
      });
      started.push(zones[name]);
      const podIP = allocatePodIP();
      const unregister = registerPodPort(podIP, VMSINGLE_POD_PORT, zones[name].port);
      started.push({ stop: async () => unregister() });
      vmsinglePods[name] = { podIP };
    }
    const zoneNames = [...opts.vmclusters, ...(opts.vmsingles ?? [])];
    // A VMCluster zone is written at its process' loopback URL; a VMSingle at its Service
    // (vmsingle-<name>, the write service the worker matches), through the Service network proxy.
    const singleService = (n: string) => `http://vmsingle-${n}.${opts.namespace}.svc:${VMSINGLE_POD_PORT}`;
    const remoteWriteURLs = Object.fromEntries(zoneNames.map((n) => [n, `${vmsinglePods[n] ? singleService(n) : zones[n]!.url}/api/v1/write`]));
    const rwArgs = [...VMAGENT_ARGS];
    if (opts.vmsingles?.length) {
      const proxy = await startServiceProxy(Object.fromEntries(opts.vmsingles.map((n) => [singleService(n), zones[n]!.url])));
      started.push(proxy);
      // One -remoteWrite.proxyURL per -remoteWrite.url, in order (empty: direct).
      for (const n of zoneNames) rwArgs.push(`-remoteWrite.proxyURL=${vmsinglePods[n] ? proxy.url : ''}`);
    }
    const ip = POD_IP;
    const vmagent = await startVmagent({
      name: `vmagent-${opts.vmagentName}`,
      remoteWriteUrls: zoneNames.map((n) => remoteWriteURLs[n]!),
      extraArgs: rwArgs,
    });
    started.push(vmagent);
    const zoneVmagents: Record<string, VmagentHandle> = {};
    for (const name of opts.zoneVmagents ?? []) {
      const h = await startVmagent({ name: `vmagent-${name}`, remoteWriteUrls: zoneNames.map((n) => remoteWriteURLs[n]!), extraArgs: rwArgs });
      started.push(h);
      zoneVmagents[name] = h;
    }

    // The simulator is created first (the pods resolve service URLs through it), started last.
    const ref: { simulator?: ZoneSimulator } = {};
    const pods: VmauthPod[] = [];
    const n = opts.vmauthPods ?? 1;
    for (let i = 0; i < n; i++) {
      const po = opts.vmauthPodOptions?.[i] ?? {};
      const pod = new VmauthPod({
        name: `vmauth-${opts.vmauthName}-${i}`,
        kubeConfig: opts.kubeConfig,
        namespace: opts.namespace,
        secretName: `vmauth-config-${opts.vmauthName}`,
        dns: () => ref.simulator?.dns() ?? {},
        routesOf: (c) => ref.simulator?.routesOf(c) ?? {},
        propagationDelayMs: po.configPropagationDelayMs ?? opts.configPropagationDelayMs ?? 0,
        noContentHashMetric: po.noContentHashMetric,
        log: opts.log,
      });
      pods.push(pod);
    }
    const simulator = (ref.simulator = new ZoneSimulator({
      kubeConfig: opts.kubeConfig,
      namespace: opts.namespace,
      zones,
      vmselectPods: Object.fromEntries(Object.entries(vmselects).map(([k, v]) => [k, { podIP: v.podIP, url: v.url }])),
      vmsinglePods,
      vmauthPods: pods,
      vmauthName: opts.vmauthName,
      vmagentEndpoint: { vmagentName: opts.vmagentName, ip, port: vmagent.port },
      zoneVmagentEndpoints: Object.entries(zoneVmagents).map(([vmagentName, h]) => ({ vmagentName, ip, port: h.port })),
      zoneDowntimeMs: opts.zoneDowntimeMs,
      configReloadWaitIntervalMs: opts.configReloadWaitIntervalMs,
      configReloadWaitTimeoutMs: opts.configReloadWaitTimeoutMs,
      log: opts.log,
    }));
    for (const pod of pods) {
      started.push(pod);
      await pod.start();
    }
    await simulator.start();
    started.push(simulator);
    return {
      zones,
      vmselects,
      vmsinglePods,
      remoteWriteURLs,
      vmagent,
      zoneVmagents,
      vmagentEndpointIP: ip,
      vmauthPods: pods,
      vmauth: pods[0]!.vmauth,
      simulator,
      stop: stopAllStarted,
    };
  } catch (err) {
    await stopAllStarted();
    throw err;
  }
}
