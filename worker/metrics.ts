// The worker's own metrics (prom-client, private registry) and its /metrics body: ours, then the
// Temporal SDK exporter's output (served by process/metrics-server.ts).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ZonePhase } from '../api/types';
import type { ActivityMetrics } from '../activities/metrics';
import { packageVersion, registerBuildInfo } from '../process/build-info';

export interface WorkerMetrics extends ActivityMetrics {
  registry: Registry;
}

/**
 * A step can last from seconds (leaving reads) to most of a day (a queue wait or a bake bounded by a
 * zone timeout of hours), hence buckets up to 24 h.
 */
export const STEP_DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 43200, 86400];

/**
 * The objects the step histogram keeps series for. The worker never learns of a deletion, so whoever
 * may create VMDistributedClusters could otherwise grow its registry without end: past this many,
 * the histogram starts over (to rate() and increase() a counter reset, as after a restart).
 */
export const MAX_STEP_DURATION_OBJECTS = 1000;

/**
 * prom-client metrics on a private registry; also the ActivityMetrics the activities report to.
 * `buildId`: the Worker Versioning build id (TEMPORAL_WORKER_BUILD_ID), shown in vmrollout_build_info.
 */
export function createWorkerMetrics(
  opts: { defaultMetrics?: boolean; buildId?: string; version?: string; maxStepDurationObjects?: number } = {},
): WorkerMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'vmrollout_worker_' });
  registerBuildInfo(registry, { version: opts.version ?? packageVersion(), buildId: opts.buildId });

  const stepDuration = new Histogram({
    name: 'vmrollout_zone_step_duration_seconds',
    help: 'Time a zone of a VMDistributedCluster spent in each step (zone phase) of its upgrade',
    // The object, not the zone: per-zone series would multiply the buckets by the zones for what
    // vmrollout_zone_step already shows live.
    labelNames: ['namespace', 'name', 'step'],
    buckets: STEP_DURATION_BUCKETS,
    registers: [registry],
  });
  const stepObjects = new Set<string>();
  const maxStepObjects = opts.maxStepDurationObjects ?? MAX_STEP_DURATION_OBJECTS;
  const observeStep = (o: { namespace: string; name: string }, step: ZonePhase, seconds: number) => {
    const key = `${o.namespace}/${o.name}`;
    if (!stepObjects.has(key) && stepObjects.size >= maxStepObjects) {
      stepDuration.reset();
      stepObjects.clear();
    }
    stepObjects.add(key);
    stepDuration.observe({ namespace: o.namespace, name: o.name, step }, seconds);
  };
  const pending = new Gauge({
    name: 'vmrollout_queue_pending_bytes',
    help: "vmagent pending bytes for a zone's remote write, summed over readable vmagent pods, as last seen by a queue wait of this worker; present only while that wait runs",
    labelNames: ['namespace', 'name', 'zone'],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'vmrollout_activity_errors_total',
    help: 'Failed activity attempts by activity and failure type',
    labelNames: ['activity', 'type'],
    registers: [registry],
  });

  const unverified = new Gauge({
    name: 'vmrollout_route_records_unverified',
    help: "Route records of a VMDistributedCluster that vmrollout does not act on (docs/security.md#route-records-are-claims), as counted by this worker's last read of them",
    labelNames: ['namespace', 'name'],
    registers: [registry],
  });

  const notifications = new Counter({
    name: 'vmrollout_notifications_total',
    help: 'Notifications of spec.notifications by type, sent (ok) or not (failed: a Warning Event NotificationFailed says why)',
    labelNames: ['type', 'result'],
    registers: [registry],
  });

  return {
    registry,
    queuePendingBytes: (l, bytes) => pending.set({ namespace: l.namespace, name: l.name, zone: l.zone }, bytes),
    queueWatchEnded: (l) => pending.remove({ namespace: l.namespace, name: l.name, zone: l.zone }),
    activityError: (activity, type) => errors.inc({ activity, type }),
    zoneStepDuration: observeStep,
    unverifiedRecords: (l, count) => unverified.set({ namespace: l.namespace, name: l.name }, count),
    notification: (type, result) => notifications.inc({ type, result }),
  };
}

/** Fetches the SDK exporter's text (best effort: a failure adds a comment, never breaks /metrics). */
async function sdkMetrics(bind: string | undefined): Promise<string> {
  if (!bind) return '';
  const host = bind.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '[::1]:');
  try {
    const res = await fetch(`http://${host}/metrics`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? await res.text() : `# temporal sdk metrics: HTTP ${res.status}\n`;
  } catch (err) {
    return `# temporal sdk metrics unavailable: ${err instanceof Error ? err.message : String(err)}\n`;
  }
}

/** The worker's /metrics body: its own registry, then the Temporal SDK exporter's series. */
export async function workerMetricsText(registry: Registry, sdkBindAddress: string | undefined): Promise<string> {
  const [own, sdk] = await Promise.all([registry.metrics(), sdkMetrics(sdkBindAddress)]);
  return own + (sdk ? `\n${sdk}` : '');
}
