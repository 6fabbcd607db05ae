/**
 * The one way the tests and `make demo` give "pods" an address.
 *
 * kube-apiserver refuses loopback addresses (127.0.0.0/8) in EndpointSlices, but test traffic
 * may only go to loopback. So a pod's EndpointSlice carries an address of a network that is never
 * routed and not on any interface of the test machines: TEST-NET-2 (198.51.100.0/24, RFC 5737,
 * documentation only), and once its 253 pod addresses are given out (bench/stack/scale-real.ts
 * has 800 pods) RFC 2544's benchmarking network 198.18.0.0/15; isPodAddress says which. Whatever
 * talks to pods (the activities' scrapes) uses podNetworkFetch, which maps the pod address to
 * 127.0.0.1, where the real process listens. Discovery, ports, readiness, scrape and parsing stay
 * real; only the address is mapped. No request ever leaves loopback.
 *
 * Two ways a pod address is mapped (http or https; a certificate is then checked against 127.0.0.1):
 *  - POD_IP (198.51.100.10), the legacy shared address: `http://POD_IP:<port>` → `http://127.0.0.1:<port>`
 *    (the EndpointSlice carries the real loopback port; used for the vmagent pod).
 *  - the POD REGISTRY: allocatePodIP() hands out a distinct address per pod (198.51.100.11 ...
 *    198.51.100.254, then 198.18.0.1 ... 198.19.255.254),
 *    and registerPodPort(podIP, podPort, loopbackPort) maps `<podIP>:<podPort>` to
 *    `127.0.0.1:<loopbackPort>`. So every pod can listen on the same well-known pod port (vmauth
 *    8427, its config-reloader 8435, vmselect 8481), as real pods do, while the processes behind
 *    them listen on distinct loopback ports. A registered (podIP, port) wins over the POD_IP rule.
 * A URL on a pod address that is not mapped is refused (like a connection refused).
 *
 * test/infra/chaos/pod-network-preload.cjs (plain CJS, for child processes) keeps its own copy of
 * isPodAddress; test/unit/pod-network.test.ts checks that both agree.
 */
import { BlockList, isIPv4 } from 'node:net';
import * as os from 'node:os';

/** The legacy shared pod address (TEST-NET-2, RFC 5737): POD_IP:<port> maps to 127.0.0.1:<port>. */
export const POD_IP = '198.51.100.10';

const POD_NETWORKS = new BlockList();
POD_NETWORKS.addSubnet('198.51.100.0', 24, 'ipv4'); // TEST-NET-2 (RFC 5737)
POD_NETWORKS.addSubnet('198.18.0.0', 15, 'ipv4'); // benchmarking (RFC 2544)

/** Whether `ip` (a host name as URL.hostname gives it) is an address of the pod network stand-in. */
export function isPodAddress(ip: string): boolean {
  return isIPv4(ip) && POD_NETWORKS.check(ip, 'ipv4');
}

const registry = new Map<string, number>(); // `${podIP}:${podPort}` → loopback port
const allocated = new Set<string>();
/** 198.51.100.11 .. .254 (TEST-NET-2 below .11: POD_IP and room), then the 131,070 hosts of 198.18.0.0/15. */
const POOL: Array<{ first: number; last: number }> = [
  { first: ipNumber('198.51.100.11'), last: ipNumber('198.51.100.254') },
  { first: ipNumber('198.18.0.1'), last: ipNumber('198.19.255.254') },
];
let pool = 0;
let next = POOL[0]!.first;

function ipNumber(ip: string): number {
  return ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function ipString(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** A pod address nobody in this process has been given yet: TEST-NET-2's first, then RFC 2544's. */
export function allocatePodIP(): string {
  while (pool < POOL.length) {
    const range = POOL[pool]!;
    if (next > range.last) {
      next = POOL[++pool]?.first ?? 0;
      continue;
    }
    const ip = ipString(next++);
    if (!allocated.has(ip)) {
      allocated.add(ip);
      return ip;
    }
  }
  throw new Error('allocatePodIP: pod addresses exhausted (TEST-NET-2 and 198.18.0.0/15)');
}

/**
 * Maps `<podIP>:<podPort>` to `127.0.0.1:<loopbackPort>`. Returns the function that removes the
 * mapping (a pod that is gone: its address no longer answers). Re-registering replaces the mapping.
 */
export function registerPodPort(podIP: string, podPort: number, loopbackPort: number): () => void {
  if (!isPodAddress(podIP)) throw new Error(`registerPodPort: ${podIP} is not a pod address (TEST-NET-2 or 198.18.0.0/15)`);
  const key = `${podIP}:${podPort}`;
  registry.set(key, loopbackPort);
  return () => {
    if (registry.get(key) === loopbackPort) registry.delete(key);
  };
}

/** The loopback port behind `<podIP>:<podPort>`, if registered. */
export function lookupPodPort(podIP: string, podPort: number): number | undefined {
  return registry.get(`${podIP}:${podPort}`);
}

/** Every registered mapping (diagnostics). */
export function podRegistry(): Array<{ podIP: string; podPort: number; loopbackPort: number }> {
  return [...registry.entries()].map(([k, loopbackPort]) => {
    const i = k.lastIndexOf(':');
    return { podIP: k.slice(0, i), podPort: Number(k.slice(i + 1)), loopbackPort };
  });
}

/**
 * Rewrites a pod URL to its loopback URL: a registered `<podIP>:<port>`, else `POD_IP:<port>` to
 * `127.0.0.1:<port>`; anything else is returned unchanged.
 */
export function podToLoopback(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || !isPodAddress(u.hostname)) return url;
  const port = Number(u.port || 80);
  const mapped = lookupPodPort(u.hostname, port);
  if (mapped !== undefined) {
    u.hostname = '127.0.0.1';
    u.port = String(mapped);
    return u.href;
  }
  if (u.hostname === POD_IP) {
    u.hostname = '127.0.0.1';
    return u.href;
  }
  return url;
}

function urlOf(input: Parameters<typeof fetch>[0]): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/**
 * A `fetch` for createActivities({ fetch }) / startWorker(cfg, { fetch }): pod address → loopback
 * (see the header); a pod address with nothing registered is refused, and so is any non-loopback URL.
 */
export const podNetworkFetch: typeof fetch = (input, init) => {
  const original = urlOf(input);
  const url = podToLoopback(original);
  const host = new URL(url).hostname;
  if (isPodAddress(host)) {
    return Promise.reject(new TypeError(`podNetworkFetch: connection refused: no pod listens at ${new URL(original).host} (pod network registry)`));
  }
  if (!/^127\.\d+\.\d+\.\d+$/.test(host) && host !== 'localhost' && host !== '[::1]') {
    return Promise.reject(new Error(`podNetworkFetch: refusing ${url}: test traffic goes to loopback only`));
  }
  return fetch(url, init);
};

/** Throws if a pod address (either network) is on one of this machine's interfaces (then it would not be a stand-in address). */
export function assertPodIpNotLocal(): void {
  for (const [name, addrs] of Object.entries(os.networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (isPodAddress(a.address))
        throw new Error(
          `pod address ${a.address} (TEST-NET-2 or 198.18.0.0/15) is configured on interface ${name}; the pod network stand-in needs it unrouted`,
        );
    }
  }
}
