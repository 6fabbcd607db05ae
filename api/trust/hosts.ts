// Which hosts a URL in a VMDistributedCluster may name. A URL is judged only if it is in the strict
// grammar of api/url.ts (no backslashes, percent-escapes in the host, numeric shorthands such as
// 2130706433 or 0x7f.1, whitespace): what vmrollout cannot read exactly as the operator and vmauth or
// vmagent will, it denies. The host is compared case-insensitively.
//
// Allowed without configuration: the Services of the VMDistributedCluster's own namespace `ns`,
//   <svc>                                  (resolved through the pod's search path: <svc>.<ns>.svc.cluster.local)
//   <svc>.<ns>
//   <svc>.<ns>.svc
//   <svc>.<ns>.svc.cluster.local[.]
// where <svc> is a Service name (a DNS-1035 label). A trailing dot makes a name absolute, which
// skips the search path: "<svc>." or "<svc>.<ns>.svc." are names outside the cluster.
// Otherwise the host must be in an allow list, whose entries are host names or IP addresses
// (exact, a trailing dot ignored on both sides) or "*.domain" (any name below domain).
import { isHttpURL } from '../url';

const SERVICE_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The host of `url` in canonical form (lowercase, IPv6 compressed in brackets), or undefined outside the grammar. */
export function urlHost(url: string): string | undefined {
  if (!isHttpURL(url)) return undefined;
  const authority = url.slice(url.indexOf('://') + 3).split(/[/?]/, 1)[0]!;
  const hostport = authority.slice(authority.lastIndexOf('@') + 1);
  const host = hostport.startsWith('[') ? hostport.slice(0, hostport.indexOf(']') + 1) : hostport.split(':', 1)[0]!;
  return canonicalHost(host);
}

/** `host` lowercased; an IPv6 literal compressed (the same address written two ways compares equal). */
function canonicalHost(host: string): string {
  if (!host.startsWith('[')) return host.toLowerCase();
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return host.toLowerCase(); // an allow-list entry built in code without hostEntryProblem: compared as written
  }
}

/** Whether `host` (canonical) names a Service of namespace `ns` from a pod of that namespace. */
export function isNamespaceService(host: string, ns: string): boolean {
  const dot = host.indexOf('.');
  if (dot < 0) return SERVICE_LABEL.test(host);
  const rest = host.slice(dot + 1);
  const inNamespace = rest === ns || rest === `${ns}.svc` || rest === `${ns}.svc.cluster.local` || rest === `${ns}.svc.cluster.local.`;
  return inNamespace && SERVICE_LABEL.test(host.slice(0, dot));
}

const LABEL = '[a-z0-9](?:[-a-z0-9]*[a-z0-9])?';
const NAME_OR_IPV4 = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);
/** *.domain: the domain's last label is not all digits (no wildcard over IP addresses). */
const WILDCARD = new RegExp(`^\\*\\.(?:${LABEL}\\.)*[-a-z0-9]*[a-z][-a-z0-9]*\\.?$`);

/** Why `entry` cannot be an allow-list entry, or undefined: a host name, an IPv4 address, a [IPv6] address or *.domain. */
export function hostEntryProblem(entry: string): string | undefined {
  if (entry.startsWith('[')) return isHttpURL(`http://${entry}/`) ? undefined : `${JSON.stringify(entry)} is not an [IPv6] address`;
  const e = entry.toLowerCase();
  return NAME_OR_IPV4.test(e) || WILDCARD.test(e) ? undefined : `${JSON.stringify(entry)} is not a host name, IP address or *.domain`;
}

const withoutDot = (h: string) => (h.endsWith('.') ? h.slice(0, -1) : h);

/** Whether canonical `host` is in `allow` (entries as hostEntryProblem accepts them). */
export function inAllowList(host: string, allow: readonly string[]): boolean {
  const h = withoutDot(host);
  return allow.some((entry) => {
    if (entry.startsWith('*.')) return h.endsWith(withoutDot(entry.slice(1).toLowerCase()));
    return withoutDot(canonicalHost(entry)) === h;
  });
}

/**
 * Why `url` may not be used from namespace `ns` under `allow`, or undefined when it may. The URL is
 * not quoted: it may carry credentials.
 */
export function urlHostProblem(url: string, ns: string, allow: readonly string[]): string | undefined {
  const host = urlHost(url);
  if (host === undefined) return 'is not a plain http:// or https:// URL (the strict grammar of remoteWriteURL), so its host cannot be judged';
  if (isNamespaceService(host, ns) || inAllowList(host, allow)) return undefined;
  return `names host ${JSON.stringify(host)}, which is neither a Service of namespace ${JSON.stringify(ns)} nor an allowed host`;
}
