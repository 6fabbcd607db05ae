// The VictoriaMetrics side of many namespaces on one machine, for bench/stack/scale-real.ts: the zone
// simulator (test/infra/simulator/simulator.ts) plays the VM operator in each namespace, as
// test/infra/simulator/environment.ts assembles it, with lighter stand-ins where the e2e bed runs
// processes (hundreds of namespaces on 2 cores):
//
//   zone <VMCluster>   no victoria-metrics process: a restart is the zone's downtime, then done
//   vmselect <VMC>     the vmselect front (./vmselect-front.ts, real request counters), its pod
//                      address; nothing reads through it (its backend is an address that refuses)
//   vmauth pod         the config-reloader only (VmauthPod configReloaderOnly): it applies the
//                      operator's gzipped Secret and publishes its content hash; no vmauth process
//   vmagent pod        one page server for every namespace: each namespace's vmagent pod address
//                      serves the /metrics page of ONE real vmagent (started once, remote-writing
//                      to 3 URLs that accept everything, its queues drained and its send counters
//                      counted), with that namespace's queue directories put in for the template's
//                      (vmagent names them after the URL: activities/vmagent/url.ts). So the
//                      worker reads vmagent's own series and labels, always drained.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type * as k8s from '@kubernetes/client-node';
import { buildQueueSample, readZoneQueues } from '../../activities/vmagent/match';
import { queueDirName, type RemoteWriteQueue } from '../../activities/vmagent/url';
import { DEFAULT_QUEUE_EMPTY_BYTES } from '../../api/limits';
import { allocatePodIP, registerPodPort } from '../../test/infra/harness/pod-network';
import { httpPost, startVmagent } from '../../test/infra/harness/vm';
import { waitFor } from '../../test/infra/harness/processes';
import { VMSELECT_POD_PORT, ZoneSimulator, type ZoneProcess } from '../../test/infra/simulator/simulator';
import { VmauthPod } from '../../test/infra/simulator/vmauth-pod';
import { startVmselectFront } from '../../test/infra/simulator/vmselect-front';

/** vmagent's default -httpListenAddr port, its pods' `http` port. */
export const VMAGENT_POD_PORT = 8429;
/** Where the vmselect fronts would forward reads: the discard port, which nothing serves here. */
const NO_BACKEND = 'http://127.0.0.1:9';

/** An HTTP server on loopback; resolves with its port. */
async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

