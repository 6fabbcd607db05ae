/**
 * The VictoriaMetrics side of the e2e tests and `make demo`: real processes on loopback plus
 * the ZONE SIMULATOR (./simulator.ts), which plays the VM operator's contract for them.
 *
 *   zone <VMCluster name>  real victoria-metrics single node (stands in for the zone's vmselect + vminsert)
 *   vmagent                real vmagent remote-writing every sample to every zone's /api/v1/write
 *   vmauth                 real vmauth; its config is rendered by the simulator from VMAuth/VMUser
 *   EndpointSlice vmagent-<name>  → the real vmagent (port `http`), for vmrollout's queue checks
 *
 * Everything listens on 127.0.0.1 only. kube-apiserver refuses loopback addresses in
 * EndpointSlices, so the vmagent EndpointSlice carries POD_IP (TEST-NET-2, never routed; see
 * test/harness/pod-network.ts) and whoever scrapes it (the activities) must use podNetworkFetch,
 * which maps that address to 127.0.0.1.
 */
import * as k8s from '@kubernetes/client-node';
import { assertPodIpNotLocal, POD_IP } from '../harness/pod-network';
import { startVictoriaMetrics, startVmagent, startVmauth, type VmagentHandle, type VmauthHandle, type VmProcessHandle } from '../harness/vm';
import { ZoneSimulator } from './simulator';

export interface VmEnvironmentOptions {
  kubeConfig: k8s.KubeConfig;
  namespace: string;
  /** VMCluster names, one zone process each. */
  vmclusters: string[];
  vmagentName: string;
  vmauthName: string;
  /** See ZoneSimulatorOptions.zoneDowntimeMs. */
  zoneDowntimeMs?: number;
  log?: (msg: string) => void;
}

export interface VmEnvironment {
  zones: Record<string, VmProcessHandle>;
  /** VMCluster name → the URL the VMAgent object's spec.remoteWrite[] and zones[].remoteWriteURL use. */
  remoteWriteURLs: Record<string, string>;
  vmagent: VmagentHandle;
  /** IP the vmagent EndpointSlice points at: POD_IP, mapped to 127.0.0.1 by podNetworkFetch (vmagent listens on 127.0.0.1 only). */
  vmagentEndpointIP: string;
  vmauth: VmauthHandle;
  simulator: ZoneSimulator;
  stop(): Promise<void>;
}

const PLACEHOLDER_VMAUTH_CONFIG = {
  // vmauth refuses an empty config; this user matches nothing until the simulator renders the VMAuth.
  users: [{ username: 'zone-simulator-placeholder', password: 'not-rendered-yet', url_prefix: 'http://127.0.0.1:9/' }],
};

export async function startVmEnvironment(opts: VmEnvironmentOptions): Promise<VmEnvironment> {
  const started: Array<{ stop(): Promise<void> }> = [];
  const stopAllStarted = async () => {
    for (const s of [...started].reverse()) await s.stop().catch(() => {});
  };
  try {
    const zones: Record<string, VmProcessHandle> = {};
    for (const name of opts.vmclusters) {
      // -search.latencyOffset=0s (set by the harness): a sample is returned as soon as it is
      // searchable, not 30 s later. -search.disableCache: no response cache, so a read shows what
      // the zone holds right now (backlog samples land with past timestamps).
      zones[name] = await startVictoriaMetrics({ name: `zone-${name}`, extraArgs: ['-search.disableCache'] });
      started.push(zones[name]);
    }
    const remoteWriteURLs = Object.fromEntries(opts.vmclusters.map((n) => [n, `${zones[n]!.url}/api/v1/write`]));
    assertPodIpNotLocal();
    const ip = POD_IP;
    const vmagent = await startVmagent({
      name: `vmagent-${opts.vmagentName}`,
      remoteWriteUrls: opts.vmclusters.map((n) => remoteWriteURLs[n]!),
      // vmagent_remotewrite_pending_data_bytes counts only the blocks still in the queue: a block a
      // remote-write worker has taken and is retrying (exponential backoff, up to
      // -remoteWrite.retryMaxInterval, default 1m) is NOT counted. After an outage the last blocks
      // of a zone's backlog sit in those workers, so "pending 0" can come while that data is still
      // undelivered for up to retryMaxInterval. The retry interval is fixed at 2 s here, and the
      // rollouts' strategy.queueDrainedFor (6 s) is longer than retryMaxInterval + the zone's
      // ingestion-to-search lag (~2 s, up to ~4 s right after a restart with a backlog), so
      // "drained for queueDrainedFor" really means "delivered and searchable".
      extraArgs: ['-remoteWrite.flushInterval=200ms', '-remoteWrite.retryMinInterval=2s', '-remoteWrite.retryMaxInterval=2s'],
    });
    const vmagentPort = vmagent.port;
    started.push(vmagent);
    const vmauth = await startVmauth({ name: `vmauth-${opts.vmauthName}`, config: PLACEHOLDER_VMAUTH_CONFIG });
    started.push(vmauth);
    const simulator = new ZoneSimulator({
      kubeConfig: opts.kubeConfig,
      namespace: opts.namespace,
      zones,
      vmauth,
      vmauthName: opts.vmauthName,
      vmagentEndpoint: { vmagentName: opts.vmagentName, ip, port: vmagentPort },
      zoneDowntimeMs: opts.zoneDowntimeMs,
      log: opts.log,
    });
    await simulator.start();
    started.push(simulator);
    return { zones, remoteWriteURLs, vmagent, vmagentEndpointIP: ip, vmauth, simulator, stop: stopAllStarted };
  } catch (err) {
    await stopAllStarted();
    throw err;
  }
}
