// What the rollout tells, derived in one place from its state (state.ts): the CR status (phase,
// message, zones and their messages, conditions), the Web UI's current details, the progress query
// and the workflow's result. The Events follow from the status before and after each write
// (activities/status/events.ts), so the CLI, the CR, the Events and the Web UI cannot disagree. Pure.
import { mergeConditions } from '../api/conditions';
import type { CanaryAnalysisStatus, Condition, ObjectGeneration, Phase, VMDistributedClusterStatus, WorkflowRef, ZoneStatus } from '../api/types';
import type { DrainHeartbeat, Progress } from '../api/rollout-contract';
import type { QueueReport } from './activity-types';
import { kindOf } from '../api/storage';
import { zonesOutOfRotation, type RolloutState, type RunNote, type ZoneNote, type ZoneState } from './state';

type RunState = Pick<RolloutState, 'run' | 'paused' | 'currentZone' | 'currentStep' | 'awaiting'>;

const RUN_PHASE: { readonly [K in RunNote['kind']]: Phase } = {
  starting: 'Pending',
  adopted: 'Pending',
  preparing: 'Progressing',
  'zone-step': 'Progressing',
  'zone-skipped': 'Progressing',
  'zone-done': 'Progressing',
  'applying-deferred-routes': 'Progressing',
  failed: 'Failed',
  retrying: 'Progressing',
  'status-refused': 'Progressing',
  succeeded: 'Succeeded',
  superseded: 'Superseded',
  stale: 'Superseded',
  cancelled: 'Cancelled',
  aborted: 'Aborted',
  planned: 'Planned',
};

export function rolloutPhase(state: RunState): Phase {
  return state.paused ? 'Paused' : RUN_PHASE[state.run.kind];
}

export function rolloutMessage(state: RunState): string {
  if (state.paused) return state.currentZone ? `paused before ${state.currentStep ?? 'next step'} of zone ${state.currentZone}` : 'paused';
  const a = state.awaiting;
  if (a?.canary) return canaryWaitMessage(a.canary);
  if (a?.capacity) return capacityWaitMessage(a.nextZone, a.capacity);
  if (a) return `waiting at gate ${a.gates.join(' + ')} for a person, every zone in reads: promote starts zone ${a.nextZone}, abort ends the rollout here`;
  const n = state.run;
  switch (n.kind) {
    case 'starting':
      return 'starting';
    case 'adopted':
      return `adopted zones out of read rotation: ${n.zones.join(', ')}`;
    case 'preparing':
      return 'applying the VMAgent, creating missing VMClusters, applying the VMAuth and the VMUsers';
    case 'zone-step':
      return `zone ${n.zone}: ${n.step}`;
    case 'zone-skipped':
      return `zone ${n.zone} already up to date`;
    case 'zone-done':
      return `zone ${n.zone} done`;
    case 'applying-deferred-routes':
      return 'applying the VMAuth and the VMUsers (left while zones were out of reads)';
    case 'failed':
      return n.zone ? `zone ${n.zone} failed at ${n.step}: ${n.reason}` : `failed: ${n.reason}`;
    case 'retrying':
      return n.zone ? `retrying zone ${n.zone} from ${n.step}` : 'retrying';
    case 'status-refused':
      return 'the status is no longer ours to write (a newer generation, or the object is gone): stopping';
    case 'succeeded': {
      const held = n.held ?? [];
      const at = held.some((h) => h.mode === 'maintenance') ? 'every zone not in maintenance' : 'all zones';
      const out = held.length ? `; held out of reads by their trafficMode: ${held.map((h) => `${h.zone} (${h.mode})`).join(', ')}` : '';
      return `${at} at ${n.clusterVersion} (${n.upgraded} upgraded, ${n.upToDate} already up to date)${out}`;
    }
    case 'superseded':
      return `superseded by generation ${n.generation}`;
    case 'stale':
      return n.message;
    case 'cancelled':
      return n.out.length ? `cancelled; out of read rotation: ${n.out.join(', ')}` : 'cancelled';
    case 'planned':
      return `dry run (strategy.dryRun), nothing changed: ${n.upgrade} zone${n.upgrade === 1 ? '' : 's'} would be upgraded, ${n.skip} skipped${n.adopt ? `, ${n.adopt} taken over out of reads` : ''}${n.hold ? `, ${n.hold} held out of reads (trafficMode)` : ''}${n.fail ? `, ${n.fail} would fail` : ''}: status.plan`;
    case 'aborted':
      return `aborted ${n.gates ? `at gate ${n.gates.join(' + ')}` : 'in the pause between zones'} before zone ${n.zone}${n.reason ? ` (${n.reason})` : ''}: every zone in reads, ${n.upgraded} upgraded`;
  }
}