function close(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** The remote-write queues of `urls` (index = position in the VMAgent's spec.remoteWrite). */
async function queuesOf(urls: string[]): Promise<RemoteWriteQueue[]> {
  return Promise.all(urls.map(async (url, index) => ({ index, url, dirName: await queueDirName(index, url) })));
}

export interface VmagentPages {
  /** Base URL of the remote-write sink (answers 204 to everything): `<sink>/<namespace>/<vmcluster>/api/v1/write`. */
  readonly sinkURL: string;
  /** The real vmagent's page, as scraped (bytes). */
  readonly templateBytes: number;
  /** A vmagent pod address serving the page for `urls` (`<podIP>:VMAGENT_POD_PORT`). */
  add(urls: string[]): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts the sink and ONE real vmagent writing to `templateURLs(sinkURL)` (3 URLs), pushes a sample
 * through it, and keeps its /metrics page once every queue is drained and has sent; then stops it
 * and serves that page per pod address, each with its own queue directories.
 */
export async function startVmagentPages(templateURLs: (sinkURL: string) => string[]): Promise<VmagentPages> {
  const sink = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  const sinkURL = `http://127.0.0.1:${await listen(sink)}`;
  const urls = templateURLs(sinkURL);
  const queues = await queuesOf(urls);
  const vmagent = await startVmagent({ name: 'vmagent-page-template', remoteWriteUrls: urls, extraArgs: ['-remoteWrite.flushInterval=200ms'] });
  let template: string;
  try {
    const pushed = await httpPost(`${vmagent.url}/api/v1/import/prometheus`, 'vmrollout_scale_real_probe{source="bench"} 1\n');
    if (pushed.status >= 300) throw new Error(`vmagent import: HTTP ${pushed.status} ${pushed.body}`);
    // Every queue drained and each remote write with a 2XX send: the page of a vmagent at rest.
    template = await waitFor(
      async () => {
        const page = await vmagent.metricsText();
        const sent = urls.every((_, i) => new RegExp(`^vmagent_remotewrite_requests_total\\{[^}]*url="${i + 1}:secret-url"[^}]*\\} [1-9]`, 'm').test(page));
        const reading = readZoneQueues(page, queues);
        return sent && reading.ok && reading.bytes === 0 && !reading.inBackoff ? page : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, description: 'the template vmagent to send to every remote write and drain its queues' },
    );
  } finally {
    await vmagent.stop();
  }

  const pages = new Map<string, string>(); // pod address → its page
  // The pod gateway forwards with Host `<podIP>:<podPort>`: the page of that pod.
  const server = http.createServer((req, res) => {
    const page = pages.get((req.headers.host ?? '').split(':')[0] ?? '');
    if (page === undefined || !(req.url ?? '').startsWith('/metrics')) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(page);
  });
  const port = await listen(server);
  const unregister: Array<() => void> = [];
  return {
    sinkURL,
    templateBytes: Buffer.byteLength(template),
    async add(nsURLs) {
      const own = await queuesOf(nsURLs);
      let page = template;
      for (const q of queues) page = page.split(`/${q.dirName}"`).join(`/${own[q.index]!.dirName}"`);
      const sample = buildQueueSample([{ pod: 'vmagent', reading: readZoneQueues(page, own) }], { queueEmptyBytes: DEFAULT_QUEUE_EMPTY_BYTES, at: new Date() });
      if (!sample.drained) throw new Error(`the vmagent page for ${nsURLs.join(', ')} does not read as drained: ${sample.message}`);
      const ip = allocatePodIP();
      pages.set(ip, page);
      unregister.push(registerPodPort(ip, VMAGENT_POD_PORT, port));
      return ip;
    },
    async stop() {
      for (const u of unregister) u();
      await close(server);
      await close(sink);
    },
  };
}

export interface VmNamespaceOptions {
  kubeConfig: k8s.KubeConfig;
  namespace: string;
  vmclusters: string[];
  vmagentName: string;
  vmauthName: string;
  /** The vmagent pod's address (VmagentPages.add). */
  vmagentPodIP: string;
  /** How long a zone is down during its upgrade. */
  zoneDowntimeMs: number;
  /** How often the config-reloader reads the Secret. */
  secretPollMs: number;
  /** The simulator's relist (and periodic VMAuth reconcile) interval. */
  resyncMs: number;
}

export interface VmNamespace {
  simulator: ZoneSimulator;
  stop(): Promise<void>;
}

/** One namespace's VM side (see the header), its simulator started. */
export async function startVmNamespace(o: VmNamespaceOptions): Promise<VmNamespace> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    const zones: Record<string, ZoneProcess> = {};
    const vmselectPods: Record<string, { podIP: string; url: string }> = {};
    for (const name of o.vmclusters) {
      zones[name] = { url: NO_BACKEND, restart: () => sleep(o.zoneDowntimeMs) };
      const front = await startVmselectFront({ backendURL: NO_BACKEND, name });
      const podIP = allocatePodIP();
      const unregister = registerPodPort(podIP, VMSELECT_POD_PORT, front.port);
      stops.push(async () => (unregister(), await front.stop()));
      vmselectPods[name] = { podIP, url: front.url };
    }
    const ref: { simulator?: ZoneSimulator } = {};
    const pod = new VmauthPod({
      name: `vmauth-${o.vmauthName}-0`,
      kubeConfig: o.kubeConfig,
      namespace: o.namespace,
      secretName: `vmauth-config-${o.vmauthName}`,
      dns: () => ref.simulator?.dns() ?? {},
      routesOf: (c) => ref.simulator?.routesOf(c) ?? {},
      pollMs: o.secretPollMs,
      configReloaderOnly: true,
    });
    const simulator = (ref.simulator = new ZoneSimulator({
      kubeConfig: o.kubeConfig,
      namespace: o.namespace,
      zones,
      vmselectPods,
      vmauthPods: [pod],
      vmauthName: o.vmauthName,
      vmagentEndpoint: { vmagentName: o.vmagentName, ip: o.vmagentPodIP, port: VMAGENT_POD_PORT },
      resyncMs: o.resyncMs,
    }));
    stops.push(() => pod.stop());
    await pod.start();
    await simulator.start();
    stops.push(() => simulator.stop());
    return { simulator, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
