import { MockActivityEnvironment } from '@temporalio/testing';
import { CancelledFailure } from '@temporalio/common';
import { activityPollContext, type PollContext } from '../../activities/activity-context';
import {
  RETRY_RESAMPLE_MS,
  advanceStreak,
  awaitingRetry,
  awaitingRetryPeriodMs,
  maxResumeGapMs,
  resumeStreak,
  streakMs,
  waitQueueDrained,
  watchQueue,
} from '../../activities/vmagent/drain';
import type { DrainHeartbeat, QueueSample } from '../../api/rollout-contract';
import type { QueueTarget } from '../../workflows/activity-types';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
/** What a test's sample throws to end a wait that would otherwise go on (the sampling so far is what it checks). */
const STOP = 'stop sampling';
const sampleAt = (ms: number, drained: boolean, pendingBytes = drained ? 0 : 100): QueueSample => ({
  at: iso(ms),
  pendingBytes,
  unreadablePods: 0,
  totalPods: 2,
  drained,
  message: drained ? 'drained' : 'pending',
});

describe('streak logic', () => {
  it('starts at the first drained sample, continues, breaks on a not-drained one', () => {
    let h = advanceStreak(undefined, sampleAt(T0, false), 1000);
    expect(h.emptySince).toBeUndefined();
    h = advanceStreak(h, sampleAt(T0 + 1000, true), 1000);
    expect(h.emptySince).toBe(iso(T0 + 1000));
    h = advanceStreak(h, sampleAt(T0 + 2000, true), 1000);
    expect(h.emptySince).toBe(iso(T0 + 1000));
    expect(streakMs(h)).toBe(1000);
    h = advanceStreak(h, sampleAt(T0 + 3000, false), 1000);
    expect(h.emptySince).toBeUndefined();
    expect(streakMs(h)).toBe(0);
  });
  it('a send retry between two drained samples breaks the streak (in-flight data is not in the pending bytes)', () => {
    const withRetries = (ms: number, retries: Record<string, number>) => ({ ...sampleAt(ms, true), sendRetries: retries });
    let h = advanceStreak(undefined, withRetries(T0, { p0: 5, p1: 1 }), 1000);
    expect(h.emptySince).toBe(iso(T0));
    h = advanceStreak(h, withRetries(T0 + 1000, { p0: 5, p1: 1 }), 1000);
    expect(streakMs(h)).toBe(1000);
    h = advanceStreak(h, withRetries(T0 + 2000, { p0: 5, p1: 2 }), 1000);
    expect(h.emptySince).toBeUndefined();
    expect(h.last.drained).toBe(false);
    expect(h.last.message).toContain('retried sending to this zone since the last sample (p1)');
    h = advanceStreak(h, withRetries(T0 + 3000, { p0: 5, p1: 2 }), 1000);
    expect(h.emptySince).toBe(iso(T0 + 3000));
    // A vmagent restart resets its counters: not a retry.
    h = advanceStreak(h, withRetries(T0 + 4000, { p0: 0, p1: 0 }), 1000);
    expect(h.emptySince).toBe(iso(T0 + 3000));
  });
  it('a gap longer than maxResumeGapMs restarts the streak', () => {
    const h0: DrainHeartbeat = { last: sampleAt(T0, true), emptySince: iso(T0 - 5000) };
    expect(advanceStreak(h0, sampleAt(T0 + maxResumeGapMs(1000), true), 1000).emptySince).toBe(iso(T0 - 5000));
    expect(advanceStreak(h0, sampleAt(T0 + maxResumeGapMs(1000) + 1, true), 1000).emptySince).toBe(iso(T0 + maxResumeGapMs(1000) + 1));
  });
  it('resumeStreak keeps a recent streak, drops a stale one, ignores garbage', () => {
    const h: DrainHeartbeat = { last: sampleAt(T0, true), emptySince: iso(T0 - 10_000) };
    expect(resumeStreak(h, T0 + 1000, 1000)).toEqual(h);
    expect(resumeStreak(h, T0 + 10 * 60_000, 1000)).toEqual({ last: h.last });
    expect(resumeStreak(undefined, T0, 1000)).toBeUndefined();
    expect(resumeStreak({ foo: 1 }, T0, 1000)).toBeUndefined();
  });
});

