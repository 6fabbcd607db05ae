// When a zone's vmagent backlog was truly gone, read from vmagent's own series as the rollout
// benchmark scrapes it (pending bytes and the send-retries counter of the zone's remote write).

export interface QueuePoint {
  at: number;
  bytes: number;
  retries: number;
}

export interface Drained {
  /** Truly gone: max(pendingZeroAt, lastRetryAt). */
  at: number;
  /** The first point at 0 pending bytes after the last point with pending bytes in [from, until]. */
  pendingZeroAt: number;
  lastBacklogAt: number;
  peakBytes: number;
  /** The last point whose send-retries counter grew (the last re-send began just before it). */
  lastRetryAt?: number;
}

/**
 * Pending bytes leave out the block a remote-write worker holds while it retries: vmagent v1.150
 * app/vmagent/remotewrite/client.go sendBlockHTTP takes the block off the queue, and after a failed send
 * waits the backoff, then increments vmagent_remotewrite_retries_count_total and sends again. So the
 * backlog is gone at max(pending bytes at 0 for good, the last retry: the re-send that delivered the
 * held block). Undefined when no backlog was seen in [from, until], or when it never reached 0 there.
 */
export function trulyDrainedAt(points: readonly QueuePoint[], from: number, until: number): Drained | undefined {
  const win = points.filter((p) => p.at >= from && p.at <= until);
  let last = -1;
  let lastRetry = -1;
  let peak = 0;
  for (let i = 0; i < win.length; i++) {
    const p = win[i]!;
    if (i > 0 && p.retries > win[i - 1]!.retries) lastRetry = i;
    if (p.bytes > 0) last = i;
    peak = Math.max(peak, p.bytes);
  }
  if (last < 0) return undefined;
  const zero = win.slice(last + 1).find((p) => p.bytes === 0);
  if (!zero) return undefined;
  const lastRetryAt = lastRetry >= 0 ? win[lastRetry]!.at : undefined;
  return {
    at: Math.max(zero.at, lastRetryAt ?? -Infinity),
    pendingZeroAt: zero.at,
    lastBacklogAt: win[last]!.at,
    peakBytes: peak,
    ...(lastRetryAt !== undefined ? { lastRetryAt } : {}),
  };
}

/** The value of the series at time t (the last point at or before t); `extrapolated` past its end; undefined before it. */
export function valueAt(points: readonly QueuePoint[], t: number): { bytes: number; extrapolated: boolean } | undefined {
  let cur: QueuePoint | undefined;
  for (const p of points) {
    if (p.at > t) break;
    cur = p;
  }
  if (!cur) return undefined;
  return { bytes: cur.bytes, extrapolated: t > points[points.length - 1]!.at };
}
