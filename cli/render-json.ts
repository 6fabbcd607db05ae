// `-o json`: the view as a document for scripts. Stable: every key always present (null when
// unknown), in a fixed order, times as ISO strings and durations in whole seconds.
import { printableJson } from './printable';
import type { QueueView, RolloutView, ZoneView } from './view';

/** Bumped only when a key changes meaning or goes away (new keys may be added). */
const JSON_SCHEMA_VERSION = 1;

const seconds = (ms: number | undefined) => (ms === undefined ? null : Math.floor(ms / 1000));
const since = (iso: string | undefined, now: Date) => (iso && Number.isFinite(Date.parse(iso)) ? seconds(Math.max(0, now.getTime() - Date.parse(iso))) : null);

function queueDocument(q: QueueView | undefined) {
  if (!q) return null;
  return {
    source: q.source,
    sampleAt: q.sampleAt ?? null,
    pods: q.pods.map((p) => ({ pod: p.pod, pendingBytes: p.bytes })),
    unlistedPods: q.unlistedPods,
    unreadablePods: q.unreadablePods,
    emptySince: q.emptySince ?? null,
    emptyForSeconds: seconds(q.emptyForMs),
    drainedForSeconds: seconds(q.drainedForMs),
  };
}

function zoneDocument(z: ZoneView, now: Date) {
  return {
    name: z.name,
    vmcluster: z.vmcluster ?? null,
    ...(z.storageKind ? { storageKind: z.storageKind } : {}),
    phase: z.phase,
    step: z.step ?? null,
    stepIndex: z.stepIndex ?? null,
    stepSince: z.stepSince ?? null,
    stepSinceIsUpperBound: z.stepSince ? !z.stepSinceExact : null,
    secondsInStep: z.stepSince ? since(z.stepSince, now) : null,
    outOfReads: z.outOfReads,
    vmclusterGeneration: z.vmclusterGeneration ?? null,
    startedAt: z.startedAt ?? null,
    finishedAt: z.finishedAt ?? null,
    message: z.message ?? null,
    queue: queueDocument(z.queue),
    queueHeadroom: z.headroom ? { ...z.headroom } : null,
    dataCompleteness: z.completeness ? { ...z.completeness, dropped: { ...z.completeness.dropped } } : null,
    sampleParity: z.samples ? { ...z.samples, tenants: z.samples.tenants.map((t) => ({ ...t })) } : null,
    analysis: z.analysis ? { ...z.analysis } : null,
    capacity: z.capacity ? { ...z.capacity } : null,
  };
}

export function viewDocument(v: RolloutView, now: Date) {
  return {
    schemaVersion: JSON_SCHEMA_VERSION,
    observedAt: now.toISOString(),
    namespace: v.namespace,
    name: v.name,
    generation: v.generation ?? null,
    observedGeneration: v.observedGeneration ?? null,
    statusIsCurrent: v.current,
    ended: v.ended ?? null,
    phase: v.phase ?? null,
    message: v.message ?? null,
    specPaused: v.specPaused,
    pauseRequested: v.pauseRequested ?? null,
    source: v.source,
    sourceNote: v.sourceNote ?? null,
    currentZone: v.currentZone ?? null,
    currentStep: v.currentStep ?? null,
    zoneIndex: v.zoneIndex ?? null,
    zoneCount: v.zoneCount,
    clusterVersion: { from: v.version.from ?? null, to: v.version.to ?? null },
    workflow: v.workflow ? { id: v.workflow.id, runId: v.workflow.runId, webUI: v.workflow.webUI ?? null } : null,
    zonesOutOfRotation: v.zonesOutOfRotation,
    statusError: v.statusError ?? null,
    awaiting: v.awaiting ? { gates: v.awaiting.gates, nextZone: v.awaiting.nextZone, since: v.awaiting.since } : null,
    zones: v.zones.map((z) => zoneDocument(z, now)),
  };
}

export const renderJson = (v: RolloutView, now: Date): string => printableJson(viewDocument(v, now), 2);
