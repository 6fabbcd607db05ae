// Whether an EndpointSlice address may be a pod's address the worker connects to. A slice is
// written by whoever may write EndpointSlices; its address decides where the worker sends a
// request (with credentials, for vmagent). No pod has a loopback, unspecified, link-local,
// multicast or broadcast address, and the cloud metadata services live at link-local and a few
// fixed addresses: a request there reads the worker's node identity, never a pod's /metrics. Pure;
// addresses are parsed by node's `net` (isIP, BlockList), never by hand.
import { BlockList, isIP } from 'node:net';

/** The address types a pod's endpoint can have (FQDN names a host to resolve: never a pod). */
export const POD_ADDRESS_TYPES = new Set(['IPv4', 'IPv6']);

// BlockList matches an IPv4 rule against the IPv4-mapped IPv6 form too (::ffff:127.0.0.1 is
// 127.0.0.1), so each IPv4 range is listed once.
const REFUSED: Array<[network: string, prefix: number, family: 'ipv4' | 'ipv6', what: string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified ("this network")'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata 169.254.169.254)'],
  ['100.100.100.200', 32, 'ipv4', 'a cloud metadata service'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['255.255.255.255', 32, 'ipv4', 'broadcast'],
  // ::/96 holds :: (unspecified), ::1 (loopback) and the deprecated IPv4-compatible ::a.b.c.d.
  ['::', 96, 'ipv6', 'unspecified, loopback or IPv4-compatible'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
  ['fd00:ec2::254', 128, 'ipv6', 'a cloud metadata service'],
  // NAT64 hands an embedded IPv4 address (any of the above) to the IPv4 side.
  ['64:ff9b::', 96, 'ipv6', 'NAT64 (an embedded IPv4 address)'],
];

const refused = REFUSED.map(([network, prefix, family, what]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, what };
});

/**
 * Why `address`, listed in a slice of `addressType`, is no pod address to connect to (undefined: it
 * may be one). Only a literal of the slice's own family passes; zone ids (`fe80::1%eth0`) do not.
 */
export function podAddressProblem(address: string, addressType: string | undefined): string | undefined {
  if (!addressType || !POD_ADDRESS_TYPES.has(addressType)) return `address type ${JSON.stringify(addressType ?? '')} is not IPv4 or IPv6`;
  const family = isIP(address);
  const shown = JSON.stringify(address.slice(0, 64));
  if (family === 0 || address.includes('%')) return `address ${shown} is not an IP address`;
  if (`IPv${family}` !== addressType) return `address ${shown} is not an ${addressType} address`;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const hit = refused.find((r) => r.list.check(address, type));
  return hit ? `address ${shown} is ${hit.what}: no pod's` : undefined;
}
