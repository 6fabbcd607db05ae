// The trigger's prom-client metrics on a private registry (served by process/metrics-server.ts).
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export interface TriggerMetrics {
  registry: Registry;
  eventsSeen: Counter<'type'>;
  workflowsStarted: Counter<'result'>;
  signalsSent: Counter<'signal'>;
  validationFailures: Counter;
  watchRestarts: Counter<'reason'>;
  reconcileErrors: Counter;
  workflowsCancelled: Counter;
  driftedFields: Gauge<'namespace' | 'name'>;
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
      help: 'Informer restarts by the watchdog (of the VMDistributedCluster watch and the VM object watches for drift), by reason (error, idle, relist).',
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
    driftedFields: new Gauge({
      name: 'vmrollout_trigger_drifted_fields',
      help: 'Fields vmrollout applied to the VM objects of a VMDistributedCluster whose live value changed since (condition Drifted).',
      labelNames: ['namespace', 'name'],
      registers,
    }),
  };
}
