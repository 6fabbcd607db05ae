// Preloaded into a child process (`node --require <this file> ...`): the pod network of the test bed
// for a process that cannot see the test's in-process pod registry (test/infra/harness/pod-network.ts).
//
// Replaces globalThis.fetch with one that sends any http URL whose host is a pod address
// (TEST-NET-2 198.51.100.0/24 or RFC 2544's 198.18.0.0/15: isPodAddress) to the pod gateway in the test process (env POD_GATEWAY_URL,
// test/infra/chaos/pod-gateway.ts): `http://<podIP>:<port><path>` → `<POD_GATEWAY_URL>/<podIP>:<port><path>`.
// Everything else goes to the original fetch unchanged. A pod URL with no gateway configured, or
// not http, is refused (a TypeError, as a refused connection surfaces), so nothing ever tries the
// unrouted address. Runs before the process's own modules, so code that captures `fetch` when it
// is created (activities/pods/service-pods.ts: `deps.fetch ?? fetch`) captures this one.
// Keep in sync with gatewayUrlFor() in pod-gateway.ts and isPodAddress() in
// test/infra/harness/pod-network.ts (a copy: this file is plain CJS; test/unit/pod-network.test.ts
// checks that the two agree, through the export below).
'use strict';

const { BlockList, isIPv4 } = require('node:net');

const POD_NETWORKS = new BlockList();
POD_NETWORKS.addSubnet('198.51.100.0', 24, 'ipv4');
POD_NETWORKS.addSubnet('198.18.0.0', 15, 'ipv4');

function isPodAddress(ip) {
  return isIPv4(ip) && POD_NETWORKS.check(ip, 'ipv4');
}
const gateway = (process.env.POD_GATEWAY_URL || '').replace(/\/+$/, '');
const originalFetch = globalThis.fetch;

function urlOf(input) {
  if (typeof input === 'string') return input;
  if (input instanceof URL) return input.href;
  return input && typeof input.url === 'string' ? input.url : String(input);
}

function podNetworkFetch(input, init) {
  const original = urlOf(input);
  let u;
  try {
    u = new URL(original);
  } catch {
    return originalFetch(input, init);
  }
  if (!isPodAddress(u.hostname)) return originalFetch(input, init);
  if (u.protocol !== 'http:')
    return Promise.reject(new TypeError(`pod network preload: connection refused: ${u.protocol} to pod ${u.host} (only http is mapped)`));
  if (!gateway) return Promise.reject(new TypeError(`pod network preload: connection refused: no POD_GATEWAY_URL for pod ${u.host}`));
  const target = `${gateway}/${u.hostname}:${u.port || '80'}${u.pathname}${u.search}`;
  if (typeof input === 'string' || input instanceof URL) return originalFetch(target, init);
  return originalFetch(new Request(target, input), init);
}

Object.defineProperty(podNetworkFetch, 'podGateway', { value: gateway });
globalThis.fetch = podNetworkFetch;
module.exports = { isPodAddress };
