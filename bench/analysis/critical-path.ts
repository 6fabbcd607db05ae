// A zone's time as the sum of what happened on its critical path, read from the workflow history:
// workflow task round trips, activity schedule-to-start, status writes, other calls, waits. The
// activities of a zone run one after the other.

/** One activity of the history, times in ms since the epoch. */
export interface ActivityCall {
  id: number;
  type: string;
  input: unknown;
  /** Decoded result (watchQueue / waitQueueDrained only). */
  result?: unknown;
  scheduled: number;
  started?: number;
  closed?: number;
  outcome?: 'completed' | 'failed' | 'timedOut' | 'canceled';
  /** A regular activity: the workflow task that scheduled it; a local one: the task whose completion recorded its marker. */
  wft?: { scheduled: number; started: number; completed: number };
  zone?: string;
  step?: string;
  /** A local activity (a marker in the history: no input recorded, no task round trip). */
  local?: boolean;
  /** A local activity whose start the marker does not record (estimateLocalStarts). */
  startEstimated?: boolean;
}

/**
 * A local activity's times from its marker (the SDK core's `complete_time` and `original_schedule_time`).
 * The start is taken as recorded only when it comes before the completion: in the markers of these
 * histories `original_schedule_time` often lies tens of ms after `complete_time`, so it is not the
 * start; those starts are left to estimateLocalStarts, as are absent ones.
 */
export function localActivityTimes(
  originalScheduleTime: number | undefined,
  completeTime: number,
): Pick<ActivityCall, 'scheduled' | 'started' | 'closed' | 'startEstimated'> {
  if (originalScheduleTime !== undefined && originalScheduleTime <= completeTime)
    return { scheduled: originalScheduleTime, started: originalScheduleTime, closed: completeTime };
  return { scheduled: completeTime, started: completeTime, closed: completeTime, startEstimated: true };
}

/**
 * A local activity whose start its marker does not tell ran inside the task that recorded it, after
 * the local activities that task completed before it: it started at the later of the task's start
 * and the previous one's completion. (One that outlived a task began in an earlier one: estimated late.)
 */
export function estimateLocalStarts(acts: readonly ActivityCall[]): void {
  const byTask = new Map<number, ActivityCall[]>();
  for (const a of acts) if (a.local && a.startEstimated && a.wft) byTask.set(a.wft.completed, [...(byTask.get(a.wft.completed) ?? []), a]);
  for (const group of byTask.values()) {
    group.sort((x, y) => x.closed! - y.closed!);
    let prev = -Infinity;
    for (const a of group) {
      a.scheduled = a.started = Math.min(a.closed!, Math.max(a.wft!.started, prev));
      prev = a.closed!;
    }
  }
}

export const WAIT_TYPES = new Set([
  'confirmSwitch',
  'awaitSwitch',
  'waitOperational',
  'waitReadsDrained',
  'watchQueue',
  'waitQueueDrained',
  'waitCarriersReady',
]);

export interface CriticalPath {
  /** Workflow tasks: scheduled → started. */
  wftScheduleToStartMs: number;
  /** Workflow tasks: the workflow's own code between its calls, and completing the task. */
  wftProcessingMs: number;
  /** Between a call's end and the next workflow task being scheduled. */
  serverOtherMs: number;
  activityScheduleToStartMs: number;
  statusWritesMs: number;
  statusWrites: number;
  shortActivitiesMs: number;
  waitsMs: number;
  tailMs: number;
  activities: number;
  workflowTasks: number;
  byType: Record<string, { count: number; runMs: number; scheduleToStartMs: number; roundTripBeforeMs: number }>;
  byStep: Record<
    string,
    { ms: number; activities: number; statusWrites: number; statusWritesMs: number; roundTripsMs: number; scheduleToStartMs: number; waitsMs: number }
  >;
}

/**
 * The zone's time (startedAt → finishedAt) split along its activities, in order: the gap before each
 * (split by its workflow task: server time before the task was scheduled, the task's schedule-to-start,
 * the workflow's processing; a later call of a task already counted: processing), its
 * schedule-to-start, its run, and the tail after the last. The parts sum to the zone's time.
 */
export function criticalPath(acts: readonly ActivityCall[], times: { startedAt: number; finishedAt: number }): CriticalPath {
  const cp: CriticalPath = {
    wftScheduleToStartMs: 0,
    wftProcessingMs: 0,
    serverOtherMs: 0,
    activityScheduleToStartMs: 0,
    statusWritesMs: 0,
    statusWrites: 0,
    shortActivitiesMs: 0,
    waitsMs: 0,
    tailMs: 0,
    activities: acts.length,
    workflowTasks: 0,
    byType: {},
    byStep: {},
  };
  let prevEnd = times.startedAt;
  const tasks = new Set<number>();
  for (const a of acts) {
    const started = a.started ?? a.scheduled;
    const closed = a.closed ?? started;
    const gap = Math.max(0, a.scheduled - prevEnd);
    let other = gap;
    let wftS2S = 0;
    let wftRun = 0;
    if (a.wft && tasks.has(a.wft.completed)) {
      other = 0;
      wftRun = gap;
    } else if (a.wft && a.wft.scheduled >= prevEnd - 1) {
      tasks.add(a.wft.completed);
      other = Math.min(gap, Math.max(0, a.wft.scheduled - prevEnd));
      wftS2S = Math.min(gap - other, a.wft.started - a.wft.scheduled);
      wftRun = gap - other - wftS2S;
    }
    const s2s = started - a.scheduled;
    const run = closed - started;
    cp.wftScheduleToStartMs += wftS2S;
    cp.wftProcessingMs += wftRun;
    cp.serverOtherMs += other;
    cp.activityScheduleToStartMs += s2s;
    if (a.type === 'writeStatus') {
      cp.statusWritesMs += run;
      cp.statusWrites++;
    } else if (WAIT_TYPES.has(a.type)) cp.waitsMs += run;
    else cp.shortActivitiesMs += run;
    const t = (cp.byType[a.type] ??= { count: 0, runMs: 0, scheduleToStartMs: 0, roundTripBeforeMs: 0 });
    t.count++;
    t.runMs += run;
    t.scheduleToStartMs += s2s;
    t.roundTripBeforeMs += gap;
    const s = (cp.byStep[a.step ?? '?'] ??= { ms: 0, activities: 0, statusWrites: 0, statusWritesMs: 0, roundTripsMs: 0, scheduleToStartMs: 0, waitsMs: 0 });
    s.ms += gap + s2s + run;
    s.activities++;
    if (a.type === 'writeStatus') {
      s.statusWrites++;
      s.statusWritesMs += run;
    }
    if (WAIT_TYPES.has(a.type)) s.waitsMs += run;
    s.roundTripsMs += gap;
    s.scheduleToStartMs += s2s;
    prevEnd = Math.max(prevEnd, closed);
  }
  cp.tailMs = Math.max(0, times.finishedAt - prevEnd);
  cp.workflowTasks = tasks.size;
  return cp;
}