/** A fake clock driving a PollContext: sleep advances time instantly. */
function fakeCtx(details?: unknown) {
  let now = T0;
  const beats: unknown[] = [];
  const ctx: PollContext = {
    heartbeat: (d) => beats.push(d),
    sleep: async (ms) => {
      now += ms;
    },
    heartbeatDetails: () => details,
    signal: new AbortController().signal,
  };
  return { ctx, beats, now: () => now };
}

const target: QueueTarget & { queueDrainedForMs: number; pollIntervalMs: number } = {
  namespace: 'ns',
  vmagentName: 'va',
  vmclusterName: 'az-b',
  queueEmptyBytes: 0,
  queueDrainedForMs: 10_000,
  pollIntervalMs: 1_000,
};

describe('waitQueueDrained', () => {
  it('returns only after drained continuously for queueDrainedForMs; a break restarts the wait', async () => {
    const f = fakeCtx();
    // pending for 3 polls, drained 4 polls, pending 1, then drained for good
    const pattern = [false, false, false, true, true, true, true, false];
    let i = 0;
    const sample = async () => sampleAt(f.now(), i < pattern.length ? pattern[i++]! : (i++, true));
    const s = await waitQueueDrained(f.ctx, sample, target, f.now);
    expect(s.drained).toBe(true);
    const last = f.beats.filter((b) => (b as DrainHeartbeat).last).at(-1) as DrainHeartbeat;
    // the streak started at the first drained sample after the break (poll #9 at T0 + 8 s)
    expect(last.emptySince).toBe(iso(T0 + 8_000));
    expect(f.now() - Date.parse(last.emptySince!)).toBeGreaterThanOrEqual(10_000);
  });

  it('resumes the streak from heartbeat details of a previous attempt', async () => {
    const prev: DrainHeartbeat = { last: sampleAt(T0 - 1000, true), emptySince: iso(T0 - 9_500) };
    const f = fakeCtx(prev);
    let calls = 0;
    const s = await waitQueueDrained(f.ctx, async () => (calls++, sampleAt(f.now(), true)), target, f.now);
    expect(s.drained).toBe(true);
    expect(calls).toBe(2); // T0 (9.5 s), T0 + 0.5 s (10 s): not a fresh 10 s
    expect(f.now() - T0).toBe(500);
  });

  it('does not resume a streak whose last sample is too old', async () => {
    const prev: DrainHeartbeat = { last: sampleAt(T0 - 5 * 60_000, true), emptySince: iso(T0 - 6 * 60_000) };
    const f = fakeCtx(prev);
    await waitQueueDrained(f.ctx, async () => sampleAt(f.now(), true), target, f.now);
    expect(f.now() - T0).toBe(10_000);
  });

  it('heartbeats the last sample and the streak start', async () => {
    const f = fakeCtx();
    await waitQueueDrained(f.ctx, async () => sampleAt(f.now(), true), { ...target, queueDrainedForMs: 2000 }, f.now);
    expect(f.beats[0]).toEqual({ last: sampleAt(T0, true), emptySince: iso(T0) });
  });

  it('in a real activity context: resumes from info.heartbeatDetails, heartbeats, and honours cancellation', async () => {
    const prev: DrainHeartbeat = { last: sampleAt(Date.now(), false) };
    const env = new MockActivityEnvironment({ heartbeatDetails: prev, heartbeatTimeoutMs: 60_000 });
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    let n = 0;
    const run = env.run(async () =>
      waitQueueDrained(
        activityPollContext(),
        async () => {
          n++;
          if (n === 2) setImmediate(() => env.cancel());
          return sampleAt(Date.now(), false);
        },
        { ...target, pollIntervalMs: 20 },
      ),
    );
    await expect(run).rejects.toBeInstanceOf(CancelledFailure);
    expect(beats.length).toBeGreaterThanOrEqual(1);
    expect((beats[0] as DrainHeartbeat).last.drained).toBe(false);
  });

  it('in a real activity context: a streak from info.heartbeatDetails that already lasted long enough returns at once', async () => {
    const now = Date.now();
    const prev: DrainHeartbeat = { last: sampleAt(now - 500, true), emptySince: iso(now - 20_000) };
    const env = new MockActivityEnvironment({ heartbeatDetails: prev });
    let n = 0;
    const s: QueueSample = await env.run(async () => waitQueueDrained(activityPollContext(), async () => (n++, sampleAt(Date.now(), true)), target));
    expect(s.drained).toBe(true);
    expect(n).toBe(1);
  });
});

