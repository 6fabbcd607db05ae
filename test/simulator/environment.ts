/**
 * The VictoriaMetrics side of the e2e tests and `make demo`: real processes on loopback plus
 * the ZONE SIMULATOR (./simulator.ts), which plays the VM operator's contract for them.
 *
 *   zone <VMCluster name>  real victoria-metrics single node (stands in for the zone's vmselect + vminsert)
 *   vmagent                real vmagent remote-writing every sample to every zone's /api/v1/write
 *   vmauth                 real vmauth; its config is rendered by the simulator from VMAuth/VMUser
 *   EndpointSlice vmagent-<name>  → the real vmagent (port `http`), for vmrollout's queue checks
 */
import * as os from 'node:os';
import * as k8s from '@kubernetes/client-node';
import { freePort } from '../harness/ports';
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
  /** IP the vmagent EndpointSlice points at (and vmagent listens on, besides 127.0.0.1). */
  vmagentEndpointIP: string;
  vmauth: VmauthHandle;
  simulator: ZoneSimulator;
  stop(): Promise<void>;
}

const PLACEHOLDER_VMAUTH_CONFIG = {
  // vmauth refuses an empty config; this user matches nothing until the simulator renders the VMAuth.
  users: [{ username: 'zone-simulator-placeholder', password: 'not-rendered-yet', url_prefix: 'http://127.0.0.1:9/' }],
};

function isLoopbackRejected(err: unknown): boolean {
  const e = err as { code?: number; body?: unknown; message?: string };
  return e?.code === 422 || /loopback|Invalid value/.test(String(e?.body ?? e?.message ?? ''));
}

/**
 * The address for the vmagent EndpointSlice. kube-apiserver rejects loopback addresses
 * (127.0.0.0/8) in EndpointSlices, so unless a dry-run create with 127.0.0.1 passes, this
 * is the first non-internal IPv4 address of this machine (VMROLLOUT_VMAGENT_ENDPOINT_IP overrides).
 */
export async function chooseVmagentEndpointIP(kc: k8s.KubeConfig, namespace: string): Promise<string> {
  if (process.env.VMROLLOUT_VMAGENT_ENDPOINT_IP) return process.env.VMROLLOUT_VMAGENT_ENDPOINT_IP;
  const api = kc.makeApiClient(k8s.DiscoveryV1Api);
  try {
    await api.createNamespacedEndpointSlice({
      namespace,
      dryRun: 'All',
      body: {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'loopback-probe', namespace },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 1 }],
        endpoints: [{ addresses: ['127.0.0.1'] }],
      },
    });
    return '127.0.0.1';
  } catch (err) {
    if (!isLoopbackRejected(err)) throw err;
  }
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('kube-apiserver rejects 127.0.0.1 in EndpointSlices and this machine has no non-loopback IPv4 address; set VMROLLOUT_VMAGENT_ENDPOINT_IP');
}

export async function startVmEnvironment(opts: VmEnvironmentOptions): Promise<VmEnvironment> {
  const started: Array<{ stop(): Promise<void> }> = [];
  const stopAllStarted = async () => {
    for (const s of [...started].reverse()) await s.stop().catch(() => {});
  };
  try {
    const zones: Record<string, VmProcessHandle> = {};
    for (const name of opts.vmclusters) {
      zones[name] = await startVictoriaMetrics({ name: `zone-${name}` });
      started.push(zones[name]);
    }
    const remoteWriteURLs = Object.fromEntries(opts.vmclusters.map((n) => [n, `${zones[n]!.url}/api/v1/write`]));
    const ip = await chooseVmagentEndpointIP(opts.kubeConfig, opts.namespace);
    const vmagentPort = await freePort();
    const vmagent = await startVmagent({
      name: `vmagent-${opts.vmagentName}`,
      port: vmagentPort,
      remoteWriteUrls: opts.vmclusters.map((n) => remoteWriteURLs[n]!),
      extraArgs: [
        ...(ip === '127.0.0.1' ? [] : [`-httpListenAddr=${ip}:${vmagentPort}`]),
        '-remoteWrite.flushInterval=200ms',
      ],
    });
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