const canaryWaitMessage = (zone: string) =>
  `the analysis of canary ${zone} was Inconclusive: waiting for a person, the canary out of reads: promote puts it back into reads and goes on, abort fails it (it stays out)`;

const capacityWaitMessage = (zone: string, why: string) =>
  `the capacity guard stopped before zone ${zone}'s next step (${why}): waiting for a person, the zone out of reads: promote goes on, abort fails the zone (it stays out)`;

const REJOINED: { readonly [K in Extract<ZoneNote, { kind: 'rejoined' }>['how']]: (why: string, generation: number | undefined, kind: string) => string } = {
  'before-upgrade': (why) => `rejoined reads (${why}) before upgrade`,
  'after-upgrade': (why) => `rejoined reads (${why}) after upgrade`,
  'not-changed': (why, _generation, kind) => `rejoined reads (${why}): ${kind} was not changed`,
  drained: (why, generation) => `rejoined reads (${why}): operational at generation ${generation} and drained`,
};

/** What the status says about a zone beyond its phase. Every zone out of rotation says why. */
export function zoneMessage(
  z: Pick<ZoneState, 'phase' | 'vmcluster' | 'storageKind' | 'outOfRotation' | 'switchConfirmed' | 'note' | 'analysis'>,
): string | undefined {
  const n = z.note;
  if (!n) return z.outOfRotation ? `out of read rotation: ${z.phase}` : undefined;
  const forUpgrade = 'out of read rotation for the upgrade';
  switch (n.kind) {
    case 'skipped':
      return 'already up to date and operational';
    case 'waiting-for-carriers':
      return `waiting until the zones that will carry its reads (${n.carriers.join(', ')}) are operational with empty vmagent backlogs`;
    case 'confirming-switch':
      return `waiting until every ready vmauth pod runs the operator's config ${n.expect === 'absent' ? 'without' : 'with'} ${kindOf({ kind: z.storageKind })} ${z.vmcluster} (config-reloader content hash = CRC32 of Secret vmauth-config-${n.vmauth})`;
    case 'leaving':
      return forUpgrade;
    case 'out-for-upgrade':
      if (z.phase === 'Analyzing' && z.analysis) return `out of read rotation, the canary: ${z.analysis.message}`;
      return z.switchConfirmed ? `${forUpgrade} (${z.switchConfirmed})` : forUpgrade;
    case 'draining-reads':
      return z.storageKind
        ? `${z.switchConfirmed}; waiting until VMSingle ${z.vmcluster} sees no new query for ${n.quietMs / 1000} s (at most readDrainDelay)`
        : `${z.switchConfirmed}; waiting until VMCluster ${z.vmcluster}'s vmselects see no new /select/ request for ${n.quietMs / 1000} s (at most readDrainDelay)`;
    case 'failed':
      return z.outOfRotation ? `failed at ${n.step}, kept out of read rotation: ${n.reason}` : `failed at ${n.step}: ${n.reason}`;
    case 'superseded-unpatched':
      return `not upgraded: superseded by generation ${n.generation}`;
    case 'stays-out':
      return `stays out of read rotation (${n.why}): ${n.reason}`;
    case 'rejoined':
      return REJOINED[n.how](n.why, n.generation, kindOf({ kind: z.storageKind }));
    case 'held':
      return n.mode === 'write-only'
        ? `held out of reads (trafficMode write-only): written${n.upgraded ? ' and upgraded' : ''}, not read; rejoins once its trafficMode is read-write`
        : 'held out of reads (trafficMode maintenance): left alone by rollouts; rejoins once its trafficMode is read-write';
    case 'adopted':
      return `out of read rotation since ${n.since} (left by generation ${n.generation}): upgraded once every vmauth pod is confirmed to run a config without it; rejoins once operational at the desired spec and drained`;
  }
}

