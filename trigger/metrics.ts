// prom-client metrics on a private registry, served on /metrics with /healthz.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

export interface TriggerMetrics {
  registry: Registry;
  eventsSeen: Counter<'type'>;
  workflowsStarted: Counter<'result'>;
  signalsSent: Counter<'signal'>;
  validationFailures: Counter;
  watchRestarts: Counter<'reason'>;
  reconcileErrors: Counter;
  workflowsCancelled: Counter;
}

export function createMetrics(opts: { defaultMetrics?: boolean } = {}): TriggerMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'vmrollout_trigger_' });
  const registers = [registry];
  return {
    registry,
    eventsSeen: new Counter({
      name: 'vmrollout_trigger_events_total',
      help: 'VMDistributedCluster watch events seen, by type (add, update, delete).',
      labelNames: ['type'],
      registers,
    }),
    workflowsStarted: new Counter({
      name: 'vmrollout_trigger_workflows_started_total',
      help: 'Rollout workflow start requests, by result (started, existing: already running or closed).',
      labelNames: ['result'],
      registers,
    }),
    signalsSent: new Counter({
      name: 'vmrollout_trigger_signals_sent_total',
      help: 'Signals sent to rollout workflows, by signal name.',
      labelNames: ['signal'],
      registers,
    }),
    validationFailures: new Counter({
      name: 'vmrollout_trigger_validation_failures_total',
      help: 'Generations whose spec failed validation (reported as Invalid).',
      registers,
    }),
    watchRestarts: new Counter({
      name: 'vmrollout_trigger_watch_restarts_total',
      help: 'Informer restarts by the watchdog, by reason (error, idle, relist).',
      labelNames: ['reason'],
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'vmrollout_trigger_reconcile_errors_total',
      help: 'Reconciliations that failed and were retried.',
      registers,
    }),
    workflowsCancelled: new Counter({
      name: 'vmrollout_trigger_workflows_cancelled_total',
      help: 'Rollout workflows cancelled because their object was deleted.',
      registers,
    }),
  };
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `/metrics` from `registry`, `/healthz` (liveness: 200 while `probes.live()`) and `/readyz`
 * (readiness: 200 while `probes.ready()`, e.g. the watch listed and is not stale); else 503.
 */
export async function startMetricsServer(
  port: number,
  registry: Registry,
  probes: { live?: () => boolean; ready?: () => boolean } = {},
  host = '0.0.0.0',
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    if (url === '/metrics') {
      registry
        .metrics()
        .then((body) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(body))
        .catch((err: unknown) => res.writeHead(500).end(String(err)));
      return;
    }
    if (url === '/healthz' || url === '/readyz') {
      const probe = url === '/healthz' ? probes.live : probes.ready;
      const ok = probe ? probe() : true;
      res.writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain' }).end(ok ? 'ok\n' : 'unhealthy\n');
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
