// checkQueueHeadroom: every vmagent pod's page for the zone's queues (pod-readings.ts), judged by
// headroom.ts.
import { redactSecrets } from '../../api/redact';
import type { QueueHeadroom } from '../../api/rollout-contract';
import type { QueueTarget } from '../../workflows/activity-types';
import { judgeHeadroom, readHeadroom } from './headroom';
import { readEveryPod } from './pod-readings';
import type { QueueReader } from './queue';

export async function checkQueueHeadroom(
  queues: Pick<QueueReader, 'pages'>,
  input: QueueTarget & { horizonMs: number },
  signal?: AbortSignal,
  now: () => Date = () => new Date(),
): Promise<QueueHeadroom> {
  const { horizonMs, ...target } = input;
  const pods = await readEveryPod(queues, target, 'the vmagent queue headroom', readHeadroom, signal);
  const verdict = judgeHeadroom(
    pods.map((p) => ({ pod: p.pod, queues: p.value })),
    horizonMs,
    now(),
  );
  return { ...verdict, message: redactSecrets(verdict.message) };
}
