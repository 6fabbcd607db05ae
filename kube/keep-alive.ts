// Keep-alive connections for a KubeConfig's requests.
//
// @kubernetes/client-node 1.x asks KubeConfig.createAgent(cluster, options) for an agent on EVERY
// request (API clients: applySecurityAuthentication; Watch and fetch: applyToHTTPSOptions), and
// createAgent returns a new https.Agent each time: every request opens a new TCP + TLS connection.
// Under a burst that makes the API server time out (docs/benchmarks.md). Here createAgent hands out
// one keep-alive agent per distinct set of agent options instead.
//
// Why caching is correct: the options come from the current cluster and user only (CA, client
// cert/key, skipTLSVerify → rejectUnauthorized, tlsServerName → servername), read afresh on every
// request (files included). The cache key is a fingerprint of the cluster (name, server) and of
// those options' CONTENT, so another cluster or context, or a rotated CA or client certificate on
// disk, gets its own agent; agents no longer asked for are retired (least recently used first).
// Tokens are headers, not agent options: a rotated token needs no new agent.
//
// Not cached: a cluster with a proxyUrl (client-node builds proxy agents whose keep-alive handling
// is theirs; left per request as before), and options this module cannot fingerprint.
//
// Used by the worker (every KubeConfig it is given) and the trigger (the one it loads).
import { createHash } from 'node:crypto';
import type * as http from 'node:http';
import * as k8s from '@kubernetes/client-node';

type AgentFactory = (cluster: k8s.Cluster | null, options: Record<string, unknown>) => http.Agent;

/** Agents kept per KubeConfig; a rotation or a context switch makes a few at most. */
const MAX_AGENTS = 4;

const APPLIED = Symbol.for('vmrollout.keepAliveAgent');

/** A stable text for an agent option value, or undefined when it cannot be fingerprinted. */
function fingerprintValue(v: unknown): string | undefined {
  if (v === undefined || v === null) return '';
  if (typeof v === 'boolean' || typeof v === 'number') return JSON.stringify(v);
  if (typeof v === 'string' || Buffer.isBuffer(v)) return `sha256:${createHash('sha256').update(v).digest('hex')}`;
  if (Array.isArray(v)) {
    const parts = v.map(fingerprintValue);
    return parts.every((p) => p !== undefined) ? `[${parts.join(',')}]` : undefined;
  }
  return undefined;
}

/** Pure: the cache key of one createAgent call, or undefined when it must not be cached. */
export function agentKey(
  cluster: Pick<k8s.Cluster, 'name' | 'server' | 'proxyUrl' | 'skipTLSVerify'> | null,
  options: Record<string, unknown>,
): string | undefined {
  if (!cluster || cluster.proxyUrl) return undefined;
  const parts = [`cluster=${JSON.stringify([cluster.name, cluster.server, !!cluster.skipTLSVerify])}`];
  for (const k of Object.keys(options).sort()) {
    if (options[k] === undefined) continue;
    const f = fingerprintValue(options[k]);
    if (f === undefined) return undefined;
    parts.push(`${k}=${f}`);
  }
  return parts.join(';');
}

/** No new socket is kept once a request ends; idle ones close now. In-flight requests finish. */
function retire(agent: http.Agent): void {
  agent.keepSocketAlive = () => false;
  for (const sockets of Object.values(agent.freeSockets)) for (const s of sockets ?? []) s.destroy();
}

/**
 * Makes `kc` answer every request with a shared keep-alive agent (one per distinct cluster and
 * agent options; see the header). Idempotent; returns `kc`.
 */
export function withKeepAliveAgent<K extends k8s.KubeConfig>(kc: K): K {
  const target = kc as unknown as { createAgent: AgentFactory; [APPLIED]?: true };
  if (target[APPLIED]) return kc;
  const original: AgentFactory = target.createAgent.bind(kc);
  // Insertion order = least recently used first.
  const agents = new Map<string, http.Agent>();
  target.createAgent = (cluster, options) => {
    const key = agentKey(cluster, options);
    if (key === undefined) return original(cluster, options);
    const cached = agents.get(key);
    if (cached) {
      agents.delete(key);
      agents.set(key, cached);
      return cached;
    }
    // client-node's own factory (https, or http for an http: server with skipTLSVerify), with
    // keepAlive: it keeps the sockets of finished requests for the next ones.
    const agent = original(cluster, { ...options, keepAlive: true });
    agents.set(key, agent);
    // Options that changed (a rotated CA or client certificate, another context) leave agents
    // nobody asks for any more: the least recently used beyond MAX_AGENTS is retired.
    for (const [k, a] of agents) {
      if (agents.size <= MAX_AGENTS) break;
      agents.delete(k);
      retire(a);
    }
    return agent;
  };
  target[APPLIED] = true;
  return kc;
}

/** The KubeConfig the trigger uses when none is given: the default one (in-cluster, $KUBECONFIG, ~/.kube/config), on keep-alive agents. */
export function defaultKubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  return withKeepAliveAgent(kc);
}
