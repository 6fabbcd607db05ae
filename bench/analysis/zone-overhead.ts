// The orchestration overhead of one zone: its time (status startedAt → finishedAt) against the waits
// nobody can avoid, each measured from the processes, and where the rest goes.
import { mean, sum } from './stats';

/** When each thing happened during one zone's upgrade (ms since the epoch), as the processes and the history show it. */
export interface ZoneInstants {
  /** The zone's startedAt / finishedAt, as the workflow wrote them. */
  startedAt: number;
  finishedAt: number;
  /** The config Secret without the zone written / every vmauth pod serving it. */
  leaveWritten: number;
  leaveServed: number;
  /** waitReadsDrained ran from / to: the zone's vmselects counted no new /select/ request for the quiet period. */
  readsQuietFrom: number;
  readsQuietTo: number;
  /** The zone's process down / back up. */
  zoneDown: number;
  zoneUp: number;
  /** vmagent's backlog for the zone truly gone (trulyDrainedAt). */
  backlogGone: number;
  /** The rollout's decision: the last queue wait completing. */
  decisionAt: number;
  /** The config Secret with the zone again written / every vmauth pod serving it. */
  rejoinWritten: number;
  rejoinServed: number;
}

/** The waits nobody can avoid, ms. */
export interface UnavoidableWaits {
  leaveReloadMs: number;
  /**
   * The quiet the zone's vmselects showed before the upgrade (the measured wait), not the strategy's
   * readDrainDelay: that is only the longest this wait may take.
   */
  readsQuietMs: number;
  downtimeMs: number;
  backlogMs: number;
  /** The strategy's: how long the queue must be seen empty, a requirement the user sets. */
  queueDrainedForMs: number;
  rejoinReloadMs: number;
}

export function unavoidableWaits(i: ZoneInstants, queueDrainedForMs: number): UnavoidableWaits {
  return {
    leaveReloadMs: i.leaveServed - i.leaveWritten,
    readsQuietMs: i.readsQuietTo - i.readsQuietFrom,
    downtimeMs: i.zoneUp - i.zoneDown,
    backlogMs: i.backlogGone - i.zoneUp,
    queueDrainedForMs,
    rejoinReloadMs: i.rejoinServed - i.rejoinWritten,
  };
}

export interface ZoneOverhead {
  actualMs: number;
  idealMs: number;
  /** actualMs ÷ idealMs: the headline figure. */
  overhead: number;
  /** actualMs − idealMs. */
  orchestrationMs: number;
  /** The ratio as first published: readDrainDelay counted as unavoidable in place of the measured quiet. */
  overheadCountingReadDrainDelay: number;
}

export function zoneOverhead(i: ZoneInstants, waits: UnavoidableWaits, readDrainDelayMs: number): ZoneOverhead {
  const actualMs = i.finishedAt - i.startedAt;
  const idealMs = sum(Object.values(waits));
  return {
    actualMs,
    idealMs,
    overhead: actualMs / idealMs,
    orchestrationMs: actualMs - idealMs,
    overheadCountingReadDrainDelay: actualMs / (idealMs - waits.readsQuietMs + readDrainDelayMs),
  };
}

/** Mean and max over zones of both ratios; NaN when there is no zone. */
export function overheadOverZones(zones: readonly ZoneOverhead[]) {
  const max = (xs: number[]) => (xs.length ? Math.max(...xs) : NaN);
  const honest = zones.map((z) => z.overhead);
  const counting = zones.map((z) => z.overheadCountingReadDrainDelay);
  return {
    overheadMean: mean(honest),
    overheadMax: max(honest),
    overheadMeanCountingReadDrainDelay: mean(counting),
    overheadMaxCountingReadDrainDelay: max(counting),
  };
}

export interface TimelineSegment {
  what: string;
  ms: number;
  /** One of the unavoidable waits. */
  ideal?: true;
}

/**
 * The zone's time as contiguous segments, startedAt → finishedAt in order: their sum is the zone's time
 * and the `ideal` ones are exactly its unavoidable waits, so the rest is where the overhead goes.
 */
export function zoneTimeline(i: ZoneInstants, queueDrainedForMs: number): TimelineSegment[] {
  const drainTarget = i.backlogGone + queueDrainedForMs;
  const seg = (what: string, from: number, to: number, ideal = false): TimelineSegment => ({ what, ms: to - from, ...(ideal ? { ideal: true as const } : {}) });
  return [
    seg(
      'startedAt → config Secret without the zone written (status writes, preflight dry run, carriers wait, pre-leave pod confirmation, route edits, operator render)',
      i.startedAt,
      i.leaveWritten,
    ),
    seg('leave reload: Secret written → every vmauth pod serves it', i.leaveWritten, i.leaveServed, true),
    seg(
      'pods switched → waitReadsDrained starts (confirmSwitch poll lateness, waitOperational VMAuth/VMUser, status writes, round trips)',
      i.leaveServed,
      i.readsQuietFrom,
    ),
    seg('waitReadsDrained: the measured quiet of the zone’s vmselects', i.readsQuietFrom, i.readsQuietTo, true),
    seg('reads drained → zone process stops (status write, applyObject, operator reaction)', i.readsQuietTo, i.zoneDown),
    seg('zone downtime', i.zoneDown, i.zoneUp, true),
    seg('zone up → backlog truly gone (pending bytes 0 and the last retried block re-sent)', i.zoneUp, i.backlogGone, true),
    seg('queueDrainedFor', i.backlogGone, drainTarget, true),
    seg('drain detection latency (backlog gone + queueDrainedFor → last watchQueue completes)', drainTarget, i.decisionAt),
    seg('decision → config Secret with the zone written (status write, route edits, operator render)', i.decisionAt, i.rejoinWritten),
    seg('rejoin reload: Secret written → every vmauth pod serves it', i.rejoinWritten, i.rejoinServed, true),
    seg('pods switched back → finishedAt (confirmSwitch poll lateness, waitOperational VMAuth/VMUser, round trips)', i.rejoinServed, i.finishedAt),
  ];
}
