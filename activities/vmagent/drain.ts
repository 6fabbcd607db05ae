// waitQueueDrained: poll inside one heartbeating activity until the zone's queues have been empty
// for queueDrainedForMs without a break. Heartbeat details { last, emptySince } let a retried attempt
// (worker crash, heartbeat timeout) resume the streak instead of starting over.
import { ownValue } from '../../api/data-object';
import type { DrainHeartbeat, QueueSample } from '../../api/rollout-contract';
import type { QueueTarget } from '../../workflows/activity-types';
import { sleepHeartbeating, type PollContext } from '../activity-context';

/**
 * The longest unobserved gap (between the last sample of a previous attempt and the first of this
 * one) that still continues a streak: a longer gap is time nobody looked, so the streak restarts.
 */
export function maxResumeGapMs(pollIntervalMs: number): number {
  return Math.max(3 * pollIntervalMs, 60_000);
}

function isHeartbeat(d: unknown): d is DrainHeartbeat {
  const h = d as DrainHeartbeat | undefined;
  return !!h && typeof h === 'object' && !!h.last && typeof h.last.at === 'string';
}

/** Pure: the streak carried over from a previous attempt's heartbeat details, if still valid. */
export function resumeStreak(details: unknown, nowMs: number, pollIntervalMs: number): DrainHeartbeat | undefined {
  if (!isHeartbeat(details)) return undefined;
  const lastAt = Date.parse(details.last.at);
  if (!Number.isFinite(lastAt) || nowMs - lastAt > maxResumeGapMs(pollIntervalMs)) return { last: details.last };
  return details;
}

/** Pods whose send-retry counter for the zone grew between two samples (a block in flight kept failing). */
export function podsRetriedSince(prev: QueueSample | undefined, sample: QueueSample): string[] {
  const before = prev?.sendRetries;
  return Object.entries(sample.sendRetries ?? {})
    .filter(([pod, n]) => {
      // Keyed by pod name (`constructor` is one): only a count the previous sample holds.
      const was = before && ownValue(before, pod);
      return was !== undefined && n > was;
    })
    .map(([pod]) => pod);
}

/**
 * Pure: the streak after a new sample. A not-drained sample, a send retry since `prev.last` (data in
 * flight is not in the pending bytes), or a gap too long since `prev.last`, breaks it.
 *
 * A sample that saw a retry does not start the streak itself; the next retry-free sample does. Why
 * (vmagent v1.150.0 app/vmagent/remotewrite/client.go):
 *  - `sendBlockHTTP` increments vmagent_remotewrite_retries_count_total after the backoff wait and
 *    right before the next attempt (`c.retriesCount.Inc(); goto again`): a counter that grew says an
 *    attempt began since the previous sample, not that it succeeded. At this sample the block may be
 *    in that request, or back in a backoff of up to -remoteWrite.retryMaxInterval (1m) after it.
 *  - Nothing on the page proves that block was delivered. vmagent_remotewrite_requests_total
 *    {status_code="2XX"} and _blocks_sent_total are per URL, summed over -remoteWrite.queues workers
 *    (default 2 × CPUs) that each hold one block: another worker's success grows them too, and one
 *    scrape cannot order the increments. vmagent_remotewrite_pending_data_bytes
 *    (FastQueue.GetPendingBytes) excludes every block a worker holds.
 * Starting at the next sample keeps the retry-free window at queueDrainedFor plus the sampling gap
 * after the retry, not queueDrainedFor alone. A block back in a backoff after that attempt is seen
 * by the sample itself (match.ts, blocksInBackoff: not drained while a pod holds one).
 */
export function advanceStreak(prev: DrainHeartbeat | undefined, sample: QueueSample, pollIntervalMs: number): DrainHeartbeat {
  const retried = sample.drained ? podsRetriedSince(prev?.last, sample) : [];
  if (retried.length > 0) {
    const message = `${sample.message}; vmagent retried sending to this zone since the last sample (${retried.join(', ')})`;
    return { last: { ...sample, drained: false, message } };
  }
  if (!sample.drained) return { last: sample };
  const gapOk = prev && Date.parse(sample.at) - Date.parse(prev.last.at) <= maxResumeGapMs(pollIntervalMs);
  const emptySince = prev?.emptySince && gapOk ? prev.emptySince : sample.at;
  return { last: sample, emptySince };
}

/** Pure: how long the streak has lasted at the last sample (0 when not drained). */
export function streakMs(h: DrainHeartbeat): number {
  if (!h.emptySince) return 0;
  return Math.max(0, Date.parse(h.last.at) - Date.parse(h.emptySince));
}

/**
 * How soon the sample after one that saw only a retry comes (at most pollInterval). The retry is
 * the drain's last event after an outage (the blocks that failed meanwhile are retried last), and
 * the streak starts at the first retry-free sample: the sooner it comes, the sooner the decision.
 * Safe at any value: the streak still needs queueDrainedFor of samples after it (the retry-free
 * window is queueDrainedFor plus this gap), and a retry that fails again shows as a block in a
 * backoff or a grown counter in a sample of the streak.
 */
