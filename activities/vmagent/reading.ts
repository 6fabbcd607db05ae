// readVmagent: one reading of every vmagent pod's page for a zone's queues (pod-readings.ts), for
// what the rollout asks of it: the queue headroom (headroom.ts, judged over the horizon), the drop
// counters (drops.ts), or both from the same pages.
import { redactSecrets } from '../../api/redact';
import type { VmagentReading, VmagentReadingInput } from '../../workflows/activity-types';
import { readDrops } from './drops';
import { judgeHeadroom, readHeadroom, type QueueRoom } from './headroom';
import { readEveryPod, type PageReading } from './pod-readings';
import type { QueueReader } from './queue';
import type { RemoteWriteQueue } from './url';
import type { DropCounters } from '../../api/types';

export async function readVmagent(
  queues: Pick<QueueReader, 'pages'>,
  input: VmagentReadingInput,
  signal?: AbortSignal,
  now: () => Date = () => new Date(),
): Promise<VmagentReading> {
  const { headroomHorizonMs: horizon, drops, ...target } = input;
  const read = (text: string, qs: RemoteWriteQueue[]): PageReading<{ rooms?: QueueRoom[]; counters?: DropCounters }> => {
    const rooms = horizon !== undefined ? readHeadroom(text, qs) : undefined;
    if (rooms && !rooms.ok) return rooms;
    const counters = drops ? readDrops(text, qs) : undefined;
    if (counters && !counters.ok) return counters;
    return { ok: true, value: { rooms: rooms?.value, counters: counters?.value } };
  };
  // Every page gave what was asked of it (read() refuses it otherwise): rooms with a horizon, counters with drops.
  const pods = await readEveryPod(queues, target, "vmagent's pages", read, signal);
  const at = now();
  const out: VmagentReading = {};
  if (horizon !== undefined) {
    const verdict = judgeHeadroom(
      pods.map((p) => ({ pod: p.pod, queues: p.value.rooms! })),
      horizon,
      at,
    );
    out.headroom = { ...verdict, message: redactSecrets(verdict.message) };
  }
  if (drops)
    out.drops = {
      at: at.toISOString(),
      pods: pods.map((p) => ({ pod: p.pod, counters: p.value.counters! })),
    };
  return out;
}
