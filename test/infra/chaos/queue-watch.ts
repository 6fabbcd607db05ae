/**
 * The campaign's own watch of vmagent's remote write queues, for check b of the oracle (a zone
 * rejoins reads only after its queues stayed drained for queueDrainedFor [I2]). It scrapes the real
 * vmagent's /metrics itself (not through the pod gateway's faults, not from the worker's status) and
 * reads each page with the queue wait's own definition of drained: activities/vmagent/match.ts
 * (pending bytes <= queueEmptyBytes, no block waiting out a send-retry backoff, page readable) and
 * activities/vmagent/drain.ts (a send retry since the previous sample: not drained).
 */
import { buildQueueSample, readZoneQueues } from '../../../activities/vmagent/match';
import { podsRetriedSince } from '../../../activities/vmagent/drain';
import type { RemoteWriteQueue } from '../../../activities/vmagent/url';
import type { QueueSample } from '../../../api/rollout-contract';
import { httpRequest } from '../harness/processes';

/** One look at a zone's queues. */
export interface QueueObservation {
  /**
   * The earliest moment the state seen can be from: when the scrape was sent, or for a send retry
   * (it happened between two scrapes) when the scrape before it was sent.
   */
  at: number;
  drained: boolean;
}

const POD = 'vmagent';

/**
 * Pure: each zone's observation of one /metrics page scraped at `at` (`text` undefined: the scrape
 * failed, which proves nothing drained). `prev`: the zones' previous samples, updated in place.
 */
export function observeQueues(
  text: string | undefined,
  zones: Record<string, RemoteWriteQueue[]>,
  at: number,
  queueEmptyBytes: number,
  prev: Map<string, { sample: QueueSample; at: number }>,
): Record<string, QueueObservation> {
  const out: Record<string, QueueObservation> = {};
  for (const [zone, queues] of Object.entries(zones)) {
    const reading = text === undefined ? { ok: false as const, message: 'scrape failed' } : readZoneQueues(text, queues);
    const sample = buildQueueSample([{ pod: POD, reading }], { queueEmptyBytes, at: new Date(at) });
    const before = prev.get(zone);
    const retried = sample.drained && podsRetriedSince(before?.sample, sample).length > 0;
    out[zone] = retried ? { at: before!.at, drained: false } : { at, drained: sample.drained };
    prev.set(zone, { sample, at });
  }
  return out;
}

/** Scrapes `metricsURL` every `intervalMs` until stopped; `observations` by zone, in time order. */
export function watchQueues(opts: { metricsURL: string; zones: Record<string, RemoteWriteQueue[]>; queueEmptyBytes: number; intervalMs?: number }) {
  const observations: Record<string, QueueObservation[]> = Object.fromEntries(Object.keys(opts.zones).map((z) => [z, []]));
  const prev = new Map<string, { sample: QueueSample; at: number }>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      const text = await httpRequest('GET', opts.metricsURL, { timeoutMs: 5_000 }).then(
        (r) => (r.status === 200 ? r.body : undefined),
        () => undefined,
      );
      for (const [zone, o] of Object.entries(observeQueues(text, opts.zones, at, opts.queueEmptyBytes, prev))) observations[zone]!.push(o);
      await new Promise((r) => setTimeout(r, Math.max(0, at + (opts.intervalMs ?? 100) - Date.now())));
    }
  })();
  return {
    observations,
    async stop(): Promise<void> {
      stopped = true;
      await loop;
    },
  };
}
