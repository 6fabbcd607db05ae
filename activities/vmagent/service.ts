// The Service the VM operator (v0.74.1) gives a VMAgent, as far as scraping its pods needs it: its
// name and the scheme its pods serve. Pure.
//
// Operator facts (api/operator/v1beta1):
//   vmagent_types.go  PrefixedName() = "vmagent-<name>" (the Service's name; `spec.useLegacyNaming`
//                     makes it "<name>", which vmrollout does not follow)
//   vmextra_types.go  HTTPProtoFromFlags(extraArgs) = "https" when UseTLS(extraArgs), else "http";
//                     UseTLS = getFirstValue(extraArgs, "tls") == "true", where getFirstValue takes
//                     the value up to its first comma, trimmed and lower-cased.
// The operator uses that scheme for the VMAgent's URL, probes and VMServiceScrape endpoints
// (internal/controller/operator/factory/build/vmscrape.go).

import type { Workload } from '../pods/pod-identity';

export type Scheme = 'http' | 'https';

export function vmagentServiceName(vmagentName: string): string {
  return `vmagent-${vmagentName}`;
}

/**
 * The workloads whose pods a VMAgent's Service lists: PrefixedName() as a Deployment, a
 * StatefulSet (spec.statefulMode) or a DaemonSet (spec.daemonSetMode), shards named
 * `<PrefixedName()>-<n>` (spec.shardCount, factory/build/shard.go).
 */
export function vmagentWorkloads(vmagentName: string): Workload[] {
  const name = vmagentServiceName(vmagentName);
  return [
    { kind: 'Deployment', name, sharded: true },
    { kind: 'StatefulSet', name, sharded: true },
    { kind: 'DaemonSet', name },
  ];
}

// vmagent parses -tls with Go's strconv.ParseBool (one value per -httpListenAddr): these are the
// values it reads as true or false, lower-cased as the operator compares them.
const TLS_ON = new Set(['true', '1', 't']);
const TLS_OFF = new Set(['', 'false', '0', 'f']);

export type SchemeResult = { ok: true; scheme: Scheme } | { ok: false; message: string };

/**
 * The scheme of the VMAgent's pods from its spec.extraArgs: the operator's rule (`tls: "true"` →
 * https), and https too for the other values vmagent reads as true ("1", "t"), for which the
 * operator would say http while the pods serve TLS: credentials never go to them in clear text.
 * A value neither side reads as a boolean is a problem, not a guess.
 */
export function vmagentScheme(extraArgs: unknown): SchemeResult {
  const raw = extraArgs && typeof extraArgs === 'object' ? (extraArgs as Record<string, unknown>).tls : undefined;
  if (raw === undefined) return { ok: true, scheme: 'http' };
  if (typeof raw !== 'string') return { ok: false, message: `spec.extraArgs.tls is not a string (${JSON.stringify(raw)})` };
  const first = raw.split(',')[0]!.trim().toLowerCase();
  if (TLS_ON.has(first)) return { ok: true, scheme: 'https' };
  if (TLS_OFF.has(first)) return { ok: true, scheme: 'http' };
  return { ok: false, message: `spec.extraArgs.tls ${JSON.stringify(raw)} is not a boolean: cannot tell whether its pods serve TLS` };
}