describe('watchQueue (the wait that reports its progress)', () => {
  it('with a report: to the end in one call, the latest streak written every everyMs while not drained', async () => {
    const f = fakeCtx();
    // pending for 35 s, then drained for good
    const sample = async () => sampleAt(f.now(), f.now() >= T0 + 35_000);
    const written: Array<{ at: number; streak: DrainHeartbeat }> = [];
    const w = await watchQueue(f.ctx, sample, target, f.now, { everyMs: 10_000, write: async (streak) => void written.push({ at: f.now() - T0, streak }) });
    expect(w.emptySince).toBe(iso(T0 + 35_000));
    expect(f.now()).toBe(T0 + 45_000);
    // at 10, 20, 30 s (pending), and at 40 s (empty, the streak not long enough yet): never once drained
    expect(written.map((x) => x.at)).toEqual([10_000, 20_000, 30_000, 40_000]);
    expect(written.map((x) => x.streak.emptySince)).toEqual([undefined, undefined, undefined, iso(T0 + 35_000)]);
    // Negative control: without a report, nothing is written and the call still goes to the end.
    const g = fakeCtx();
    expect((await watchQueue(g.ctx, async () => sampleAt(g.now(), g.now() >= T0 + 35_000), target, g.now)).emptySince).toBe(iso(T0 + 35_000));
  });
});

describe('fixed-rate sampling', () => {
  /**
   * A fake clock whose samples take `durationMs` each (the clock advances inside the sample). With
   * `stopAfterMs`, a sample due later fails with STOP: the wait ends there, its sampling times kept.
   */
  function timedRig(durationMs: number, drainedAt: (startMs: number) => boolean, stopAfterMs = Infinity) {
    const f = fakeCtx();
    let now = T0;
    f.ctx.sleep = async (ms) => void (now += ms);
    const starts: number[] = [];
    const sample = async () => {
      if (now - T0 > stopAfterMs) throw new Error(STOP);
      starts.push(now - T0);
      const drained = drainedAt(now);
      now += durationMs;
      return sampleAt(now, drained);
    };
    return { ctx: f.ctx, sample, starts, now: () => now };
  }

  it('the next sample is due one poll after the previous one STARTED, whatever the sample took', async () => {
    const r = timedRig(300, (t) => t >= T0 + 2_500, 6_000);
    await expect(watchQueue(r.ctx, r.sample, target, r.now)).rejects.toThrow(STOP);
    // Negative control of the old loop (sleep a poll after each sample ENDED): 0, 1300, 2600, ...
    expect(r.starts).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000]);
  });

  it('a sample slower than the poll is followed at once, never earlier than now', async () => {
    const r = timedRig(1_500, () => false, 5_000);
    await expect(watchQueue(r.ctx, r.sample, target, r.now)).rejects.toThrow(STOP);
    expect(r.starts).toEqual([0, 1_500, 3_000, 4_500]);
  });

  it('keeps the shortening: the sample that completes the streak starts when the streak can be complete', async () => {
    // Drained from the sample that starts at 3 s (stamped 3.3 s): with 9.5 s to wait the streak can be
    // complete at 12.8 s, before the 13 s tick.
    const r = timedRig(300, (t) => t >= T0 + 3_000);
    const w = await watchQueue(r.ctx, r.sample, { ...target, queueDrainedForMs: 9_500 }, r.now);
    expect(w.emptySince).toBe(iso(T0 + 3_300));
    expect(r.starts.slice(-3)).toEqual([11_000, 12_000, 12_800]);
    expect(Date.parse(w.last.at) - T0).toBe(13_100);
  });

  it('decides at most one poll (plus the sample itself) after queueDrainedFor once the backlog is gone (no retry)', async () => {
    const latencies: number[] = [];
    for (const goneAt of [2_000, 2_001, 2_500, 2_999]) {
      const r = timedRig(300, (t) => t >= T0 + goneAt);
      const w = await watchQueue(r.ctx, r.sample, target, r.now);
      // A sample is stamped when it ends: the decision is the end of the sample that completes the streak.
      latencies.push(Date.parse(w.last.at) - T0 - goneAt - target.queueDrainedForMs);
    }
    expect(latencies).toEqual([300, 1_299, 800, 301]);
    for (const l of latencies) expect(l).toBeLessThanOrEqual(target.pollIntervalMs + 300);
  });
});

