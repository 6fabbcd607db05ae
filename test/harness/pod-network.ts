/**
 * The one way the tests and `make demo` give "pods" an address.
 *
 * kube-apiserver refuses loopback addresses (127.0.0.0/8) in EndpointSlices, but test traffic
 * may only go to loopback. So a pod's EndpointSlice carries POD_IP, a TEST-NET-2 address
 * (RFC 5737: documentation only, never routed, and not on any interface of the test machines),
 * and whatever talks to pods (the activities' vmagent scrapes) uses podNetworkFetch, which maps
 * `http://<POD_IP>:<port>` to `http://127.0.0.1:<port>`, where the real process listens.
 * Discovery, ports, readiness, scrape and parsing stay real; only the address is mapped.
 * No request ever leaves loopback: a URL on POD_IP that is not mapped is refused.
 */
import * as os from 'node:os';

/** The address every "pod" gets in EndpointSlices (TEST-NET-2, RFC 5737). */
export const POD_IP = '198.51.100.10';

/** Rewrites `http://POD_IP:` to `http://127.0.0.1:`; anything else is returned unchanged. */
export function podToLoopback(url: string): string {
  return url.startsWith(`http://${POD_IP}:`) ? `http://127.0.0.1:${url.slice(`http://${POD_IP}:`.length)}` : url;
}

function urlOf(input: Parameters<typeof fetch>[0]): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/** A `fetch` for createActivities({ fetch }) / startWorker(cfg, { fetch }): pod address → loopback; non-loopback URLs are refused. */
export const podNetworkFetch: typeof fetch = (input, init) => {
  const url = podToLoopback(urlOf(input));
  const host = new URL(url).hostname;
  if (!/^127\.\d+\.\d+\.\d+$/.test(host) && host !== 'localhost' && host !== '[::1]') {
    return Promise.reject(new Error(`podNetworkFetch: refusing ${url}: test traffic goes to loopback only`));
  }
  return fetch(url, init);
};

/** Throws if POD_IP is on one of this machine's interfaces (then it would not be a stand-in address). */
export function assertPodIpNotLocal(): void {
  for (const [name, addrs] of Object.entries(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.address === POD_IP) throw new Error(`POD_IP ${POD_IP} is configured on interface ${name}; pick another TEST-NET address`);
  }
}
