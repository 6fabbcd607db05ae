// A zone's time split along its critical path (bench/analysis/critical-path.ts), with local
// activities whose markers record no start.
import { criticalPath, estimateLocalStarts, localActivityTimes, type ActivityCall } from '../../bench/analysis/critical-path';

const task1 = { scheduled: 0, started: 20, completed: 100 };
const task2 = { scheduled: 1_000, started: 1_030, completed: 1_170 };

/**
 * startedAt 0. Task 1 schedules the regular activity A (waitOperational: started 105, closed 1,000).
 * Its completion schedules task 2, which runs two local status writes (closed 1,080 and 1,150; their
 * markers carry no start) and schedules the regular activity B (editRoutes, 1,170 → 1,175 → 1,400).
 * finishedAt 1,410.
 */
function history(): ActivityCall[] {
  // As the markers of these histories have it: original_schedule_time 15 ms after complete_time.
  const local = (id: number, closed: number): ActivityCall => ({
    id,
    type: 'writeStatus',
    input: undefined,
    ...localActivityTimes(closed + 15, closed),
    local: true,
    wft: task2,
  });
  return [
    { id: 1, type: 'waitOperational', input: {}, scheduled: 100, started: 105, closed: 1_000, wft: task1 },
    local(3, 1_150),
    local(2, 1_080),
    { id: 4, type: 'editRoutes', input: {}, scheduled: 1_170, started: 1_175, closed: 1_400, wft: task2 },
  ];
}

describe('localActivityTimes', () => {
  test('a recorded start before the completion is the start', () => {
    expect(localActivityTimes(900, 1_000)).toEqual({ scheduled: 900, started: 900, closed: 1_000 });
  });
  test('a recorded start after the completion, or none: left to the estimate, never a negative run', () => {
    for (const recorded of [1_015, undefined])
      expect(localActivityTimes(recorded, 1_000)).toEqual({ scheduled: 1_000, started: 1_000, closed: 1_000, startEstimated: true });
  });
});

describe('estimateLocalStarts', () => {
  test('each local activity starts at the later of its task start and the previous one’s completion', () => {
    const acts = history();
    estimateLocalStarts(acts);
    expect(acts.filter((a) => a.local).map((a) => [a.id, a.started, a.closed])).toEqual([
      [3, 1_080, 1_150],
      [2, 1_030, 1_080],
    ]);
    // Regular activities keep their recorded times.
    expect(acts[0]!.started).toBe(105);
  });

  test('a start the marker recorded (after a retry backoff) is kept', () => {
    const acts = history().map((a) => (a.id === 2 ? { ...a, scheduled: 900, started: 900, startEstimated: false } : a));
    estimateLocalStarts(acts);
    expect(acts.find((a) => a.id === 2)!.started).toBe(900);
  });
});

describe('criticalPath', () => {
  const acts = history();
  estimateLocalStarts(acts);
  acts.sort((a, b) => a.scheduled - b.scheduled);
  const cp = criticalPath(acts, { startedAt: 0, finishedAt: 1_410 });

  test('hand-computed parts', () => {
    expect(cp).toMatchObject({
      serverOtherMs: 0,
      wftScheduleToStartMs: 20 + 30, // task 1, task 2 (counted at its first call)
      wftProcessingMs: 80 + 20, // task 1 → A scheduled; after the last local write → B scheduled
      activityScheduleToStartMs: 5 + 5,
      statusWritesMs: 50 + 70,
      statusWrites: 2,
      waitsMs: 895,
      shortActivitiesMs: 225,
      tailMs: 10,
      activities: 4,
      workflowTasks: 2,
    });
    expect(cp.byType.writeStatus).toEqual({ count: 2, runMs: 120, scheduleToStartMs: 0, roundTripBeforeMs: 30 });
  });

  test('the parts sum to the zone time; no part is negative', () => {
    const parts = [
      cp.serverOtherMs,
      cp.wftScheduleToStartMs,
      cp.wftProcessingMs,
      cp.activityScheduleToStartMs,
      cp.statusWritesMs,
      cp.shortActivitiesMs,
      cp.waitsMs,
      cp.tailMs,
    ];
    expect(parts.reduce((a, b) => a + b, 0)).toBe(1_410);
    expect(parts.every((p) => p >= 0)).toBe(true);
  });

  test('no activity: the whole zone is tail', () => {
    expect(criticalPath([], { startedAt: 0, finishedAt: 500 })).toMatchObject({ tailMs: 500, activities: 0, workflowTasks: 0 });
  });
});