describe('a retry seen in a sample', () => {
  const withRetries = (ms: number, retries: number, drained = true): QueueSample => ({ ...sampleAt(ms, drained), sendRetries: { p0: retries } });

  it('does not start the streak itself: the next retry-free sample does (the retried block may still be in flight)', () => {
    // Retries 5 → 6 between the samples at 1 s and 2 s, pending 0 throughout.
    let h = advanceStreak(undefined, withRetries(T0 + 1_000, 5, false), 1_000);
    h = advanceStreak(h, withRetries(T0 + 2_000, 6), 1_000);
    expect(h.emptySince).toBeUndefined();
    expect(h.last.drained).toBe(false);
    h = advanceStreak(h, withRetries(T0 + 3_000, 6), 1_000);
    expect(h.emptySince).toBe(iso(T0 + 3_000));
    // Negative control: without the retry, the same drained sample at 2 s starts the streak.
    let c = advanceStreak(undefined, withRetries(T0 + 1_000, 5, false), 1_000);
    c = advanceStreak(c, withRetries(T0 + 2_000, 5), 1_000);
    expect(c.emptySince).toBe(iso(T0 + 2_000));
  });

  it('a retry in the middle of a streak restarts it at the next retry-free sample; the wait ends queueDrainedFor after that', async () => {
    const f = fakeCtx();
    const retriesAt = (t: number) => (t >= T0 + 4_000 ? 6 : 5); // the last retry between 3 s and 4 s
    const w = await watchQueue(f.ctx, async () => withRetries(f.now(), retriesAt(f.now())), target, f.now);
    // The sample at 4 s saw the retry; the next, RETRY_RESAMPLE_MS later, starts the streak.
    expect(w.emptySince).toBe(iso(T0 + 4_000 + RETRY_RESAMPLE_MS));
    expect(f.now()).toBe(T0 + 14_000 + RETRY_RESAMPLE_MS);
    // Negative control: no retry, the streak from the first sample ends at 10 s.
    const g = fakeCtx();
    expect((await watchQueue(g.ctx, async () => withRetries(g.now(), 5), target, g.now)).emptySince).toBe(iso(T0));
    expect(g.now()).toBe(T0 + 10_000);
  });

  it('the sample after a retry comes RETRY_RESAMPLE_MS later, so the streak starts well within a poll of the retry', async () => {
    const run = async (resampleFaster: boolean) => {
      const f = fakeCtx();
      const starts: number[] = [];
      const sample = async () => {
        starts.push(f.now() - T0);
        return withRetries(f.now(), f.now() >= T0 + 4_000 ? 6 : 5); // the last retry between 3 s and 4 s
      };
      // The negative control samples a whole poll after the retry, as before this rule.
      const ctx = resampleFaster ? f.ctx : { ...f.ctx, sleep: (ms: number) => f.ctx.sleep(ms === RETRY_RESAMPLE_MS ? target.pollIntervalMs : ms) };
      const w = await watchQueue(ctx, sample, target, f.now);
      return { w, starts };
    };
    const fast = await run(true);
    expect(fast.w.emptySince).toBe(iso(T0 + 4_000 + RETRY_RESAMPLE_MS));
    expect(fast.starts.slice(0, 7)).toEqual([0, 1_000, 2_000, 3_000, 4_000, 4_000 + RETRY_RESAMPLE_MS, 5_000 + RETRY_RESAMPLE_MS]);
    const slow = await run(false);
    expect(slow.w.emptySince).toBe(iso(T0 + 5_000));
  });

  it('pending bytes above the threshold are sampled at the normal rate (no fast sampling while the backlog drains)', async () => {
    const f = fakeCtx();
    const starts: number[] = [];
    const sample = async () => {
      if (f.now() - T0 > 2_500) throw new Error(STOP);
      starts.push(f.now() - T0);
      return withRetries(f.now(), Math.floor((f.now() - T0) / 1_000), f.now() >= T0 + 3_000);
    };
    await expect(watchQueue(f.ctx, sample, target, f.now)).rejects.toThrow(STOP);
    expect(starts).toEqual([0, 1_000, 2_000]);
  });
});