/** The desired Ready / Progressing / Paused conditions for a phase and message (without times). */
export function desiredConditions(phase: Phase, message: string, paused: boolean): Array<Omit<Condition, 'lastTransitionTime'>> {
  const ready: Omit<Condition, 'lastTransitionTime'> =
    phase === 'Succeeded' ? { type: 'Ready', status: 'True', reason: 'Succeeded', message } : { type: 'Ready', status: 'False', reason: phase, message };
  const progressing: Omit<Condition, 'lastTransitionTime'> =
    phase === 'Progressing' || phase === 'Pending'
      ? { type: 'Progressing', status: 'True', reason: phase, message }
      : { type: 'Progressing', status: 'False', reason: phase, message };
  const pausedCondition: Omit<Condition, 'lastTransitionTime'> = paused
    ? { type: 'Paused', status: 'True', reason: 'PauseRequested', message }
    : { type: 'Paused', status: 'False', reason: 'NotPaused', message: '' };
  return [ready, progressing, pausedCondition];
}

function zoneStatus(z: ZoneState): ZoneStatus {
  const s: ZoneStatus = { name: z.name, phase: z.phase };
  if (z.storageKind) s.storageKind = z.storageKind;
  if (z.vmclusterGeneration !== undefined) s.vmclusterGeneration = z.vmclusterGeneration;
  if (z.startedAt) s.startedAt = z.startedAt;
  if (z.stepStartedAt) s.stepStartedAt = z.stepStartedAt;
  if (z.finishedAt) s.finishedAt = z.finishedAt;
  if (z.held) s.trafficMode = z.held;
  if (z.queueHeadroom) s.queueHeadroom = { ...z.queueHeadroom };
  if (z.dataCompleteness) s.dataCompleteness = { ...z.dataCompleteness, dropped: { ...z.dataCompleteness.dropped } };
  if (z.sampleParity) s.sampleParity = { ...z.sampleParity, tenants: z.sampleParity.tenants.map((t) => ({ ...t })) };
  if (z.analysis) s.analysis = structuredAnalysis(z.analysis);
  if (z.capacity) s.capacity = { ...z.capacity };
  const message = zoneMessage(z);
  if (message) s.message = message;
  return s;
}

/** A copy of an analysis for the status (the state keeps its own). */
function structuredAnalysis(a: CanaryAnalysisStatus): CanaryAnalysisStatus {
  return { ...a, ...(a.latest ? { latest: { ...a.latest, queries: a.latest.queries.map((q) => ({ ...q })) } } : {}) };
}

/** What the rollout tells at a moment: the CR status and the Web UI's current details. */
export interface Told {
  status: VMDistributedClusterStatus;
  details: string;
}

/**
 * The CR status for `state` at `now`, zones in rollout order, and the Web UI's current details. The
 * conditions keep the transition times of `state.conditions` (the caller keeps the new ones).
 */
export function deriveStatus(state: RolloutState, object: ObjectGeneration, workflow: WorkflowRef, now: string): Told {
  const phase = rolloutPhase(state);
  const message = rolloutMessage(state);
  const conditions = mergeConditions(state.conditions, desiredConditions(phase, message, state.paused), {
    now,
    observedGeneration: object.generation,
    order: 'canonical',
  });
  const byName = new Map(state.zones.map((z) => [z.name, z]));
  const status: VMDistributedClusterStatus = {
    observedGeneration: object.generation,
    phase,
    message,
    workflow: { ...workflow },
    zonesOutOfRotation: zonesOutOfRotation(state),
    zones: state.order
      .map((n) => byName.get(n)!)
      .filter(Boolean)
      .map(zoneStatus),
    conditions,
  };
  if (state.currentZone) status.currentZone = state.currentZone;
  if (state.awaiting) status.awaiting = { ...state.awaiting, gates: [...state.awaiting.gates] };
  if (state.plan)
    status.plan = { ...state.plan, order: [...state.plan.order], zones: state.plan.zones.map((z) => ({ ...z, gates: [...z.gates], routes: [...z.routes] })) };
  // Written once, at the end; later generations' writes leave it as it is (a merge patch), so it
  // names the last success until the next one.
  if (state.run.kind === 'succeeded') status.lastSucceeded = { clusterVersion: state.run.clusterVersion, generation: object.generation };
  return { status, details: currentDetails(status) };
}

