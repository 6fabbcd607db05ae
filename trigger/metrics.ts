// The trigger's prom-client metrics on a private registry (served by process/metrics-server.ts).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ROLLOUT_PHASE, ZONE_OUT_OF_READS, ZONE_STEP, statusSeries, type StatusSeries } from './status-metrics';
import type { VmdcObject } from '../kube/vmdc-object';
import { packageVersion, registerBuildInfo } from '../process/build-info';

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
  /** From a watch event showing a generation not yet observed to its workflow's start request completed. */
  startDuration: Histogram;
  /** Shows the object's status in the per-object state gauges (status-metrics.ts); `gone`: removes its series. */
  objectStatus(obj: VmdcObject, gone: boolean): void;
}

export function createMetrics(opts: { defaultMetrics?: boolean; version?: string } = {}): TriggerMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'vmrollout_trigger_' });
  // The trigger runs no Temporal worker: no build id.
  registerBuildInfo(registry, { version: opts.version ?? packageVersion() });
  const registers = [registry];
  const stateGauges: Record<StatusSeries['metric'], Gauge> = {
    [ROLLOUT_PHASE]: new Gauge({
      name: ROLLOUT_PHASE,
      help: "1 for each VMDistributedCluster's current status.phase (one series per object).",
      labelNames: ['namespace', 'name', 'phase'],
      registers,
    }),
    [ZONE_OUT_OF_READS]: new Gauge({
      name: ZONE_OUT_OF_READS,
      help: '1 for each zone a VMDistributedCluster has out of read rotation (status.zonesOutOfRotation).',
      labelNames: ['namespace', 'name', 'zone'],
      registers,
    }),
    [ZONE_STEP]: new Gauge({
      name: ZONE_STEP,
      help: '1 for each zone in a step of its upgrade (or Failed): step is its phase in status.zones.',
      labelNames: ['namespace', 'name', 'zone', 'step'],
      registers,
    }),
  };
  const shown = new Map<string, StatusSeries[]>();
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
      help: 'Rollout workflow start requests, by result (started, existing: already running or closed, queued: handed to its fleet).',
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
    startDuration: new Histogram({
      name: 'vmrollout_trigger_start_duration_seconds',
      help: "Trigger lag: from a watch event showing a new generation to its rollout workflow's start request completed.",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    // Synchronous, so a scrape never sees an object half-updated.
    objectStatus(obj, gone) {
      const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
      for (const s of shown.get(key) ?? []) stateGauges[s.metric].remove(s.labels);
      const next = gone ? [] : statusSeries(obj);
      for (const s of next) stateGauges[s.metric].set(s.labels, 1);
      if (next.length) shown.set(key, next);
      else shown.delete(key);
    },
  };
}