describe('the end of a drain: blocks in a send-retry backoff', () => {
  const POLL = target.pollIntervalMs;
  /** Pending until 1 s; then nothing pending but one block in a backoff until `retryAt`, when vmagent retries it (and delivers it). */
  const drainEndingWithRetry =
    (retryAt: number) =>
    (t: number): QueueSample => {
      if (t < T0 + 1_000) return { ...sampleAt(t, false), sendRetries: { p0: 5 } };
      if (t < T0 + retryAt) return { ...sampleAt(t, false, 0), sendRetries: { p0: 5 }, blocksInBackoff: { p0: 1 } };
      return { ...sampleAt(t, true), sendRetries: { p0: 6 } };
    };
  /** The decision's lateness: its sample's end − the retry − queueDrainedFor. `slow`: every sooner sample comes a poll later (the protection off). */
  async function lateness(retryAt: number, slow = false): Promise<number> {
    const f = fakeCtx();
    const ctx = slow ? { ...f.ctx, sleep: (ms: number) => f.ctx.sleep(ms < POLL ? POLL : ms) } : f.ctx;
    const w = await watchQueue(ctx, async () => drainEndingWithRetry(retryAt)(f.now()), target, f.now);
    return Date.parse(w.last.at) - T0 - retryAt - target.queueDrainedForMs;
  }

  it('awaitingRetry: every pod read, nothing pending above queueEmptyBytes, a block in a backoff', () => {
    const waiting = drainEndingWithRetry(3_000)(T0 + 2_000);
    expect(awaitingRetry(waiting, 0)).toBe(true);
    expect(awaitingRetry({ ...waiting, pendingBytes: 10 }, 0)).toBe(false);
    expect(awaitingRetry({ ...waiting, pendingBytes: 10 }, 10)).toBe(true);
    expect(awaitingRetry({ ...waiting, unreadablePods: 1 }, 0)).toBe(false);
    expect(awaitingRetry({ ...waiting, blocksInBackoff: { p0: 0 } }, 0)).toBe(false);
    expect(awaitingRetry({ ...waiting, blocksInBackoff: undefined }, 0)).toBe(false);
    expect(awaitingRetry({ ...waiting, drained: true }, 0)).toBe(false);
    expect(awaitingRetryPeriodMs(1_000)).toBe(250);
    expect(awaitingRetryPeriodMs(100)).toBe(RETRY_RESAMPLE_MS);
    expect(awaitingRetryPeriodMs(40)).toBe(40);
  });

  it('samples every quarter poll while the block waits, so the streak starts within a quarter poll (+ the resample) of the retry', async () => {
    const f = fakeCtx();
    const starts: number[] = [];
    const w = await watchQueue(f.ctx, async () => (starts.push(f.now() - T0), drainEndingWithRetry(3_100)(f.now())), target, f.now);
    expect(starts.slice(0, 12)).toEqual([0, 1_000, 1_250, 1_500, 1_750, 2_000, 2_250, 2_500, 2_750, 3_000, 3_250, 3_250 + RETRY_RESAMPLE_MS]);
    expect(w.emptySince).toBe(iso(T0 + 3_250 + RETRY_RESAMPLE_MS));
    // Back at the poll's rate once the streak runs.
    expect(starts[12]).toBe(4_250 + RETRY_RESAMPLE_MS);
  });

  it("property (seeded): at every moment of the retry the decision is at most a quarter poll + RETRY_RESAMPLE_MS late, within one poll; a poll's rate alone is up to two polls late", async () => {
    const seed = 20261205;
    let x = seed;
    const next = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), x / 2 ** 32);
    const moments = [1_001, 1_250, 1_251, 1_999, 2_000, ...Array.from({ length: 40 }, () => 1_000 + Math.floor(next() * 4_000))];
    const fast: number[] = [];
    const slow: number[] = [];
    for (const m of moments) {
      fast.push(await lateness(m));
      slow.push(await lateness(m, true));
    }
    // The moments (and the seed) that break the bound, if any: replayable as they are.
    const bound = awaitingRetryPeriodMs(POLL) + RETRY_RESAMPLE_MS;
    expect({ seed, outOfBound: moments.filter((_, i) => fast[i]! < 0 || fast[i]! > bound) }).toEqual({ seed, outOfBound: [] });
    expect(Math.max(...fast)).toBeLessThanOrEqual(POLL);
    // Negative control: sampled at the poll's rate, some moments are decided more than a poll late.
    expect(Math.max(...slow)).toBeGreaterThan(POLL);
  });
});