/** What the `progress` query returns: the state, with the phase and the messages the status would say. */
export function progressOf(state: RolloutState, signals: { pauseRequested: boolean; supersededBy: number | undefined }): Progress {
  return {
    phase: rolloutPhase(state),
    message: rolloutMessage(state),
    paused: state.paused,
    pauseRequested: signals.pauseRequested,
    supersededBy: signals.supersededBy,
    currentZone: state.currentZone,
    currentStep: state.currentStep,
    order: [...state.order],
    zones: state.zones.map(
      ({
        removals,
        note,
        adopted: _adopted,
        outSince: _since,
        dropBaseline: _baseline,
        healthBaseline: _health,
        healthLast: _last,
        leaveOnly: _leaveOnly,
        ...z
      }) => ({
        ...z,
        message: zoneMessage({ ...z, note }),
        removedRefs: (removals ?? []).reduce((n, r) => n + r.removed.length, 0),
      }),
    ),
    zonesOutOfRotation: zonesOutOfRotation(state),
    lastQueueSample: state.lastQueueSample,
    statusError: state.statusError,
    ...(state.awaiting ? { awaiting: state.awaiting } : {}),
  };
}

/**
 * What the queue wait writes while it waits (QueueReport): the status derived when the wait began,
 * with the zone's message showing `streak` (the activity has the samples; the workflow does not).
 */
export function queueReportStatus(report: QueueReport, streak: DrainHeartbeat, queueDrainedForMs: number): VMDistributedClusterStatus {
  const zones = report.status.zones?.map((z) => (z.name === report.zone ? { ...z, message: queueProgressMessage(streak, queueDrainedForMs) } : z));
  return { ...report.status, zones };
}

/** The zone's message while its queue wait goes on: pending bytes per vmagent pod, and the empty streak. */
export function queueProgressMessage(streak: DrainHeartbeat, queueDrainedForMs: number): string {
  const s = streak.last;
  const pods = Object.entries(s.podPendingBytes ?? {})
    .slice(0, 5)
    .map(([pod, bytes]) => `${pod} ${bytes} B`)
    .join(', ');
  const since = streak.emptySince
    ? `empty since ${streak.emptySince} (${Math.round((Date.parse(s.at) - Date.parse(streak.emptySince)) / 1000)} s of ${Math.round(queueDrainedForMs / 1000)} s)`
    : 'not empty';
  return `waiting for the vmagent backlog (sample at ${s.at}): ${s.message}${pods ? ` [${pods}]` : ''}; ${since}`.slice(0, 1000);
}

/**
 * The workflow's current details in the Temporal Web UI (markdown): the phase, which zone of how
 * many and its step, what is out of reads, and the latest message — what `kubectl get vmdc` says.
 */
export function currentDetails(status: VMDistributedClusterStatus): string {
  const zones = status.zones ?? [];
  const i = zones.findIndex((z) => z.name === status.currentZone);
  const current = i >= 0 ? `: zone ${i + 1} of ${zones.length}, \`${zones[i]!.name}\` ${zones[i]!.phase}` : '';
  const out = status.zonesOutOfRotation?.length ? status.zonesOutOfRotation.map((z) => `\`${z}\``).join(', ') : 'none';
  const lines = [`**${status.phase ?? 'Pending'}**${current}`, `out of reads: ${out}`];
  const a = status.awaiting;
  if (a?.canary) lines.push(`**awaiting approval** since ${a.since}: ${canaryWaitMessage(a.canary)}`);
  else if (a?.capacity) lines.push(`**awaiting approval** since ${a.since}: ${capacityWaitMessage(a.nextZone, a.capacity)}`);
  else if (a)
    lines.push(
      `**awaiting approval** at gate ${a.gates.join(' + ')} since ${a.since}: \`kubectl vmdc promote\` starts \`${a.nextZone}\`, \`kubectl vmdc abort\` ends the rollout here`,
    );
  else if (status.message) lines.push(status.message);
  return lines.join('\n\n');
}
