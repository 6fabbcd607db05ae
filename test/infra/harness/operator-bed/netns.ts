/**
 * The bed's network and mount namespace, as ./in-netns.sh sets it up: only loopback, POD_CIDR routed
 * locally (a process binds a pod IP and is reached there), and a private /etc/hosts in which the
 * bed maps the operator's service names (`<svc>.<ns>.svc`) to pod IPs, as cluster DNS would.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';

const ENV = 'VMROLLOUT_OPERATOR_NETNS';

/** kwok's pod CIDR of this namespace (set by ./in-netns.sh). */
export function podCidr(): string {
  const cidr = process.env[ENV];
  if (!cidr)
    throw new Error(
      `not inside the operator bed's network namespace (${ENV} unset): run through test/infra/harness/operator-bed/in-netns.sh (make test-operator)`,
    );
  return cidr;
}

/**
 * Throws unless this process runs inside the bed's namespace: the variable in-netns.sh sets, and no
 * network interface but loopback (so nothing the bed starts can reach an address outside, and the
 * /etc/hosts written here is the private one).
 */
export function assertInBedNamespace(): void {
  podCidr();
  const ifaces = Object.keys(os.networkInterfaces());
  if (ifaces.some((i) => i !== 'lo')) throw new Error(`the operator bed's network namespace has only loopback, this one has ${ifaces.join(', ')}`);
}

const HOSTS = '/etc/hosts';
const BASE = '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n';

/**
 * Rewrites the private /etc/hosts in place (the bind mount stays): `names` host → IPs. Go programs
 * (vmauth) re-read it when it changed, at most every 5 s, as cluster DNS answers have a 5 s TTL.
 */
export function writeHosts(names: Record<string, string[]>): void {
  assertInBedNamespace();
  const lines = Object.entries(names).flatMap(([host, ips]) => ips.map((ip) => `${ip} ${host}`));
  fs.writeFileSync(HOSTS, BASE + lines.map((l) => `${l}\n`).join(''));
}
