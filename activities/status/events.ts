// The Kubernetes Events a status write raises: one per zone transition and per end of a rollout,
// computed from the status before the write (as read fresh by the writer) and the status written,
// both derived from the rollout's state by workflows/status.ts. A status write that is retried after
// it landed finds the new status already there: no second Event. Pure. The reasons are documented in
// docs/operations.md#events.
import type { Phase, VMDistributedClusterStatus, ZonePhase, ZoneStatus } from '../../api/types';
import type { EventType } from '../../kube/events';
import { kindOf } from '../../api/storage';
import { RECORDS_VERIFIED, RELEASED_BY_HAND } from '../../api/recorded-status';

export interface StatusEvent {
  type: EventType;
  reason: string;
  message: string;
}

const storageKind = (z: ZoneStatus) => kindOf({ kind: z.storageKind });
const generationOf = (z: ZoneStatus) => (z.vmclusterGeneration === undefined ? '' : ` (${storageKind(z)} generation ${z.vmclusterGeneration})`);

/** Entering these zone phases is an Event: the step before it is done. */
const ENTERED: Partial<Record<ZonePhase, (z: ZoneStatus, out: boolean) => StatusEvent>> = {
  WaitingForSwitch: (z) => ({
    type: 'Normal',
    reason: 'ZoneLeftReads',
    message: `zone ${z.name} left read rotation: its routes are edited; waiting until every vmauth pod serves them`,
  }),
  WaitingOperational: (z) => ({
    type: 'Normal',
    reason: 'ZoneUpgraded',
    message: `zone ${z.name}: ${storageKind(z)} patched${generationOf(z)}; waiting until the operator reports it operational`,
  }),
  WaitingForQueue: (z) => ({
    type: 'Normal',
    reason: 'ZoneOperational',
    message: `zone ${z.name}: ${storageKind(z)} operational${generationOf(z)}; waiting until the vmagent backlog is drained`,
  }),
  Analyzing: (z) => ({
    type: 'Normal',
    reason: 'ZoneDrained',
    message: `zone ${z.name}: vmagent backlog drained; the canary is analysed for ${z.analysis?.bakeSeconds ?? '?'} s${z.analysis?.baseline ? ` against zone ${z.analysis.baseline}` : ''}, out of read rotation`,
  }),
  RejoiningReads: (z) =>
    z.analysis
      ? {
          type: 'Normal',
          reason: 'CanaryPassed',
          message: `zone ${z.name}: ${z.analysis.message}; rejoining read rotation`,
        }
      : { type: 'Normal', reason: 'ZoneDrained', message: `zone ${z.name}: vmagent backlog drained; rejoining read rotation` },
  Failed: (z, out) => ({
    type: 'Warning',
    reason: 'ZoneFailed',
    message: `zone ${z.name} failed, ${out ? 'kept OUT of read rotation' : 'still in read rotation'}: ${z.message ?? 'no message'}`,
  }),
};

/** Entering these rollout phases is an Event. */
const ROLLOUT_PHASES_TOLD: Partial<Record<Phase, EventType>> = {
  Succeeded: 'Normal',
  Failed: 'Warning',
  Cancelled: 'Normal',
  Aborted: 'Normal',
  Planned: 'Normal',
  Paused: 'Normal',
};

export function statusEvents(before: VMDistributedClusterStatus | undefined, after: VMDistributedClusterStatus): StatusEvent[] {
  const events: StatusEvent[] = [];
  const beforeZones = new Map((before?.zones ?? []).map((z) => [z.name, z]));
  const outAfter = new Set(after.zonesOutOfRotation ?? []);
  for (const z of after.zones ?? []) {
    const was = beforeZones.get(z.name);
    const entered = ENTERED[z.phase];
    if (entered && was?.phase !== z.phase) events.push(entered(z, outAfter.has(z.name)));
    // A held zone's last step done: it stays out (once per rollout: its phase was not final before).
    if (z.trafficMode && (z.phase === 'Done' || z.phase === 'Skipped') && was?.phase !== z.phase && outAfter.has(z.name))
      events.push({ type: 'Normal', reason: 'ZoneHeld', message: `zone ${z.name} held out of read rotation: trafficMode ${z.trafficMode}` });
  }
  if (after.zonesOutOfRotation) {
    for (const name of before?.zonesOutOfRotation ?? []) {
      if (outAfter.has(name)) continue;
      const z = after.zones?.find((x) => x.name === name);
      events.push(
        z?.message === RELEASED_BY_HAND
          ? { type: 'Normal', reason: 'ZoneReleased', message: `zone ${name} back in read rotation: released by a person (its records removed)` }
          : { type: 'Normal', reason: 'ZoneRejoined', message: `zone ${name} back in read rotation` },
      );
    }
  }
  const records = (s: VMDistributedClusterStatus | undefined) => s?.conditions?.find((c) => c.type === RECORDS_VERIFIED);
  const unverified = records(after);
  if (unverified?.status === 'False' && records(before)?.message !== unverified.message) {
    events.push({ type: 'Warning', reason: 'RouteRecordsUnverified', message: unverified.message });
  }
  const gate = after.awaiting;
  if (gate && (before?.awaiting?.nextZone !== gate.nextZone || before.awaiting.since !== gate.since))
    events.push({ type: 'Normal', reason: 'RolloutAwaitingApproval', message: after.message ?? `waiting at gate ${gate.gates.join(' + ')}` });
  const passed = before?.awaiting;
  if (passed && !gate && after.phase === 'Progressing')
    events.push({
      type: 'Normal',
      reason: 'RolloutPromoted',
      message: passed.canary
        ? `canary ${passed.canary} promoted by a person after an Inconclusive analysis: it rejoins reads`
        : passed.capacity
          ? `zone ${passed.nextZone} goes on, out of reads, promoted by a person after the capacity guard breached`
          : `gate ${passed.gates.join(' + ')} passed: zone ${passed.nextZone} starts`,
    });
  const told = after.phase && ROLLOUT_PHASES_TOLD[after.phase];
  if (told && before?.phase !== after.phase) events.push({ type: told, reason: `Rollout${after.phase}`, message: after.message ?? `rollout ${after.phase}` });
  if (after.phase === 'Progressing' && before?.phase === 'Paused')
    events.push({ type: 'Normal', reason: 'RolloutResumed', message: after.message ?? 'rollout resumed' });
  return events;
}