export const RETRY_RESAMPLE_MS = 50;

/**
 * Pure: whether the zone's backlog is down to blocks vmagent holds in a send-retry backoff (every
 * pod read, nothing pending but them). What is left is the retry, at a moment no sample can predict
 * (up to -remoteWrite.retryMaxInterval): sampled at the poll's rate, the retry is seen up to a whole
 * poll late, and that lateness is the drain detection's own.
 */
export function awaitingRetry(sample: QueueSample, queueEmptyBytes: number): boolean {
  return (
    !sample.drained && sample.unreadablePods === 0 && sample.pendingBytes <= queueEmptyBytes && Object.values(sample.blocksInBackoff ?? {}).some((n) => n > 0)
  );
}

/** The period while awaitingRetry: a quarter poll (at least RETRY_RESAMPLE_MS), so a retry is seen within it. */
export function awaitingRetryPeriodMs(pollMs: number): number {
  return Math.min(pollMs, Math.max(RETRY_RESAMPLE_MS, Math.round(pollMs / 4)));
}

/** Why the next sample may come sooner than a poll after the last one. */
export type SampleCadence = 'poll' | 'retried' | 'awaitingRetry';

/**
 * Pure: when the sample after one that started at `sampleStartedMs` is due. At a fixed rate: one
 * poll after the previous sample STARTED (its own duration does not stretch the period), or, while
 * a streak runs, as soon as a sample can complete it (a sample's `at` is taken when it ends, so one
 * that starts at emptySince + queueDrainedFor is stamped at or after that) when that is sooner.
 * Sooner at the end of a drain (`cadence`): after a sample whose pending bytes were empty but which
 * saw a send retry, RETRY_RESAMPLE_MS; while only blocks in a backoff are left, awaitingRetryPeriodMs.
 * Together they bound the decision's lateness after a drain that ends with a retry to a quarter
 * poll plus RETRY_RESAMPLE_MS plus the samples' own durations, where a poll's rate alone leaves
 * a whole poll plus that. The caller never waits less than 0: a sample slower than the poll is
 * followed at once.
 */
export function nextSampleDue(sampleStartedMs: number, state: DrainHeartbeat, pollMs: number, queueDrainedForMs: number, cadence: SampleCadence): number {
  const period = cadence === 'retried' ? Math.min(pollMs, RETRY_RESAMPLE_MS) : cadence === 'awaitingRetry' ? awaitingRetryPeriodMs(pollMs) : pollMs;
  const byRate = sampleStartedMs + period;
  if (!state.emptySince) return byRate;
  return Math.min(byRate, Date.parse(state.emptySince) + queueDrainedForMs);
}

/**
 * Poll until the zone's queues have been empty for queueDrainedForMs without a break, handing the
 * streak to `report` (when given) every `report.everyMs`. The streak starts from a previous attempt's heartbeat.
 */
export async function watchQueue(
  ctx: PollContext,
  sample: (target: QueueTarget) => Promise<QueueSample>,
  input: QueueTarget & { queueDrainedForMs: number; pollIntervalMs: number },
  now: () => number = Date.now,
  report?: { everyMs: number; write(streak: DrainHeartbeat): Promise<void> },
): Promise<DrainHeartbeat> {
  const poll = Math.max(50, input.pollIntervalMs);
  const started = now();
  let reported = started;
  let state = resumeStreak(ctx.heartbeatDetails(), started, poll);
  for (;;) {
    const sampleStarted = now();
    const s = await sample(input);
    state = advanceStreak(state, s, poll);
    ctx.heartbeat(state);
    const lasted = streakMs(state);
    if (state.emptySince && lasted >= input.queueDrainedForMs) return state;
    if (report && now() - reported >= report.everyMs) {
      await report.write(state);
      reported = now();
    }
    // advanceStreak turned an empty sample into a not-drained one: it saw a retry.
    const cadence: SampleCadence = s.drained && !state.last.drained ? 'retried' : awaitingRetry(s, input.queueEmptyBytes) ? 'awaitingRetry' : 'poll';
    const wait = Math.max(0, nextSampleDue(sampleStarted, state, poll, input.queueDrainedForMs, cadence) - now());
    await sleepHeartbeating(ctx, wait, state);
  }
}

/** watchQueue to the end: the sample that completed the streak. */
export async function waitQueueDrained(
  ctx: PollContext,
  sample: (target: QueueTarget) => Promise<QueueSample>,
  input: QueueTarget & { queueDrainedForMs: number; pollIntervalMs: number },
  now: () => number = Date.now,
): Promise<QueueSample> {
  return (await watchQueue(ctx, sample, input, now)).last;
}
